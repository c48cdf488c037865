package cli

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/record"
)

// segScene writes a room with two classed boxes in front of a robot that
// carries a segmentation sensor and turns (R_POSE.yaw).
func segScene(t *testing.T) string {
	dir := t.TempDir()
	testkit.WriteModel(t, dir, "room.glb", func(m *models.Model) {
		m.AddNode(nil, "room", mgl64.Translate3D(0, 0, 1.5), models.Box("room", 8, 6, 3, [4]float32{1, 1, 1, 1}))
	})
	testkit.WriteModel(t, dir, "box.glb", func(m *models.Model) {
		m.AddNode(nil, "box", mgl64.Ident4(), models.Box("box", 0.6, 0.6, 0.6, [4]float32{1, 0, 0, 1}))
	})
	path := filepath.Join(dir, "scene.xml")
	os.WriteFile(path, []byte(`<scene>
  <part file="room.glb" name="ROOM"/>
  <part file="box.glb" name="A" insert_at="ROOM" pose_offset="2 0.4 1 0 0 0" class="crate"/>
  <part file="box.glb" name="B" insert_at="ROOM" pose_offset="2 -0.6 1 0 0 0" class="robot"/>
  <part file="box.glb" name="ROBOT" insert_at="ROOM" pose_offset="-1 0 -0.5 0 0 0"/>
  <element type="pose" name="R_POSE" insert_at="ROBOT" x="0" y="0" yaw="0"/>
  <sensor type="segmentation" name="SEG" insert_at="ROBOT" pose_offset="0.5 0 1.5 0 0 0" width="32" height="24" fov="80"/>
</scene>`), 0o644)
	return path
}

// play without --rerender republishes a recorded segmentation sensor's
// frames to NATS as a live host publishes them: per frame, the instance
// and class ids are those of the capture's instance.png and class.png
// (the same run wrote both) and the labels, pixel counts included, those
// of its labels.json; the labels are recorded once (they do not change)
// and decode in @mcap/core.
func TestPlayRepublishesSegmentation(t *testing.T) {
	scenePath := segScene(t)
	dir := t.TempDir()
	file, out := filepath.Join(dir, "a.mcap"), filepath.Join(dir, "out")
	const frames = 4
	if code, _, errOut := simvis(t, "capture", scenePath, "--mcap", file, "-o", out, "--frames", fmt.Sprint(frames), "--rate", "10",
		"--sweep", "R_POSE.yaw=-15:15"); code != 0 {
		t.Fatalf("capture: %s", errOut)
	}
	rec, err := record.Read(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.Labels["/SEG/labels"]; len(got) != 1 || got[0].Msg.Instances["2"].Name != "A" || got[0].Msg.Classes["1"] != "crate" {
		t.Fatalf("/SEG/labels: %+v, want one message naming instance 2 A and class 1 crate", got)
	}
	name := fmt.Sprintf("i15seg%d", os.Getpid())
	p := startPlayer(t, file, "--shm", name, "--listen", "127.0.0.1:0")
	stdin, errOut := p.stdin, p.errOut
	nc := p.viewer(t, name)
	defer nc.Close()
	sub, _ := nc.SubscribeSync("simvis." + name + ".sensor.SEG")
	nc.Flush()
	fmt.Fprintln(stdin, "resume")
	seen := map[uint16]bool{}
	for i := 0; i < frames; i++ {
		msg, err := sub.NextMsg(30 * time.Second)
		if err != nil {
			t.Fatalf("frame %d: %v\n%s", i, err, errOut.String())
		}
		var info struct {
			Stamp     struct{ Frame int }
			Instances map[string]any `json:"instances"`
			Classes   map[string]any `json:"classes"`
		}
		if err := json.Unmarshal([]byte(msg.Header.Get("Simvis-Info")), &info); err != nil || msg.Header.Get("Simvis-Kind") != "segmentation" || info.Stamp.Frame != i {
			t.Fatalf("frame %d: kind %q, %v: %s", i, msg.Header.Get("Simvis-Kind"), err, msg.Header.Get("Simvis-Info"))
		}
		base := filepath.Join(out, fmt.Sprintf("SEG_%04d", i))
		var want struct {
			Instances map[string]any `json:"instances"`
			Classes   map[string]any `json:"classes"`
		}
		raw, err := os.ReadFile(base + ".labels.json")
		if err != nil || json.Unmarshal(raw, &want) != nil {
			t.Fatalf("%s.labels.json: %v", base, err)
		}
		if !reflect.DeepEqual(info.Instances, want.Instances) || !reflect.DeepEqual(info.Classes, want.Classes) {
			t.Errorf("frame %d: republished labels %v %v, captured %v %v", i, info.Instances, info.Classes, want.Instances, want.Classes)
		}
		data := msg.Data
		if len(data) != 2*2*32*24 {
			t.Fatalf("frame %d: %d bytes of ids, want %d", i, len(data), 2*2*32*24)
		}
		for k, suffix := range []string{".instance.png", ".class.png"} {
			f, err := os.Open(base + suffix)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			for y := 0; y < 24; y++ {
				for x := 0; x < 32; x++ {
					r, _, _, _ := img.At(x, y).RGBA()
					got := binary.LittleEndian.Uint16(data[2*(k*32*24+y*32+x):])
					if got != uint16(r) {
						t.Fatalf("frame %d %s pixel (%d,%d): republished %d, captured %d", i, suffix, x, y, got, r)
					}
					if k == 0 {
						seen[got] = true
					}
				}
			}
		}
	}
	// Both boxes and the room are in view: the comparison saw real ids.
	if len(seen) < 3 {
		t.Errorf("instance ids seen: %v, want the room and both boxes", seen)
	}
	fmt.Fprintln(stdin, "pause")
	stdin.Close()
	// An independent reader decodes the labels channel (JSON) and the id
	// images with their schemas (last: it skips where node is missing).
	if c := checkInNode(t, file); c.Counts["/SEG/labels"] != 1 || c.Counts["/SEG/instance/image_raw"] != frames || c.Counts["/SEG/class/image_raw"] != frames {
		t.Errorf("@mcap/core counts: %v", c.Counts)
	}
}
