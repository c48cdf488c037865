package sensors_test

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl64"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// scanBoth scans a laser or laser3d on the GPU backend, then on the exact
// ray caster, and returns both sets of ranges.
func scanBoth(t *testing.T, s *scene.Scene, name string) (gpu, cpu []float64) {
	t.Helper()
	var se scene.Sensor
	for _, x := range s.Sensors() {
		if x.Name == name {
			se = x.Sensor
		}
	}
	if se == nil {
		t.Fatalf("no sensor %q", name)
	}
	read := func(backend string) []float64 {
		if err := sensors.SetBackend(se, backend); err != nil {
			t.Fatal(err)
		}
		switch x := se.(type) {
		case *sensors.Laser:
			sc, err := x.Scan(testkit.Renderer(t), s)
			if err != nil {
				t.Fatal(err)
			}
			return sc.Ranges
		case *sensors.Laser3D:
			cl, err := x.Scan(testkit.Renderer(t), s)
			if err != nil {
				t.Fatal(err)
			}
			return cl.Ranges
		}
		t.Fatalf("%s: %T is no scanner", name, se)
		return nil
	}
	gpu = read(sensors.BackendGPU)
	cpu = read(sensors.BackendCPU)
	if err := sensors.SetBackend(se, sensors.BackendGPU); err != nil {
		t.Fatal(err)
	}
	return gpu, cpu
}

// kind names what a reading says: a range, no return (+Inf) or too close
// (-Inf).
func kind(r float64) string {
	switch {
	case math.IsInf(r, 1):
		return "no return"
	case math.IsInf(r, -1):
		return "too close"
	case math.IsNaN(r):
		return "NaN"
	}
	return "hit"
}

