package sensors_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/simvis/simvis/internal/testkit"

	"github.com/go-gl/mathgl/mgl64"

	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

func laser(t *testing.T, s *scene.Scene, name string) *sensors.Laser {
	t.Helper()
	return sensorOf[*sensors.Laser](t, s, name)
}

// roomScene is an 8 x 6 x 3 m room (walls at x = ±4, y = ±3) with the
// given sensors.
func roomScene(t *testing.T, sensorsXML string) *scene.Scene {
	t.Helper()
	dir := t.TempDir()
	testkit.WriteModel(t, dir, "room.glb", func(m *models.Model) {
		m.AddNode(nil, "room", mgl64.Translate3D(0, 0, 1.5), models.Box("room", 8, 6, 3, [4]float32{1, 1, 1, 1}))
	})
	return testkit.LoadXML(t, dir, `<scene>
  <part file="room.glb" name="ROOM"/>
  `+sensorsXML+`
</scene>`)
}

// roomRange is the closed-form range from (x, y) along azimuth a (world) to
// the walls of roomScene.
func roomRange(x, y, a float64) float64 {
	dx, dy := math.Cos(a), math.Sin(a)
	r := math.Inf(1)
	if dx > 1e-12 {
		r = math.Min(r, (4-x)/dx)
	} else if dx < -1e-12 {
		r = math.Min(r, (-4-x)/dx)
	}
	if dy > 1e-12 {
		r = math.Min(r, (3-y)/dy)
	} else if dy < -1e-12 {
		r = math.Min(r, (-3-y)/dy)
	}
	return r
}

// errorStats returns the share of beams within 1 mm and the largest error.
func errorStats(got, want []float64) (within1mm float64, worst float64) {
	n := 0
	for i := range got {
		e := math.Abs(got[i] - want[i])
		if e <= 1e-3 {
			n++
		}
		worst = math.Max(worst, e)
	}
	return float64(n) / float64(len(got)), worst
}

// A scanner in a box room, off center and turned, on both backends: the CPU
// backend is exact, the GPU backend within the accuracy targets (>= 99 %
// of beams within 1 mm, every beam within 1 cm: the room's corners are its
// only edges, and both walls meeting there are continuous).
func TestLaserInRoomClosedForm(t *testing.T) {
	for _, backend := range []string{"cpu", "gpu"} {
		t.Run(backend, func(t *testing.T) {
			s := roomScene(t, `<sensor type="laser" name="SCAN" pose_offset="1 0.5 1 0 0 17" backend="`+backend+`"/>`)
			sc, err := laser(t, s, "SCAN").Scan(testkit.Renderer(t), s)
			if err != nil {
				t.Fatal(err)
			}
			if len(sc.Ranges) != 361 || sc.AngleMin != -math.Pi/2 || math.Abs(sc.AngleMax-math.Pi/2) > 1e-12 {
				t.Fatalf("%d beams from %v to %v", len(sc.Ranges), sc.AngleMin, sc.AngleMax)
			}
			want := make([]float64, 361)
			for i := range want {
				want[i] = roomRange(1, 0.5, sc.AngleMin+float64(i)*sc.AngleIncrement+17*math.Pi/180)
			}
			share, worst := errorStats(sc.Ranges, want)
			// The GPU backend intersects the exact beam with the
			// triangles it saw: exact too, not just within the 1 mm target.
			tol := 1e-9
			if share < 0.99 || worst > tol {
				t.Errorf("%.1f %% of beams within 1 mm, worst error %.3g m (want >= 99 %%, <= %g)", 100*share, worst, tol)
			}
			t.Logf("%s: %.2f %% within 1 mm, worst %.3g m", backend, 100*share, worst)
		})
	}
}

