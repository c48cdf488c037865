package scene_test

import (
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// lens is a sensor type of the test's own that sees as a camera: it is in
// no table of the scene package, only implements scene.CameraExporter.
type lens struct{}

func (lens) Describe() map[string]any { return map[string]any{} }

func (lens) ExportCamera() *models.Camera {
	return &models.Camera{YFOV: 0.5, AspectRatio: 2, ZNear: 0.25, ZFar: 40}
}

// plainSensor exports nothing.
type plainSensor struct{}

func (plainSensor) Describe() map[string]any { return map[string]any{} }

func init() {
	scene.RegisterSensor("test-lens", func(*scene.Context) (scene.Sensor, error) { return lens{}, nil })
	scene.RegisterSensor("test-plain", func(*scene.Context) (scene.Sensor, error) { return plainSensor{}, nil })
}

// mustExec runs each command in s.
func mustExec(t *testing.T, s *scene.Scene, xml ...string) {
	t.Helper()
	for _, x := range xml {
		c, err := scene.ParseCommand(x, "test", ".")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Exec(c); err != nil {
			t.Fatalf("%s: %v", x, err)
		}
	}
}

// Export asks a sensor for its glTF camera (scene.CameraExporter): a type
// registered from outside the scene package is exported as a camera by
// implementing it, one that does not stays a named node.
func TestExportAsksSensorsForCameras(t *testing.T) {
	s := scene.New(scene.Options{})
	mustExec(t, s, `<sensor type="test-lens" name="LENS"/>`, `<sensor type="test-plain" name="PLAIN"/>`)
	m, err := s.Export()
	if err != nil {
		t.Fatal(err)
	}
	cams := map[string]*models.Camera{}
	names := map[string]bool{}
	err = m.Walk(func(n *models.Node, _ mgl64.Mat4) error {
		names[n.Name] = true
		if n.Camera != nil {
			cams[n.Name] = n.Camera
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if c := cams["LENS camera"]; len(cams) != 1 || c == nil || *c != (models.Camera{YFOV: 0.5, AspectRatio: 2, ZNear: 0.25, ZFar: 40}) {
		t.Errorf("cameras %v, want LENS's alone", cams)
	}
	if !names["PLAIN"] {
		t.Errorf("nodes %v: PLAIN missing", names)
	}
}
