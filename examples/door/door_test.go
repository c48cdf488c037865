package door_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/cli"
	_ "github.com/simvis/simvis/examples/door"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

func doorScene(t *testing.T, element string) (*scene.Scene, error) {
	t.Helper()
	dir := t.TempDir()
	m := models.NewModel("leaf")
	m.AddNode(nil, "leaf", mgl64.Translate3D(0.45, 0, 1), models.Box("leaf", 0.9, 0.04, 2, [4]float32{0.6, 0.4, 0.2, 1}))
	if err := models.Write(filepath.Join(dir, "door.glb"), m); err != nil {
		t.Fatal(err)
	}
	xml := `<scene>
  <part file="door.glb" name="DOOR" pose_offset="2 3 0 0 0 0"/>
  ` + element + `
  <sensor type="camera" name="HANDLE" insert_at="DOOR" pose_offset="0.8 0 1 0 0 0"/>
</scene>`
	path := filepath.Join(dir, "scene.xml")
	if err := os.WriteFile(path, []byte(xml), 0o644); err != nil {
		t.Fatal(err)
	}
	return scene.Load(path, scene.Options{})
}

func handle(t *testing.T, s *scene.Scene) mgl64.Vec3 {
	t.Helper()
	m, err := s.Transform("HANDLE", scene.WorldFrame)
	if err != nil {
		t.Fatal(err)
	}
	return m.Col(3).Vec3()
}

// The door element, registered from outside the framework, swings what is
// attached after it about its hinge by open * max_angle.
func TestDoorSwingsAboutHinge(t *testing.T) {
	s, err := doorScene(t, `<element type="door" name="D" insert_at="DOOR" hinge="0.1 0" max_angle="90" open="0"/>`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := handle(t, s), (mgl64.Vec3{2.8, 3, 1}); !got.ApproxEqualThreshold(want, 1e-12) {
		t.Errorf("closed: handle at %v, want %v", got, want)
	}
	for _, c := range []struct {
		open float64
		deg  float64
	}{{1, 90}, {0.5, 45}} {
		if err := s.Set("D", "open", c.open); err != nil {
			t.Fatal(err)
		}
		// Hinge at (0.1, 0) in the part frame; the handle is 0.7 m from it.
		a := mgl64.DegToRad(c.deg)
		want := mgl64.Vec3{2 + 0.1 + 0.7*math.Cos(a), 3 + 0.7*math.Sin(a), 1}
		if got := handle(t, s); !got.ApproxEqualThreshold(want, 1e-12) {
			t.Errorf("open=%v: handle at %v, want %v", c.open, got, want)
		}
	}
	// Out of range: rejected, the door stays where it was.
	if err := s.Set("D", "open", 1.5); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(); err == nil || !strings.Contains(err.Error(), "want 0 (closed) to 1 (open)") {
		t.Errorf("open=1.5: Update = %v", err)
	}
	if v, _ := s.Value("D", "open"); v != 0.5 {
		t.Errorf("after rejection open = %v, want 0.5 kept", v)
	}
}

func TestDoorBadAttributes(t *testing.T) {
	for attr, want := range map[string]string{
		`hinge="1"`:       `attribute "hinge": want 2 numbers, got 1 in "1"`,
		`hinge="1 y"`:     `attribute "hinge": value 2: "y" is not a number`,
		`hinge="1 NaN"`:   `attribute "hinge": value 2: "NaN" is not finite`,
		`max_angle="200"`: `attribute "max_angle"`,
		`width="1"`:       `attribute "width": unknown attribute`,
	} {
		_, err := doorScene(t, `<element type="door" name="D" insert_at="DOOR" `+attr+`/>`)
		if err == nil || !strings.Contains(err.Error(), `scene.xml:3: element "D": `+want) {
			t.Errorf("%s: error %v, want %q", attr, err, want)
		}
	}
}

// The simvis command line built with this package knows the door: the
// example scene loads and its element is listed with its parameter.
func TestCommandLineWithDoor(t *testing.T) {
	var out, errOut bytes.Buffer
	code := cli.Main([]string{"inspect", "../../scenes/door/scene.xml", "--set", "LAB_DOOR.open=1"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "LAB_DOOR         door       at DOOR         start 0    open=1") {
		t.Errorf("inspect does not list the door:\n%s", out.String())
	}
}

// The door scene records with the door element compiled in: the file
// passes the independent ROS 2 bag checker (internal/jstest), as every
// other bundled scene's does in the cli tests.
func TestDoorRecords(t *testing.T) {
	file := filepath.Join(t.TempDir(), "door.mcap")
	var out, errOut bytes.Buffer
	if code := cli.Main([]string{"capture", "../../scenes/door/scene.xml", "--frames", "2", "--mcap", file}, &out, &errOut); code != 0 {
		t.Fatalf("capture exit %d: %s", code, errOut.String())
	}
	cmd := testkit.Node(t, filepath.Join(testkit.RepoRoot(), "internal", "jstest", "ros2bag_check.js"), file)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	report, err := cmd.Output()
	var c struct {
		OK       bool     `json:"ok"`
		Problems []string `json:"problems"`
	}
	if jerr := json.Unmarshal(report, &c); jerr != nil || err != nil || !c.OK {
		t.Fatalf("%s is not a valid ROS 2 bag: %v %v %v\n%s", file, err, jerr, c.Problems, stderr.String())
	}
}
