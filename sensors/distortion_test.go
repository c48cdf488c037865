package sensors_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl64"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// writeCheckerboard writes a flat checkerboard of cols x rows squares of
// side sq (cols-1 x rows-1 inner corners) in the model's y-z plane, facing
// -x, inside a white border one square wide: alternating black and white
// boxes, coplanar, so no face fights another for depth.
func writeCheckerboard(t *testing.T, dir string, cols, rows int, sq float64) {
	black, white := [4]float32{0, 0, 0, 1}, [4]float32{1, 1, 1, 1}
	testkit.WriteModel(t, dir, "board.glb", func(m *models.Model) {
		for i := -1; i <= cols; i++ {
			for j := -1; j <= rows; j++ {
				c, name := white, "white"
				if i >= 0 && i < cols && j >= 0 && j < rows && (i+j)%2 == 1 {
					c, name = black, "black"
				}
				y := (float64(i) - float64(cols-1)/2) * sq
				z := (float64(j) - float64(rows-1)/2) * sq
				m.AddNode(nil, fmt.Sprintf("%s_%d_%d", name, i, j), mgl64.Translate3D(0, y, z), models.Box(name, 0.01, sq, sq, c))
			}
		}
	})
}

// boardPoses returns n poses of the checkerboard (its center and
// orientation in the camera's frame) that a camera with intrinsics in
// sees whole, its outer corners at least 10 px inside the image: drawn
// from a fixed-seed generator over positions out to the image's corners
// (where the lens distorts most and k1, k2 show) and tilts of 10 to 45
// degrees about both axes (which separate focal length from distance).
func boardPoses(in sensors.Intrinsics, n int) []scene.Pose {
	rng := rand.New(rand.NewPCG(17, 4))
	signed := func(lo, hi float64) float64 {
		v := lo + (hi-lo)*rng.Float64()
		if rng.IntN(2) == 0 {
			return -v
		}
		return v
	}
	var poses []scene.Pose
	for len(poses) < n {
		x := 0.9 + 0.6*rng.Float64()
		p := scene.Pose{X: x, Y: x * (2*rng.Float64() - 1) * 0.75, Z: x * (2*rng.Float64() - 1) * 0.55,
			Roll: signed(0, 20), Pitch: signed(10, 35), Yaw: signed(10, 35)}
		m := p.Matrix()
		inside := true
		// Past the squares' outer edges, half the border must show.
		hy, hz := (boardCols+2)*boardSquare/2, (boardRows+2)*boardSquare/2
		far := 0 // outer corners in the image's outer ring
		for _, c := range [][2]float64{{-hy, -hz}, {-hy, hz}, {hy, -hz}, {hy, hz}} {
			w := m.Mul4x1(mgl64.Vec4{0, c[0], c[1], 1})
			// body (x forward, y left, z up) -> optical (z forward, x right, y down)
			xd, yd := in.Distortion.Distort(-w[1]/w[0], -w[2]/w[0])
			u, v := in.Fx*xd+in.Cx, in.Fy*yd+in.Cy
			if w[0] <= 0 || u < 2 || v < 2 || u > float64(in.Width)-3 || v > float64(in.Height)-3 {
				inside = false
			}
			if math.Hypot(u-in.Cx, v-in.Cy) > 0.85*math.Hypot(in.Cx, in.Cy) {
				far++
			}
		}
		// Two poses in three reach into the image's corners.
		if inside && (far > 0 || len(poses)%3 == 2) {
			poses = append(poses, p)
		}
	}
	return poses
}

// The board: 13 x 9 inner corners, 6 cm squares, a border of one square.
const (
	boardCols, boardRows = 13, 9
	boardSquare          = 0.06
)

type calibration struct {
	Images, Used   int
	RMS            float64
	Fx, Fy, Cx, Cy float64
	D              []float64
}

