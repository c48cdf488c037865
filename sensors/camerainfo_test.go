package sensors_test

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/go-gl/mathgl/mgl64"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// cameraJSON is NAME.json as a user reads it.
type cameraJSON struct {
	Width           int       `json:"width"`
	Height          int       `json:"height"`
	DistortionModel string    `json:"distortion_model"`
	D               []float64 `json:"D"`
	K               []float64 `json:"K"`
	R               []float64 `json:"R"`
	P               []float64 `json:"P"`
	Intrinsics      struct {
		Width, Height  int
		Fx, Fy, Cx, Cy float64
	}
	Pose        scene.Pose `json:"pose"`
	OpticalPose scene.Pose `json:"optical_pose"`
}

func readCameraJSON(t *testing.T, path string) cameraJSON {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c cameraJSON
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c
}

// Every camera and depth camera publishes its calibration as
// sensor_msgs/CameraInfo has it, in the pixel-center convention: a 640x480
// camera with a 90° field has fx = fy = 320 and its principal point at
// (319.5, 239.5), not (320, 240); odd sizes put it on a pixel center.
func TestCameraInfoPublished(t *testing.T) {
	s := testkit.LoadXML(t, t.TempDir(), `<scene>
  <sensor type="camera" name="CAM" width="640" height="480" fov="90"/>
  <sensor type="camera" name="ODD" width="101" height="75" vfov="50"/>
  <sensor type="depth" name="DEP" width="64" height="48" fov="70" range_max="5"/>
</scene>`)
	dir := t.TempDir()
	if _, err := sensors.CaptureAll(testkit.Renderer(t), s, dir); err != nil {
		t.Fatal(err)
	}
	f90 := 640 / (2 * math.Tan(math.Pi/4)) // 320 up to rounding of tan 45°
	fOdd := 75 / (2 * math.Tan(25*math.Pi/180))
	f70 := 64 / (2 * math.Tan(35*math.Pi/180))
	for _, c := range []struct {
		name          string
		w, h          int
		fx, fy        float64
		cx, cy        float64
		approxFx, tol float64
	}{
		{"CAM", 640, 480, f90, f90, 319.5, 239.5, 320, 1e-9},
		{"ODD", 101, 75, fOdd, fOdd, 50, 37, 80.419, 1e-3},  // 37.5 / tan 25°
		{"DEP", 64, 48, f70, f70, 31.5, 23.5, 45.701, 1e-3}, // 32 / tan 35°
	} {
		got := readCameraJSON(t, filepath.Join(dir, c.name+".json"))
		if math.Abs(c.fx-c.approxFx) > c.tol {
			t.Fatalf("%s: test's own fx %v, want about %v", c.name, c.fx, c.approxFx)
		}
		wantK := []float64{c.fx, 0, c.cx, 0, c.fy, c.cy, 0, 0, 1}
		wantP := []float64{c.fx, 0, c.cx, 0, 0, c.fy, c.cy, 0, 0, 0, 1, 0}
		if !equalFloats(got.K, wantK, 1e-12) || !equalFloats(got.P, wantP, 1e-12) {
			t.Errorf("%s: K %v P %v, want K %v P %v", c.name, got.K, got.P, wantK, wantP)
		}
		if !equalFloats(got.R, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}, 0) || !equalFloats(got.D, make([]float64, 5), 0) || got.DistortionModel != "plumb_bob" {
			t.Errorf("%s: R %v D %v model %q, want identity, 5 zeros, plumb_bob", c.name, got.R, got.D, got.DistortionModel)
		}
		in := got.Intrinsics
		if got.Width != c.w || got.Height != c.h || in.Width != c.w || in.Height != c.h ||
			in.Cx != c.cx || in.Cy != c.cy || math.Abs(in.Fx-c.fx) > 1e-12 || math.Abs(in.Fy-c.fy) > 1e-12 {
			t.Errorf("%s: size %dx%d, intrinsics %+v; want %dx%d, fx %v cx %v cy %v", c.name, got.Width, got.Height, in, c.w, c.h, c.fx, c.cx, c.cy)
		}
	}
	// The Go API gives the same numbers.
	in := camera(t, s, "CAM").Intrinsics()
	if ci := in.CameraInfo(); ci.K != in.K() || ci.P != in.P() || in.Cx != 319.5 || in.Cy != 239.5 || ci.K[2] != 319.5 || ci.P[6] != 239.5 {
		t.Errorf("CameraInfo %+v of %+v", ci, in)
	}
}

func equalFloats(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol {
			return false
		}
	}
	return true
}