// agree fails for every beam where the GPU and the ray caster disagree on
// hit or miss (no tolerance on counts) or on a range by more than 1 mm,
// and returns the number of hits and the largest range difference.
func agree(t *testing.T, what string, gpu, cpu []float64) (hits int, worst float64) {
	t.Helper()
	if len(gpu) != len(cpu) {
		t.Fatalf("%s: %d GPU and %d ray caster beams", what, len(gpu), len(cpu))
	}
	bad := 0
	for i := range gpu {
		g, c := gpu[i], cpu[i]
		if kind(g) != kind(c) {
			bad++
			if bad <= 10 {
				t.Errorf("%s beam %d: GPU %v (%s), ray caster %v (%s)", what, i, g, kind(g), c, kind(c))
			}
			continue
		}
		if kind(c) != "hit" {
			continue
		}
		hits++
		worst = math.Max(worst, math.Abs(g-c))
		if math.Abs(g-c) > 1e-3 {
			bad++
			if bad <= 10 {
				t.Errorf("%s beam %d: GPU %v, ray caster %v", what, i, g, c)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d beams disagree", what, bad, len(gpu))
	}
	return hits, worst
}

// A 3D scanner below a wall's top edge, tilted layers crossing it at a
// shallow angle: beams passing millimeters over the edge have pixel
// centers on the wall, and must still be misses (nothing is behind the
// wall), as the ray caster says; before, the GPU took the plane of the
// wall's triangle and returned 5-7 m.
func TestBeamsOverWallTopAreMisses(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteModel(t, dir, "wall.glb", func(m *models.Model) {
		m.AddNode(nil, "wall", mgl64.Ident4(), models.Box("wall", 0.2, 20, 5, [4]float32{1, 1, 1, 1}))
	})
	// The wall's face at x = 4.9, its top edge at z = 0.5.
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="wall.glb" name="WALL" pose_offset="5 0 -2 0 0 0"/>
  <sensor type="laser3d" name="V" vertical_min="2" vertical_max="6" vertical_resolution="0.25"
          angle_min="-60" angle_max="60" resolution="0.1" range_max="100"/>
</scene>`)
	gpu, cpu := scanBoth(t, s, "V")
	// Beams that pass 0-5 mm over the edge, by the closed form (float32
	// vertices: 1e-6 m).
	over := 0
	const columns = 1201
	for i := range cpu {
		el := (2 + 0.25*float64(i/columns)) * math.Pi / 180
		az := (-60 + 0.1*float64(i%columns)) * math.Pi / 180
		z := 4.9 * math.Tan(el) / math.Cos(az)
		if z > 0.5 && z <= 0.505 {
			over++
			if !math.IsInf(cpu[i], 1) {
				t.Fatalf("beam %d passes %.2f mm over the edge but the ray caster has %v", i, 1e3*(z-0.5), cpu[i])
			}
		}
		if z < 0.499 && math.Abs(cpu[i]-4.9/(math.Cos(el)*math.Cos(az))) > 1e-6 {
			t.Fatalf("beam %d below the edge: ray caster %v", i, cpu[i])
		}
	}
	if over < 20 {
		t.Fatalf("only %d beams pass within 5 mm over the edge: the test misses its point", over)
	}
	hits, worst := agree(t, "wall top", gpu, cpu)
	t.Logf("%d beams within 5 mm over the edge; %d hits, worst %.3g m", over, hits, worst)
}

// A row of plates 2 mm apart (1 mm thin, so that slanted beams pass
// between them) in front of a wall: beams through the gaps reach the wall
// (as the ray caster says), beams on the plates stop there; before, a beam
// through a gap whose pixel center was on a plate returned the plate's
// plane.
func TestBeamsThroughGapsBetweenPlates(t *testing.T) {
	dir := t.TempDir()
	const n, width, gap = 230, 0.02, 0.002
	testkit.WriteModel(t, dir, "row.glb", func(m *models.Model) {
		box := models.Box("plate", 0.001, width, 1, [4]float32{1, 0, 0, 1})
		for i := 0; i < n; i++ {
			y := (float64(i) - float64(n-1)/2) * (width + gap)
			m.AddNode(nil, fmt.Sprintf("box%d", i), mgl64.Translate3D(3.0005, y, 0), box)
		}
	})
	testkit.WriteModel(t, dir, "wall.glb", func(m *models.Model) {
		m.AddNode(nil, "wall", mgl64.Ident4(), models.Box("wall", 0.2, 40, 2, [4]float32{1, 1, 1, 1}))
	})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="row.glb" name="ROW"/>
  <part file="wall.glb" name="WALL" pose_offset="6.1 0 0 0 0 0"/>
  <sensor type="laser" name="L" angle_min="-45" angle_max="45" resolution="0.25"/>
</scene>`)
	gpu, cpu := scanBoth(t, s, "L")
	through := 0
	for i, c := range cpu {
		a := (-45 + 0.25*float64(i)) * math.Pi / 180
		if y := 3 * math.Tan(a); math.Abs(y) < float64(n-1)/2*(width+gap) && math.Abs(c-6/math.Cos(a)) < 1e-6 {
			through++
		}
	}
	if through < 10 {
		t.Fatalf("only %d beams pass between the plates: the test misses its point", through)
	}
	hits, worst := agree(t, "gaps", gpu, cpu)
	t.Logf("%d beams through gaps; %d hits, worst %.3g m", through, hits, worst)
}

// A thin wall 0.2 m ahead of a scanner with range_min 0.5 m, closer than
// the near plane of its views at the edges of their fields: every beam
// that meets it within range_min is too close (-Inf), on the GPU as on the
// ray caster, not the room behind it.
func TestSurfaceCloserThanRangeMinIsTooClose(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteModel(t, dir, "room.glb", func(m *models.Model) {
		m.AddNode(nil, "room", mgl64.Translate3D(0, 0, 1.5), models.Box("room", 8, 6, 3, [4]float32{1, 1, 1, 1}))
	})
	testkit.WriteModel(t, dir, "plate.glb", func(m *models.Model) {
		m.AddNode(nil, "plate", mgl64.Ident4(), models.Box("plate", 0.02, 1.2, 1, [4]float32{1, 1, 1, 1}))
	})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="room.glb" name="ROOM"/>
  <part file="plate.glb" name="PLATE" pose_offset="0.21 0 1 0 0 0"/>
  <sensor type="laser" name="L" pose_offset="0 0 1 0 0 0" range_min="0.5"/>
  <sensor type="laser3d" name="V" pose_offset="0 0 1 0 0 0" range_min="0.5"/>
</scene>`)
	for _, name := range []string{"L", "V"} {
		gpu, cpu := scanBoth(t, s, name)
		close := 0
		for _, c := range cpu {
			if math.IsInf(c, -1) {
				close++
			}
		}
		if close < 20 {
			t.Fatalf("%s: only %d beams are too close: the test misses its point", name, close)
		}
		agree(t, name, gpu, cpu)
	}
	gpu, _ := scanBoth(t, s, "L")
	if !math.IsInf(gpu[180], -1) {
		t.Errorf("beam straight at the plate 0.2 m ahead: %v, want -Inf (too close)", gpu[180])
	}
}

// sceneWith copies a scene's directory files and loads its XML with extra
// commands added before </scene>.
func sceneWith(t *testing.T, srcDir string, files []string, extra string) *scene.Scene {
	t.Helper()
	dir := testkit.CopyFiles(t, srcDir, files...)
	xml, err := os.ReadFile(srcDir + "/scene.xml")
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Replace(string(xml), "</scene>", extra+"\n</scene>", 1)
	return testkit.LoadXML(t, dir, body)
}

// GPU and CPU backends agree on hit or miss for every beam, and on ranges
// within 1 mm, for a default 3D lidar on the quickstart robot's mast and on
// MARVIN, and MARVIN's three planar scanners, at several poses of the
// robots and of the tilt unit.
func TestScenesEveryBeamAgrees(t *testing.T) {
	t.Run("quickstart", func(t *testing.T) {
		s := sceneWith(t, "../scenes/quickstart", []string{"world.gltf", "robot.gltf"},
			`<sensor type="laser3d" name="LIDAR" insert_at="ROBOT/MAST_TOP"/>`)
		for _, yaw := range []float64{20, 65, 110, 200, 290} {
			if err := s.Set("R_POSE", "yaw", yaw); err != nil {
				t.Fatal(err)
			}
			gpu, cpu := scanBoth(t, s, "LIDAR")
			hits, worst := agree(t, fmt.Sprintf("LIDAR at yaw %g°", yaw), gpu, cpu)
			if hits < len(gpu)/4 {
				t.Errorf("yaw %g°: only %d of %d beams hit", yaw, hits, len(gpu))
			}
			t.Logf("yaw %g°: %d of %d beams hit, worst %.3g m", yaw, hits, len(gpu), worst)
		}
	})
	t.Run("marvin", func(t *testing.T) {
		s := sceneWith(t, "../scenes/marvin", []string{"lab.gltf", "marvin.gltf"},
			`<sensor type="laser3d" name="LIDAR" insert_at="MARVIN/CAMERA_MOUNT" pose_offset="0 0 0.15 0 0 0"/>`)
		for _, pose := range []struct{ yaw, tilt float64 }{{20, 10}, {20, -30}, {75, 30}, {160, 0}, {250, 45}} {
			if err := s.Set("M_POSE", "yaw", pose.yaw); err != nil {
				t.Fatal(err)
			}
			if err := s.Set("TILT", "angle", pose.tilt); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"FRONT_LASER", "REAR_LASER", "TILT_LASER", "LIDAR"} {
				gpu, cpu := scanBoth(t, s, name)
				what := fmt.Sprintf("%s at yaw %g°, tilt %g°", name, pose.yaw, pose.tilt)
				hits, worst := agree(t, what, gpu, cpu)
				if hits < len(gpu)/4 {
					t.Errorf("%s: only %d of %d beams hit", what, hits, len(gpu))
				}
				t.Logf("%s: %d of %d beams hit, worst %.3g m", what, hits, len(gpu), worst)
			}
		}
	})
}
