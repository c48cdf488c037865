package elements_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/g3n/engine/core"
	"github.com/simvis/simvis/scene"

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

// A sun stands where azimuth (from +x toward +y) and elevation (above the
// xy plane) put it and shines from there: at azimuth 180 it faces the BOX
// face the camera sees (normal -x), which then gets cos(elevation) of its
// light; at azimuth 90 it grazes the face; its color is r g b.
func TestSunAzimuthElevation(t *testing.T) {
	s := boxScene(t, `<element type="light" name="SUN" kind="sun" azimuth="180" elevation="0"/>`)
	if box, _ := center(t, s, false); box.R < 240 || box.G < 240 {
		t.Errorf("sun behind the camera, on the horizon: %v, want white", box)
	}
	set(t, s, "SUN", "elevation", 60)
	if box, _ := center(t, s, false); absDiff(box.R, 128) > 6 {
		t.Errorf("sun 60° up: %v, want about 128 (cos 60°)", box)
	}
	set(t, s, "SUN", "elevation", 0)
	set(t, s, "SUN", "azimuth", 90)
	if box, _ := center(t, s, false); !isBlack(box) {
		t.Errorf("sun at azimuth 90 grazing the face: %v, want black", box)
	}
	set(t, s, "SUN", "azimuth", -150) // 30° off the face's normal
	set(t, s, "SUN", "b", 0)
	if box, _ := center(t, s, false); absDiff(box.R, 221) > 6 || box.B > 3 {
		t.Errorf("yellow sun 30° off the normal: %v, want (221, 221, 0)", box)
	}
	if err := s.Set("SUN", "elevation", 95); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(); err == nil || !strings.Contains(err.Error(), "elevation") {
		t.Errorf("elevation 95: error %v, want one naming elevation", err)
	}
}

// Light elements mark the lights that cast shadows (for camera renderers);
// shadows="false" leaves one unmarked, a point light is never marked, and
// a bad shadow_map_size is refused with the attribute's name.
func TestLightShadowMarks(t *testing.T) {
	dir := t.TempDir()
	msg := loadErr(t, dir, `<scene><element type="light" name="SUN" kind="sun" shadow_map_size="10"/></scene>`)
	if !strings.Contains(msg, "shadow_map_size") || !strings.Contains(msg, "scene.xml") {
		t.Errorf("error %q, want the file and shadow_map_size", msg)
	}
	s := boxScene(t, `<element type="light" name="A" kind="sun" shadow_map_size="512"/>
<element type="light" name="B" kind="directional" shadows="false"/>
<element type="light" name="C" kind="spot"/>
<element type="light" name="D" kind="point"/>`)
	marks := map[string]int{}
	var walk func(n core.INode)
	walk = func(n core.INode) {
		if sc, ok := n.GetNode().UserData().(scene.ShadowCaster); ok {
			marks[fmt.Sprintf("%T", n)] = sc.MapSize
		}
		for _, c := range n.GetNode().Children() {
			walk(c)
		}
	}
	walk(s.G3N())
	want := map[string]int{"*light.Directional": 512, "*light.Spot": 1024}
	if !maps.Equal(marks, want) {
		t.Errorf("shadow casters %v, want %v", marks, want)
	}
}
