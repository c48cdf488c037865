package record_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/go-gl/mathgl/mgl64"
	_ "github.com/simvis/simvis/elements"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/record"
	"github.com/simvis/simvis/sensors"
)

// writeRecording records three cycles of a room with a moving scanner.
func writeRecording(t *testing.T, compression string) (string, int) {
	dir := t.TempDir()
	testkit.WriteModel(t, dir, "room.glb", func(m *models.Model) {
		m.AddNode(nil, "room", mgl64.Translate3D(0, 0, 1.5), models.Box("room", 8, 6, 3, [4]float32{1, 1, 1, 1}))
	})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="room.glb" name="ROOM"/>
  <element type="pose" name="P" insert_at="ROOM" x="0"/>
  <sensor type="laser" name="SCAN" insert_at="ROOM" pose_offset="0 0 1 0 0 0" angle_min="-90" angle_max="90" resolution="1"/>
</scene>`)
	file := filepath.Join(dir, "rec.mcap")
	w, err := record.Create(file, record.Options{Compression: compression, Meta: record.Meta{Rate: 10}, ChunkBytes: 2000})
	if err != nil {
		t.Fatal(err)
	}
	r := testkit.Renderer(t)
	messages := 0
	for i := 0; i < 3; i++ {
		if err := s.Set("P", "x", float64(i)/2); err != nil {
			t.Fatal(err)
		}
		if err := w.Cycle(s, float64(i)/10); err != nil {
			t.Fatal(err)
		}
		f, err := sensors.RenderFrame(r, s, s.Sensors()[0], &sensors.Stamp{Frame: i, Time: float64(i) / 10})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Frame(f, float64(i)/10); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// 3 changes, 3 values, 1 tf_static, 3 tf, 3 scans.
	messages = 13
	return file, messages
}

// A recording reads back whole with either compression: the change log in
// order, the values that changed each cycle, the model file attached, and
// a cut at any byte reads as what it holds or as an error, never a panic;
// cuts after the first chunk read the chunks before them.
func TestWriteReadAndTruncate(t *testing.T) {
	for _, comp := range []string{"zstd", "lz4"} {
		file, n := writeRecording(t, comp)
		rec, err := record.Read(file, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !rec.Complete || rec.Messages != n || len(rec.Changes) != 3 || len(rec.Values) != 3 || len(rec.Attachments) != 1 ||
			rec.Attachments[0].Name != "room.glb" || rec.Meta.Rate != 10 || rec.Profile != "ros2" {
			t.Fatalf("%s: %+v", comp, rec)
		}
		if rec.Changes[0].Msg.Dir != "." || !strings.HasPrefix(rec.Changes[0].Msg.XML, "<part") || rec.Changes[2].Msg.Seq != 3 {
			t.Errorf("changes %+v", rec.Changes)
		}
		if v := rec.Values[1].Msg.Values; len(v) != 1 || v["P.x"] != 0.5 || rec.Values[1].Time != 1e8 {
			t.Errorf("second values message %+v at %d, want only P.x = 0.5 at 0.1 s", v, rec.Values[1].Time)
		}
		data, _ := os.ReadFile(file)
		cut := filepath.Join(t.TempDir(), "cut.mcap")
		full := 0
		for at := 0; at < len(data); at += 7 {
			os.WriteFile(cut, data[:at], 0o644)
			r, err := record.Read(cut, nil)
			if err == nil && r.Complete && at < len(data)-8 { // the footer read, only the closing magic cut
				t.Fatalf("%s: cut at %d of %d reads as complete", comp, at, len(data))
			}
			if err == nil && r.Messages > full {
				full = r.Messages
			}
		}
		if full < 5 {
			t.Errorf("%s: cuts read at most %d messages; small chunks should leave more", comp, full)
		}
	}
}

// --realtime stamps are the wall clock; scene-time stamps are the epoch
// plus scene time.
func TestStamps(t *testing.T) {
	dir := t.TempDir()
	for _, realtime := range []bool{false, true} {
		w, err := record.Create(filepath.Join(dir, "s.mcap"), record.Options{Meta: record.Meta{Rate: 1, Realtime: realtime, EpochNs: 5e9}})
		if err != nil {
			t.Fatal(err)
		}
		before := time.Now().UnixNano()
		got := w.Stamp(2.5).Nanos()
		after := time.Now().UnixNano()
		w.Close()
		if realtime && (got < before || got > after) || !realtime && got != 7.5e9 {
			t.Errorf("realtime %v: stamp of 2.5 s = %d ns (wall clock %d..%d)", realtime, got, before, after)
		}
	}
}

// Hostile recordings are refused with the file and what is wrong: a change
// whose directory leads out, a file that is not MCAP.
func TestReadRefusesHostileInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "bad.mcap")
	f, _ := os.Create(file)
	w, err := mcap.NewWriter(f, &mcap.WriterOptions{Chunked: true, Compression: mcap.CompressionZSTD})
	if err != nil {
		t.Fatal(err)
	}
	w.WriteHeader(&mcap.Header{Profile: "ros2"})
	w.WriteSchema(&mcap.Schema{ID: 1, Name: "changes", Encoding: "jsonschema", Data: []byte("{}")})
	w.WriteChannel(&mcap.Channel{ID: 1, SchemaID: 1, Topic: record.TopicChanges, MessageEncoding: "json"})
	w.WriteMessage(&mcap.Message{ChannelID: 1, Data: []byte(`{"seq":1,"source":"x:1","dir":"../etc","xml":"<part/>"}`)})
	w.Close()
	f.Close()
	if _, err := record.Read(file, nil); err == nil || !strings.Contains(err.Error(), `dir "../etc"`) || !strings.Contains(err.Error(), file) {
		t.Errorf("change leading out: %v", err)
	}
	os.WriteFile(file, bytes.Repeat([]byte("not mcap"), 10), 0o644)
	if _, err := record.Read(file, nil); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("not MCAP: %v", err)
	}
}