// A checkerboard seen by a plumb_bob camera from 30 poses, calibrated by
// OpenCV (findChessboardCorners, cornerSubPix, calibrateCamera with k1 k2
// p1 p2 and k3 fixed at 0: see testdata/calibrate.py) from the PNGs alone,
// gives back the camera's configured K within 0.5 px and k1, k2 within
// 5 %; the calibration published is the configured one.
func TestDistortedCameraCalibratesWithOpenCV(t *testing.T) {
	py := testkit.DebianPython(t, "cv2", "python3-opencv")
	const k1, k2 = -0.2, 0.05
	dir := t.TempDir()
	writeCheckerboard(t, dir, boardCols+1, boardRows+1, boardSquare)
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="board.glb" name="BOARD"/>
  <element type="pose" name="B_POSE" insert_at="BOARD"/>
  <element type="light" name="AMBIENT" kind="ambient" intensity="2.5"/>
  <sensor type="camera" name="CAM" pose_offset="0 0 0 0 0 0" width="640" height="480" fov="70" background="0 0 0"
      distortion_model="plumb_bob" k1="-0.2" k2="0.05" p1="0" p2="0" k3="0"/>
</scene>`)
	r := testkit.Renderer(t)
	cam := camera(t, s, "CAM")
	// Poses spread over the image, out to its corners where the lens
	// distorts most, and tilted up to 35 degrees both ways: calibration
	// needs both to separate focal length, principal point and k1, k2.
	poses := boardPoses(cam.Intrinsics(), 30)
	out := t.TempDir()
	var files []string
	for i, p := range poses {
		for k, v := range map[string]float64{"x": p.X, "y": p.Y, "z": p.Z, "roll": p.Roll, "pitch": p.Pitch, "yaw": p.Yaw} {
			if err := s.Set("B_POSE", k, v); err != nil {
				t.Fatal(err)
			}
		}
		img, err := cam.Image(r, s)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(out, fmt.Sprintf("board_%02d.png", i))
		if err := sensors.WritePNG(f, img); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	raw, err := exec.Command(py, append([]string{"testdata/calibrate.py", fmt.Sprint(boardCols), fmt.Sprint(boardRows), fmt.Sprint(boardSquare)}, files...)...).Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("calibrate.py: %v\n%s", err, ee.Stderr)
	} else if err != nil {
		t.Fatal(err)
	}
	var got calibration
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("%v in %s", err, raw)
	}
	t.Logf("OpenCV: %s", raw)
	if got.Used < 15 {
		t.Fatalf("OpenCV found the board in %d of %d images, want >= 15 (images in %s)", got.Used, got.Images, out)
	}
	in := cam.Intrinsics()
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"fx", got.Fx, in.Fx}, {"fy", got.Fy, in.Fy}, {"cx", got.Cx, in.Cx}, {"cy", got.Cy, in.Cy}} {
		if math.Abs(c.got-c.want) > 0.5 {
			t.Errorf("OpenCV calibrates %s = %.3f, configured %.3f: more than 0.5 px off", c.name, c.got, c.want)
		}
	}
	if len(got.D) != 5 {
		t.Fatalf("OpenCV D = %v", got.D)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"k1", got.D[0], k1}, {"k2", got.D[1], k2}} {
		if math.Abs(c.got-c.want) > 0.05*math.Abs(c.want) {
			t.Errorf("OpenCV calibrates %s = %.4f, configured %g: more than 5 %% off", c.name, c.got, c.want)
		}
	}
	ci := in.CameraInfo()
	if ci.DistortionModel != "plumb_bob" || fmt.Sprint(ci.D) != fmt.Sprint([]float64{k1, k2, 0, 0, 0}) {
		t.Errorf("published distortion_model %q D %v, want plumb_bob [%g %g 0 0 0]", ci.DistortionModel, ci.D, k1, k2)
	}
}

// NAME.json carries the lens: distortion_model and D in OpenCV's order for
// both models.
func TestDistortedCameraPublishesModel(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "box.glb", 1, 1, 1, [4]float32{1, 0, 0, 1})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="box.glb" name="BOX" pose_offset="3 0 0 0 0 0"/>
  <sensor type="camera" name="PB" width="64" height="48" fov="60" k1="-0.1" k2="0.01" p1="0.001" p2="-0.002" k3="0.003"/>
  <sensor type="camera" name="FE" width="64" height="48" fov="90" distortion_model="equidistant" k1="0.01" k2="-0.002" k3="0.0003" k4="-0.00004"/>
  <sensor type="camera" name="PIN" width="64" height="48"/>
</scene>`)
	out := t.TempDir()
	if _, err := sensors.CaptureAll(testkit.Renderer(t), s, out); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]struct {
		model string
		d     []float64
	}{
		"PB":  {"plumb_bob", []float64{-0.1, 0.01, 0.001, -0.002, 0.003}},
		"FE":  {"equidistant", []float64{0.01, -0.002, 0.0003, -0.00004}},
		"PIN": {"plumb_bob", []float64{0, 0, 0, 0, 0}},
	} {
		raw, err := os.ReadFile(filepath.Join(out, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Model string    `json:"distortion_model"`
			D     []float64 `json:"D"`
		}
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		if got.Model != want.model || fmt.Sprint(got.D) != fmt.Sprint(want.d) {
			t.Errorf("%s.json has distortion_model %q D %v, want %q %v", name, got.Model, got.D, want.model, want.d)
		}
	}
}

// Bad lens attributes are errors naming the attribute.
func TestDistortionAttributeErrors(t *testing.T) {
	for _, c := range []struct{ attrs, attr, msg string }{
		{`distortion_model="rational_polynomial"`, "distortion_model", "is not"},
		{`k1="nan"`, "k1", ""},
		{`k2="inf"`, "k2", ""},
		{`k1="1e9"`, "k1", "out of range"},
		{`distortion_model="equidistant" p1="0.1"`, "p1", "plumb_bob coefficient"},
		{`k4="0.1"`, "k4", "equidistant coefficient"},
		// r_d = r (1 - 0.5 r^2) turns back at r = 0.82, inside a 90 degree image.
		{`fov="90" k1="-0.5"`, "k1", "not monotonic"},
		{`fov="90" k1="0.1" k2="-0.4"`, "k2", "not monotonic"},
		// theta_d = theta (1 - 0.3 theta^2) peaks at 0.70 rad; the corner is at 1.25.
		{`fov="90" distortion_model="equidistant" k1="-0.3"`, "k1", "not monotonic"},
		// An equidistant lens at fov 150: the corner is 2.2 rad off the axis.
		{`fov="150" distortion_model="equidistant"`, "fov", "reduce fov"},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "scene.xml")
		xml := `<scene>
  <sensor type="camera" name="CAM" width="64" height="48" ` + c.attrs + `/>
</scene>`
		if err := os.WriteFile(path, []byte(xml), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := scene.Load(path, scene.Options{})
		if err == nil {
			t.Errorf("%s: no error", c.attrs)
			continue
		}
		var se *scene.Error
		if !errors.As(err, &se) || se.Attr != c.attr || se.Line != 2 || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %q, want one naming line 2, attribute %s, with %q", c.attrs, err, c.attr, c.msg)
		}
	}
}

