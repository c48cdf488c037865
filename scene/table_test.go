package scene_test

import (
	"math"
	"strings"
	"testing"

	"github.com/simvis/simvis/scene"
)

// Elements own consecutive runs of the table in command order; adding
// elements never moves the table or earlier runs.
func TestParameterTableIsStable(t *testing.T) {
	s := load(t, writeFile(t, fig1Dir(t), "fig1.xml", fig1))
	table := s.Values()
	first := &table[0]
	for i := 0; i < 50; i++ {
		name := "P" + string(rune('A'+i/26)) + string(rune('a'+i%26))
		cmd, err := scene.ParseCommand(`<element type="pose" name="`+name+`" insert_at="WORLD" x="`+string(rune('0'+i%10))+`"/>`, "test", "")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Exec(cmd); err != nil {
			t.Fatal(err)
		}
		e, _ := s.Element(name)
		if want := 6 * (i + 1); e.Start != want {
			t.Fatalf("element %s starts at %d, want %d", name, e.Start, want)
		}
	}
	if now := s.Values(); &now[0] != first || len(now) != 6*51 {
		t.Errorf("table moved or has %d slots, want 306 in place", len(now))
	}
	if r, _ := s.Element("R_POSE"); r.Start != 0 || s.Values()[0] != 1 || s.Values()[5] != -90 {
		t.Errorf("R_POSE run changed: start %d values %v", r.Start, s.Values()[:6])
	}
	// A failing command leaves the table as it was.
	bad, _ := scene.ParseCommand(`<element type="pose" name="BAD" insert_at="NOWHERE"/>`, "test", "")
	if err := s.Exec(bad); err == nil || len(s.Values()) != 306 {
		t.Errorf("failed command: err %v, %d slots", err, len(s.Values()))
	}
}

// Values written straight into the table (as the shared-array interface
// does) reach the graph at Update; non-finite ones are rejected and reset.
func TestDirectTableWrites(t *testing.T) {
	s := load(t, writeFile(t, fig1Dir(t), "fig1.xml", fig1))
	v := s.Values()
	v[0] = 7 // R_POSE.x
	if err := s.Update(); err != nil {
		t.Fatal(err)
	}
	assertPose(t, s, "ROBOT", scene.Pose{X: 7, Y: 2, Z: 3, Yaw: -90})
	v[1] = math.NaN()
	v[2] = 4
	err := s.Update()
	if err == nil || !strings.Contains(err.Error(), `element "R_POSE": parameter y: value NaN is not finite`) {
		t.Errorf("Update after NaN = %v", err)
	}
	if v[1] != 2 || v[2] != 3 {
		t.Errorf("rejected run not reset: y=%v z=%v, want 2 3", v[1], v[2])
	}
	assertPose(t, s, "ROBOT", scene.Pose{X: 7, Y: 2, Z: 3, Yaw: -90})
}

// A scene's parameter table has a fixed size; a command that would overflow
// it is an error naming the command, and the scene stays usable.
func TestParameterTableFull(t *testing.T) {
	dir := fig1Dir(t)
	path := writeFile(t, dir, "s.xml", `<scene>
  <element type="pose" name="A"/>
  <element type="pose" name="B"/>
</scene>`)
	_, err := scene.Load(path, scene.Options{ParamCapacity: 8})
	if err == nil || !strings.Contains(err.Error(), `s.xml:3: element "B": parameter table full (8 slots)`) {
		t.Errorf("Load = %v", err)
	}
}

// A table in memory the caller provides (what the shared-array interface
// maps from a file): elements' values land there, and values written there
// reach the graph at Update.
func TestParamStorage(t *testing.T) {
	storage := make([]float64, 8)
	s := scene.New(scene.Options{ParamStorage: storage, ParamCapacity: 99})
	cmd, err := scene.ParseCommand(`<element type="pose" name="P" x="1.5" yaw="30"/>`, "test", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Exec(cmd); err != nil {
		t.Fatal(err)
	}
	if storage[0] != 1.5 || storage[5] != 30 || &s.Values()[0] != &storage[0] {
		t.Fatalf("storage %v, table not in it", storage)
	}
	storage[1] = -2 // P.y, written by "another process"
	m, err := s.Transform(scene.RootName, scene.WorldFrame)
	if err != nil {
		t.Fatal(err)
	}
	if p := scene.PoseFromMatrix(m); p.X != 1.5 || p.Y != -2 {
		t.Errorf("ROOT at %v after writing the storage, want x 1.5 y -2", p)
	}
	// Capacity is the storage's length: a second pose (6 slots) does not fit.
	cmd, _ = scene.ParseCommand(`<element type="pose" name="Q"/>`, "test", "")
	if err := s.Exec(cmd); err == nil || !strings.Contains(err.Error(), "parameter table full (8 slots)") {
		t.Errorf("second pose: %v, want a full table", err)
	}
}
