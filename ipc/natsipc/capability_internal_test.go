package natsipc

import (
	"testing"

	"github.com/simvis/simvis/scene"
)

// sonar is a sensor type of the test's own that says what frames it
// publishes (scene.FrameKinder); silent says nothing.
type (
	sonar  struct{}
	silent struct{}
)

func (sonar) Describe() map[string]any  { return map[string]any{} }
func (sonar) FrameKind() string         { return "sonar-ping" }
func (silent) Describe() map[string]any { return map[string]any{} }

func init() {
	scene.RegisterSensor("test-sonar", func(*scene.Context) (scene.Sensor, error) { return sonar{}, nil })
	scene.RegisterSensor("test-silent", func(*scene.Context) (scene.Sensor, error) { return silent{}, nil })
}

// The desc reply's kind of a sensor is what the sensor says, for a type
// no table of this package knows; "" for one that says nothing.
func TestDescribedKindIsTheSensors(t *testing.T) {
	s := scene.New(scene.Options{})
	for _, x := range []string{`<sensor type="test-sonar" name="S"/>`, `<sensor type="test-silent" name="Q"/>`} {
		c, err := scene.ParseCommand(x, "test", ".")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Exec(c); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]string{}
	for _, se := range s.Sensors() {
		got[se.Name] = frameKind(se)
	}
	if got["S"] != "sonar-ping" || got["Q"] != "" || len(got) != 2 {
		t.Errorf("kinds %v", got)
	}
}
