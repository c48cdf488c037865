package scene_test

import (
	"testing"

	"github.com/go-gl/mathgl/mgl64"

	"github.com/simvis/simvis/scene"
)

// Every kind of change gives the scene a new version, and reading it
// (Update with nothing new, SensedMeshes, frame queries, render
// preparation) leaves the version alone: sensors skip reading an unchanged
// scene by it, so a change it missed would leave them stale.
func TestVersionChangesWithEveryChange(t *testing.T) {
	dir := fig1Dir(t)
	s := load(t, writeFile(t, dir, "v.xml", `<scene>
<part file="world.glb" name="WORLD"/>
<part file="robot.glb" name="ROBOT" insert_at="WORLD"/>
<element type="pose" name="P" insert_at="ROBOT"/>
<element type="rotation" name="J" insert_at="ROBOT"/>
<element type="switch" name="SW" insert_at="ROBOT"/>
<element type="color" name="C" insert_at="ROBOT"/>
</scene>`))
	var poseNode *scene.Node
	s.Root().Walk(func(n *scene.Node) error {
		if n.Kind == scene.KindTransform && n.Owner == "P" {
			poseNode = n
		}
		return nil
	})
	robot, _ := s.InsertionPoint("ROBOT")
	set := func(el, param string, v float64) func() {
		return func() {
			if err := s.Set(el, param, v); err != nil {
				t.Fatal(err)
			}
			if err := s.Update(); err != nil {
				t.Fatal(err)
			}
		}
	}
	command := func(xml string, ok bool) func() {
		return func() {
			if err := exec(t, s, dir, xml); (err == nil) != ok {
				t.Fatalf("%s: error %v, want ok = %v", xml, err, ok)
			}
		}
	}
	for _, tc := range []struct {
		name string
		do   func()
	}{
		{"pose element", set("P", "x", 2)},
		{"rotation joint", set("J", "angle", 30)},
		{"switch off", set("SW", "on", 0)},
		{"switch on", set("SW", "on", 1)},
		{"color only", set("C", "r", 0.25)},
		{"value written into the table", func() {
			e, _ := s.Element("P")
			s.Values()[e.Start+1] = 5 // P.y
			if err := s.Update(); err != nil {
				t.Fatal(err)
			}
		}},
		{"command adding a part", command(`<part file="robot.glb" name="R2" insert_at="WORLD" pose_offset="1 0 0 0 0 0"/>`, true)},
		{"command adding an element", command(`<element type="pose" name="P2" insert_at="R2" x="1"/>`, true)},
		{"command adding a sensor", command(`<sensor type="camera" name="CAM" insert_at="ROBOT"/>`, true)},
		{"failed command (undone)", command(`<element type="pose" name="BAD" insert_at="NOWHERE"/>`, false)},
		{"SetLocal outside Update", func() { poseNode.SetLocal(mgl64.Translate3D(0, 0, 1)) }},
		{"SetVisible", func() { s.SetVisible(robot, false) }},
		{"SetSensed", func() { s.SetSensed(robot, false) }},
		{"SetColor", func() {
			if err := s.SetColor(robot, [4]float32{1, 0, 0, 1}); err != nil {
				t.Fatal(err)
			}
		}},
		{"ClearColor", func() { s.ClearColor(robot) }},
	} {
		before := s.Version()
		tc.do()
		if s.Version() == before {
			t.Errorf("%s: version stayed %d", tc.name, before)
		}
		after := s.Version()
		if err := s.Update(); err != nil {
			t.Fatal(err)
		}
		s.SensedMeshes(nil)
		if _, err := s.Transform("ROBOT", scene.WorldFrame); err != nil {
			t.Fatal(err)
		}
		if err := s.PrepareRender(false); err != nil {
			t.Fatal(err)
		}
		if s.Version() != after {
			t.Errorf("after %s: reading the scene changed its version %d -> %d", tc.name, after, s.Version())
		}
	}
	// A value set but not yet applied is no change yet; Update applies it.
	before := s.Version()
	if err := s.Set("P", "z", 3); err != nil {
		t.Fatal(err)
	}
	if s.Version() != before {
		t.Errorf("Set alone changed the version")
	}
	if err := s.Update(); err != nil || s.Version() == before {
		t.Errorf("Update of a new value: error %v, version %d (was %d)", err, s.Version(), before)
	}
	// Versions name one state of one scene: no two scenes share one.
	a, b := scene.New(scene.Options{}), scene.New(scene.Options{})
	if a.Version() == 0 || a.Version() == b.Version() || a.Version() == s.Version() || b.Version() == s.Version() {
		t.Errorf("versions of three scenes: %d, %d, %d", s.Version(), a.Version(), b.Version())
	}
}
