package sensors_test

import (
	"fmt"
	"image"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// The tests here hold every backend to one definition of a range: the
// distance to the nearest sensed triangle that the beam meets at a texel
// its material does not cut away. The reference is written here, apart
// from the caster: every triangle of the scene, in world coordinates, in
// float64, and every texel by the rule models.Cutout documents. Rounding
// decides hits within a rounding of an edge or a texel border, so the
// reference gives an interval: the nearest hit when every such near thing
// counts (loose) and when none does (strict); a range must be a loose hit
// and lie between the two.

// refTriangle is a world triangle with what decides its cut-outs.
type refTriangle struct {
	v0, v1, v2 mgl64.Vec3
	uv         [3][2]float64
	mat        *models.Material
	alpha      []uint8 // the texture's alpha, top row first
	w, h       int
}

// refScene is every sensed triangle of s in world coordinates.
func refScene(t *testing.T, s *scene.Scene) []refTriangle {
	t.Helper()
	if err := s.Update(); err != nil {
		t.Fatal(err)
	}
	var tris []refTriangle
	for _, mi := range s.SensedMeshes(nil) {
		for _, p := range mi.Mesh.Primitives {
			var alpha []uint8
			w, h := 0, 0
			if m := p.Material; m != nil && m.BaseColorTexture != nil {
				b := m.BaseColorTexture.Bounds()
				w, h = b.Dx(), b.Dy()
				alpha = make([]uint8, w*h)
				for y := 0; y < h; y++ {
					for x := 0; x < w; x++ {
						_, _, _, a := m.BaseColorTexture.At(b.Min.X+x, b.Min.Y+y).RGBA()
						alpha[y*w+x] = uint8(a >> 8)
					}
				}
			}
			for i := 0; i+2 < len(p.Indices); i += 3 {
				rt := refTriangle{mat: p.Material, alpha: alpha, w: w, h: h}
				vs := [3]*mgl64.Vec3{&rt.v0, &rt.v1, &rt.v2}
				for k := 0; k < 3; k++ {
					q := p.Positions[p.Indices[i+k]]
					*vs[k] = mi.World.Mul4x1(mgl64.Vec4{float64(q[0]), float64(q[1]), float64(q[2]), 1}).Vec3()
					if len(p.TexCoords) == len(p.Positions) {
						uv := p.TexCoords[p.Indices[i+k]]
						rt.uv[k] = [2]float64{float64(uv[0]), float64(uv[1])}
					}
				}
				tris = append(tris, rt)
			}
		}
	}
	return tris
}

// refAlpha is the texture's alpha at (u, v): the texel under it (NEAREST)
// or the bilinear mix of the four around it (LINEAR), indices repeating.
func (rt *refTriangle) refAlpha(u, v float64) float64 {
	at := func(i, j int) float64 {
		i = ((i % rt.w) + rt.w) % rt.w
		j = ((j % rt.h) + rt.h) % rt.h
		return float64(rt.alpha[j*rt.w+i]) / 255
	}
	x, y := u*float64(rt.w), v*float64(rt.h)
	if rt.mat.Sampler.MagFilter == models.FilterNearest {
		return at(int(math.Floor(x)), int(math.Floor(y)))
	}
	x, y = x-0.5, y-0.5
	i, j := int(math.Floor(x)), int(math.Floor(y))
	fx, fy := x-math.Floor(x), y-math.Floor(y)
	return (1-fy)*((1-fx)*at(i, j)+fx*at(i+1, j)) + fy*((1-fx)*at(i, j+1)+fx*at(i+1, j+1))
}

// keeps tells whether the triangle stops a beam at barycentric (b1, b2):
// strictly (whatever a rounding changes) or loosely (for some rounding).
func (rt *refTriangle) keeps(b1, b2 float64) (strict, loose bool) {
	m := rt.mat
	if m == nil || m.AlphaMode == models.AlphaOpaque {
		return true, true
	}
	cut := float64(m.AlphaCutoff)
	if m.AlphaMode == models.AlphaBlend {
		cut = 0.5
	}
	factor := float64(m.BaseColor[3])
	if rt.alpha == nil {
		return factor >= cut, factor >= cut
	}
	b0 := 1 - b1 - b2
	u := b0*rt.uv[0][0] + b1*rt.uv[1][0] + b2*rt.uv[2][0]
	v := b0*rt.uv[0][1] + b1*rt.uv[1][1] + b2*rt.uv[2][1]
	strict, loose = true, false
	const d = 1e-7 // texture coordinates a rounding apart
	for _, du := range []float64{-d, 0, d} {
		for _, dv := range []float64{-d, 0, d} {
			a := factor * rt.refAlpha(u+du, v+dv)
			strict = strict && a >= cut+1e-6
			loose = loose || a >= cut-1e-6
		}
	}
	return strict, loose
}

// refHit intersects the ray with the triangle: its distance and whether
// it is a hit strictly inside (by more than a rounding) and loosely
// (within a rounding of an edge), each where the material keeps it.
func (rt *refTriangle) refHit(o, d mgl64.Vec3) (t float64, strict, loose bool) {
	e1, e2 := rt.v1.Sub(rt.v0), rt.v2.Sub(rt.v0)
	n := e1.Cross(e2)
	if n.Len() == 0 {
		return 0, false, false // no area: never hit
	}
	den := n.Dot(d)
	if den == 0 {
		return 0, false, false // along the plane
	}
	t = n.Dot(rt.v0.Sub(o)) / den
	if t <= 0 {
		return 0, false, false
	}
	p := o.Add(d.Mul(t)).Sub(rt.v0)
	// Barycentric coordinates of p by areas.
	n2 := n.Dot(n)
	b1 := p.Cross(e2).Dot(n) / n2
	b2 := e1.Cross(p).Dot(n) / n2
	// Relative to the triangle's size and to how obliquely it is met.
	eps := 1e-9 * (1 + t) * n.Len() / math.Abs(den) / math.Sqrt(n2) * 10
	eps = math.Max(eps, 1e-12)
	inStrict := b1 > eps && b2 > eps && b1+b2 < 1-eps
	inLoose := b1 > -eps && b2 > -eps && b1+b2 < 1+eps
	if !inLoose {
		return t, false, false
	}
	ks, kl := rt.keeps(min(max(b1, 0), 1), min(max(b2, 0), 1))
	return t, inStrict && ks, kl
}

// checkBeam holds ranges along the ray (world meters; ±Inf as a sensor
// reports them), one per backend, to the reference: each a loose hit, no
// nearer than the nearest loose one, no farther than the nearest strict
// one.
func checkBeam(tris []refTriangle, o, d mgl64.Vec3, rangeMin, rangeMax, tol float64, gots ...float64) error {
	nearStrict, nearLoose := math.Inf(1), math.Inf(1)
	var loose []float64 // the loose hits' distances
	for i := range tris {
		t, s, l := tris[i].refHit(o, d)
		if s {
			nearStrict = math.Min(nearStrict, t)
		}
		if l {
			nearLoose = math.Min(nearLoose, t)
			loose = append(loose, t)
		}
	}
	// What a sensor reports for a true range r.
	report := func(r float64) float64 {
		switch {
		case math.IsInf(r, 1) || r > rangeMax:
			return math.Inf(1)
		case r < rangeMin:
			return math.Inf(-1)
		}
		return r
	}
	for _, got := range gots {
		switch {
		case got == report(nearLoose) || got == report(nearStrict):
			continue
		case math.IsInf(got, 0) || math.IsNaN(got):
			return fmt.Errorf("got %v, reference %v (loose) .. %v (strict)", got, nearLoose, nearStrict)
		case got < nearLoose-tol || got > nearStrict+tol:
			return fmt.Errorf("got %.9f, reference %.9f (loose) .. %.9f (strict)", got, nearLoose, nearStrict)
		}
		// It must be a hit itself.
		if !slices.ContainsFunc(loose, func(t float64) bool { return math.Abs(t-got) <= tol }) {
			return fmt.Errorf("got %.9f, which is no hit (reference %.9f .. %.9f)", got, nearLoose, nearStrict)
		}
	}
	return nil
}

// trickyScene writes a model of surfaces that test a range's definition,
// placed around a sensor at pose (world), and returns the scene with a
// laser, a 3D lidar and a depth camera there on the given backend.
func trickyScene(t *testing.T, seed uint64, backend string) (*scene.Scene, scene.Pose) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	pose := scene.Pose{X: rng.Float64()*2 - 1, Y: rng.Float64()*2 - 1, Z: 1 + rng.Float64(),
		Roll: rng.Float64()*10 - 5, Pitch: rng.Float64()*10 - 5, Yaw: rng.Float64() * 360}
	world := pose.Matrix()
	beam := func(az, el float64) mgl64.Vec3 { // a sensor-frame direction into the world
		d := mgl64.Vec3{math.Cos(el) * math.Cos(az), math.Cos(el) * math.Sin(az), math.Sin(el)}
		return world.Mul4x1(d.Vec4(0)).Vec3()
	}
	origin := world.Col(3).Vec3()
	up := world.Col(2).Vec3()
	dir := t.TempDir()
	testkit.WriteModel(t, dir, "tricky.glb", func(m *models.Model) {
		opaque := &models.Material{Name: "opaque", BaseColor: [4]float32{0.8, 0.8, 0.8, 1}, AlphaCutoff: 0.5, Roughness: 1}
		var prim models.Primitive
		prim.Material = opaque
		tri := func(p *models.Primitive, a, b, c mgl64.Vec3, uv [3][2]float32) {
			n := b.Sub(a).Cross(c.Sub(a))
			if n.Len() > 0 {
				n = n.Normalize()
			}
			for k, v := range []mgl64.Vec3{a, b, c} {
				p.Indices = append(p.Indices, uint32(len(p.Positions)))
				p.Positions = append(p.Positions, mgl32.Vec3{float32(v[0]), float32(v[1]), float32(v[2])})
				p.Normals = append(p.Normals, mgl32.Vec3{float32(n[0]), float32(n[1]), float32(n[2])})
				p.TexCoords = append(p.TexCoords, mgl32.Vec2(uv[k]))
			}
		}
		noUV := [3][2]float32{}
		// A room around the sensor: walls 6-9 m away, a floor and a ceiling,
		// some beyond range_max (8 m) where the beams are oblique.
		for k := 0; k < 6; k++ {
			az := float64(k) * math.Pi / 3
			c := origin.Add(beam(az, 0).Mul(6 + 3*rng.Float64()))
			side := beam(az+math.Pi/2, 0).Mul(8)
			tri(&prim, c.Sub(side).Sub(up.Mul(5)), c.Add(side).Sub(up.Mul(5)), c.Add(up.Mul(5)), noUV)
		}
		// Slivers and needles on beams: the laser's (every 0.5° from -90°),
		// the depth camera's pixel rays (64 x 48, 80°), the lidar's layers.
		for k := 0; k < 40; k++ {
			var az, el float64
			switch k % 3 {
			case 0:
				az, el = (-90+0.5*float64(rng.IntN(361)))*math.Pi/180, 0
			case 1:
				u, v := rng.IntN(64), rng.IntN(48)
				fx := 64 / (2 * math.Tan(40*math.Pi/180))
				yt, zt := -(float64(u)-31.5)/fx, -(float64(v)-23.5)/fx
				az, el = math.Atan(yt), math.Atan2(zt, math.Hypot(1, yt))
			default:
				az, el = (-60+float64(rng.IntN(121)))*math.Pi/180, (-10+5*float64(rng.IntN(5)))*math.Pi/180
			}
			d := beam(az, el)
			c := origin.Add(d.Mul(0.5 + 5*rng.Float64()))
			across := d.Cross(up)
			if across.Len() < 1e-6 {
				across = d.Cross(world.Col(0).Vec3())
			}
			across = across.Normalize()
			along := across.Cross(d).Normalize()
			// A pixel of the GPU views is about a quarter of a beam spacing:
			// slivers 1e-4 of that wide, needles that small all round.
			w := c.Sub(origin).Len() * 0.5 * math.Pi / 180 / 4 * math.Pow(10, -1-3*rng.Float64())
			if k%2 == 0 {
				tri(&prim, c.Add(across.Mul(w)).Sub(along.Mul(0.4)), c.Sub(across.Mul(w)).Sub(along.Mul(0.4)), c.Add(along.Mul(0.4)), noUV)
			} else {
				tri(&prim, c.Add(across.Mul(w)), c.Sub(across.Mul(w)).Add(along.Mul(w)), c.Sub(across.Mul(w)).Sub(along.Mul(w)), noUV)
			}
		}
		// Coplanar overlapping and touching triangles on beams, a triangle
		// of no area, and surfaces right in front of the sensor.
		for k := 0; k < 6; k++ {
			d := beam((rng.Float64()*180-90)*math.Pi/180, 0)
			c := origin.Add(d.Mul(1 + 4*rng.Float64()))
			across := d.Cross(up).Normalize()
			a, b := c.Add(up.Mul(0.3)), c.Sub(up.Mul(0.3))
			tri(&prim, a, b, c.Add(across.Mul(0.2)), noUV)
			tri(&prim, a, b, c.Sub(across.Mul(0.2)), noUV) // shares the edge the beam meets
			tri(&prim, a.Add(across.Mul(0.05)), b, c.Add(across.Mul(0.3)), noUV)
		}
		tri(&prim, origin.Add(beam(0, 0).Mul(3)), origin.Add(beam(0, 0).Mul(4)), origin.Add(beam(0, 0).Mul(5)), noUV)
		for _, r := range []float64{0.01, 0.04} {
			d := beam((rng.Float64()*60-30)*math.Pi/180, 0)
			c := origin.Add(d.Mul(r))
			across := d.Cross(up).Normalize()
			tri(&prim, c.Add(up.Mul(0.01)), c.Sub(up.Mul(0.01)).Add(across.Mul(0.01)), c.Sub(up.Mul(0.01)).Sub(across.Mul(0.01)), noUV)
		}
		prim.UpdateKey()
		m.AddNode(nil, "tricky", mgl64.Ident4(), &models.Mesh{Name: "tricky", Primitives: []*models.Primitive{&prim}})
		// Masked cards with random masks, facing the sensor: nearest
		// texels (0 or 1 alpha), linear ones (alpha anywhere), a blended
		// card above the blend threshold and one below.
		for k := 0; k < 10; k++ {
			tex := image.NewNRGBA(image.Rect(0, 0, 8+rng.IntN(9), 8+rng.IntN(9)))
			nearest := k%2 == 0
			for i := 0; i < len(tex.Pix); i += 4 {
				a := uint8(rng.IntN(256))
				if nearest {
					a = uint8(255 * rng.IntN(2))
				}
				tex.Pix[i], tex.Pix[i+1], tex.Pix[i+2], tex.Pix[i+3] = 40, 160, 40, a
			}
			mat := &models.Material{Name: fmt.Sprintf("card%d", k), BaseColor: [4]float32{1, 1, 1, 1}, AlphaMode: models.AlphaMask,
				AlphaCutoff: 0.3 + 0.4*float32(rng.Float64()), DoubleSided: true, Roughness: 1, BaseColorTexture: tex}
			if nearest {
				mat.Sampler = models.Sampler{MagFilter: models.FilterNearest, MinFilter: models.FilterNearest}
			}
			switch k {
			case 8:
				mat.AlphaMode, mat.BaseColor[3] = models.AlphaBlend, 0.9
			case 9:
				mat.AlphaMode, mat.BaseColor[3] = models.AlphaBlend, 0.4
			}
			card := models.Primitive{Material: mat}
			d := beam((rng.Float64()*180-90)*math.Pi/180, (rng.Float64()*20-10)*math.Pi/180)
			c := origin.Add(d.Mul(1 + 4*rng.Float64()))
			across := d.Cross(up).Normalize()
			along := across.Cross(d).Normalize()
			half := 0.2 + 0.5*rng.Float64()
			p00, p10 := c.Sub(across.Mul(half)).Sub(along.Mul(half)), c.Add(across.Mul(half)).Sub(along.Mul(half))
			p01, p11 := c.Sub(across.Mul(half)).Add(along.Mul(half)), c.Add(across.Mul(half)).Add(along.Mul(half))
			reps := float32(1 + rng.IntN(2)) // 2: the texture repeats
			tri(&card, p00, p10, p11, [3][2]float32{{0, reps}, {reps, reps}, {reps, 0}})
			tri(&card, p00, p11, p01, [3][2]float32{{0, reps}, {reps, 0}, {0, 0}})
			card.UpdateKey()
			m.AddNode(nil, mat.Name, mgl64.Ident4(), &models.Mesh{Name: mat.Name, Primitives: []*models.Primitive{&card}})
		}
	})
	at := fmt.Sprintf(`pose_offset="%v %v %v %v %v %v"`, pose.X, pose.Y, pose.Z, pose.Roll, pose.Pitch, pose.Yaw)
	s := testkit.LoadXML(t, dir, fmt.Sprintf(`<scene>
  <part file="tricky.glb" name="TRICKY"/>
  <sensor type="laser" name="L" %[1]s angle_min="-90" angle_max="90" resolution="0.5" range_min="0.02" range_max="8" backend="%[2]s"/>
  <sensor type="laser3d" name="V" %[1]s angle_min="-60" angle_max="60" resolution="1" vertical_min="-10" vertical_max="10" vertical_resolution="5" range_min="0.02" range_max="8" backend="%[2]s"/>
  <sensor type="depth" name="D" %[1]s width="64" height="48" fov="80" range_min="0.02" range_max="8" backend="%[2]s"/>
</scene>`, at, backend))
	return s, pose
}

