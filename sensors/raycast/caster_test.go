package raycast_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/simvis/simvis/internal/testkit"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/go-gl/mathgl/mgl64"

	_ "github.com/simvis/simvis/elements"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors/raycast"
)

func writeModel(t testing.TB, dir, file string, mesh *models.Mesh, local mgl64.Mat4) {
	t.Helper()
	m := models.NewModel(file)
	m.AddNode(nil, "n", local, mesh)
	if err := models.Write(filepath.Join(dir, file), m); err != nil {
		t.Fatal(err)
	}
}

// In a 8 x 6 m room, a ray from (1, 0.5, 1) at azimuth a meets the walls at
// the nearest of the x and y walls: the closed form below.
func TestRoomClosedForm(t *testing.T) {
	dir := t.TempDir()
	writeModel(t, dir, "room.glb", models.Box("room", 8, 6, 3, [4]float32{1, 1, 1, 1}), mgl64.Translate3D(0, 0, 1.5))
	s := testkit.LoadXML(t, dir, `<part file="room.glb" name="ROOM"/>`)
	c := raycast.New()
	c.Sync(s)
	o := mgl64.Vec3{1, 0.5, 1}
	for a := -180.0; a < 180; a += 0.37 {
		rad := a * math.Pi / 180
		d := mgl64.Vec3{math.Cos(rad), math.Sin(rad), 0}
		want := math.Inf(1)
		if d[0] > 1e-12 {
			want = math.Min(want, (4-o[0])/d[0])
		} else if d[0] < -1e-12 {
			want = math.Min(want, (-4-o[0])/d[0])
		}
		if d[1] > 1e-12 {
			want = math.Min(want, (3-o[1])/d[1])
		} else if d[1] < -1e-12 {
			want = math.Min(want, (-3-o[1])/d[1])
		}
		got, ok := c.Cast(o, d, 100)
		if !ok || math.Abs(got-want) > 1e-9 {
			t.Fatalf("azimuth %.2f°: range %v (hit %v), want %v", a, got, ok, want)
		}
	}
	if r, ok := c.Cast(o, mgl64.Vec3{1, 0, 0}, 2); ok || !math.IsInf(r, 1) {
		t.Errorf("wall beyond tmax: range %v hit %v, want +Inf and no hit", r, ok)
	}
}

// A plane tilted by 30° about y, 5 m ahead, placed by a pose element: the
// range along a direction d to the plane n·p = c is c / n·d.
func TestTiltedPlaneMovedByElement(t *testing.T) {
	dir := t.TempDir()
	writeModel(t, dir, "plane.glb", models.Box("wall", 0.01, 20, 20, [4]float32{1, 1, 1, 1}), mgl64.Ident4())
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="plane.glb" name="WALL"/>
  <element type="pose" name="P" insert_at="WALL" x="5" pitch="30"/>
</scene>`)
	c := raycast.New()
	c.Sync(s)
	// The wall's near face: normal R·(-x), through (5,0,0) - 0.005·R·x.
	rx := scene.Pose{Pitch: 30}.Matrix().Mul4x1(mgl64.Vec4{1, 0, 0, 0}).Vec3()
	face := mgl64.Vec3{5, 0, 0}.Sub(rx.Mul(0.005))
	for _, d := range []mgl64.Vec3{{1, 0, 0}, {1, 0.3, 0.2}, {1, -0.5, -0.4}} {
		d = d.Normalize()
		want := face.Dot(rx) / d.Dot(rx)
		if got, _ := c.Cast(mgl64.Vec3{}, d, 100); math.Abs(got-want) > 1e-9 {
			t.Errorf("direction %v: %v, want %v", d, got, want)
		}
	}
	if err := s.Set("P", "x", 7); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(); err != nil {
		t.Fatal(err)
	}
	c.Sync(s)
	if got, _ := c.Cast(mgl64.Vec3{}, mgl64.Vec3{1, 0, 0}, 100); math.Abs(got-(7-0.005/math.Cos(math.Pi/6))) > 1e-9 {
		t.Errorf("after moving the wall to x = 7: %v", got)
	}
}

// Switched-off and sensed="false" geometry is not hit.
func TestHiddenAndUnsensedAreNotHit(t *testing.T) {
	dir := t.TempDir()
	writeModel(t, dir, "b.glb", models.Box("b", 1, 1, 1, [4]float32{1, 1, 1, 1}), mgl64.Ident4())
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="b.glb" name="FAR" pose_offset="10 0 0 0 0 0"/>
  <part file="b.glb" name="GHOST" pose_offset="4 0 0 0 0 0" sensed="false"/>
  <part file="b.glb" name="NEAR" pose_offset="2 0 0 0 0 0"/>
  <element type="switch" name="SW" insert_at="NEAR" on="0"/>
</scene>`)
	c := raycast.New()
	c.Sync(s)
	if got, _ := c.Cast(mgl64.Vec3{}, mgl64.Vec3{1, 0, 0}, 100); got != 9.5 {
		t.Errorf("range %v, want 9.5 (FAR; GHOST unsensed, NEAR off)", got)
	}
	if err := s.Set("SW", "on", 1); err != nil {
		t.Fatal(err)
	}
	s.Update()
	c.Sync(s)
	if got, _ := c.Cast(mgl64.Vec3{}, mgl64.Vec3{1, 0, 0}, 100); got != 1.5 {
		t.Errorf("range %v, want 1.5 (NEAR switched on)", got)
	}
}

