package record_test

import (
	"encoding/json"
	"testing"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/simvis/simvis/record"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors/ros2"
)

// rangefinder is a sensor type of the test's own whose frames are PSD
// readings: a recording's topics are routed to it because it says so
// (scene.FrameKinder), not by its type name.
type rangefinder struct{}

func (rangefinder) Describe() map[string]any { return map[string]any{} }
func (rangefinder) FrameKind() string        { return "psd" }

func init() {
	scene.RegisterSensor("test-rangefinder", func(*scene.Context) (scene.Sensor, error) { return rangefinder{}, nil })
}

func TestFramesRouteBySensorsKind(t *testing.T) {
	s := scene.New(scene.Options{})
	c, err := scene.ParseCommand(`<sensor type="test-rangefinder" name="RF"/>`, "test", ".")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Exec(c); err != nil {
		t.Fatal(err)
	}
	fs := record.NewFrames(&record.Recording{}, s)
	m := ros2.Range{Header: ros2.Header{FrameID: "RF"}, MinRange: 0.1, MaxRange: 2, Range: 0.5}
	f, err := fs.Add("/RF"+ros2.SuffixRange, &mcap.Message{LogTime: 1000, Data: m.Marshal()})
	if err != nil || f == nil {
		t.Fatalf("frame %v, error %v", f, err)
	}
	var info struct {
		Sensor string  `json:"sensor"`
		Range  float64 `json:"range"`
	}
	if err := json.Unmarshal(f.Info, &info); err != nil || f.Sensor != "RF" || f.Kind != "psd" || info.Sensor != "RF" || info.Range != 0.5 {
		t.Errorf("frame %s %s %s (%v)", f.Sensor, f.Kind, f.Info, err)
	}
}