// checkSensors measures every range sensor of a trickyScene once and
// holds every beam to the reference; it returns the beams checked.
func checkSensors(t *testing.T, s *scene.Scene, label string) int {
	t.Helper()
	r := testkit.Renderer(t)
	tris := refScene(t, s)
	checked, bad := 0, 0
	fail := func(sensor string, i int, err error) {
		bad++
		if bad <= 10 {
			t.Errorf("%s: sensor %s, beam %d: %v", label, sensor, i, err)
		}
	}
	for _, se := range s.Sensors() {
		world, err := s.Transform(se.Name, scene.WorldFrame)
		if err != nil {
			t.Fatal(err)
		}
		o := world.Col(3).Vec3()
		toWorld := func(d mgl64.Vec3) mgl64.Vec3 { return world.Mul4x1(d.Vec4(0)).Vec3().Normalize() }
		switch x := se.Sensor.(type) {
		case *sensors.Laser:
			sc, err := x.Scan(r, s)
			if err != nil {
				t.Fatal(err)
			}
			for i, got := range sc.Ranges {
				a := sc.AngleMin + float64(i)*sc.AngleIncrement
				if err := checkBeam(tris, o, toWorld(mgl64.Vec3{math.Cos(a), math.Sin(a), 0}), sc.RangeMin, sc.RangeMax, 1e-9, got); err != nil {
					fail(se.Name, i, err)
				}
				checked++
			}
		case *sensors.Laser3D:
			cl, err := x.Scan(r, s)
			if err != nil {
				t.Fatal(err)
			}
			for i, got := range cl.Ranges {
				// Layers from -10° every 5°, columns from -60° every 1°.
				el, az := (-10+5*float64(i/cl.Width))*math.Pi/180, (-60+float64(i%cl.Width))*math.Pi/180
				d := mgl64.Vec3{math.Cos(el) * math.Cos(az), math.Cos(el) * math.Sin(az), math.Sin(el)}
				if err := checkBeam(tris, o, toWorld(d), 0.02, 8, 1e-9, got); err != nil {
					fail(se.Name, i, err)
				}
				checked++
			}
		case *sensors.DepthCamera:
			img, err := x.Depth(r, s)
			if err != nil {
				t.Fatal(err)
			}
			in := img.Info.Intrinsics
			for i, z := range img.Depth {
				u, v := float64(i%in.Width), float64(i/in.Width)
				body := mgl64.Vec3{1, -(u - in.Cx) / in.Fx, -(v - in.Cy) / in.Fy}
				got := float64(z)
				if !math.IsInf(got, 0) {
					got *= body.Len() // depth along x -> range along the ray
				}
				// float32 depths: a few parts in 1e7.
				if err := checkBeam(tris, o, toWorld(body), 0.02*body.Len(), 8*body.Len(), 1e-6*(1+got), got); err != nil {
					fail(se.Name, i, err)
				}
				checked++
			}
		}
	}
	if bad > 10 {
		t.Errorf("%s: %d beams in all disagree with the reference", label, bad)
	}
	return checked
}

