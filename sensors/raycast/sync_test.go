package raycast_test

import (
	"math"
	"runtime"
	"strings"
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

// Sync reads nothing while the scene's version is the one it read: a
// color change (a new version, nothing sensed changed) costs one walk and
// no rebuild, a move one walk and one rebuild, and a second scene synced
// with the same caster is read, never taken for the first.
func TestSyncSkipsUnchangedScene(t *testing.T) {
	dir := t.TempDir()
	writeModel(t, dir, "b.glb", models.Box("b", 1, 1, 1, [4]float32{1, 1, 1, 1}), mgl64.Ident4())
	xml := `<scene>
  <part file="b.glb" name="A" pose_offset="3 0 0 0 0 0"/>
  <element type="pose" name="P" insert_at="A"/>
  <element type="color" name="C" insert_at="A"/>
</scene>`
	s := testkit.LoadXML(t, dir, xml)
	c := raycast.New()
	for i := 0; i < 3; i++ {
		c.Sync(s)
	}
	if c.Walks() != 1 || c.Builds() != 1 {
		t.Fatalf("three syncs of an unchanged scene: %d walks, %d builds, want 1 and 1", c.Walks(), c.Builds())
	}
	step := func(what string, el, param string, v float64, walks, builds int, want float64) {
		t.Helper()
		if err := s.Set(el, param, v); err != nil {
			t.Fatal(err)
		}
		if err := s.Update(); err != nil {
			t.Fatal(err)
		}
		c.Sync(s)
		c.Sync(s)
		if c.Walks() != walks || c.Builds() != builds {
			t.Errorf("%s: %d walks, %d builds, want %d and %d", what, c.Walks(), c.Builds(), walks, builds)
		}
		if got, _ := c.Cast(mgl64.Vec3{}, mgl64.Vec3{1, 0, 0}, 100); got != want {
			t.Errorf("%s: range %v, want %v", what, got, want)
		}
	}
	step("color", "C", "r", 0.5, 2, 1, 2.5)
	step("move", "P", "x", 1, 3, 2, 3.5)
	// Another scene, the box 2 m further: read, not taken for the first.
	s2 := testkit.LoadXML(t, dir, strings.Replace(xml, `pose_offset="3 0 0`, `pose_offset="5 0 0`, 1))
	c.Sync(s2)
	if got, _ := c.Cast(mgl64.Vec3{}, mgl64.Vec3{1, 0, 0}, 100); got != 4.5 || c.Walks() != 4 {
		t.Errorf("second scene: range %v after %d walks, want 4.5 after 4", got, c.Walks())
	}
	// Placed by hand, then the first scene again: read and rebuilt.
	c.Place(nil)
	c.Sync(s)
	if got, _ := c.Cast(mgl64.Vec3{}, mgl64.Vec3{1, 0, 0}, 100); got != 3.5 || c.Walks() != 5 {
		t.Errorf("after Place: range %v after %d walks, want 3.5 after 5", got, c.Walks())
	}
}

// CastAll, on all cores, writes exactly what Cast returns beam by beam,
// and allocates nothing.
func TestCastAllMatchesCast(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	c, s, rng := soupScene(t)
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
