package sensors_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// heightGauge is a sensor type of a test's own: its frame is its frame's
// world height, as JSON, through a payload of its own.
type heightGauge struct{ frame *scene.Node }

func (heightGauge) Describe() map[string]any { return map[string]any{} }

type height struct {
	Sensor string  `json:"sensor"`
	Z      float64 `json:"z"`
}

func (h height) FrameKind() string { return "height" }

func (h height) Encode() ([]byte, []byte, error) {
	info, err := json.Marshal(h)
	return info, nil, err
}

func (h height) WriteFiles(base string) ([]string, error) {
	info, _, _ := h.Encode()
	return []string{base + ".height.json"}, os.WriteFile(base+".height.json", info, 0o644)
}

func (g heightGauge) RenderFrame(_ *sensors.Renderer, s *scene.Scene, st *sensors.Stamp) (*sensors.Frame, error) {
	w, err := s.Transform(g.frame.Name, scene.WorldFrame)
	if err != nil {
		return nil, err
	}
	return sensors.NewFrame(g.frame.Name, height{g.frame.Name, w[14]}, st), nil
}

// A sensor type of one's own renders frames through sensors.FrameRenderer:
// RenderFrames (every command's loop) hands its frame on beside the
// built-in ones, with its kind, description and files.
func TestSensorOfOnesOwnRendersFrames(t *testing.T) {
	scene.RegisterSensor("test-height", func(ctx *scene.Context) (scene.Sensor, error) {
		return heightGauge{ctx.Frame}, nil
	})
	dir := t.TempDir()
	file := filepath.Join(dir, "s.xml")
	os.WriteFile(file, []byte(`<scene>
  <sensor type="test-height" name="H" pose_offset="0 0 1.25 0 0 0"/>
  <sensor type="psd" name="P" pose_offset="0 0 1 0 0 0"/>
</scene>`), 0o644)
	s, err := scene.Load(file, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := sensors.NewRenderer()
	if err != nil {
		t.Skip(err)
	}
	defer r.Close()
	st := &sensors.Stamp{Frame: 3, Time: 0.3}
	frames, errs := sensors.RenderFrames(r, s, s.Sensors(), []*sensors.Stamp{st, st})
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	f := frames[0]
	info, _, err := f.Encode()
	if err != nil || f.Kind != "height" || string(info) != `{"sensor":"H","z":1.25}` {
		t.Errorf("frame %q: %s %v", f.Kind, info, err)
	}
	paths, err := f.WriteFiles(sensors.OutputBase(dir, "H", st))
	if err != nil || len(paths) != 1 || paths[0] != filepath.Join(dir, "H_0003.height.json") {
		t.Errorf("files %v %v", paths, err)
	}
	if frames[1].Kind != "psd" {
		t.Errorf("the built-in sensor beside it: %q", frames[1].Kind)
	}
}