// FuzzExactRanges builds a scene of surfaces that test what a range is
// (slivers and needles a ten-thousandth of a GPU pixel wide, coplanar
// and touching triangles, a triangle of no area, surfaces inside the
// views' near region and beyond range_max, masked cards with random
// masks, nearest and linear, repeating, a blended card either side of the
// threshold) around a sensor at a random pose, seeded, and holds every
// beam of a laser, a 3D lidar and a depth camera, on both backends, to the
// brute-force reference. `make fuzz` tries more seeds.
func FuzzExactRanges(f *testing.F) {
	for _, seed := range []uint64{1, 2, 3} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		for _, backend := range []string{sensors.BackendCPU, sensors.BackendGPU} {
			s, pose := trickyScene(t, seed, backend)
			n := checkSensors(t, s, fmt.Sprintf("seed %d, %s backend, sensor at %v", seed, backend, pose))
			t.Logf("seed %d, %s backend: %d beams", seed, backend, n)
			if n < 3000 {
				t.Fatalf("only %d beams checked", n)
			}
		}
	})
}

// A quad of eight vertical stripes, alternately opaque and cut away (a
// NEAREST mask), 3 m in front of the sensors, a wall at 6 m: every
// backend's laser and depth camera return the quad on the stripes and the
// wall through the gaps, to closed forms, and segmentation labels the
// pixels likewise.
func TestMaskedStripes(t *testing.T) {
	dir := t.TempDir()
	stripes := image.NewNRGBA(image.Rect(0, 0, 8, 1))
	for i := 0; i < 8; i++ {
		stripes.Pix[4*i+3] = uint8(255 * ((i + 1) % 2)) // stripes 0, 2, 4, 6 opaque
	}
	testkit.WriteModel(t, dir, "stripes.glb", func(m *models.Model) {
		mat := &models.Material{Name: "stripes", BaseColor: [4]float32{1, 1, 1, 1}, AlphaMode: models.AlphaMask, AlphaCutoff: 0.5,
			DoubleSided: true, Roughness: 1, BaseColorTexture: stripes,
			Sampler: models.Sampler{MagFilter: models.FilterNearest, MinFilter: models.FilterNearest}}
		// In the plane x = 3, y from +1 (u = 0) to -1 (u = 1), z from +1
		// (v = 0) to -1, around the sensors' height.
		p := &models.Primitive{Material: mat,
			Positions: []mgl32.Vec3{{3, 1, 1}, {3, -1, 1}, {3, -1, -1}, {3, 1, -1}},
			Normals:   []mgl32.Vec3{{-1, 0, 0}, {-1, 0, 0}, {-1, 0, 0}, {-1, 0, 0}},
			TexCoords: []mgl32.Vec2{{0, 0}, {1, 0}, {1, 1}, {0, 1}},
			Indices:   []uint32{0, 1, 2, 0, 2, 3}}
		p.UpdateKey()
		m.AddNode(nil, "stripes", mgl64.Ident4(), &models.Mesh{Name: "stripes", Primitives: []*models.Primitive{p}})
	})
	testkit.WriteModel(t, dir, "wall.glb", func(m *models.Model) {
		// Its face at x = 6 exactly: float32 vertices at ±0.25, a float64 offset.
		m.AddNode(nil, "wall", mgl64.Translate3D(6.25, 0, 0), models.Box("wall", 0.5, 20, 10, [4]float32{1, 1, 1, 1}))
	})
	opaqueAt := func(y float64) (opaque, clear bool) { // clear: not within a rounding of a border
		s := (1 - y) / 2 * 8
		return int(math.Floor(s))%2 == 0, math.Abs(s-math.Round(s)) > 1e-3
	}
	for _, backend := range []string{sensors.BackendCPU, sensors.BackendGPU} {
		s := testkit.LoadXML(t, dir, fmt.Sprintf(`<scene>
  <part file="stripes.glb" name="STRIPES" pose_offset="0 0 1 0 0 0"/>
  <part file="wall.glb" name="WALL" pose_offset="0 0 1 0 0 0"/>
  <sensor type="laser" name="L" pose_offset="0 0 1 0 0 0" angle_min="-15" angle_max="15" resolution="0.1" range_max="20" backend="%[1]s"/>
  <sensor type="depth" name="D" pose_offset="0 0 1 0 0 0" width="96" height="32" fov="30" range_max="20" backend="%[1]s"/>
  <sensor type="segmentation" name="S" pose_offset="0 0 1 0 0 0" width="96" height="32" fov="30" far="20"/>
</scene>`, backend))
		r := testkit.Renderer(t)
		l := s.Sensors()[0].Sensor.(*sensors.Laser)
		sc, err := l.Scan(r, s)
		if err != nil {
			t.Fatal(err)
		}
		hits := [2]int{}
		for i, got := range sc.Ranges {
			a := sc.AngleMin + float64(i)*sc.AngleIncrement
			opaque, clear := opaqueAt(3 * math.Tan(a))
			if !clear {
				continue
			}
			want := 6 / math.Cos(a)
			if opaque {
				want = 3 / math.Cos(a)
				hits[0]++
			} else {
				hits[1]++
			}
			if math.Abs(got-want) > 1e-9 {
				t.Errorf("%s laser, beam %d (%.2f°): %.9f m, want %.9f (%s)", backend, i, a*180/math.Pi, got, want, map[bool]string{true: "stripe", false: "gap"}[opaque])
			}
		}
		if hits[0] < 100 || hits[1] < 100 {
			t.Errorf("%s laser: %d beams on stripes, %d through gaps, want both many", backend, hits[0], hits[1])
		}
		d := s.Sensors()[1].Sensor.(*sensors.DepthCamera)
		img, err := d.Depth(r, s)
		if err != nil {
			t.Fatal(err)
		}
		in := img.Info.Intrinsics
		sg := s.Sensors()[2].Sensor.(*sensors.Segmentation)
		seg, err := sg.Segment(r, s)
		if err != nil {
			t.Fatal(err)
		}
		for k, z := range img.Depth {
			u := float64(k % in.Width)
			opaque, clear := opaqueAt(-3 * (u - in.Cx) / in.Fx)
			if !clear {
				continue
			}
			want, part := 6.0, "WALL"
			if opaque {
				want, part = 3, "STRIPES"
			}
			if math.Abs(float64(z)-want) > 1e-6 {
				t.Errorf("%s depth, pixel %d: %v m, want %v", backend, k, z, want)
			}
			if name := seg.Labels.Instances[fmt.Sprint(seg.Instance[k])].Name; name != part {
				t.Errorf("segmentation, pixel %d: %q, want %q", k, name, part)
			}
		}
	}
}

