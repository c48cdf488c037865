package elements_test

import (
	"math"
	"strings"
	"testing"

	"github.com/simvis/simvis/internal/testkit"

	"github.com/simvis/simvis/scene"
)

// A rotation about a vertical axis through center (1, 0, 0) carries the
// insertion point around that center: at 90 degrees its origin is at
// (1, -1, 0), turned by 90 degrees.
func TestRotationJoint(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "arm.glb", 0.1, 0.1, 0.1, [4]float32{1, 1, 1, 1})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="arm.glb" name="ARM" pose_offset="2 0 0 0 0 0"/>
  <element type="rotation" name="J" insert_at="ARM" axis="0 0 2" center="1 0 0" min="-120" max="120"/>
</scene>`)
	assertNear(t, "ARM at 0°", testkit.WorldPose(t, s, "ARM"), scene.Pose{X: 2})
	set(t, s, "J", "angle", 90)
	assertNear(t, "ARM at 90°", testkit.WorldPose(t, s, "ARM"), scene.Pose{X: 3, Y: -1, Yaw: 90})
	// A tilt joint about y: +30° pitches +x down toward -z (right-handed).
	s2 := testkit.LoadXML(t, dir, `<scene>
  <part file="arm.glb" name="HEAD"/>
  <element type="rotation" name="TILT" insert_at="HEAD" axis="0 1 0"/>
  <part file="arm.glb" name="TIP" insert_at="HEAD" pose_offset="1 0 0 0 0 0"/>
</scene>`)
	set(t, s2, "TILT", "angle", 30)
	assertNear(t, "TIP tilted", testkit.WorldPose(t, s2, "TIP"), scene.Pose{X: math.Cos(math.Pi / 6), Z: -0.5, Pitch: 30})

	// Out of the limits: refused, the table keeps the last accepted angle.
	set(t, s, "J", "angle", 121)
	if err := s.Update(); err == nil || !strings.Contains(err.Error(), "limits [-120, 120]") {
		t.Errorf("angle 121: err %v, want a limits error", err)
	}
	if v, _ := s.Value("J", "angle"); v != 90 {
		t.Errorf("table holds %v after a refused value, want 90", v)
	}
	assertNear(t, "ARM after refusal", testkit.WorldPose(t, s, "ARM"), scene.Pose{X: 3, Y: -1, Yaw: 90})
}

func TestTranslationJoint(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "slide.glb", 0.1, 0.1, 0.1, [4]float32{1, 1, 1, 1})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="slide.glb" name="CARRIAGE" pose_offset="0 0 1 0 0 90"/>
  <element type="translation" name="LIFT" insert_at="CARRIAGE" axis="1 1 0" max="2" offset="0.5"/>
</scene>`)
	// The axis is in the part's frame, which is yawed by 90°: (1,1)/√2 maps
	// to (-1,1)/√2 in the world.
	h := 0.5 / math.Sqrt2
	assertNear(t, "at 0.5", testkit.WorldPose(t, s, "CARRIAGE"), scene.Pose{X: -h, Y: h, Z: 1, Yaw: 90})
	set(t, s, "LIFT", "offset", math.Sqrt2)
	assertNear(t, "at √2", testkit.WorldPose(t, s, "CARRIAGE"), scene.Pose{X: -1, Y: 1, Z: 1, Yaw: 90})
	set(t, s, "LIFT", "offset", 2.5)
	if err := s.Update(); err == nil {
		t.Error("offset beyond max accepted")
	}
}

// Scaling stretches what follows it: a part offset 1 m inside the scaled
// frame lands 2 m away.
func TestScale(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "b.glb", 0.1, 0.1, 0.1, [4]float32{1, 1, 1, 1})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="b.glb" name="BASE"/>
  <element type="scale" name="S" insert_at="BASE" sx="2"/>
  <part file="b.glb" name="CHILD" insert_at="BASE" pose_offset="1 1 1 0 0 0"/>
</scene>`)
	m, err := s.Transform("CHILD", scene.WorldFrame)
	if err != nil {
		t.Fatal(err)
	}
	if p := m.Col(3).Vec3(); math.Abs(p[0]-2) > 1e-12 || math.Abs(p[1]-1) > 1e-12 || math.Abs(p[2]-1) > 1e-12 {
		t.Errorf("CHILD origin at %v, want (2, 1, 1)", p)
	}
	for _, bad := range []float64{0, -1} {
		set(t, s, "S", "sz", bad)
		if err := s.Update(); err == nil || !strings.Contains(err.Error(), "must be > 0") {
			t.Errorf("sz = %v: err %v", bad, err)
		}
	}
}
