package gpucast_test

import (
	"image"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/go-gl/mathgl/mgl64"
	_ "github.com/simvis/simvis/elements"
	"github.com/simvis/simvis/internal/gpu"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
	"github.com/simvis/simvis/sensors/gpucast"
	"github.com/simvis/simvis/sensors/raycast"
)

// world is a scene's CPU caster and its range sensors' rays.
type world struct {
	c       *raycast.Caster
	origins []mgl64.Vec3
	dirs    [][]mgl64.Vec3
}

func loadWorld(t testing.TB, file string) *world {
	t.Helper()
	s, err := scene.Load(file, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return worldOf(t, s, raycast.New())
}

// worldOf syncs c with s and takes s's range sensors' rays.
func worldOf(t testing.TB, s *scene.Scene, c *raycast.Caster) *world {
	t.Helper()
	w := &world{c: c}
	w.c.Sync(s)
	for _, se := range s.Sensors() {
		o, dirs, ok, err := sensors.WorldRays(s, se.Sensor)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			w.origins = append(w.origins, o)
			w.dirs = append(w.dirs, dirs)
		}
	}
	return w
}

func newContext(t testing.TB) *gpu.Context {
	t.Helper()
	ctx, err := gpu.New()
	if err != nil {
		t.Skipf("no GL context: %v", err)
	}
	t.Cleanup(func() { ctx.Close() })
	return ctx
}

