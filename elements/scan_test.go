package elements_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/elements"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

const marvinScene = "../scenes/marvin/scene.xml"

func loadScene(t *testing.T, path string) *scene.Scene {
	t.Helper()
	s, err := scene.Load(path, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func sensorEntry(t *testing.T, s *scene.Scene, name string) *scene.SensorEntry {
	t.Helper()
	for _, se := range s.Sensors() {
		if se.Name == name {
			return se
		}
	}
	t.Fatalf("no sensor %s", name)
	return nil
}

// casterHits scans FRONT_LASER of s with the exact CPU ray caster and
// returns its hits in world coordinates.
func casterHits(t *testing.T, s *scene.Scene) []mgl64.Vec3 {
	t.Helper()
	se := sensorEntry(t, s, "FRONT_LASER")
	if err := sensors.SetBackend(se.Sensor, sensors.BackendCPU); err != nil {
		t.Fatal(err)
	}
	sc, err := se.Sensor.(*sensors.Laser).Scan(testkit.Renderer(t), s)
	if err != nil {
		t.Fatal(err)
	}
	m := sc.Pose.Matrix()
	var out []mgl64.Vec3
	for i, rg := range sc.Ranges {
		if math.IsInf(rg, 0) {
			continue
		}
		a := sc.AngleMin + float64(i)*sc.AngleIncrement
		out = append(out, m.Mul4x1(mgl64.Vec4{rg * math.Cos(a), rg * math.Sin(a), 0, 1}).Vec3())
	}
	return out
}

func checkOnHits(t *testing.T, what string, got, want []mgl64.Vec3) {
	t.Helper()
	if len(want) < 100 {
		t.Fatalf("%s: the caster has only %d hits", what, len(want))
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d points drawn, the scan has %d hits", what, len(got), len(want))
	}
	worst := 0.0
	for i := range got {
		worst = math.Max(worst, got[i].Sub(want[i]).Len())
	}
	if worst > 0.01 {
		t.Errorf("%s: a point lies %.4f m from the surface its beam hit (want <= 1 cm)", what, worst)
	}
}

// The MARVIN scene's scan overlay draws the front scanner's returns where
// the exact ray caster finds the walls, stays there while MARVIN drives off
// (until the scanner renders again), then follows the new scan; sensors
// never see it.
func TestScanOverlayFollowsScan(t *testing.T) {
	r := testkit.Renderer(t)
	s := loadScene(t, marvinScene)
	el, ok := s.Element("FRONT_SCAN")
	if !ok {
		t.Fatal("no FRONT_SCAN element")
	}
	if n := len(elements.ScanPointsWorld(el.Element)); n != 0 {
		t.Fatalf("%d points before the scanner rendered", n)
	}
	render := func() {
		t.Helper()
		if _, err := sensors.RenderFrame(r, s, sensorEntry(t, s, "FRONT_LASER"), nil); err != nil {
			t.Fatal(err)
		}
		if err := s.PrepareRender(true); err != nil {
			t.Fatal(err)
		}
	}
	twin := loadScene(t, marvinScene)
	render()
	first := casterHits(t, twin)
	checkOnHits(t, "at the start", elements.ScanPointsWorld(el.Element), first)

	// MARVIN drives and turns: the old returns stay on the walls they hit.
	for _, sc := range []*scene.Scene{s, twin} {
		if err := sc.Set("M_POSE", "x", -1.2); err != nil {
			t.Fatal(err)
		}
		if err := sc.Set("M_POSE", "yaw", 65); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PrepareRender(true); err != nil {
		t.Fatal(err)
	}
	checkOnHits(t, "moved, not rendered yet", elements.ScanPointsWorld(el.Element), first)
	render()
	moved := casterHits(t, twin)
	checkOnHits(t, "moved and rendered", elements.ScanPointsWorld(el.Element), moved)
	if moved[0].Sub(first[0]).Len() < 0.1 {
		t.Fatalf("the move did not change the scan (%v, %v)", moved[0], first[0])
	}

	// Sensors never see the points: the twin, whose overlay is empty (its
	// scans went through Laser.Scan, not RenderFrame), measures and
	// pictures the same; people see them.
	if n := len(elements.ScanPointsWorld(mustElement(t, twin, "FRONT_SCAN"))); n != 0 {
		t.Fatalf("the twin's overlay has %d points", n)
	}
	if err := sensors.SetBackend(sensorEntry(t, twin, "FRONT_LASER").Sensor, sensors.BackendGPU); err != nil {
		t.Fatal(err)
	}
	a, err := sensorEntry(t, s, "FRONT_LASER").Sensor.(*sensors.Laser).Scan(r, s)
	if err != nil {
		t.Fatal(err)
	}
	b, err := sensorEntry(t, twin, "FRONT_LASER").Sensor.(*sensors.Laser).Scan(r, twin)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Ranges {
		if a.Ranges[i] != b.Ranges[i] {
			t.Fatalf("beam %d: %v with the overlay drawn, %v without", i, a.Ranges[i], b.Ranges[i])
		}
	}
	cam := sensorEntry(t, s, "CAMERA").Sensor.(*sensors.Camera)
	view := cam.View()
	ca, err := r.RenderRGBA(s, view)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := r.RenderRGBA(twin, view)
	if err != nil {
		t.Fatal(err)
	}
	if d := testkit.MaxDiff(ca, cb); d != 0 {
		t.Errorf("the camera sees the overlay: images differ by up to %d", d)
	}
	view.Viewer = true
	va, err := r.RenderRGBA(s, view)
	if err != nil {
		t.Fatal(err)
	}
	red := 0
	for i := 0; i < len(va.Pix); i += 4 {
		if va.Pix[i] > 200 && va.Pix[i+1] < 60 && va.Pix[i+2] < 60 && !(ca.Pix[i] > 200 && ca.Pix[i+1] < 60) {
			red++
		}
	}
	if red < 50 {
		t.Errorf("a viewer sees only %d red overlay pixels from the camera's pose", red)
	}
}

func mustElement(t *testing.T, s *scene.Scene, name string) scene.Element {
	t.Helper()
	e, ok := s.Element(name)
	if !ok {
		t.Fatalf("no element %s", name)
	}
	return e.Element
}

// A scan names a range sensor declared before it, and is never sensed.
func TestScanErrors(t *testing.T) {
	for _, c := range []struct{ xml, want string }{
		{`<element type="scan" name="S" sensor="L"/>`, `no sensor "L" declared before`},
		{`<sensor type="camera" name="C" width="8" height="8"/><element type="scan" name="S" sensor="C"/>`, `sensor "C" is a camera`},
		{`<sensor type="laser" name="L"/><element type="scan" name="S" sensor="L" sensed="true"/>`, `never seen by sensors`},
		{`<sensor type="laser" name="L"/><element type="scan" name="S" sensor="L" max_points="0"/>`, `max_points`},
		{`<sensor type="laser" name="L"/><element type="scan" name="S"/>`, `sensor`},
	} {
		path := filepath.Join(t.TempDir(), "scene.xml")
		if err := os.WriteFile(path, []byte("<scene>"+c.xml+"</scene>"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := scene.Load(path, scene.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.xml, err, c.want)
		}
	}
}
