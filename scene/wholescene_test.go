package scene_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simvis/simvis/scene"
)

// execN runs the same part command, renamed, until the scene refuses it,
// and returns how many it took and the refusal (issue 29, finding 2:
// requests that each fit every per-command budget add up without bound).
func execN(t *testing.T, s *scene.Scene, dir, format string, most int) (int, error) {
	t.Helper()
	for i := 0; i < most; i++ {
		if err := exec(t, s, dir, fmt.Sprintf(format, i)); err != nil {
			return i, err
		}
	}
	return most, nil
}

// Whole-scene budgets stop commands that each fit every per-command
// budget, before anything is built: the refusal names the budget, what
// the scene holds, what the command would add and the flag; the scene
// stays as it was.
func TestWholeSceneBudgets(t *testing.T) {
	dir := t.TempDir()
	writeBoxModel(t, dir, "box.glb", 0.1) // 24 vertices, 12 triangles
	writeBoxModel(t, dir, "box2.glb", 0.2)
	const part = `<part file="box.glb" name="P%d"/>`
	for _, c := range []struct {
		limits scene.Limits
		format string
		ok     int
		want   string
	}{
		{scene.Limits{SceneParts: 5}, part, 5,
			`req:1: part "P5": attribute "file": the scene holds 5 parts and the command would add 1, over the whole-scene budget of 5 (raise it with scene.Options.Limits.SceneParts / --max-scene-parts)`},
		{scene.Limits{SceneTriangles: 40}, part, 3,
			`the scene holds 36 triangles and the command would add 12, over the whole-scene budget of 40 (raise it with scene.Options.Limits.SceneTriangles / --max-scene-triangles)`},
		{scene.Limits{SceneVertices: 100}, part, 4,
			`the scene holds 96 vertices and the command would add 24, over the whole-scene budget of 100 (raise it with scene.Options.Limits.SceneVertices / --max-scene-vertices)`},
		{scene.Limits{SceneNodes: 2 + 5*3}, part, 3, // ROOT and the top group, then 5 nodes a part
			`--max-scene-nodes`},
		{scene.Limits{SceneSensors: 2}, `<sensor type="psd" name="S%d"/>`, 2,
			`req:1: sensor "S2": the scene holds 2 sensors and the command would add 1, over the whole-scene budget of 2 (raise it with scene.Options.Limits.SceneSensors / --max-scene-sensors)`},
		{scene.Limits{Elements: 3}, `<element type="pose" name="E%d"/>`, 3,
			`req:1: element "E3": the scene holds 3 elements and the command would add 1, over the budget of 3 elements (raise it with scene.Options.Limits.Elements / --max-elements)`},
	} {
		s := scene.New(scene.Options{Limits: c.limits})
		n, err := execN(t, s, dir, c.format, 100)
		if n != c.ok || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %d commands, then %v; want %d, then %q", c.limits, n, err, c.ok, c.want)
			continue
		}
		before := s.Totals()
		if len(s.Parts())+len(s.Sensors())+len(s.Elements()) != n {
			t.Errorf("%+v: the refused command left something behind", c.limits)
		}
		// The refusal changed nothing; every further one is refused too.
		if err := exec(t, s, dir, fmt.Sprintf(c.format, 1000)); err == nil || s.Totals() != before {
			t.Errorf("%+v: after a refusal: %v, totals %+v, were %+v", c.limits, err, s.Totals(), before)
		}
		// Lifted, the same command goes through.
		lifted := c.limits
		lifted.SceneParts, lifted.SceneTriangles, lifted.SceneVertices, lifted.SceneNodes = -1, -1, -1, -1
		lifted.SceneSensors, lifted.Elements = -1, -1
		s = scene.New(scene.Options{Limits: lifted})
		if n, err := execN(t, s, dir, c.format, c.ok+2); err != nil || n != c.ok+2 {
			t.Errorf("%+v lifted: %d commands, %v", c.limits, n, err)
		}
	}

	// Model files are counted once each, whatever uses them: a second part
	// of box.glb reads nothing, box2.glb does.
	size, _ := os.Stat(filepath.Join(dir, "box.glb"))
	s := scene.New(scene.Options{Limits: scene.Limits{SceneModelBytes: size.Size() + 10}})
	for i := 0; i < 3; i++ {
		if err := exec(t, s, dir, fmt.Sprintf(part, i)); err != nil {
			t.Fatal(err)
		}
	}
	err := exec(t, s, dir, `<part file="box2.glb" name="B"/>`)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("the scene holds %d bytes of model files and the command would add", size.Size())) ||
		!strings.Contains(err.Error(), "--max-scene-model-mib") {
		t.Errorf("second model file: %v", err)
	}
	if got := s.Totals(); got.Parts != 3 || got.ModelBytes != size.Size() || got.Triangles != 36 {
		t.Errorf("totals %+v", got)
	}
}

