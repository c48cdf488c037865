package urdf_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/simvis/simvis/scene"
)

func armScene(t *testing.T, part string) (*scene.Scene, error) {
	t.Helper()
	dir, _ := filepath.Abs("../../scenes/arm")
	s := scene.New(scene.Options{})
	c, err := scene.ParseCommand(part, filepath.Join(dir, "test.xml"), dir)
	if err != nil {
		t.Fatal(err)
	}
	return s, s.Exec(c)
}

// Joints keep to their limits, continuous ones have none, mimic joints
// follow and have no parameter of their own.
func TestJointElements(t *testing.T) {
	s, err := armScene(t, `<part file="urdf/arm.urdf" name="ARM" pose_offset="1 2 0 0 0 90"/>`)
	if err != nil {
		t.Fatal(err)
	}
	set := func(e string, v float64) error {
		if err := s.Set(e, "position", v); err != nil {
			return err
		}
		return s.Update()
	}
	if err := set("ARM/elbow", 2.6); err == nil || err.Error() != `element "ARM/elbow": position = 2.6 rad is outside the joint's limits [-2.5, 2.5] rad` {
		t.Fatalf("got %v", err)
	}
	if err := set("ARM/finger_left_joint", 0.05); err == nil || !strings.Contains(err.Error(), "position = 0.05 m is outside the joint's limits [0, 0.04] m") {
		t.Fatalf("got %v", err)
	}
	if err := set("ARM/wheel_fl_joint", 1000); err != nil {
		t.Fatal(err)
	}
	if err := set("ARM/finger_right_joint", 0.01); err == nil {
		t.Fatal("a mimic joint took a position")
	}
	if err := set("ARM/finger_left_joint", 0.03); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(); err != nil {
		t.Fatal(err)
	}
	// The root link at the part's pose; the fingers 0.03 m apart more each.
	base, _ := s.Transform("ARM/base_link", scene.WorldFrame)
	if p := base.Col(3); abs(p[0]-1) > 1e-12 || abs(p[1]-2) > 1e-12 || abs(base.At(1, 0)-1) > 1e-12 {
		t.Fatalf("base_link at %v", base)
	}
	l, _ := s.Transform("ARM/finger_left", "ARM/hand_link")
	r, _ := s.Transform("ARM/finger_right", "ARM/hand_link")
	if abs(l.At(1, 3)-0.04) > 1e-12 || abs(r.At(1, 3)+0.04) > 1e-12 {
		t.Fatalf("fingers at y %g and %g", l.At(1, 3), r.At(1, 3))
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestPartAttributes(t *testing.T) {
	if _, err := armScene(t, `<part file="urdf/arm.urdf" name="ARM" geometry="collision"/>`); err != nil {
		t.Fatal(err)
	}
	dir, _ := filepath.Abs("../../scenes/arm")
	for _, tc := range []struct{ part, want string }{
		{`<part file="urdf/arm.urdf" name="ARM" geometry="both"/>`, `:1: part "ARM": attribute "geometry": "both": want visual or collision`},
		{`<part file="../quickstart/robot.gltf" name="R" geometry="collision"/>`, `:1: part "R": attribute "geometry": only URDF parts choose their geometry`},
	} {
		if _, err := armScene(t, tc.part); err == nil || err.Error() != filepath.Join(dir, "test.xml")+tc.want {
			t.Errorf("got %v\nwant %s", err, tc.want)
		}
	}
}