// A small box seen by a plumb_bob and by an equidistant camera appears
// where the lens model puts its center (the red pixels' centroid within
// 0.5 px), far from where a pinhole with the same K would: the resampling
// applies the model, for rays out to the image's corners.
func TestDistortedCameraProjectsThroughModel(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "dot.glb", 0.03, 0.03, 0.03, [4]float32{1, 0, 0, 1})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="dot.glb" name="DOT"/>
  <element type="pose" name="D_POSE" insert_at="DOT"/>
  <element type="light" name="AMBIENT" kind="ambient" intensity="2.5"/>
  <sensor type="camera" name="PB" width="320" height="240" fov="70" background="0 0 0" k1="-0.2" k2="0.05" p1="0.002" p2="-0.001"/>
  <sensor type="camera" name="FE" width="320" height="240" fov="90" background="0 0 0" distortion_model="equidistant" k1="-0.01" k2="0.002"/>
</scene>`)
	r := testkit.Renderer(t)
	for _, name := range []string{"PB", "FE"} {
		cam := camera(t, s, name)
		in := cam.Intrinsics()
		for _, p := range [][2]float64{{0, 0}, {0.8, 0.5}, {-0.9, 0.3}, {0.5, -0.55}, {-0.85, -0.5}, {1.0, 0}} {
			const x = 1.5
			for k, v := range map[string]float64{"x": x, "y": p[0], "z": p[1]} {
				if err := s.Set("D_POSE", k, v); err != nil {
					t.Fatal(err)
				}
			}
			// Body (x forward, y left, z up) to optical (z forward, x right, y down).
			xn, yn := -p[0]/x, -p[1]/x
			xd, yd := in.Distortion.Distort(xn, yn)
			wantU, wantV := in.Fx*xd+in.Cx, in.Fy*yd+in.Cy
			pinU, pinV := in.Fx*xn+in.Cx, in.Fy*yn+in.Cy
			if wantU < 5 || wantV < 5 || wantU > float64(in.Width)-6 || wantV > float64(in.Height)-6 {
				t.Fatalf("%s: box at %v projects to (%.1f, %.1f), outside the image", name, p, wantU, wantV)
			}
			img, err := cam.Image(r, s)
			if err != nil {
				t.Fatal(err)
			}
			var su, sv, sw float64
			for v := 0; v < in.Height; v++ {
				for u := 0; u < in.Width; u++ {
					w := float64(img.RGBAAt(u, v).R)
					su, sv, sw = su+w*float64(u), sv+w*float64(v), sw+w
				}
			}
			if sw == 0 {
				t.Errorf("%s: box at %v not seen; the model puts it at (%.1f, %.1f)", name, p, wantU, wantV)
				continue
			}
			u, v := su/sw, sv/sw
			if math.Hypot(u-wantU, v-wantV) > 0.5 {
				t.Errorf("%s: box at %v seen at (%.2f, %.2f), the model puts it at (%.2f, %.2f)", name, p, u, v, wantU, wantV)
			}
			if p != [2]float64{} && math.Hypot(pinU-wantU, pinV-wantV) < 3 {
				t.Errorf("%s: at %v the lens moves the box only %.2f px: the test cannot tell", name, p, math.Hypot(pinU-wantU, pinV-wantV))
			}
		}
	}
}

// The cost of a lens: a box at 640x480 through a pinhole
// and through a plumb_bob lens (a 2x2-supersampled wide render,
// box-filtered and resampled).
func BenchmarkCameraLens(b *testing.B) {
	dir := b.TempDir()
	testkit.WriteModel(b, dir, "box.glb", func(m *models.Model) {
		m.AddNode(nil, "box", mgl64.Ident4(), models.Box("box", 0.5, 0.5, 0.5, [4]float32{1, 0, 0, 1}))
	})
	s := testkit.LoadXML(b, dir, `<scene>
  <part file="box.glb" name="BOX" pose_offset="2 0.3 0.2 10 20 30"/>
  <sensor type="camera" name="PIN" width="640" height="480" fov="70"/>
  <sensor type="camera" name="LENS" width="640" height="480" fov="70" k1="-0.2" k2="0.05"/>
</scene>`)
	r := testkit.Renderer(b)
	for _, name := range []string{"PIN", "LENS"} {
		cam := sensorOf[*sensors.Camera](b, s, name)
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := cam.Image(r, s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
