package sensors_test

import (
	"encoding/json"
	"image/color"
	"math"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/sensors"
)

// The colormap's ends and middle are viridis' own samples (exact where a
// sample falls on one of the scale's steps, as the ends and middle do): near yellow,
// far dark purple; no return black, too close white; depths beyond the
// scale clamp to its ends.
func TestPreviewColorScale(t *testing.T) {
	for _, c := range []struct {
		z    float64
		want color.RGBA
	}{
		{0.5, color.RGBA{253, 231, 37, 255}}, // near = range_min
		// 0.6 is 1/40 of the way: t = 0.975, 0.8 of the way from sample 7
		// (110 206 88) to sample 8 (253 231 37), rounded.
		{0.6, color.RGBA{224, 226, 47, 255}},
		{2.5, color.RGBA{38, 130, 142, 255}}, // the middle
		{4.5, color.RGBA{68, 1, 84, 255}},    // far = range_max
		{9, color.RGBA{68, 1, 84, 255}},      // clamped
		{math.Inf(1), sensors.PreviewNoReturn},
		{math.Inf(-1), sensors.PreviewTooClose},
	} {
		got := sensors.PreviewColor(c.z, 0.5, 4.5)
		// Between samples the scale is drawn in 4096 steps: within one
		// level of the exact interpolation.
		if d := max(byteDiff(got.R, c.want.R), byteDiff(got.G, c.want.G), byteDiff(got.B, c.want.B)); d > 1 || got.A != c.want.A {
			t.Errorf("PreviewColor(%v, 0.5, 4.5) = %v, want %v", c.z, got, c.want)
		}
	}
}

// capture writes NAME.preview.png beside the depth files; OpenCV reads it
// back, and every sampled pixel has the color of the depth the .f32 file
// holds there (numpy reads it): the wall 2.5 m ahead in the middle of the
// scale, black where nothing is within range_max.
func TestDepthPreviewFile(t *testing.T) {
	py := testkit.DebianPython(t, "cv2", "python3-opencv")
	dir := t.TempDir()
	// A wall 2.5 m ahead filling the left half of the view (body +y).
	testkit.WriteBox(t, dir, "wall.glb", 0.2, 10, 10, [4]float32{1, 1, 1, 1})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="wall.glb" name="WALL" pose_offset="2.6 5 0 0 0 0"/>
  <sensor type="depth" name="D" width="64" height="48" fov="60" range_min="0.5" range_max="4.5"/>
</scene>`)
	files, err := sensors.CaptureAll(testkit.Renderer(t), s, dir)
	if err != nil {
		t.Fatal(err)
	}
	preview := filepath.Join(dir, "D.preview.png")
	found := false
	for _, f := range files {
		found = found || f == preview
	}
	if !found {
		t.Fatalf("capture wrote %v, no %s", files, preview)
	}
	out, err := exec.Command(py, "-c", `import cv2, json, numpy, sys
img = cv2.imread(sys.argv[1], cv2.IMREAD_UNCHANGED)
z = numpy.fromfile(sys.argv[2], dtype="<f4").reshape(img.shape[0], img.shape[1])
samples = []
for j in range(0, img.shape[0], 4):
    for i in range(0, img.shape[1], 4):
        b, g, r = (int(v) for v in img[j, i][:3])
        samples.append([repr(float(z[j, i])), r, g, b])
print(json.dumps({"shape": list(img.shape), "samples": samples}))`, preview, filepath.Join(dir, "D.depth.f32")).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var got struct {
		Shape   []int
		Samples [][4]any
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(got.Shape) != 3 || got.Shape[0] != 48 || got.Shape[1] != 64 || got.Shape[2] < 3 {
		t.Fatalf("OpenCV reads shape %v, want 48x64 color", got.Shape)
	}
	var wall, none int
	for _, sm := range got.Samples {
		var z float64
		switch s := sm[0].(string); s {
		case "inf":
			z = math.Inf(1)
		case "-inf":
			z = math.Inf(-1)
		default:
			if err := json.Unmarshal([]byte(s), &z); err != nil {
				t.Fatal(err)
			}
		}
		px := color.RGBA{uint8(sm[1].(float64)), uint8(sm[2].(float64)), uint8(sm[3].(float64)), 255}
		if want := sensors.PreviewColor(z, 0.5, 4.5); px != want {
			t.Errorf("depth %v: preview %v, want %v", z, px, want)
		}
		switch {
		case z > 2.49 && z < 2.51:
			wall++
			if d := max(byteDiff(px.R, 38), byteDiff(px.G, 130), byteDiff(px.B, 142)); d > 1 {
				t.Errorf("the wall at %v m is %v, want the middle of the map, 38 130 142", z, px)
			}
		case math.IsInf(z, 1):
			none++
		}
	}
	if wall < 50 || none < 50 {
		t.Errorf("%d wall and %d no-return samples of %d, want the view split between them", wall, none, len(got.Samples))
	}
}

func byteDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

// BenchmarkDepthPreview measures the colour-mapped preview of a 640x480
// depth frame, colour mapping and PNG file together: what every depth
// frame of capture and serve -o costs on top of its other files.
func BenchmarkDepthPreview(b *testing.B) {
	im := &sensors.DepthImage{Depth: make([]float32, 640*480)}
	im.Info.Intrinsics.Width, im.Info.Intrinsics.Height = 640, 480
	im.Info.Near, im.Info.Far = 0.1, 10
	for i := range im.Depth {
		im.Depth[i] = float32(0.1 + 9.9*float64(i%640)/640 + 0.001*float64(i/640))
	}
	path := filepath.Join(b.TempDir(), "D.preview.png")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := sensors.WriteDepthPreview(path, im); err != nil {
			b.Fatal(err)
		}
	}
}
