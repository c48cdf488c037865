package raycast_test

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/go-gl/mathgl/mgl64"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/sensors/raycast"
)

// Sync keeps the hierarchy over the instances while nothing moved (the
// sensors of a cycle share it) and rebuilds it when something did: the
// ranges then follow the move.
func TestSyncRebuildsOnlyWhenMoved(t *testing.T) {
	dir := t.TempDir()
	writeModel(t, dir, "b.glb", models.Box("b", 1, 1, 1, [4]float32{1, 1, 1, 1}), mgl64.Ident4())
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="b.glb" name="A" pose_offset="3 0 0 0 0 0"/>
  <part file="b.glb" name="B" pose_offset="0 5 0 0 0 0"/>
  <element type="pose" name="P" insert_at="A" x="0"/>
</scene>`)
	c := raycast.New()
	for i := 0; i < 3; i++ {
		c.Sync(s)
	}
	if c.Builds() != 1 {
		t.Fatalf("%d builds after three syncs of an unchanged scene, want 1", c.Builds())
	}
	if got, _ := c.Cast(mgl64.Vec3{}, mgl64.Vec3{1, 0, 0}, 100); got != 2.5 {
		t.Fatalf("range %v, want 2.5", got)
	}
	if err := s.Set("P", "x", 4); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(); err != nil {
		t.Fatal(err)
	}
	c.Sync(s)
	c.Sync(s)
	if c.Builds() != 2 {
		t.Errorf("%d builds after a move, want 2", c.Builds())
	}
	if got, _ := c.Cast(mgl64.Vec3{}, mgl64.Vec3{1, 0, 0}, 100); got != 6.5 {
		t.Errorf("range %v after moving A 4 m further, want 6.5", got)
	}
	if got, _ := c.Cast(mgl64.Vec3{}, mgl64.Vec3{0, 1, 0}, 100); got != 4.5 {
		t.Errorf("range %v to B, want 4.5", got)
	}
}

// CastAll, on all cores, writes exactly what Cast returns beam by beam,
// and allocates nothing.
func TestCastAllMatchesCast(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	dir := t.TempDir()
	writeModel(t, dir, "soup.glb", soup(2000, rng), mgl64.Ident4())
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="soup.glb" name="S1" pose_offset="0.5 -0.25 0.1 10 20 30"/>
  <part file="soup.glb" name="S2" pose_offset="-4 2 1 -30 0 90"/>
</scene>`)
	c := raycast.New()
	c.Sync(s)
	dirs := make([]mgl64.Vec3, 5000)
	for i := range dirs {
		dirs[i] = mgl64.Vec3{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}.Normalize()
	}
	o := mgl64.Vec3{0.3, -0.2, 0.1}
	out := make([]float64, len(dirs))
	for _, tmax := range []float64{math.Inf(1), 6} {
		c.CastAll(o, dirs, tmax, out)
		hits := 0
		for i, d := range dirs {
			want, ok := c.Cast(o, d, tmax)
			if out[i] != want {
				t.Fatalf("tmax %v, beam %d: CastAll %v, Cast %v", tmax, i, out[i], want)
			}
			if ok {
				hits++
			}
		}
		if hits == 0 || hits == len(dirs) {
			t.Errorf("tmax %v: %d of %d beams hit: the test says nothing", tmax, hits, len(dirs))
		}
	}
	if n := testing.AllocsPerRun(20, func() { c.Sync(s); c.CastAll(o, dirs, math.Inf(1), out) }); n != 0 {
		t.Errorf("Sync and CastAll of an unchanged scene allocate %v times, want 0", n)
	}
}
