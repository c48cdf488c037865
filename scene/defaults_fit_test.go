package scene_test

import (
	"path/filepath"
	"testing"

	_ "github.com/simvis/simvis/examples/door" // scenes/door's element type "door"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// Honest scenes stay within the whole-scene defaults with room to spare:
// every bundled scene and the generated benchmark scenes (50 MARVINs, a
// million-triangle cave) use at most half of each budget.
func TestWholeSceneDefaultsHoldBundledScenes(t *testing.T) {
	files, err := filepath.Glob("../scenes/*/scene.xml")
	if err != nil || len(files) == 0 {
		t.Fatalf("bundled scenes: %v %v", files, err)
	}
	bench, err := sensors.WriteBenchScenes(t.TempDir(), "../scenes/marvin")
	if err != nil {
		t.Fatal(err)
	}
	d := scene.DefaultLimits
	for _, f := range append(files, bench...) {
		s, err := scene.Load(f, scene.Options{})
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		u := s.Totals()
		t.Logf("%s: %+v", f, u)
		for _, c := range []struct {
			what        string
			used, limit int64
		}{
			{"parts", int64(u.Parts), int64(d.SceneParts)}, {"nodes", int64(u.Nodes), int64(d.SceneNodes)},
			{"vertices", u.Vertices, d.SceneVertices}, {"triangles", u.Triangles, d.SceneTriangles},
			{"model bytes", u.ModelBytes, d.SceneModelBytes}, {"image pixels", u.ImagePixels, d.SceneImagePixels},
			{"sensors", int64(u.Sensors), int64(d.SceneSensors)}, {"sensor samples", u.SensorSamples, d.SensorSamples},
			{"elements", int64(u.Elements), int64(d.Elements)},
		} {
			if c.used > c.limit/2 {
				t.Errorf("%s: %d %s, more than half the default budget of %d", f, c.used, c.what, c.limit)
			}
		}
	}
}
