package scene_test

import (
	"path/filepath"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// Parts and elements carry a class attribute, read by the scene for every
// part and element command; commands embedded in a part's model without one
// take the part's class.
func TestClassAttribute(t *testing.T) {
	dir := t.TempDir()
	writeBoxModel(t, dir, "box.glb", 0.1)
	m := models.NewModel("robot")
	mast := m.AddNode(nil, "mast", mgl64.Translate3D(0, 0, 1), models.Box("mast", 0.1, 0.1, 1, [4]float32{0, 0, 1, 1}))
	mast.InsertionPoint = "MAST_TOP"
	m.Commands = []models.Command{
		{XML: `<part file="box.glb" name="HEAD" insert_at="MAST_TOP"/>`, Source: "robot.glb: extras"},
		{XML: `<part file="box.glb" name="ARM" insert_at="MAST_TOP" class="arm"/>`, Source: "robot.glb: extras"},
		{XML: `<element type="pose" name="TILT" insert_at="MAST_TOP"/>`, Source: "robot.glb: extras"},
	}
	if err := models.Write(filepath.Join(dir, "robot.glb"), m); err != nil {
		t.Fatal(err)
	}
	s := load(t, writeFile(t, dir, "s.xml", `<scene>
  <part file="robot.glb" name="R1" class="robot"/>
  <part file="robot.glb" name="R2"/>
  <part file="box.glb" name="SIGN" class="traffic sign"/>
  <element type="pose" name="P" insert_at="SIGN" class="pose-ish"/>
</scene>`))
	want := map[string]string{
		"R1": "robot", "R1/HEAD": "robot", "R1/ARM": "arm", "R1/TILT": "robot",
		"R2": "", "R2/HEAD": "", "R2/ARM": "arm", "R2/TILT": "",
		"SIGN": "traffic sign", "P": "pose-ish", "NOBODY": "",
	}
	for name, c := range want {
		if got := s.Class(name); got != c {
			t.Errorf("Class(%q) = %q, want %q", name, got, c)
		}
	}
	if got := s.Parts()[0].Class; got != "robot" {
		t.Errorf("PartEntry.Class = %q, want robot", got)
	}
	if e, _ := s.Element("P"); e.Class != "pose-ish" {
		t.Errorf("ElementEntry.Class = %q, want pose-ish", e.Class)
	}
}

// A bad class is an error naming the file, line and attribute; sensors
// have no class; a command that fails keeps no class.
func TestBadClass(t *testing.T) {
	dir := t.TempDir()
	writeBoxModel(t, dir, "box.glb", 0.1)
	cases := []struct{ xml, want string }{
		{`<part file="box.glb" name="A" class=""/>`, `req:1: part "A": attribute "class": empty`},
		{`<part file="box.glb" name="A" class=" robot"/>`, `req:1: part "A": attribute "class": " robot" starts or ends with a space`},
		{`<part file="box.glb" name="A" class="a&#9;b"/>`, `req:1: part "A": attribute "class": "a\tb" holds a control or unprintable character`},
		{`<element type="pose" name="E" class="robot "/>`, `req:1: element "E": attribute "class": "robot " starts or ends with a space`},
		{`<sensor type="camera" name="C" class="robot"/>`, `req:1: sensor "C": attribute "class": unknown attribute for sensor type "camera"`},
		{`<part file="missing.glb" name="A" class="robot"/>`, ""},
	}
	for _, c := range cases {
		s := scene.New(scene.Options{})
		err := exec(t, s, dir, c.xml)
		if err == nil {
			t.Errorf("%s: no error", c.xml)
			continue
		}
		if c.want != "" && err.Error() != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.xml, err, c.want)
		}
		if got := s.Class("A"); got != "" {
			t.Errorf("%s: failed command left class %q", c.xml, got)
		}
	}
	long := make([]byte, 129)
	for i := range long {
		long[i] = 'x'
	}
	err := exec(t, scene.New(scene.Options{}), dir, `<part file="box.glb" name="A" class="`+string(long)+`"/>`)
	if want := `req:1: part "A": attribute "class": longer than 128 bytes`; err == nil || err.Error() != want {
		t.Errorf("long class: %v, want %s", err, want)
	}
}
