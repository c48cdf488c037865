package elements_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

// echo is a range sensor of the test's own: the scan element accepts it
// because it says it has returns (scene.Ranger), not by its type name.
type echo struct{}

func (echo) Describe() map[string]any { return map[string]any{} }
func (echo) HasReturns() bool         { return true }

// mute is a sensor without returns.
type mute struct{}

func (mute) Describe() map[string]any { return map[string]any{} }

func init() {
	scene.RegisterSensor("test-echo", func(*scene.Context) (scene.Sensor, error) { return echo{}, nil })
	scene.RegisterSensor("test-mute", func(*scene.Context) (scene.Sensor, error) { return mute{}, nil })
}

func execAll(t *testing.T, s *scene.Scene, xml ...string) error {
	t.Helper()
	for _, x := range xml {
		c, err := scene.ParseCommand(x, "test", ".")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Exec(c); err != nil {
			return err
		}
	}
	return nil
}

func TestScanAsksTheSensorForReturns(t *testing.T) {
	s := scene.New(scene.Options{})
	if err := execAll(t, s, `<sensor type="test-echo" name="E"/>`, `<element type="scan" name="S" sensor="E" sensed="false"/>`); err != nil {
		t.Errorf("a scan of a sensor that has returns: %v", err)
	}
	err := execAll(t, s, `<sensor type="test-mute" name="M"/>`, `<element type="scan" name="S2" sensor="M" sensed="false"/>`)
	if err == nil || !strings.Contains(err.Error(), `sensor "M" is a test-mute`) {
		t.Errorf("a scan of a sensor without returns: %v", err)
	}
}

// The overlay elements give the primitives Foxglove draws (scene.Overlay),
// with their attributes' defaults; what values the table holds beyond the
// count is not drawn.
func TestOverlayPrimitives(t *testing.T) {
	s := scene.New(scene.Options{})
	if err := execAll(t, s,
		`<element type="pointcloud" name="P" max_points="3" points="1 2 3 4 5 6" sensed="false"/>`,
		`<element type="lines" name="L" max_lines="2" points="0 0 0 1 0 0" width="3" color="0.5 0.5 0.5" sensed="false"/>`,
		`<element type="graph" name="G" nodes="A B C" edges="A-B B-C" sensed="false"/>`,
		`<element type="label" name="T" text="hi" z="2" sensed="false"/>`,
		`<element type="pose" name="Q" insert_at="ROOT"/>`); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("G", "B_x", 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(); err != nil {
		t.Fatal(err)
	}
	vals := s.Values()
	overlay := func(name string) (scene.Overlay, bool) {
		e, _ := s.Element(name)
		o, ok := e.Element.(scene.Overlayer)
		if !ok {
			return scene.Overlay{}, false
		}
		return o.Overlay(vals[e.Start : e.Start+len(e.Params)]), true
	}
	cube := func(x, y, z, size float64, c [3]float32) scene.OverlayCube {
		return scene.OverlayCube{Center: mgl64.Vec3{x, y, z}, Size: size, Color: c}
	}
	red, green, blue, yellow, white := [3]float32{1, 0.1, 0.1}, [3]float32{0.5, 0.5, 0.5}, [3]float32{0.1, 0.4, 1}, [3]float32{1, 0.8, 0.1}, [3]float32{1, 1, 1}
	for _, c := range []struct {
		name string
		want scene.Overlay
	}{
		{"P", scene.Overlay{Cubes: []scene.OverlayCube{cube(1, 2, 3, 0.03, red), cube(4, 5, 6, 0.03, red)}}},
		{"L", scene.Overlay{Lines: []scene.OverlayLines{{Points: []mgl64.Vec3{{0, 0, 0}, {1, 0, 0}}, Width: 3, Color: green}}}},
		{"G", scene.Overlay{Cubes: []scene.OverlayCube{cube(0, 0, 0, 0.15, blue), cube(2, 0, 0, 0.15, blue), cube(0, 0, 0, 0.15, blue)},
			Lines: []scene.OverlayLines{{Points: []mgl64.Vec3{{}, {2, 0, 0}, {2, 0, 0}, {}}, Width: 2, Color: yellow}}}},
		{"T", scene.Overlay{Texts: []scene.OverlayText{{At: mgl64.Vec3{0, 0, 2}, Height: 0.2, Color: white, Text: "hi"}}}},
	} {
		got, ok := overlay(c.name)
		if !ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: overlay %+v (%v), want %+v", c.name, got, ok, c.want)
		}
	}
	if _, ok := overlay("Q"); ok {
		t.Error("a pose is drawn as an overlay")
	}
	e, _ := s.Element("Q")
	if k, ok := e.Element.(scene.Kinematic); !ok || !k.Kinematic() {
		t.Error("a pose's values do not only move meshes")
	}
	if m, ok := e.Element.(scene.Mobile); !ok || !m.Mobile() {
		t.Error("a pose does not move the robot")
	}
}