// A scene without surfaces (only sensors, or all switched off) returns no
// hit for any ray instead of walking an empty tree.
func TestEmptySceneHasNoHits(t *testing.T) {
	s := testkit.LoadXML(t, t.TempDir(), `<scene><element type="pose" name="P" insert_at="ROOT"/></scene>`)
	c := raycast.New()
	c.Sync(s)
	for _, dir := range []mgl64.Vec3{{1, 0, 0}, {0, 0, -1}, {0.3, -0.4, 0.5}} {
		if got, ok := c.Cast(mgl64.Vec3{1, 2, 3}, dir.Normalize(), 100); ok || !math.IsInf(got, 1) && got != 100 {
			t.Errorf("ray %v in an empty scene: %v %v", dir, got, ok)
		}
	}
}

// soup is a mesh of random triangles.
func soup(n int, rng *rand.Rand) *models.Mesh {
	p := &models.Primitive{Material: models.DefaultMaterial()}
	for i := 0; i < n; i++ {
		c := mgl32.Vec3{float32(rng.Float64()*20 - 10), float32(rng.Float64()*20 - 10), float32(rng.Float64()*20 - 10)}
		for k := 0; k < 3; k++ {
			d := mgl32.Vec3{float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(rng.NormFloat64())}
			p.Positions = append(p.Positions, c.Add(d))
			p.Normals = append(p.Normals, mgl32.Vec3{0, 0, 1})
			p.Indices = append(p.Indices, uint32(3*i+k))
		}
	}
	p.UpdateKey()
	return &models.Mesh{Name: "soup", Primitives: []*models.Primitive{p}}
}

// The hierarchy finds exactly the hit that testing every triangle finds.
func TestMatchesBruteForce(t *testing.T) {
	for _, n := range []int{3000, 6000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { matchesBruteForce(t, n) })
	}
}

func matchesBruteForce(t *testing.T, n int) {
	rng := rand.New(rand.NewPCG(1, 2))
	mesh := soup(n, rng)
	dir := t.TempDir()
	writeModel(t, dir, "soup.glb", mesh, mgl64.Ident4())
	s := testkit.LoadXML(t, dir, `<part file="soup.glb" name="SOUP" pose_offset="0.5 -0.25 0.1 10 20 30"/>`)
	c := raycast.New()
	c.Sync(s)
	inst := s.SensedMeshes(nil)
	if len(inst) != 1 || c.Triangles() != n {
		t.Fatalf("%d instances, %d triangles", len(inst), c.Triangles())
	}
	world := inst[0].World
	prim := inst[0].Mesh.Primitives[0]
	for i := 0; i < 1000; i++ {
		o := mgl64.Vec3{rng.Float64()*30 - 15, rng.Float64()*30 - 15, rng.Float64()*30 - 15}
		d := mgl64.Vec3{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}.Normalize()
		want := math.Inf(1)
		for k := 0; k+2 < len(prim.Indices); k += 3 {
			var v [3]mgl64.Vec3
			for j := range v {
				q := prim.Positions[prim.Indices[k+j]]
				v[j] = world.Mul4x1(mgl64.Vec4{float64(q[0]), float64(q[1]), float64(q[2]), 1}).Vec3()
			}
			if tt, ok := bruteHit(o, d, v); ok && tt < want {
				want = tt
			}
		}
		got, _ := c.Cast(o, d, math.Inf(1))
		if got != want && math.Abs(got-want) > 1e-9*math.Max(1, want) {
			t.Fatalf("ray %d: BVH %v, brute force %v", i, got, want)
		}
	}
}

func bruteHit(o, d mgl64.Vec3, v [3]mgl64.Vec3) (float64, bool) {
	e1, e2 := v[1].Sub(v[0]), v[2].Sub(v[0])
	p := d.Cross(e2)
	det := e1.Dot(p)
	if det == 0 {
		return 0, false
	}
	s := o.Sub(v[0])
	u := s.Dot(p) / det
	q := s.Cross(e1)
	w := d.Dot(q) / det
	tt := e2.Dot(q) / det
	if u < 0 || w < 0 || u+w > 1 || tt <= 0 {
		return 0, false
	}
	return tt, true
}

// BenchmarkCast361 casts a 180° scan of 361 beams in the quickstart room.
func BenchmarkCast361(b *testing.B) {
	world, err := filepath.Abs("../../scenes/quickstart/world.gltf")
	if err != nil {
		b.Fatal(err)
	}
	s := testkit.LoadXML(b, b.TempDir(), `<part file="`+world+`" name="WORLD"/>`)
	c := raycast.New()
	c.Sync(s)
	dirs := make([]mgl64.Vec3, 361)
	for i := range dirs {
		a := (float64(i)/2 - 90) * math.Pi / 180
		dirs[i] = mgl64.Vec3{math.Cos(a), math.Sin(a), 0}
	}
	out := make([]float64, len(dirs))
	for b.Loop() {
		c.CastAll(mgl64.Vec3{-2, -1, 0.3}, dirs, 30, out)
	}
	b.ReportMetric(float64(b.N*len(dirs))/b.Elapsed().Seconds(), "beams/s")
}

// Near is false only when no triangle comes within the distance: inside a
// 2 m box, 0.5 m from its nearest wall, the walls are more than 0.4 m away
// and less than 0.6 m.
func TestGeometryNear(t *testing.T) {
	p := models.Box("box", 2, 2, 2, [4]float32{1, 1, 1, 1}).Primitives[0]
	g := raycast.NewGeometry(p)
	at := mgl64.Vec3{0.5, 0, 0}
	if g.Near(at, 0.4) {
		t.Error("Near(0.4) true 0.5 m from the nearest wall")
	}
	if !g.Near(at, 0.6) {
		t.Error("Near(0.6) false 0.5 m from a wall")
	}
	if !g.Near(mgl64.Vec3{3, 0, 0}, 2.1) || g.Near(mgl64.Vec3{3, 0, 0}, 1.9) {
		t.Error("outside, 2 m from the +x wall: wrong answer at 1.9 or 2.1 m")
	}
}
