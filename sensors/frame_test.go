package sensors_test

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/simvis/simvis/internal/testkit"

	"github.com/simvis/simvis/sensors"
)

// A frame's message carries what its files carry: the camera's RGB bytes
// are the PNG's pixels, depth and cloud payloads are the measured values,
// scan JSON is the scan file's; the room's walls are at the closed-form
// distances.
func TestFrameEncodeMatchesFiles(t *testing.T) {
	s := roomScene(t, `
  <sensor type="camera" name="CAM" pose_offset="0 0 1.5 0 0 0" width="32" height="24"/>
  <sensor type="depth" name="DEPTH" pose_offset="0 0 1.5 0 0 0" width="32" height="24"/>
  <sensor type="laser" name="SCAN" pose_offset="0 0 1 0 0 0" angle_min="-10" angle_max="10" resolution="10"/>
  <sensor type="laser3d" name="CLOUD" pose_offset="0 0 1 0 0 0" layers="0" angle_min="0" angle_max="0"/>
  <sensor type="psd" name="PSD" pose_offset="0 0 1 0 90 0" range_max="2"/>
  <sensor type="segmentation" name="SEG" pose_offset="0 0 1.5 0 0 0" width="32" height="24"/>`)
	r := testkit.Renderer(t)
	dir := t.TempDir()
	st := &sensors.Stamp{Frame: 3, Time: 0.3}
	for _, se := range s.Sensors() {
		f, err := sensors.RenderFrame(r, s, se, st)
		if err != nil {
			t.Fatal(err)
		}
		info, data, err := f.Encode()
		if err != nil {
			t.Fatal(err)
		}
		var meta struct {
			Stamp *sensors.Stamp `json:"stamp"`
		}
		if err := json.Unmarshal(info, &meta); err != nil || meta.Stamp == nil || *meta.Stamp != *st {
			t.Errorf("%s: info %s lacks the stamp (%v)", se.Name, info, err)
		}
		files, err := f.WriteFiles(filepath.Join(dir, se.Name))
		if err != nil {
			t.Fatal(err)
		}
		switch f.Kind {
		case "image":
			img := testkit.ReadPNG(t, files[0])
			w := img.Bounds().Dx()
			for _, px := range [][2]int{{0, 0}, {16, 12}, {31, 23}} {
				cr, cg, cb, _ := img.At(px[0], px[1]).RGBA()
				k := 3 * (px[1]*w + px[0])
				if data[k] != uint8(cr>>8) || data[k+1] != uint8(cg>>8) || data[k+2] != uint8(cb>>8) {
					t.Errorf("image pixel %v: message %v, PNG %v %v %v", px, data[k:k+3], cr>>8, cg>>8, cb>>8)
				}
			}
		case "depth":
			raw, _ := os.ReadFile(files[1])
			center := math.Float32frombits(binary.LittleEndian.Uint32(data[4*(12*32+16):]))
			if string(raw) != string(data) || math.Abs(float64(center)-4) > 1e-3 {
				t.Errorf("depth payload differs from the .f32 file, or center %v is not the wall at 4 m", center)
			}
		case "segmentation":
			// The room is the scene's one part: instance 1 everywhere, no class.
			img := testkit.ReadPNG(t, files[0])
			for _, px := range [][2]int{{0, 0}, {16, 12}, {31, 23}} {
				y, _, _, _ := img.At(px[0], px[1]).RGBA()
				k := 2 * (px[1]*32 + px[0])
				if id := binary.LittleEndian.Uint16(data[k:]); uint32(id) != y || id != 1 {
					t.Errorf("instance pixel %v: message %d, PNG %d; want the room, 1", px, id, y)
				}
			}
			if len(data) != 2*2*32*24 {
				t.Errorf("segmentation payload %d bytes, want two 32x24 planes of uint16", len(data))
			}
		case "cloud":
			x := math.Float32frombits(binary.LittleEndian.Uint32(data[0:]))
			if len(data) != 12 || math.Abs(float64(x)-4) > 1e-6 {
				t.Errorf("cloud payload %d bytes, x %v; want one point on the wall at 4 m", len(data), x)
			}
		case "scan", "psd":
			raw, _ := os.ReadFile(files[0])
			var a, b any
			json.Unmarshal(raw, &a)
			json.Unmarshal(info, &b)
			if ja, _ := json.Marshal(a); string(ja) != string(mustJSON(b)) || len(data) != 0 {
				t.Errorf("%s: message %s differs from file %s", se.Name, info, raw)
			}
		}
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