// Parts embedded in a model count towards the whole scene like top-level
// ones: a model embedding 4 parts is refused when the scene has room for 3.
func TestWholeSceneBudgetsCountEmbeddedParts(t *testing.T) {
	dir := t.TempDir()
	writeLevels(t, dir, 1, 4) // L0 embeds 4 parts of L1: 5 parts
	s := scene.New(scene.Options{Limits: scene.Limits{SceneParts: 8}})
	if err := exec(t, s, dir, `<part file="L0.glb" name="A"/>`); err != nil {
		t.Fatal(err)
	}
	err := exec(t, s, dir, `<part file="L0.glb" name="B"/>`)
	if err == nil || !strings.Contains(err.Error(), "the scene holds 5 parts and the command would add 4, over the whole-scene budget of 8") {
		t.Fatalf("err = %v", err)
	}
	if len(s.Parts()) != 5 || s.Totals().Parts != 5 {
		t.Errorf("%d parts, totals %+v", len(s.Parts()), s.Totals())
	}
}

// Issue 29, finding 3: sensors' pixels and beams are bounded for all
// sensors together, checked from the attributes before a sensor is built.
// One 16384x16384 camera (256 Mi pixels) is over the default budget of 64
// Mi; cameras of 4096x4096 (16 Mi) fit four times, not five; lasers count
// their beams.
func TestSensorSamplesBudget(t *testing.T) {
	s := scene.New(scene.Options{})
	err := exec(t, s, "", `<sensor type="camera" name="BIG" width="16384" height="16384" rate="1"/>`)
	want := `req:1: sensor "BIG": attribute "width": the scene's sensors have 0 pixels and beams and the command would add 268435456, over the budget of 67108864 for all sensors together (raise it with scene.Options.Limits.SensorSamples / --max-sensor-mpixels, in units of 2^20)`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant  %s", err, want)
	}
	for i := 0; i < 4; i++ {
		if err := exec(t, s, "", fmt.Sprintf(`<sensor type="depth" name="C%d" width="4096" height="4096"/>`, i)); err != nil {
			t.Fatal(err)
		}
	}
	err = exec(t, s, "", `<sensor type="segmentation" name="C4" width="2" height="3"/>`)
	if err == nil || !strings.Contains(err.Error(), `attribute "height": the scene's sensors have 67108864 pixels and beams and the command would add 6,`) {
		t.Errorf("fifth camera: %v", err)
	}
	if len(s.Sensors()) != 4 || s.Totals().SensorSamples != 64<<20 {
		t.Errorf("%d sensors, totals %+v", len(s.Sensors()), s.Totals())
	}

	// Lasers count beams: 361 for the default planar scan, 181 x 16 for
	// a 3D one; a PSD one.
	s = scene.New(scene.Options{Limits: scene.Limits{SensorSamples: 361 + 1 + 181*16}})
	for _, xml := range []string{
		`<sensor type="laser" name="L" angle_min="-90" angle_max="90" resolution="0.5"/>`,
		`<sensor type="psd" name="P"/>`,
		`<sensor type="laser3d" name="V" angle_min="-90" angle_max="90" resolution="1" vertical_min="-15" vertical_max="15" vertical_resolution="2"/>`,
	} {
		if err := exec(t, s, "", xml); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.Totals().SensorSamples; got != 361+1+181*16 {
		t.Errorf("samples %d", got)
	}
	err = exec(t, s, "", `<sensor type="laser3d" name="W" layers="0"/>`)
	if err == nil || !strings.Contains(err.Error(), `attribute "resolution": the scene's sensors have 3258 pixels and beams and the command would add 900,`) {
		t.Errorf("one more laser: %v", err)
	}
	// Bad attributes are still the sensor's own errors.
	err = exec(t, s, "", `<sensor type="camera" name="X" width="0"/>`)
	if err == nil || !strings.Contains(err.Error(), `attribute "width"`) || strings.Contains(err.Error(), "budget") {
		t.Errorf("bad width: %v", err)
	}
}
