package layering

import (
	"slices"
	"testing"

	"github.com/g3n/engine/core"
	"github.com/g3n/engine/graphic"
	_ "github.com/simvis/simvis/elements"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/scene"
)

// lamp is an element of the test's own whose value is not kinematic (it
// does not say scene.Kinematic): a change may change how still meshes look.
type lamp struct{}

func (lamp) Params() []scene.Param { return []scene.Param{{Name: "on"}} }
func (lamp) Apply([]float64) error { return nil }

func init() {
	scene.RegisterElement("layering-test-lamp", func(*scene.Context) (scene.Element, error) { return lamp{}, nil })
}

// A frame's plan: a new key draws everything; the same key again builds
// the cache from every still mesh; then frames draw only what moves over
// it. A robot moved by its pose (kinematic) is drawn over the cache, which
// stays valid, until it has stood still for StillAfter; a lamp's value or
// a new key rebuilds.
func TestCachePlan(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "box.gltf", 1, 1, 1, [4]float32{1, 0, 0, 1})
	testkit.WriteBox(t, dir, "floor.gltf", 10, 10, 0.1, [4]float32{0.5, 0.5, 0.5, 1})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="floor.gltf" name="LAB"/>
  <part file="box.gltf" name="ROBOT" insert_at="LAB"/>
  <element type="pose" name="P" insert_at="ROBOT" x="1"/>
  <element type="layering-test-lamp" name="L" insert_at="LAB"/>
</scene>`)
	robot := graphics(t, s, "ROBOT")
	roots := []core.INode{s.G3N()}
	var c Cache[int]
	plan := func(key int) Step {
		t.Helper()
		if err := s.Update(); err != nil {
			t.Fatal(err)
		}
		return c.Plan(s, key, roots, false)
	}
	// drawnOver is what a frame draws over the cache.
	drawnOver := func() []*graphic.Graphic {
		c.HideStill()
		defer c.Restore()
		var out []*graphic.Graphic
		for _, e := range c.cur {
			if e.gr.Renderable() {
				out = append(out, e.gr)
			}
		}
		if len(out) != c.Drawn() {
			t.Errorf("Drawn() = %d, %d renderable", c.Drawn(), len(out))
		}
		return out
	}
	build := func(key, still int) {
		t.Helper()
		c.HideMoving()
		n := c.Drawn()
		c.Restore()
		c.Built(s, key)
		if n != still {
			t.Errorf("cache drawn with %d meshes, want the %d still ones", n, still)
		}
	}
	if got := plan(1); got != DrawAll {
		t.Fatalf("first frame: %v, want DrawAll", got)
	}
	if got := plan(1); got != Rebuild {
		t.Fatalf("same key: %v, want Rebuild", got)
	}
	build(1, 2)
	if got := plan(1); got != Overlay {
		t.Fatalf("nothing changed: %v, want Overlay", got)
	}
	if over := drawnOver(); len(over) != 0 {
		t.Errorf("nothing moves, %d meshes drawn over the cache", len(over))
	}
	for _, l := range c.hidden {
		t.Errorf("%p still hidden after Restore", l)
	}

	if err := s.Set("P", "x", 2); err != nil {
		t.Fatal(err)
	}
	if got := plan(1); got != Rebuild {
		// The robot was in the cache where it stood.
		t.Fatalf("robot moved: %v, want Rebuild", got)
	}
	build(1, 1) // only the floor now: the robot moved just now
	if got := plan(1); got != Overlay {
		t.Fatalf("robot moved, cache rebuilt: %v, want Overlay", got)
	}
	if over := drawnOver(); !slices.Equal(over, robot) {
		t.Errorf("drawn over the cache: %v, want the robot's %v", over, robot)
	}
	if err := s.Set("P", "x", 3); err != nil {
		t.Fatal(err)
	}
	if got := plan(1); got != Overlay {
		t.Fatalf("the moving robot moved again: %v, want Overlay (a pose's values are kinematic)", got)
	}
	if over := drawnOver(); !slices.Equal(over, robot) {
		t.Errorf("drawn over the cache: %v, want the robot's %v", over, robot)
	}

	if err := s.Set("L", "on", 1); err != nil {
		t.Fatal(err)
	}
	if got := plan(1); got != Rebuild {
		t.Fatalf("a lamp's value changed: %v, want Rebuild", got)
	}
	build(1, 1) // the robot moved less than StillAfter ago
	if got := plan(2); got != DrawAll {
		t.Fatalf("a new key: %v, want DrawAll", got)
	}
	if got := plan(2); got != Rebuild {
		t.Fatalf("the new key again: %v, want Rebuild", got)
	}
	if got := c.Plan(s, 2, roots, true); got != DrawAll {
		t.Fatalf("caching off: %v, want DrawAll", got)
	}
}

// graphics lists the renderable graphics under a part.
func graphics(t *testing.T, s *scene.Scene, part string) []*graphic.Graphic {
	var out []*graphic.Graphic
	var walk func(n core.INode)
	walk = func(n core.INode) {
		if ig, ok := n.(graphic.IGraphic); ok && ig.Renderable() {
			out = append(out, ig.GetGraphic())
		}
		for _, ch := range n.GetNode().Children() {
			walk(ch)
		}
	}
	for _, p := range s.Parts() {
		if p.Name == part {
			walk(p.Node.G3N())
			return out
		}
	}
	t.Fatalf("no part %s", part)
	return nil
}