// A full-circle scanner at 1° and a tilted wall: every azimuth is covered
// by one of the views, and a plane at 3 m tilted by 40° comes out at the
// closed form d / cos.
func TestLaserFullCircleAndTiltedWall(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteModel(t, dir, "wall.glb", func(m *models.Model) {
		m.AddNode(nil, "wall", mgl64.Ident4(), models.Box("wall", 0.2, 30, 4, [4]float32{1, 1, 1, 1}))
	})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="wall.glb" name="WALL" pose_offset="3.1 0 0 0 0 40"/>
  <sensor type="laser" name="ALL" angle_min="-180" angle_max="180" resolution="1" range_max="50"/>
</scene>`)
	sc, err := laser(t, s, "ALL").Scan(testkit.Renderer(t), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Ranges) != 360 {
		t.Fatalf("%d beams, want 360 (the last would repeat the first)", len(sc.Ranges))
	}
	// The wall is 0.2 m thick, centered at (3.1, 0) and turned 40°: its near
	// face has normal n = (cos 40°, sin 40°) and offset d = 3.1·cos 40° - 0.1,
	// and it ends 15 m to either side along t = (-sin 40°, cos 40°).
	n := mgl64.Vec3{math.Cos(40 * math.Pi / 180), math.Sin(40 * math.Pi / 180), 0}
	tangent := mgl64.Vec3{-n[1], n[0], 0}
	d := 3.1*n[0] - 0.1
	checked := 0
	for i, r := range sc.Ranges {
		a := sc.AngleMin + float64(i)*sc.AngleIncrement
		b := mgl64.Vec3{math.Cos(a), math.Sin(a), 0}
		if n.Dot(b) <= 0 {
			continue // facing away from the wall
		}
		want := d / n.Dot(b)
		if lateral := b.Mul(want).Sub(mgl64.Vec3{3.1, 0, 0}).Dot(tangent); math.Abs(lateral) > 14.5 || want > 50 {
			continue // past the wall's end
		}
		checked++
		if math.Abs(r-want) > 1e-3 {
			t.Errorf("beam %d (%.0f°): %v, want %v", i, a*180/math.Pi, r, want)
		}
	}
	if checked < 150 {
		t.Errorf("only %d beams checked against the wall", checked)
	}
	if !math.IsInf(sc.Ranges[0], 1) {
		t.Errorf("beam at -180° (away from the wall): %v, want +Inf", sc.Ranges[0])
	}
}

// Noise reproduces bit for bit with the same seed, its sample stddev
// matches, precision rounds, and too-close beams are -Inf.
func TestLaserNoiseAndLimits(t *testing.T) {
	xml := `<sensor type="laser" name="N" pose_offset="0 0 1 0 0 0" angle_min="-45" angle_max="45" resolution="0.05" backend="cpu"
    noise_stddev="0.02" noise_bias="0.1" seed="%s"/>`
	scan := func(seed string) []float64 {
		s := roomScene(t, strings.Replace(xml, "%s", seed, 1))
		sc, err := laser(t, s, "N").Scan(testkit.Renderer(t), s)
		if err != nil {
			t.Fatal(err)
		}
		return sc.Ranges
	}
	a, b, c := scan("5"), scan("5"), scan("6")
	var sum, sq float64
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("beam %d: %v and %v with the same seed", i, a[i], b[i])
		}
		e := a[i] - roomRange(0, 0, -math.Pi/4+float64(i)*0.05*math.Pi/180) - 0.1
		sum += e
		sq += e * e
	}
	mean := sum / float64(len(a))
	sigma := math.Sqrt(sq/float64(len(a)) - mean*mean)
	if math.Abs(mean) > 0.003 || math.Abs(sigma-0.02) > 0.0015 {
		t.Errorf("noise mean %.4f stddev %.4f, want 0 and 0.02 (bias removed)", mean, sigma)
	}
	if a[0] == c[0] && a[1] == c[1] {
		t.Error("another seed gives the same noise")
	}

	s := roomScene(t, `<sensor type="laser" name="P" angle_min="0" angle_max="90" resolution="1" range_min="3.5" range_max="4.5" noise_precision="0.25" backend="cpu"/>`)
	sc, err := laser(t, s, "P").Scan(testkit.Renderer(t), s)
	if err != nil {
		t.Fatal(err)
	}
	// Beam 0 meets the wall at 4 m: a multiple of 0.25. Beam 90 at 3 m:
	// too close. Beam 30 at 4.62 m rounds to 4.5, within range_max; beam 35
	// at 4.88 m rounds to 5, beyond it.
	for i, want := range map[int]float64{0: 4, 90: math.Inf(-1), 30: 4.5, 35: math.Inf(1)} {
		if sc.Ranges[i] != want {
			t.Errorf("beam %d: %v, want %v", i, sc.Ranges[i], want)
		}
	}
	data, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	var js struct {
		Ranges   []*float64 `json:"ranges"`
		TooClose []int      `json:"too_close"`
	}
	if err := json.Unmarshal(data, &js); err != nil {
		t.Fatal(err)
	}
	if js.Ranges[0] == nil || *js.Ranges[0] != 4 || js.Ranges[35] != nil || js.Ranges[90] != nil || !containsInt(js.TooClose, 90) {
		t.Errorf("JSON ranges[0]=%v ranges[35]=%v ranges[90]=%v too_close=%v", js.Ranges[0], js.Ranges[35], js.Ranges[90], js.TooClose)
	}
}

func containsInt(s []int, v int) bool {
	i := sort.SearchInts(s, v)
	return i < len(s) && s[i] == v
}

// Capture writes the scan as JSON and the PSD reading next to it.
func TestCaptureRangeSensors(t *testing.T) {
	s := roomScene(t, `<sensor type="laser" name="FRONT" pose_offset="0 0 0.3 0 0 0"/>
  <sensor type="psd" name="IR" pose_offset="3.5 0 0.3 0 0 0"/>`)
	dir := t.TempDir()
	files, err := sensors.CaptureAll(testkit.Renderer(t), s, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || filepath.Base(files[0]) != "FRONT.scan.json" || filepath.Base(files[1]) != "IR.psd.json" {
		t.Fatalf("files %v", files)
	}
	data, err := os.ReadFile(files[1])
	if err != nil {
		t.Fatal(err)
	}
	var rd struct {
		Range *float64 `json:"range"`
	}
	if err := json.Unmarshal(data, &rd); err != nil {
		t.Fatal(err)
	}
	if rd.Range == nil || math.Abs(*rd.Range-0.5) > 1e-9 {
		t.Errorf("PSD 0.5 m from the wall reads %s", data)
	}
}

// sensed="false" geometry never appears in range data, on either backend:
// a part 1 m ahead marked so leaves the scan as the empty room.
func TestUnsensedPartNotInRanges(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteModel(t, dir, "room.glb", func(m *models.Model) {
		m.AddNode(nil, "room", mgl64.Translate3D(0, 0, 1.5), models.Box("room", 8, 6, 3, [4]float32{1, 1, 1, 1}))
	})
	testkit.WriteModel(t, dir, "post.glb", func(m *models.Model) {
		m.AddNode(nil, "post", mgl64.Ident4(), models.Box("post", 0.5, 0.5, 3, [4]float32{1, 0, 0, 1}))
	})
	for _, backend := range []string{"gpu", "cpu"} {
		s := testkit.LoadXML(t, dir, `<scene>
  <part file="room.glb" name="ROOM"/>
  <part file="post.glb" name="GHOST" pose_offset="1 0 1 0 0 0" sensed="false"/>
  <sensor type="laser" name="L" pose_offset="0 0 1 0 0 0" backend="`+backend+`"/>
  <sensor type="depth" name="D" pose_offset="0 0 1 0 0 0" width="32" height="24" backend="`+backend+`"/>
</scene>`)
		sc, err := laser(t, s, "L").Scan(testkit.Renderer(t), s)
		if err != nil {
			t.Fatal(err)
		}
		if r := sc.Ranges[180]; r != 4 {
			t.Errorf("%s: beam straight at the unsensed post reads %v, want the wall at 4", backend, r)
		}
		img, err := depthCamera(t, s, "D").Depth(testkit.Renderer(t), s)
		if err != nil {
			t.Fatal(err)
		}
		if z := img.Depth[12*32+16]; math.Abs(float64(z)-4) > 1e-4 {
			t.Errorf("%s: depth behind the unsensed post %v, want 4", backend, z)
		}
	}
}

// Bad sensor attributes name file, line and attribute.
func TestSensorErrors(t *testing.T) {
	cases := []struct{ xml, want string }{
		{`<sensor type="laser" name="L" range_min="5" range_max="2"/>`, `sensor "L": attribute "range_max": 2 m must be greater than range_min`},
		{`<sensor type="laser" name="L" backend="fpga"/>`, `attribute "backend": "fpga" is not a backend`},
		{`<sensor type="laser" name="L" angle_min="10" angle_max="0"/>`, `attribute "angle_max": 0° must be from angle_min`},
		{`<sensor type="laser" name="L" resolution="0.01" backend="gpu"/>`, `too fine for GPU views`},
		{`<sensor type="laser" name="L" noise_stddev="-1"/>`, `attribute "noise_stddev": -1 is out of range`},
		{`<sensor type="laser3d" name="V" layers="1 2 2"/>`, `attribute "layers": vertical angle 2° is listed twice`},
		{`<sensor type="laser3d" name="V" layers="1 85"/>`, `vertical angle 85° is beyond ±80°`},
		{`<sensor type="laser3d" name="V" layers="1" vertical_min="0"/>`, `attribute "vertical_min": give layers or`},
		{`<sensor type="depth" name="D" fov="200"/>`, `attribute "fov": 200 is not in (0, 180) degrees`},
		{`<sensor type="camera" name="C" fov="60" vfov="40"/>`, `attribute "vfov": give fov (horizontal) or vfov`},
		{`<sensor type="camera" name="C" background="0.5 0.5"/>`, `attribute "background": want 3 numbers, got 2 in "0.5 0.5"`},
		{`<sensor type="camera" name="C" background="0.5 2 0"/>`, `attribute "background": component 2 = 2 is outside 0..1`},
		{`<sensor type="camera" name="C" background="0 NaN 0"/>`, `attribute "background": value 2: "NaN" is not finite`},
		{`<sensor type="psd" name="P" range="3"/>`, `attribute "range": unknown attribute for sensor type "psd"`},
	}
	for _, c := range cases {
		dir := t.TempDir()
		path := filepath.Join(dir, "scene.xml")
		if err := os.WriteFile(path, []byte("<scene>\n"+c.xml+"\n</scene>"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := scene.Load(path, scene.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "scene.xml:2:") {
			t.Errorf("%s\n got: %v\nwant: scene.xml:2: ... %s", c.xml, err, c.want)
		}
	}
	// The same fine scanner on the ray caster is fine.
	s := roomScene(t, `<sensor type="laser" name="L" resolution="0.01" angle_min="-1" angle_max="1" backend="cpu"/>`)
	if sc, err := laser(t, s, "L").Scan(testkit.Renderer(t), s); err != nil || len(sc.Ranges) != 201 || sc.Ranges[100] != 4 {
		t.Errorf("fine CPU scanner: err %v", err)
	}
}
