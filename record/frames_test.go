package record_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/record"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// allKinds is a room with a sensor of every frame kind, a moving pose and
// a part the segmentation sensor labels; the scanner sees past its
// range_max (+Inf ranges, null in JSON).
func allKinds(t *testing.T) *scene.Scene {
	dir := t.TempDir()
	testkit.WriteModel(t, dir, "room.glb", func(m *models.Model) {
		m.AddNode(nil, "room", mgl64.Translate3D(0, 0, 1.5), models.Box("room", 8, 6, 3, [4]float32{1, 1, 1, 1}))
	})
	testkit.WriteBox(t, dir, "box.glb", 0.5, 0.5, 0.5, [4]float32{1, 0, 0, 1})
	return testkit.LoadXML(t, dir, `<scene>
  <part file="room.glb" name="ROOM"/>
  <element type="pose" name="P" insert_at="ROOM" x="0"/>
  <part file="box.glb" name="BOX" insert_at="ROOM" pose_offset="2 0 1 0 0 0" class="crate"/>
  <sensor type="laser" name="SCAN" insert_at="ROOM" pose_offset="0 0 1 0 0 33" angle_min="-90" angle_max="90" resolution="1" range_max="3"/>
  <sensor type="psd" name="PSD" insert_at="ROOM" pose_offset="0 0 1 0 0 0"/>
  <sensor type="psd" name="SKY" insert_at="ROOM" pose_offset="0 0 1 0 -90 0" range_max="0.5"/>
  <sensor type="laser3d" name="CLOUD" insert_at="ROOM" pose_offset="0 0 1 0 0 0" layers="-10 0 10" angle_min="-30" angle_max="30" resolution="10"/>
  <sensor type="camera" name="CAM" insert_at="ROOM" pose_offset="0 0 1 0 0 0" width="32" height="24"/>
  <sensor type="depth" name="DEPTH" insert_at="ROOM" pose_offset="0.1 0 1.5 0 5 0" width="32" height="24"/>
  <sensor type="segmentation" name="SEG" insert_at="ROOM" pose_offset="0.5 0 1.5 0 0 0" width="32" height="24" fov="80"/>
</scene>`)
}

type published struct {
	sensor, kind string
	info, data   []byte
}

// recordAllKinds renders three cycles of allKinds and records them; it
// returns what the live host hands its NATS publisher for each frame (the
// sensor's name and kind and sensors.Frame.Encode's info and data, which
// natsipc.Publisher.PublishSensor puts on the wire; cli/ipc.go publisher).
func recordAllKinds(t *testing.T, descriptions bool) (string, *scene.Scene, []published) {
	s := allKinds(t)
	file := filepath.Join(t.TempDir(), "rec.mcap")
	w, err := record.Create(file, record.Options{Meta: record.Meta{Rate: 15, EpochNs: 1e9}, Descriptions: descriptions})
	if err != nil {
		t.Fatal(err)
	}
	r := testkit.Renderer(t)
	var live []published
	for i := 0; i < 3; i++ {
		// 1/15 s steps: times a nanosecond log time does not hold exactly.
		tm := float64(i) / 15
		if err := s.Set("P", "x", float64(i)/3); err != nil {
			t.Fatal(err)
		}
		if err := w.Cycle(s, tm); err != nil {
			t.Fatal(err)
		}
		for _, se := range s.Sensors() {
			f, err := sensors.RenderFrame(r, s, se, &sensors.Stamp{Frame: i, Time: tm})
			if err != nil {
				t.Fatal(err)
			}
			info, data, err := f.Encode()
			if err != nil {
				t.Fatal(err)
			}
			live = append(live, published{se.Name, f.Kind, info, data})
			if err := w.Frame(f, tm); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return file, s, live
}

// readFrames reads file's frames through record.Frames in s.
func readFrames(t *testing.T, file string, s *scene.Scene) ([]*record.Frame, *record.Frames) {
	rec, err := record.Read(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []*record.Frame
	fs := record.NewFrames(rec, s)
	if _, err := record.Read(file, func(topic, _, _ string, m *mcap.Message) error {
		f, err := fs.Add(topic, m)
		if err != nil {
			t.Errorf("%s: %v", topic, err)
		}
		if f != nil {
			got = append(got, f)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got, fs
}

// Recorded with descriptions, every frame of every kind reads back as the
// live host published it, byte for byte: the same sensor, kind, info and
// data into natsipc's PublishSensor, so the same messages on the wire.
// Non-finite ranges, float64 ranges a LaserScan holds only as float32,
// poses and times that are not whole nanoseconds all survive.
func TestFramesByteForByte(t *testing.T) {
	file, s, live := recordAllKinds(t, true)
	got, fs := readFrames(t, file, s)
	if len(got) != len(live) || fs.Dropped != 0 {
		t.Fatalf("%d frames read back (%d dropped), %d published", len(got), fs.Dropped, len(live))
	}
	kinds := map[string]bool{}
	for i, f := range got {
		w := live[i]
		info, data, _ := f.Encode()
		if f.Sensor != w.sensor || f.Kind != w.kind || !f.Exact || !bytes.Equal(info, w.info) || !bytes.Equal(data, w.data) {
			t.Errorf("frame %d (%s %s): exact %v\ngot  %s\nwant %s\ndata equal %v", i, w.sensor, w.kind, f.Exact, info, w.info, bytes.Equal(data, w.data))
		}
		kinds[f.Kind] = true
	}
	if len(kinds) != 6 {
		t.Errorf("kinds read back %v, want all six", kinds)
	}
	if !bytes.Contains(live[0].info, []byte("null")) {
		t.Errorf("the scan has no range past range_max (null): %s", live[0].info)
	}
}

// Recorded without descriptions (the channels recordings always had),
// frames read back from the ROS 2 messages and the scene: every payload
// byte for byte, the info through the sensors' own JSON with the host's
// fields, at the precision the messages hold.
func TestFramesFromROS2Messages(t *testing.T) {
	file, s, live := recordAllKinds(t, false)
	got, fs := readFrames(t, file, s)
	if len(got) != len(live) || fs.Dropped != 0 {
		t.Fatalf("%d frames read back (%d dropped), %d published", len(got), fs.Dropped, len(live))
	}
	for i, f := range got {
		w := live[i]
		info, data, _ := f.Encode()
		if f.Sensor != w.sensor || f.Kind != w.kind || f.Exact || !bytes.Equal(data, w.data) {
			t.Errorf("frame %d (%s %s): exact %v, data equal %v", i, w.sensor, w.kind, f.Exact, bytes.Equal(data, w.data))
		}
		// Ranges, time and pose may differ (float32, nanoseconds, the
		// scene's current pose); near and far are not in a depth image's
		// messages.
		lost := 0
		if w.kind == "depth" {
			lost = 2
		}
		var a, b map[string]json.RawMessage
		if json.Unmarshal(info, &a) != nil || json.Unmarshal(w.info, &b) != nil || len(a) != len(b)-lost {
			t.Errorf("frame %d (%s): info\ngot  %s\nwant %s", i, w.sensor, info, w.info)
		}
		for k := range b {
			if _, ok := a[k]; !ok && !(w.kind == "depth" && (k == "near" || k == "far")) {
				t.Errorf("frame %d (%s): info without %q", i, w.sensor, k)
			}
		}
	}
}