// The optical frame (z forward, x right, y down) published beside the body
// pose: in world, its z axis is the body's x, its x the body's -y, its y
// the body's -z, at the same origin; for cameras and depth cameras, in the
// JSON written and in the message sent.
func TestOpticalPoseAxes(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "robot.glb", 0.5, 0.5, 0.5, [4]float32{0, 0, 1, 1})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="robot.glb" name="ROBOT" pose_offset="1 -2 0.3 0 0 35"/>
  <sensor type="camera" name="CAM" insert_at="ROBOT" pose_offset="0.2 0.1 1.1 12 -25 40" width="32" height="24"/>
  <sensor type="depth" name="DEP" insert_at="ROBOT" pose_offset="-0.1 0 0.8 -70 80 -120" width="16" height="12"/>
</scene>`)
	r := testkit.Renderer(t)
	dir = t.TempDir()
	for _, se := range s.Sensors() {
		f, err := sensors.RenderFrame(r, s, se, nil)
		if err != nil {
			t.Fatal(err)
		}
		files, err := f.WriteFiles(filepath.Join(dir, "out"))
		if err != nil {
			t.Fatal(err)
		}
		msg, _, err := f.Encode()
		if err != nil {
			t.Fatal(err)
		}
		var fromMsg cameraJSON
		if err := json.Unmarshal(msg, &fromMsg); err != nil {
			t.Fatal(err)
		}
		fromFile := readCameraJSON(t, files[len(files)-1])
		for src, got := range map[string]cameraJSON{"file": fromFile, "message": fromMsg} {
			body, opt := got.Pose.Matrix(), got.OpticalPose.Matrix()
			world := se.Frame.World() // the truth, not the published pose
			for k, want := range []mgl64.Vec3{
				body.Col(1).Vec3().Mul(-1), // optical x
				body.Col(2).Vec3().Mul(-1), // optical y
				body.Col(0).Vec3(),         // optical z
				body.Col(3).Vec3(),         // origin
			} {
				if d := opt.Col(k).Vec3().Sub(want).Len(); d > 1e-12 {
					t.Errorf("%s %s: optical column %d is %v, want %v (off by %g)", se.Name, src, k, opt.Col(k).Vec3(), want, d)
				}
			}
			if !body.ApproxEqualThreshold(world, 1e-12) {
				t.Errorf("%s %s: body pose %v, world %v", se.Name, src, got.Pose, scene.PoseFromMatrix(world))
			}
			if len(got.K) != 9 || len(got.P) != 12 {
				t.Errorf("%s %s: K %v P %v", se.Name, src, got.K, got.P)
			}
		}
	}
	// The constant behind it: optical axes in body coordinates.
	m := sensors.OpticalInBody()
	if m.Col(0).Vec3() != (mgl64.Vec3{0, -1, 0}) || m.Col(1).Vec3() != (mgl64.Vec3{0, 0, -1}) || m.Col(2).Vec3() != (mgl64.Vec3{1, 0, 0}) {
		t.Errorf("OpticalInBody %v", m)
	}
}

// backProjection is what testdata/backproject.py reports per principal
// point: the published one and the pixel-corner ones (W/2, H/2).
type backProjection map[string]struct {
	Valid  int     `json:"valid"`
	MaxAbs float64 `json:"max_abs"`
	Mean   float64 `json:"mean"`
}

// A plane tilted about 38° from the optical axis, seen by a depth camera
// that is itself turned and tilted, fills the image (depths 1.9-6.4 m);
// each pixel, back-projected the standard pinhole way with the published K
// and moved to the world with the published optical_pose by an
// independent program (numpy), lies on the plane within 0.1 mm on the cpu
// backend, and within the gpu's 1 mm depth target on the gpu backend
// (measured: 0.1 µm cpu, 0.8 µm gpu on llvmpipe). The same pixels
// back-projected with the pixel-corner principal point (cx = W/2 and/or cy
// = H/2, what NAME.json published before) are mm off: half a pixel is
// z/(2 fx) sideways, 3.4-11.6 mm here, and the plane's tilt turns that into
// worst distances of 6.2 mm (cx), 3.6 mm (cy) and 9.7 mm (both; mean 4.7
// mm) from the plane.
func TestDepthBackProjectTiltedPlane(t *testing.T) {
	py := testkit.DebianPython(t, "numpy", "python3-numpy")
	dir := t.TempDir()
	testkit.WriteModel(t, dir, "plane.glb", func(m *models.Model) {
		m.AddNode(nil, "plane", mgl64.Ident4(), models.Box("plane", 0.2, 30, 30, [4]float32{1, 1, 1, 1}))
	})
	platePose := scene.Pose{X: 3.2, Y: 0.4, Z: 1.6, Pitch: -25, Yaw: 46}
	camPose := scene.Pose{X: 0.3, Y: -0.2, Z: 1.2, Roll: 4, Pitch: -6, Yaw: 12}
	// The plate's face toward the camera: n . p = c, n its +x axis.
	plate := platePose.Matrix()
	n := plate.Col(0).Vec3()
	c := plate.Col(3).Vec3().Dot(n) - 0.1
	tilt := mgl64.RadToDeg(math.Acos(n.Dot(camPose.Matrix().Col(0).Vec3())))
	if tilt < 30 || tilt > 45 {
		t.Fatalf("the plane is tilted %.1f° from the optical axis, want 30-45", tilt)
	}
	for _, backend := range []string{"cpu", "gpu"} {
		s := testkit.LoadXML(t, dir, `<scene>
  <part file="plane.glb" name="PLATE" pose_offset="`+platePose.String()+`"/>
  <sensor type="depth" name="D" pose_offset="`+camPose.String()+`" width="320" height="240" fov="60" range_max="20" backend="`+backend+`"/>
