package sensors_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

const ravonDir = "../scenes/ravon"

var ravonAssets = []string{"terrain.glb", "foliage.glb", "sky.glb", "ravon.glb"}

func loadRavon(t testing.TB) *scene.Scene {
	t.Helper()
	s, err := scene.Load(ravonDir+"/scene.xml", scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ravonPoses are robot poses on the terrain (z the ground's height there,
// from scenes/generate's terrainHeight) looking at rocks, bushes and trees.
var ravonPoses = []scene.Pose{
	{X: -10, Y: -3, Z: 0.128, Yaw: 0},
	{X: 0, Y: 2, Z: -0.023, Yaw: 35},
	{X: -12, Y: 8, Z: 0.163, Yaw: -60},
	{X: 10, Y: -10, Z: -0.026, Yaw: 140},
}

func setRobotPose(t *testing.T, s *scene.Scene, p scene.Pose) {
	t.Helper()
	for _, kv := range []struct {
		param string
		v     float64
	}{{"x", p.X}, {"y", p.Y}, {"z", p.Z}, {"yaw", p.Yaw}} {
		if err := s.Set("R_POSE", kv.param, kv.v); err != nil {
			t.Fatal(err)
		}
	}
}

func sensorEntry(t *testing.T, s *scene.Scene, name string) *scene.SensorEntry {
	t.Helper()
	for _, se := range s.Sensors() {
		if se.Name == name {
			return se
		}
	}
	t.Fatalf("no sensor %q", name)
	return nil
}

type sgbmResult struct {
	Baseline  float64 `json:"baseline"`
	Fx        float64 `json:"fx"`
	Textured  int     `json:"textured"`
	Found     int     `json:"found"`
	Within1px int     `json:"within_1px"`
	Fraction  float64 `json:"fraction"`
}

// OpenCV's StereoSGBM, run on the RAVON pair as captured (PNGs and the
// published calibration, testdata/stereo_sgbm.py), finds disparities
// within 1 px of the ground truth fx * B / z (z from the depth camera at
// the left camera) for at least 90 % of the textured pixels where it finds
// one: at two robot poses in the afternoon sun, and at the first in a low,
// warm evening sun with long shadows (light color and direction are
// element parameters, paper IV-B; the evening light must reach the
// image: the ground turns redder). SGBM must find a disparity for most
// textured pixels, so the fraction is not taken over a few easy ones.
func TestRavonStereoMatchesGroundTruth(t *testing.T) {
	py := testkit.DebianPython(t, "cv2", "python3-opencv")
	s := loadRavon(t)
	r := testkit.Renderer(t)
	type setting struct {
		element, param string
		v              float64
	}
	evening := []setting{{"SUN", "elevation", 15}, {"SUN", "azimuth", 120}, {"SUN", "g", 0.7}, {"SUN", "b", 0.45}, {"AMBIENT", "intensity", 0.3}}
	var redness []float64 // the ground's mean red over blue, per case
	for _, c := range []struct {
		name string
		pose scene.Pose
		set  []setting
	}{
		{"afternoon", ravonPoses[0], nil},
		{"afternoon", ravonPoses[1], nil},
		{"evening", ravonPoses[0], evening},
	} {
		setRobotPose(t, s, c.pose)
		for _, st := range c.set {
			if err := s.Set(st.element, st.param, st.v); err != nil {
				t.Fatal(err)
			}
		}
		dir := t.TempDir()
		for _, name := range []string{"LEFT", "RIGHT", "DEPTH"} {
			if _, err := sensors.CaptureSensor(r, s, sensorEntry(t, s, name), dir, nil); err != nil {
				t.Fatal(err)
			}
		}
		raw, err := exec.Command(py, "testdata/stereo_sgbm.py", dir, "LEFT", "RIGHT", "DEPTH").Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("stereo_sgbm.py: %v\n%s", err, ee.Stderr)
		} else if err != nil {
			t.Fatal(err)
		}
		var got sgbmResult
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%v in %s", err, raw)
		}
		what := fmt.Sprintf("robot at %v, %s", c.pose, c.name)
		t.Logf("%s: baseline %.4f m, fx %.2f px; SGBM found disparities for %d of %d textured pixels, %d (%.2f %%) within 1 px of the ground truth",
			what, got.Baseline, got.Fx, got.Found, got.Textured, got.Within1px, 100*got.Fraction)
		if got.Baseline < 0.29 || got.Baseline > 0.31 {
			t.Errorf("baseline %v m, want about 0.3", got.Baseline)
		}
		if got.Fraction < 0.9 {
			t.Errorf("%s: %.2f %% of SGBM's disparities within 1 px of the ground truth, want >= 90 %%", what, 100*got.Fraction)
		}
		if got.Found < 100000 || float64(got.Found) < 0.6*float64(got.Textured) {
			t.Errorf("%s: SGBM found disparities for only %d of %d textured pixels", what, got.Found, got.Textured)
		}
		img := testkit.ReadPNG(t, dir+"/LEFT.png")
		var red, blue float64
		for y := 300; y < 480; y++ { // the ground in front of the robot
			for x := 0; x < 640; x++ {
				r, _, b, _ := img.At(x, y).RGBA()
				red, blue = red+float64(r), blue+float64(b)
			}
		}
		redness = append(redness, red/blue)
	}
	if redness[2] < 1.1*redness[0] {
		t.Errorf("the ground's red/blue is %.3f in the evening sun, %.3f in the afternoon: want 10 %% redder", redness[2], redness[0])
	}
}

// GPU and CPU backends agree on hit or miss for every beam of the 3D lidar
// and the three planar scanners of RAVON, and on ranges within 1 mm, at
// several poses of the robot on the terrain (beams graze the ground, pass
// over ridges and rocks and through the leaf cards).
func TestRavonEveryBeamAgrees(t *testing.T) {
	s := loadRavon(t)
	names := []string{"LIDAR", "FRONT_LASER", "REAR_LASER", "GROUND_LASER"}
	hits, beams := map[string]int{}, map[string]int{}
	for _, pose := range ravonPoses {
		setRobotPose(t, s, pose)
		for _, name := range names {
			gpu, cpu := scanBoth(t, s, name)
			what := fmt.Sprintf("%s, robot at %v", name, pose)
			h, worst := agree(t, what, gpu, cpu)
			hits[name] += h
			beams[name] += len(gpu)
			t.Logf("%s: %d of %d beams hit, worst %.3g m", what, h, len(gpu), worst)
		}
	}
	// Open ground leaves many beams without a return (the scanners 0.5 m
	// up see rocks, bushes and rises only); enough must hit for the
	// comparison to mean something.
	for _, name := range names {
		if hits[name] < beams[name]/10 {
			t.Errorf("%s: only %d of %d beams hit over all poses", name, hits[name], beams[name])
		}
	}
}

// The foliage element's opacity changes what a camera sees through a
// bush: at 0 the view is exactly the scene without the foliage part (the
// background behind the leaves), at 1 the leaves cover much of the bush's
// middle, at 0.5 they are blended, neither.
func TestRavonFoliageOpacity(t *testing.T) {
	// A camera 3 m in front of the bush at (3.5, 0.8), at its mid height.
	peek := `<sensor type="camera" name="PEEK" pose_offset="0.5 0.8 0.57 0 0 0" width="160" height="120" fov="30" far="1000"/>`
	with := sceneWith(t, ravonDir, ravonAssets, peek)
	xml, err := os.ReadFile(ravonDir + "/scene.xml")
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, line := range strings.Split(string(xml), "\n") {
		if !strings.Contains(line, `foliage.glb`) && !strings.Contains(line, `type="foliage"`) {
			kept = append(kept, line)
		}
	}
	bare := strings.Replace(strings.Join(kept, "\n"), "</scene>", peek+"\n</scene>", 1)
	without := testkit.LoadXML(t, testkit.CopyFiles(t, ravonDir, ravonAssets...), bare)

	r := testkit.Renderer(t)
	shot := func(s *scene.Scene, opacity float64) *image.RGBA {
		t.Helper()
		if opacity >= 0 {
			if err := s.Set("LEAVES", "opacity", opacity); err != nil {
				t.Fatal(err)
			}
		}
		img, err := camera(t, s, "PEEK").Image(r, s)
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	background := shot(without, -1)
	full, half, none := shot(with, 1), shot(with, 0.5), shot(with, 0)
	if d := testkit.MaxDiff(none, background); d != 0 {
		t.Errorf("opacity 0: differs from the scene without foliage by up to %d levels, want identical", d)
	}
	// The middle third of the view lies on the bush.
	leaves, blended, total := 0, 0, 0
	for y := 40; y < 80; y++ {
		for x := 53; x < 107; x++ {
			total++
			f, h, b := full.RGBAAt(x, y), half.RGBAAt(x, y), background.RGBAAt(x, y)
			if absDiff(f.G, b.G)+absDiff(f.R, b.R)+absDiff(f.B, b.B) < 30 {
				continue // a hole in the leaves, or a leaf colored like the background
			}
			if int(f.G) > int(f.R)+10 && int(f.G) > int(f.B)+10 {
				leaves++
			}
			// Blending puts each channel between the leaves' and the
			// background's (up to rounding).
			if between(h.R, f.R, b.R) && between(h.G, f.G, b.G) && between(h.B, f.B, b.B) && h != f && h != b {
				blended++
			}
		}
	}
	t.Logf("middle of the bush: %d of %d pixels are leaves at opacity 1, %d of those blended at 0.5", leaves, total, blended)
	if leaves < total/3 {
		t.Errorf("opacity 1: only %d of %d pixels in the bush's middle show leaves", leaves, total)
	}
	if blended < leaves*8/10 {
		t.Errorf("opacity 0.5: only %d of the %d leaf pixels lie between leaves and background", blended, leaves)
	}
}

// between reports whether v lies between a and b, with one level of
// rounding either way.
func between(v, a, b uint8) bool {
	lo, hi := min(a, b), max(a, b)
	return int(v) >= int(lo)-1 && int(v) <= int(hi)+1
}

// BenchmarkRavonStereoPair renders the RAVON stereo pair (both 640x480
// cameras) at the start pose: ns/op is the time per pair.
// BenchmarkRavonStereoPair renders the stereo pair with the sun's shadows:
// "still" with the robot standing (the shadow map is drawn once), "moving"
// with the robot driving 5 cm a pair (the map is drawn again every pair).
func BenchmarkRavonStereoPair(b *testing.B) {
	b.Run("still", func(b *testing.B) { benchRavonStereoPair(b, false) })
	b.Run("moving", func(b *testing.B) { benchRavonStereoPair(b, true) })
}

func benchRavonStereoPair(b *testing.B, moving bool) {
	s := loadRavon(b)
	r := testkit.Renderer(b)
	var left, right *sensors.Camera
	for _, se := range s.Sensors() {
		switch se.Name {
		case "LEFT":
			left = se.Sensor.(*sensors.Camera)
		case "RIGHT":
			right = se.Sensor.(*sensors.Camera)
		}
	}
	// The process's CPU time (all threads, llvmpipe's included) per pair
	// says what a pair costs when other programs share the cores, which
	// the wall clock does not.
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b.ResetTimer()
	start := cpu()
	x0, err := s.Value("R_POSE", "x")
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		if moving {
			if err := s.Set("R_POSE", "x", x0+0.05*float64(i%100)); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := left.Image(r, s); err != nil {
			b.Fatal(err)
		}
		if _, err := right.Image(r, s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
	b.ReportMetric(float64(cpu()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/pair")
}
