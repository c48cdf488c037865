package elements_test

import (
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simvis/simvis/internal/testkit"

	"github.com/simvis/simvis/scene"
)

// boxScene loads a scene with a white 1 m box BOX centered 3 m ahead of the
// origin (its near face at x = 2.5) and a second one, OTHER, to the left, plus
// the given commands. The views used with it look along +x from the origin.
func boxScene(t *testing.T, commands string) *scene.Scene {
	t.Helper()
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "white.glb", 1, 1, 1, [4]float32{1, 1, 1, 1})
	return testkit.LoadXML(t, dir, `<scene>
  <part file="white.glb" name="BOX" pose_offset="3 0 0 0 0 0"/>
  <part file="white.glb" name="OTHER" pose_offset="3 2 0 0 0 0"/>
`+commands+`
</scene>`)
}

// center renders 64x48 from the origin looking along +x and returns the
// center pixel (BOX) and the pixel where OTHER is (u = 32 - 55.4*2/2.5 ≈ 6).
func center(t *testing.T, s *scene.Scene, viewer bool) (box, other color.RGBA) {
	t.Helper()
	img := lookAt(t, s, scene.Pose{}, 64, 48, viewer)
	for i := 3; i < len(img.Pix); i += 4 {
		if img.Pix[i] != 255 {
			t.Fatalf("pixel %d has alpha %d: camera images must be opaque", i/4, img.Pix[i])
		}
	}
	return img.RGBAAt(32, 24), img.RGBAAt(6, 24)
}

func TestColorElement(t *testing.T) {
	s := boxScene(t, `<element type="color" name="TINT" insert_at="BOX" r="1" g="0" b="0"/>`)
	box, other := center(t, s, false)
	if !dominant(box, 0) {
		t.Errorf("BOX %v, want red", box)
	}
	if other.R < 60 || absDiff(other.R, other.G) > 3 || absDiff(other.G, other.B) > 3 {
		t.Errorf("OTHER %v, want untouched white-gray (the color is scoped to BOX)", other)
	}
	set(t, s, "TINT", "r", 0)
	set(t, s, "TINT", "g", 1)
	box, _ = center(t, s, false)
	if !dominant(box, 1) {
		t.Errorf("after g=1, r=0: BOX %v, want green", box)
	}
	// Half transparent over the black background: about half as bright.
	opaque := box.G
	set(t, s, "TINT", "a", 0.5)
	box, _ = center(t, s, false)
	if d := absDiff(box.G, opaque/2); d > 8 {
		t.Errorf("a=0.5: BOX green %d, want about %d", box.G, opaque/2)
	}
	set(t, s, "TINT", "a", 1.5)
	if err := s.Update(); err == nil || !strings.Contains(err.Error(), "outside 0..1") {
		t.Errorf("a=1.5: err %v", err)
	}
}

func TestSwitchElement(t *testing.T) {
	s := boxScene(t, `<element type="switch" name="SW" insert_at="BOX" on="0"/>`)
	box, other := center(t, s, false)
	if !isBlack(box) || isBlack(other) {
		t.Errorf("switched off: BOX %v (want black background), OTHER %v (want drawn)", box, other)
	}
	set(t, s, "SW", "on", 1)
	if box, _ = center(t, s, false); isBlack(box) {
		t.Errorf("switched on: BOX %v, want drawn", box)
	}
	set(t, s, "SW", "on", 0.5)
	if err := s.Update(); err == nil {
		t.Error("on=0.5 accepted")
	}
	if v, _ := s.Value("SW", "on"); v != 1 {
		t.Errorf("table holds %v after refusing 0.5, want 1", v)
	}
}