</scene>`)
		out := t.TempDir()
		if _, err := sensors.CaptureAll(testkit.Renderer(t), s, out); err != nil {
			t.Fatal(err)
		}
		base := filepath.Join(out, "D")
		args := []string{"testdata/backproject.py", base}
		for _, f := range []float64{n[0], n[1], n[2], c} {
			args = append(args, fmtFloat(f))
		}
		raw, err := exec.Command(py, args...).Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("%s: backproject.py: %v\n%s", backend, err, ee.Stderr)
		} else if err != nil {
			t.Fatal(err)
		}
		var got backProjection
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%s: %v in %s", backend, err, raw)
		}
		pub := got["published"]
		if pub.Valid != 320*240 {
			t.Errorf("%s: %d valid pixels, want all %d (the plane fills the view)", backend, pub.Valid, 320*240)
		}
		// The convention is what is tested: 0.1 mm holds on the exact cpu
		// backend and on llvmpipe. The gpu depth itself is held to the
		// package's 1 mm depth target, as in TestDepthCameraTiltedWall:
		// interpolation on an NVIDIA H100 was measured at 0.13 mm there.
		tol := 1e-4
		if backend == "gpu" {
			tol = 1e-3
		}
		if pub.MaxAbs > tol {
			t.Errorf("%s: points back-projected with the published K lie up to %.3g m off the plane, want <= %g m", backend, pub.MaxAbs, tol)
		}
		for _, k := range []string{"corner_cx", "corner_cy", "corner"} {
			if got[k].MaxAbs < 1e-3 {
				t.Errorf("%s: with the pixel-corner principal point (%s) the points are only %.3g m off the plane: the test cannot tell the conventions apart", backend, k, got[k].MaxAbs)
			}
		}
		t.Logf("%s: plane tilted %.1f°; off the plane, worst (mean): published K %.4f mm (%.4f), cx=W/2 %.2f mm (%.2f), cy=H/2 %.2f mm (%.2f), both %.2f mm (%.2f)",
			backend, tilt, 1e3*pub.MaxAbs, 1e3*pub.Mean, 1e3*got["corner_cx"].MaxAbs, 1e3*got["corner_cx"].Mean,
			1e3*got["corner_cy"].MaxAbs, 1e3*got["corner_cy"].Mean, 1e3*got["corner"].MaxAbs, 1e3*got["corner"].Mean)

		// The same back-projection in Go from the same files agrees with
		// numpy: the independent reader read what was meant.
		goMax, zMin, zMax := goBackProject(t, base, n, c)
		t.Logf("%s: depths %.2f-%.2f m", backend, zMin, zMax)
		if math.Abs(goMax-pub.MaxAbs) > 1e-9 {
			t.Errorf("%s: Go back-projection %.6g m off the plane, numpy %.6g m", backend, goMax, pub.MaxAbs)
		}
	}
}

func fmtFloat(f float64) string { b, _ := json.Marshal(f); return string(b) }

// goBackProject returns the largest distance from the plane n . p = c of
// the capture's pixels, back-projected with its published K and optical
// pose, and the range of their depths.
func goBackProject(t *testing.T, base string, n mgl64.Vec3, c float64) (worst, zMin, zMax float64) {
	info := readCameraJSON(t, base+".json")
	raw, err := os.ReadFile(base + ".depth.f32")
	if err != nil {
		t.Fatal(err)
	}
	fx, cx, fy, cy := info.K[0], info.K[2], info.K[4], info.K[5]
	opt := info.OpticalPose.Matrix()
	zMin = math.Inf(1)
	for v := 0; v < info.Height; v++ {
		for u := 0; u < info.Width; u++ {
			z := float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*(v*info.Width+u):])))
			if math.IsInf(z, 0) || math.IsNaN(z) {
				continue
			}
			p := opt.Mul4x1(mgl64.Vec4{(float64(u) - cx) * z / fx, (float64(v) - cy) * z / fy, z, 1}).Vec3()
			worst = math.Max(worst, math.Abs(p.Dot(n)-c))
			zMin, zMax = math.Min(zMin, z), math.Max(zMax, z)
		}
	}
	return worst, zMin, zMax
}
