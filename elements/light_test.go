package elements_test

import (
	"testing"

	"github.com/simvis/simvis/internal/testkit"
)

// A scene with light elements is lit by them alone: one directional light
// shining along +x lights the box face turned to the camera fully; turned
// around, it leaves the face black (there is no ambient light).
func TestDirectionalLight(t *testing.T) {
	s := boxScene(t, `<element type="light" name="SUN" kind="directional"/>`)
	box, _ := center(t, s, false)
	if box.R < 240 || box.G < 240 || box.B < 240 {
		t.Errorf("face lit head-on: %v, want white", box)
	}
	set(t, s, "SUN", "yaw", 180)
	if box, _ = center(t, s, false); !isBlack(box) {
		t.Errorf("face lit from behind: %v, want black", box)
	}
	// 60° off the face normal: cos 60° = half the light.
	set(t, s, "SUN", "yaw", 60)
	if box, _ = center(t, s, false); absDiff(box.R, 128) > 6 {
		t.Errorf("light at 60°: %v, want about 128", box)
	}
	set(t, s, "SUN", "r", 0)
	set(t, s, "SUN", "yaw", 0)
	if box, _ = center(t, s, false); box.R > 3 || box.G < 240 {
		t.Errorf("cyan light: %v, want (0, 255, 255)", box)
	}
}

// A directional light mounted on a robot turns with the robot: its
// direction follows the frame it hangs in, whatever moves that frame.
func TestLightFollowsItsFrame(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "white.glb", 1, 1, 1, [4]float32{1, 1, 1, 1})
	testkit.WriteBox(t, dir, "robot.glb", 0.01, 0.01, 0.01, [4]float32{1, 1, 1, 1})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="white.glb" name="BOX" pose_offset="3 0 0 0 0 0"/>
  <part file="robot.glb" name="ROBOT" pose_offset="-5 7 0 0 0 0"/>
  <element type="pose" name="R_POSE" insert_at="ROBOT"/>
  <element type="light" name="HEADLIGHT" kind="directional" insert_at="ROBOT"/>
</scene>`)
	if box, _ := center(t, s, false); box.R < 240 {
		t.Errorf("robot facing +x: face %v, want lit", box)
	}
	set(t, s, "R_POSE", "yaw", 180)
	if box, _ := center(t, s, false); !isBlack(box) {
		t.Errorf("robot turned around: face %v, want dark", box)
	}
}

func TestAmbientPointAndSpotLights(t *testing.T) {
	s := boxScene(t, `<element type="light" name="AMB" kind="ambient" intensity="0.5"/>`)
	if box, _ := center(t, s, false); absDiff(box.R, 128) > 6 || box.R != box.B {
		t.Errorf("ambient 0.5: %v, want gray 128", box)
	}

	// A point light 0.5 m in front of the face, no decay: full light.
	s = boxScene(t, `<element type="light" name="BULB" kind="point" x="2" quadratic_decay="0"/>`)
	if box, _ := center(t, s, false); box.R < 240 {
		t.Errorf("point light in front: %v, want white", box)
	}
	set(t, s, "BULB", "x", 4) // behind the face
	if box, _ := center(t, s, false); !isBlack(box) {
		t.Errorf("point light behind the face: %v, want black", box)
	}
	// Decay 1/(1 + q d²) at d = 0.5 m, q = 4: half the light, on the
	// diffuse color (1) and the specular highlight (0.1) that here reflects
	// straight back into the camera: 0.5 · 1.1 · 255 = 140.
	s = boxScene(t, `<element type="light" name="BULB" kind="point" x="2" quadratic_decay="4"/>`)
	if box, _ := center(t, s, false); absDiff(box.R, 140) > 6 {
		t.Errorf("point light with decay: %v, want about 140", box)
	}

	// A spot light at the camera aims at the box, then away.
	s = boxScene(t, `<element type="light" name="SPOT" kind="spot" cutoff="10" quadratic_decay="0" angular_decay="0"/>`)
	box, other := center(t, s, false)
	if box.R < 240 || !isBlack(other) {
		t.Errorf("spot at BOX: BOX %v (want lit), OTHER %v (want outside the cone)", box, other)
	}
	set(t, s, "SPOT", "yaw", 33) // OTHER is at atan(2/3) = 33.7° to the left
	if box, other = center(t, s, false); !isBlack(box) || other.R < 100 {
		t.Errorf("spot at OTHER: BOX %v (want dark), OTHER %v (want lit)", box, other)
	}
}