// sensed="false" geometry is drawn for viewers only; the same element
// without it is drawn for both.
func TestSensedFalseElement(t *testing.T) {
	s := boxScene(t, `<element type="switch" name="SW" insert_at="BOX" on="0"/>
  <element type="pointcloud" name="OVERLAY" max_points="1" points="2 0 0" point_size="0.3" color="0 0 1" sensed="false"/>
  <element type="pointcloud" name="SOLID" max_points="1" points="2 0.94 0" point_size="0.3" color="0 1 0"/>`)
	box, other := center(t, s, false)
	if !isBlack(box) {
		t.Errorf("sensor render: %v where the unsensed cloud is, want background", box)
	}
	if !dominant(other, 1) {
		t.Errorf("sensor render: %v where the sensed cloud is, want green", other)
	}
	box, other = center(t, s, true)
	if !dominant(box, 2) || !dominant(other, 1) {
		t.Errorf("viewer render: %v and %v, want blue and green", box, other)
	}
}

// Bad attributes of every built-in element name file, line and attribute.
func TestElementErrors(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "b.glb", 1, 1, 1, [4]float32{1, 1, 1, 1})
	cases := []struct{ xml, want string }{
		{`<element type="rotation" name="J" axis="0 0 0"/>`, `element "J": attribute "axis": the axis has zero length`},
		{`<element type="rotation" name="J" axis="0 1"/>`, `attribute "axis": want 3 numbers`},
		{`<element type="rotation" name="J" min="10" max="-10"/>`, `attribute "max": -10° is below min`},
		{`<element type="rotation" name="J" angle="200" max="90"/>`, `angle = 200° is outside the joint's limits`},
		{`<element type="translation" name="J" axis="x y z"/>`, `attribute "axis": value 1: "x" is not a number`},
		{`<element type="scale" name="S" sx="0"/>`, `sx = 0: scale factors must be > 0`},
		{`<element type="color" name="C" r="2"/>`, `element "C": color component "r" = 2 is outside 0..1`},
		{`<element type="switch" name="W" on="2"/>`, `on = 2: want 1 (shown) or 0 (hidden)`},
		{`<element type="light" name="L" kind="laser"/>`, `attribute "kind": unknown light kind "laser"`},
		{`<element type="light" name="L" kind="spot" cutoff="95"/>`, `cutoff = 95`},
		{`<element type="light" name="L" kind="ambient" yaw="3"/>`, `attribute "yaw": unknown attribute for element type "light"`},
		{`<element type="pointcloud" name="P" max_points="0"/>`, `attribute "max_points": 0 is out of range`},
		{`<element type="pointcloud" name="P" max_points="2" points="1 2 3 4"/>`, `attribute "points": want up to 2 points`},
		{`<element type="pointcloud" name="P" max_points="2" count="3"/>`, `count = 3: want a whole number of points from 0 to 2`},
		{`<element type="pointcloud" name="P" color="1 0"/>`, `attribute "color": want 3 numbers`},
		{`<element type="label" name="T" text="hi" color="1 1.5 0"/>`, `attribute "color": component 2 = 1.5 is outside 0..1`},
		{`<element type="lines" name="L" max_lines="1" points="0 0 0 1 1 1 2 2 2"/>`, `attribute "points": want up to 2 points as x y z triples (in groups of 2)`},
		{`<element type="lines" name="L" width="100"/>`, `attribute "width": 100 is out of range`},
		{`<element type="graph" name="G"/>`, `attribute "nodes": missing`},
		{`<element type="graph" name="G" nodes="A A"/>`, `node "A" is listed twice`},
		{`<element type="graph" name="G" nodes="A B" edges="A-C"/>`, `"A-C" is not an edge A-B between listed nodes`},
		{`<element type="graph" name="G" nodes="A 1B"/>`, `"1B" is not a valid node name`},
		{`<element type="label" name="T"/>`, `attribute "text": missing`},
		{`<element type="label" name="T" text="hi" size="0"/>`, `size = 0: want a text height > 0 m`},
	}
	for _, c := range cases {
		msg := loadErr(t, dir, "<scene>\n"+c.xml+"\n</scene>")
		if !strings.Contains(msg, c.want) || !strings.Contains(msg, "scene.xml:2:") {
			t.Errorf("%s\n got: %s\nwant: scene.xml:2: ... %s", c.xml, msg, c.want)
		}
	}
	_ = os.Remove(filepath.Join(dir, "scene.xml"))
}

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}
