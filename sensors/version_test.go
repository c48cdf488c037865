package sensors_test

import (
	"math"
	"testing"

	"github.com/go-gl/mathgl/mgl64"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
	"github.com/simvis/simvis/sensors/raycast"
)

// The renderer's caster, and each GPU scanner's list of meshes, are read
// from the scene only when its version changed (scene.Scene.Version): two
// scanners' ranges follow every kind of change as a fresh caster sees the
// scene (a pose element, a rotation joint, a switch, a command adding a
// part, a sensed overlay mesh moved), exactly on the CPU backend, and
// changes sensors do not see (a color, point clouds, a sensed="false"
// overlay) leave them as they were.
func TestRangesFollowEveryChange(t *testing.T) {
	for _, backend := range []string{"cpu", "gpu"} {
		t.Run(backend, func(t *testing.T) { rangesFollowEveryChange(t, backend) })
	}
}

func rangesFollowEveryChange(t *testing.T, backend string) {
	// The GPU backend intersects the same triangles in the sensor's frame:
	// the same ranges up to rounding.
	tol := 0.0
	if backend == "gpu" {
		tol = 1e-9
	}
	dir := t.TempDir()
	testkit.WriteModel(t, dir, "room.glb", func(m *models.Model) {
		m.AddNode(nil, "room", mgl64.Translate3D(0, 0, 1.5), models.Box("room", 8, 6, 3, [4]float32{1, 1, 1, 1}))
	})
	testkit.WriteBox(t, dir, "box.glb", 0.5, 0.5, 0.5, [4]float32{1, 1, 1, 1})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="room.glb" name="ROOM"/>
  <part file="box.glb" name="BOX" pose_offset="2 0 1 0 0 0"/>
  <element type="pose" name="P" insert_at="BOX"/>
  <element type="color" name="C" insert_at="BOX"/>
  <part file="box.glb" name="ARM" pose_offset="0 2 1 0 0 0"/>
  <element type="rotation" name="J" insert_at="ARM" center="1 0 0"/>
  <part file="box.glb" name="DOOR" pose_offset="-2 0 1 0 0 0"/>
  <element type="switch" name="SW" insert_at="DOOR"/>
  <element type="graph" name="G" nodes="N" marker_size="0.5" N_x="-2" N_y="-2" N_z="1"/>
  <element type="graph" name="G2" nodes="M" marker_size="0.5" M_x="2" M_y="-2.5" M_z="1" sensed="false"/>
  <element type="pointcloud" name="PC" points="1 -1 1" point_size="0.5"/>
  <element type="pointcloud" name="PCU" points="-1 1 1" point_size="0.5" sensed="false"/>
  <sensor type="laser" name="S1" pose_offset="0 0 1 0 0 0" angle_min="-180" angle_max="179.5" resolution="0.5" range_min="0.01" backend="`+backend+`"/>
  <sensor type="laser" name="S2" pose_offset="0.3 -0.2 1 0 0 40" angle_min="-180" angle_max="179.5" resolution="0.5" range_min="0.01" backend="`+backend+`"/>
</scene>`)
	r := testkit.Renderer(t)
	scan := func(name string) []float64 {
		t.Helper()
		sc, err := laser(t, s, name).Scan(r, s)
		if err != nil {
			t.Fatal(err)
		}
		return sc.Ranges
	}
	// truth casts the sensor's beams with a caster of its own, fresh.
	truth := func(name string) []float64 {
		t.Helper()
		o, dirs, _, err := sensors.WorldRays(s, laser(t, s, name))
		if err != nil {
			t.Fatal(err)
		}
		c := raycast.New()
		c.Sync(s)
		out := make([]float64, len(dirs))
		for i, d := range dirs {
			out[i], _ = c.Cast(o, d, math.Inf(1))
		}
		return out
	}
	equal := func(a, b []float64) bool {
		for i := range a {
			if a[i] != b[i] && !(math.Abs(a[i]-b[i]) <= tol) {
				return false
			}
		}
		return len(a) == len(b)
	}
	last := map[string][]float64{"S1": scan("S1"), "S2": scan("S2")}
	set := func(el, param string, v float64) func() {
		return func() {
			if err := s.Set(el, param, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name    string
		do      func()
		matters bool // whether range sensors see the change
	}{
		{"nothing", func() {}, false},
		{"pose element", set("P", "x", 0.5), true},
		{"rotation joint", set("J", "angle", 90), true},
		{"switch off", set("SW", "on", 0), true},
		{"switch on", set("SW", "on", 1), true},
		{"command adding a part", func() {
			c, err := scene.ParseCommand(`<part file="box.glb" name="NEW" pose_offset="0 -2 1 0 0 0"/>`, "test", dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Exec(c); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"sensed graph marker moved", set("G", "N_x", -1), true},
		{"sensed=false graph marker moved", set("G2", "M_x", 1), false},
		{"point cloud edited", set("PC", "x0", 0.6), false},
		{"sensed=false point cloud edited", set("PCU", "x0", -0.6), false},
		{"color only", set("C", "g", 0.2), false},
	} {
		tc.do()
		for _, name := range []string{"S1", "S2"} {
			got, want := scan(name), truth(name)
			if !equal(got, want) {
				t.Errorf("%s, %s: ranges differ from a fresh caster's", tc.name, name)
			}
			if changed := !equal(got, last[name]); changed != tc.matters {
				t.Errorf("%s, %s: ranges changed %v, want %v", tc.name, name, changed, tc.matters)
			}
			last[name] = got
		}
	}
}