// RAVON's 3D lidar through its bushes and tree crowns: every beam that
// meets a leaf card (as a whole quad) returns a leaf where the mask keeps
// one and what lies behind through the gaps, on both backends, equal to
// the brute-force reference; both kinds occur by the hundred.
func TestRavonLidarThroughLeaves(t *testing.T) {
	s := loadRavon(t)
	tris := refScene(t, s)
	var cards []refTriangle
	for _, rt := range tris {
		if rt.mat != nil && rt.mat.AlphaMode == models.AlphaMask {
			whole := rt
			whole.mat = nil // the card as a whole quad
			cards = append(cards, whole)
		}
	}
	if len(cards) == 0 {
		t.Fatal("no masked leaf cards in the RAVON scene")
	}
	r := testkit.Renderer(t)
	backends := []string{sensors.BackendCPU, sensors.BackendGPU}
	var scans [2][]float64
	for b, backend := range backends {
		for _, se := range s.Sensors() {
			if se.Name == "LIDAR" {
				if err := sensors.SetBackend(se.Sensor, backend); err != nil {
					t.Fatal(err)
				}
				cl, err := se.Sensor.(*sensors.Laser3D).Scan(r, s)
				if err != nil {
					t.Fatal(err)
				}
				scans[b] = cl.Ranges
			}
		}
	}
	world, err := s.Transform("LIDAR", scene.WorldFrame)
	if err != nil {
		t.Fatal(err)
	}
	o := world.Col(3).Vec3()
	const columns = 900
	leaves, through, bad := 0, 0, 0
	for i, got := range scans[0] {
		// 16 layers from -15° every 2°, 900 columns from -180° every 0.4°.
		el, az := (-15+2*float64(i/columns))*math.Pi/180, (-180+0.4*float64(i%columns))*math.Pi/180
		d := world.Mul4x1(mgl64.Vec3{math.Cos(el) * math.Cos(az), math.Cos(el) * math.Sin(az), math.Sin(el)}.Vec4(0)).Vec3().Normalize()
		card := math.Inf(1)
		for k := range cards {
			if t, strict, _ := cards[k].refHit(o, d); strict {
				card = math.Min(card, t)
			}
		}
		if math.IsInf(card, 1) || card > 100 {
			continue // no leaf card on this beam within range
		}
		if err := checkBeam(tris, o, d, 0.05, 100, 1e-9, got, scans[1][i]); err != nil {
			bad++
			if bad <= 10 {
				t.Errorf("LIDAR beam %d (cpu %v, gpu %v): %v", i, got, scans[1][i], err)
			}
			continue
		}
		switch {
		case math.Abs(got-card) <= 1e-9:
			leaves++
		case got > card:
			through++
		}
	}
	t.Logf("%d beams meet a leaf card: %d return a leaf, %d pass through a gap", leaves+through+bad, leaves, through)
	if leaves < 100 || through < 100 {
		t.Errorf("%d beams return leaves and %d pass through gaps, want both by the hundred", leaves, through)
	}
}
