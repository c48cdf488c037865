package sensors_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/sensors"
)

// The example at the top of docs/cameras.md loads (with boxes for its
// models) and every sensor of it captures a frame: the reference shows
// attributes that exist.
func TestCamerasDocExample(t *testing.T) {
	raw, err := os.ReadFile("../docs/cameras.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	start := strings.Index(doc, "```xml\n")
	end := strings.Index(doc[start+7:], "```")
	if start < 0 || end < 0 {
		t.Fatal("docs/cameras.md has no xml example")
	}
	xml := doc[start+7 : start+7+end]
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "terrain.gltf", 40, 40, 0.1, [4]float32{0.4, 0.5, 0.3, 1})
	testkit.WriteBox(t, dir, "robot.gltf", 0.8, 0.6, 0.5, [4]float32{0.8, 0.2, 0.2, 1})
	s := testkit.LoadXML(t, dir, xml)
	if err := s.Set("SUN", "elevation", 20); err != nil {
		t.Fatal(err)
	}
	files, err := sensors.CaptureAll(testkit.Renderer(t), s, filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 8 {
		t.Errorf("captured %v", files)
	}
}