// compare casts every sensor's rays on the GPU in one batch, and each
// set with the CPU caster (CastSerial; CastBatch where rays carry bounds),
// and fails on any distance whose bits differ. With bounds, ray k's bound
// is by turns the next float64 above its unbounded CPU distance, that
// distance (where the hit itself is not taken: bounds are strict) and
// twice it.
func compare(t *testing.T, g *gpucast.Caster, w *world, tmax float64, bounds bool) {
	t.Helper()
	if err := g.Sync(w.c); err != nil {
		t.Fatal(err)
	}
	sets := make([]raycast.Rays, len(w.dirs))
	want := make([]raycast.Rays, len(w.dirs))
	for i := range sets {
		sets[i] = raycast.Rays{Origin: w.origins[i], Dirs: w.dirs[i], TMax: tmax, Out: make([]float64, len(w.dirs[i]))}
		want[i] = sets[i]
		want[i].Out = make([]float64, len(w.dirs[i]))
		if bounds {
			b := make([]float64, len(w.dirs[i]))
			w.c.CastSerial(w.origins[i], w.dirs[i], tmax, b)
			for k := range b {
				switch k % 3 {
				case 0:
					b[k] = math.Nextafter(b[k], math.Inf(1))
				case 2:
					b[k] *= 2
				}
			}
			sets[i].Bounds, want[i].Bounds = b, b
		}
	}
	if err := g.CastBatch(sets); err != nil {
		t.Fatal(err)
	}
	if bounds {
		w.c.CastBatch(want)
	} else {
		for _, rs := range want {
			w.c.CastSerial(rs.Origin, rs.Dirs, tmax, rs.Out)
		}
	}
	rays, hits, bad := 0, 0, 0
	for i, rs := range sets {
		if rs.Err != nil || want[i].Err != nil {
			t.Fatalf("set %d: %v / %v", i, rs.Err, want[i].Err)
		}
		for k, wt := range want[i].Out {
			rays++
			if !math.IsInf(wt, 1) {
				hits++
			}
			if math.Float64bits(rs.Out[k]) != math.Float64bits(wt) {
				if bad < 10 {
					t.Errorf("sensor %d ray %d (dir %v): GPU %v (%#x), CPU %v (%#x)", i, k, rs.Dirs[k], rs.Out[k], math.Float64bits(rs.Out[k]), wt, math.Float64bits(wt))
				}
				bad++
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d distances differ", bad, rays)
	}
	if hits == 0 {
		t.Fatalf("no ray of %d hit anything: the comparison proves nothing", rays)
	}
	t.Logf("%d rays in %d sets (bounds per ray: %v), %d hits: every distance bit for bit the CPU caster's", rays, len(sets), bounds, hits)
}

// casters are New's caster and one whose shader corrects every quotient
// from a guess up to 24 ulps off: the path of devices whose float64
// division is not IEEE 754's (NVIDIA's), taken here on any device; with
// the fused multiply-add where the device's is exact, else with Dekker's
// product.
func casters(t *testing.T, ctx *gpu.Context) []*gpucast.Caster {
	t.Helper()
	g, err := gpucast.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	p, err := gpucast.NewWithDivision(ctx, gpucast.Perturbed(gpucast.CorrectedOn(ctx)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return []*gpucast.Caster{g, p}
}

func TestMarvinBitForBit(t *testing.T) {
	ctx := newContext(t)
	w := loadWorld(t, "../../scenes/marvin/scene.xml")
	for _, g := range casters(t, ctx) {
		t.Logf("%s division", gpucast.DivisionOf(g))
		compare(t, g, w, math.Inf(1), false)
		compare(t, g, w, 2.5, false) // a bound that cuts some rays short
		compare(t, g, w, math.Inf(1), true)
	}
}

// benchScenes writes the benchmark scenes (50 MARVINs, the 1M-triangle
// cave) once per test binary.
var benchScenes struct {
	once  sync.Once
	files []string
	err   error
}

func benchScene(t testing.TB, i int) string {
	t.Helper()
	benchScenes.once.Do(func() {
		dir, err := os.MkdirTemp("", "simvis-gpucast-")
		if err != nil {
			benchScenes.err = err
			return
		}
		benchScenes.files, benchScenes.err = sensors.WriteBenchScenes(dir, "../../scenes/marvin")
	})
	if benchScenes.err != nil {
		t.Fatal(benchScenes.err)
	}
	return benchScenes.files[i]
}

// The 150 scanners of 50 MARVINs, and the cave of 1,000,000 triangles
// (its scanner and 640x480 depth camera).
func TestBenchScenesBitForBit(t *testing.T) {
	ctx := newContext(t)
	g, err := gpucast.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for i, name := range []string{"marvin50", "mesh1m"} {
		t.Run(name, func(t *testing.T) {
			w := loadWorld(t, benchScene(t, i))
			t.Logf("%d triangles", w.c.Triangles())
			compare(t, g, w, math.Inf(1), false)
			compare(t, g, w, math.Inf(1), true)
		})
	}
}

// MARVIN driven and its scanner tilted: each move rebuilds the hierarchy
// over the instances, which Sync sends again (the geometries stay), and
// the distances stay the CPU caster's.
func TestMovingMarvinBitForBit(t *testing.T) {
	ctx := newContext(t)
	g, err := gpucast.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s, err := scene.Load("../../scenes/marvin/scene.xml", scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := raycast.New()
	for i, mv := range []struct{ x, yaw, tilt float64 }{{-2, 20, 10}, {0.5, -35, -30}, {1.25, 170, 45}} {
		for _, set := range []struct {
			el, p string
			v     float64
		}{{"M_POSE", "x", mv.x}, {"M_POSE", "yaw", mv.yaw}, {"TILT", "angle", mv.tilt}} {
			if err := s.Set(set.el, set.p, set.v); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Update(); err != nil {
			t.Fatal(err)
		}
		w := worldOf(t, s, c)
		if c.Builds() != i+1 {
			t.Fatalf("move %d: %d builds", i, c.Builds())
		}
		compare(t, g, w, math.Inf(1), false)
	}
}

// RAVON's foliage is alpha-masked (models.Cutout): its lidar's, lasers'
// and depth camera's rays pass through the leaves where the texel is cut
// away, on the GPU as on the CPU, to the bit.
func TestRavonBitForBit(t *testing.T) {
	ctx := newContext(t)
	g, err := gpucast.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s, err := scene.Load("../../scenes/ravon/scene.xml", scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := raycast.New()
	w := worldOf(t, s, c)
	t.Logf("%d triangles", w.c.Triangles())
	compare(t, g, w, math.Inf(1), false)
	compare(t, g, w, 7.5, false)
	compare(t, g, w, math.Inf(1), true)
	// The leaves' opacity changed, the robot turned, then no leaves at
	// all (the hierarchy rebuilt and sent again).
	for _, set := range []struct {
		el, p string
		v     float64
	}{{"LEAVES", "opacity", 0.5}, {"R_POSE", "yaw", 40}, {"LEAVES", "opacity", 0}} {
		if err := s.Set(set.el, set.p, set.v); err != nil {
			t.Fatal(err)
		}
		if err := s.Update(); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s.%s = %g", set.el, set.p, set.v)
		compare(t, g, worldOf(t, s, c), math.Inf(1), false)
	}
}

// Quads with alpha textures before an opaque wall: each filter with each
// wrap mode (texture coordinates well outside [0, 1], some at texel
// indices past 2^31 and past 2^53, where only an exact fmod finds the
// texel), a material cut away everywhere, under an instance transform.
// Every distance is the CPU caster's, bit for bit, and some rays pass
// through each quad while others stop on it.
func TestCutoutsBitForBit(t *testing.T) {
	ctx := newContext(t)
	gs := casters(t, ctx)
	rng := rand.New(rand.NewPCG(3, 31))
	img := image.NewNRGBA(image.Rect(0, 0, 7, 5))
	for i := range img.Pix {
		img.Pix[i] = uint8(rng.IntN(256))
	}
	modes := []int{models.WrapRepeat, models.WrapClampToEdge, models.WrapMirroredRepeat}
	type quad struct {
		m         *models.Material
		uv0, span float64
	}
	var quads []quad
	for _, nearest := range []bool{true, false} {
		for i, ms := range modes {
			s := models.Sampler{WrapS: ms, WrapT: modes[(i+1)%3]}
			if nearest {
				s.MagFilter = models.FilterNearest
			}
			quads = append(quads, quad{&models.Material{BaseColor: [4]float32{1, 1, 1, 0.9}, BaseColorTexture: img, Sampler: s,
				AlphaMode: models.AlphaMask, AlphaCutoff: 0.4}, -2.3, 5.1})
			s.WrapS, s.WrapT = s.WrapT, s.WrapS
			for _, uv0 := range []float64{-3.7e9, 1.9e16} {
				quads = append(quads, quad{&models.Material{BaseColor: [4]float32{1, 1, 1, 1}, BaseColorTexture: img, Sampler: s,
					AlphaMode: models.AlphaBlend}, uv0, math.Abs(uv0) * 1e-5})
			}
		}
	}
	quads = append(quads, quad{&models.Material{BaseColor: [4]float32{1, 1, 1, 0.2}, AlphaMode: models.AlphaBlend}, 0, 1}) // cut away everywhere
	wall := raycast.NewGeometry(gridQuad(&models.Material{BaseColor: [4]float32{1, 1, 1, 1}}, 0, 1))
	for qi, q := range quads {
		// The quad tilted a little about z, the wall behind it.
		from := mgl64.Translate3D(0, 0.01, 0).Mul4(mgl64.HomogRotate3DZ(0.05))
		back := mgl64.Translate3D(1, 0, 0).Mul4(mgl64.Scale3D(1, 3, 3))
		c := raycast.New()
		c.Place([]raycast.Placement{
			{Geom: raycast.NewGeometry(gridQuad(q.m, q.uv0, q.span)), FromLocal: from, ToLocal: from.Inv()},
			{Geom: wall, FromLocal: back, ToLocal: back.Inv()},
		})
		w := &world{c: c}
		for _, o := range []mgl64.Vec3{{-3, 0.013, -0.021}, {-1.1, -0.3, 0.2}} {
			var dirs []mgl64.Vec3
			for i := 0; i < 100; i++ {
				for j := 0; j < 100; j++ {
					dirs = append(dirs, mgl64.Vec3{1, -0.3 + 0.6*float64(i)/99, -0.3 + 0.6*float64(j)/99})
				}
			}
			w.origins, w.dirs = append(w.origins, o), append(w.dirs, dirs)
		}
		far := make([]float64, len(w.dirs[0]))
		c.CastSerial(w.origins[0], w.dirs[0], math.Inf(1), far)
		through := 0
		for _, t := range far {
			if t > 3.5 {
				through++
			}
		}
		if through == 0 || (through == len(far)) != (qi == len(quads)-1) {
			t.Fatalf("quad %d: %d of %d rays pass it: the test proves too little", qi, through, len(far))
		}
		for _, g := range gs {
			compare(t, g, w, math.Inf(1), false)
			compare(t, g, w, 3.9, false)
			compare(t, g, w, math.Inf(1), true)
		}
	}
}

// gridQuad is the square [-1, 1]^2 in the y-z plane in 8x8 cells, texture
// coordinates from uv0 over span (a little more in v).
func gridQuad(m *models.Material, uv0, span float64) *models.Primitive {
	const n = 8
	p := &models.Primitive{Material: m}
	for i := 0; i <= n; i++ {
		for j := 0; j <= n; j++ {
			a, b := float64(i)/n, float64(j)/n
			p.Positions = append(p.Positions, mgl32.Vec3{0, float32(2*a - 1), float32(2*b - 1)})
			p.Normals = append(p.Normals, mgl32.Vec3{1, 0, 0})
			p.TexCoords = append(p.TexCoords, mgl32.Vec2{float32(uv0 + span*a), float32(uv0 + 1.3*span*b)})
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			k := uint32(i*(n+1) + j)
			p.Indices = append(p.Indices, k, k+n+1, k+1, k+1, k+n+1, k+n+2)
		}
	}
	return p
}

// unitBox is a compute caster synced to a CPU caster holding one box of
// side 1 at the origin.
func unitBox(t *testing.T) (*gpucast.Caster, *raycast.Caster) {
	t.Helper()
	ctx := newContext(t)
	g, err := gpucast.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	c := raycast.New()
	c.Place([]raycast.Placement{{Geom: raycast.NewGeometry(models.Box("b", 1, 1, 1, [4]float32{1, 1, 1, 1}).Primitives[0]),
		FromLocal: mgl64.Ident4(), ToLocal: mgl64.Ident4()}})
	if err := g.Sync(c); err != nil {
		t.Fatal(err)
	}
	return g, c
}

// Sets with too few distances or bounds get an error each and are not
// cast; the others are.
func TestShortSets(t *testing.T) {
	g, _ := unitBox(t)
	dirs := []mgl64.Vec3{{1, 0, 0}, {0, 1, 0}}
	o := mgl64.Vec3{-3, 0, 0}
	sets := []raycast.Rays{
		{Origin: o, Dirs: dirs, TMax: 10, Out: make([]float64, 1)},
		{Origin: o, Dirs: dirs, Bounds: []float64{10}, Out: make([]float64, 2)},
		{Origin: o, Dirs: dirs, TMax: 10, Out: make([]float64, 2)},
	}
	if err := g.CastBatch(sets); err != nil {
		t.Fatal(err)
	}
	if sets[0].Err == nil || sets[1].Err == nil || sets[2].Err != nil {
		t.Fatalf("errors %v, %v, %v: want the first two only", sets[0].Err, sets[1].Err, sets[2].Err)
	}
	if got := sets[2].Out; got[0] != 2.5 || !math.IsInf(got[1], 1) {
		t.Fatalf("distances %v, want [2.5 +Inf]", got)
	}
}

// Prepare fills each set's directions before they are sent, in chunks on
// all cores for a large batch; a Prepare that panics leaves its set an
// Err and the others cast.
func TestPrepare(t *testing.T) {
	g, c := unitBox(t)
	const perSet = 3001
	dirOf := func(si, i int) mgl64.Vec3 {
		a := float64(i)/perSet*2*math.Pi + float64(si)
		return mgl64.Vec3{math.Cos(a), math.Sin(a), 0.1 * float64(si-2)}
	}
	o := mgl64.Vec3{-0.2, 0.1, 0}
	sets := make([]raycast.Rays, 5)
	for si := range sets {
		rs := &sets[si]
		rs.Origin, rs.TMax = o, 10
		rs.Dirs, rs.Out = make([]mgl64.Vec3, perSet), make([]float64, perSet)
		rs.Prepare = func(lo, hi int) {
			if si == 3 && lo <= 2000 && 2000 < hi {
				panic("a sensor's bug")
			}
			for i := lo; i < hi; i++ {
				rs.Dirs[i] = dirOf(si, i)
			}
		}
	}
	if err := g.CastBatch(sets); err != nil {
		t.Fatal(err)
	}
	for si, rs := range sets {
		if (rs.Err != nil) != (si == 3) {
			t.Fatalf("set %d: error %v", si, rs.Err)
		}
		if si == 3 {
			if want := "preparing rays 1024-2048: a sensor's bug"; rs.Err.Error() != want {
				t.Fatalf("set 3: error %q, want %q", rs.Err, want)
			}
			continue
		}
		want := make([]float64, perSet)
		dirs := make([]mgl64.Vec3, perSet)
		for i := range dirs {
			dirs[i] = dirOf(si, i)
		}
		c.CastSerial(o, dirs, 10, want)
		for i := range want {
			if math.Float64bits(rs.Out[i]) != math.Float64bits(want[i]) || math.IsInf(want[i], 0) {
				t.Fatalf("set %d ray %d: %v on the GPU, %v on the CPU", si, i, rs.Out[i], want[i])
			}
		}
	}
}
