package sensors

import (
	"encoding/json"
	"image"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

// Every kind of frame encodes and writes with a non-finite pose (issue 12:
// a host died on "json: unsupported value: NaN"): pose fields that are not
// finite are null, ranges keep their null / too_close convention, and
// finite fields keep their values.
func TestFramesWithNonFinitePoseEncode(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	pose := scene.Pose{X: inf, Y: nan, Z: 1.5, Roll: 0, Pitch: math.Inf(-1), Yaw: 30}
	st := &Stamp{Frame: 2, Time: 0.2}
	info := FrameInfo{Sensor: "CAM", Stamp: st, Intrinsics: Intrinsics{Width: 2, Height: 1, Fx: 1, Fy: 1}, Pose: pose, Near: 0.1, Far: inf}
	frames := []*Frame{
		NewFrame("SCAN", &Scan{Sensor: "SCAN", Stamp: st, RangeMax: 30,
			Ranges: []float64{1.25, inf, math.Inf(-1), nan}, Pose: pose}, st),
		NewFrame("PSD", &Reading{Sensor: "PSD", Stamp: st, Range: nan, RangeMax: 0.8, Pose: pose}, st),
		NewFrame("CAM", &CameraImage{Image: image.NewRGBA(image.Rect(0, 0, 2, 1)), Info: info}, st),
		NewFrame("DEPTH", &DepthImage{Info: info, Depth: []float32{float32(inf), 2}}, st),
		NewFrame("CLOUD", &Cloud{Sensor: "CLOUD", Stamp: st, Width: 1, Height: 1, Points: []mgl64.Vec3{{nan, nan, nan}}, Ranges: []float64{inf}, Pose: pose}, st),
	}
	dir := t.TempDir()
	for _, f := range frames {
		info, _, err := f.Encode()
		if err != nil {
			t.Errorf("%s: Encode: %v", f.Sensor, err)
			continue
		}
		var got struct {
			Pose  map[string]*float64 `json:"pose"`
			Stamp *Stamp              `json:"stamp"`
		}
		if err := json.Unmarshal(info, &got); err != nil {
			t.Fatalf("%s: %v in %s", f.Sensor, err, info)
		}
		if got.Pose["x"] != nil || got.Pose["y"] != nil || got.Pose["pitch"] != nil ||
			got.Pose["z"] == nil || *got.Pose["z"] != 1.5 || got.Pose["yaw"] == nil || *got.Pose["yaw"] != 30 {
			t.Errorf("%s: pose %s, want x, y, pitch null and z 1.5, yaw 30", f.Sensor, info)
		}
		if got.Stamp == nil || *got.Stamp != *st {
			t.Errorf("%s: stamp lost: %s", f.Sensor, info)
		}
		files, err := f.WriteFiles(filepath.Join(dir, f.Sensor))
		if err != nil {
			t.Errorf("%s: WriteFiles: %v", f.Sensor, err)
		}
		for _, p := range files {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s: %v", f.Sensor, err)
			}
		}
	}
	scan, _ := os.ReadFile(filepath.Join(dir, "SCAN.scan.json"))
	var sc struct {
		Ranges   []*float64 `json:"ranges"`
		TooClose []int      `json:"too_close"`
	}
	if err := json.Unmarshal(scan, &sc); err != nil || len(sc.Ranges) != 4 || sc.Ranges[0] == nil || *sc.Ranges[0] != 1.25 ||
		sc.Ranges[1] != nil || sc.Ranges[2] != nil || sc.Ranges[3] != nil || len(sc.TooClose) != 1 || sc.TooClose[0] != 2 {
		t.Errorf("scan file: %s (%v)", scan, err)
	}
	cam, _ := os.ReadFile(filepath.Join(dir, "CAM.json"))
	if !strings.Contains(string(cam), `"far": null`) || !strings.Contains(string(cam), `"near": 0.1`) {
		t.Errorf("camera info: %s", cam)
	}
	// The optical pose derived from a pose that is not finite is null
	// through and through, beside the calibration that is.
	var ci struct {
		OpticalPose map[string]*float64 `json:"optical_pose"`
		K           []*float64          `json:"K"`
	}
	if err := json.Unmarshal(cam, &ci); err != nil || len(ci.OpticalPose) != 6 || ci.OpticalPose["x"] != nil || ci.OpticalPose["yaw"] != nil ||
		len(ci.K) != 9 || ci.K[0] == nil || *ci.K[0] != 1 {
		t.Errorf("camera info: %s (%v)", cam, err)
	}
}

// A panic in a sensor's rendering comes back as that sensor's error.
func TestRenderPanicIsAnError(t *testing.T) {
	se := &scene.SensorEntry{Name: "BAD", Sensor: panicky{}}
	_, err := RenderFrame(nil, nil, se, nil)
	if err == nil || !strings.Contains(err.Error(), `sensor "BAD" failed: boom`) {
		t.Errorf("RenderFrame of a panicking sensor: %v", err)
	}
	_, err = CaptureSensor(nil, nil, se, t.TempDir(), nil)
	if err == nil || !strings.Contains(err.Error(), `sensor "BAD" failed: boom`) {
		t.Errorf("CaptureSensor of a panicking sensor: %v", err)
	}
}

type panicky struct{ scene.Sensor }

func (panicky) renderFrame(*Renderer, *scene.Scene, *Stamp) (*Frame, error) { panic("boom") }

func (panicky) Capture(*Renderer, *scene.Scene, Output) ([]string, error) { panic("boom") }

// Output files replace a symbolic link planted at their name instead of
// writing through it, and leave no temporary file behind.
func TestWriteAtomicReplacesLinks(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	victim := filepath.Join(other, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "S.psd.json")
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	if err := writeJSONFile(path, &Reading{Sensor: "S", Range: 1}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(victim); string(data) != "keep" {
		t.Errorf("the link's target was written: %q", data)
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 {
		t.Errorf("%s: %v %v, want a regular file with mode 0644", path, fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries in the output directory, want 1 (no temporary file left)", len(entries))
	}
}

// Negative zero, which decomposing a rotation gives (an optical frame's
// pitch), is written as 0.
func TestJSONFloatNegativeZero(t *testing.T) {
	if b, err := json.Marshal(jsonFloat(math.Copysign(0, -1))); err != nil || string(b) != "0" {
		t.Errorf("-0 encodes as %s (%v), want 0", b, err)
	}
}
