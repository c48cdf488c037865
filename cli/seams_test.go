package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/record"
)

// TestMirrorFromRecords: mirror --from renders a viewpoint instead of the
// sensors' files, yet a recording still gets every sensor's frame each
// cycle (it recorded none before: the viewpoint branch skipped them), and
// without -o no view.png lands in the working directory; mirror --record
// alone records as many.
func TestMirrorFromRecords(t *testing.T) {
	dir := t.TempDir()
	shm := filepath.Join(dir, "region")
	stop := startServe(t, recordScene(t), "--shm", shm, "--rate", "20", "--no-nats")
	defer stop()
	file := filepath.Join(dir, "m.mcap")
	wd, _ := os.Getwd()
	code, out, errOut := simvis(t, "mirror", "--shm", shm, "--from", "-3 0 2 0 10 0", "--size", "32x24", "--frames", "3", "--rate", "50", "--record", file)
	if code != 0 {
		t.Fatalf("mirror --from --record: %d %q %q", code, out, errOut)
	}
	if stray, _ := filepath.Glob(filepath.Join(wd, "view_*.png")); len(stray) > 0 {
		for _, f := range stray {
			os.Remove(f)
		}
		t.Errorf("%d view files written into the working directory without -o", len(stray))
	}
	plain := filepath.Join(dir, "p.mcap")
	if code, out, errOut := simvis(t, "mirror", "--shm", shm, "--frames", "3", "--rate", "50", "--record", plain); code != 0 {
		t.Fatalf("mirror --record: %d %q %q", code, out, errOut)
	}
	for _, f := range []string{file, plain} {
		counts := map[string]int{}
		if _, err := record.Read(f, func(topic, _, _ string, _ *mcap.Message) error {
			counts[topic]++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for _, topic := range []string{"/SCAN/scan", "/CLOUD/points", "/PSD/range", "/DEPTH/depth/image_raw", "/tf"} {
			if counts[topic] != 3 {
				t.Errorf("%s: %s: %d messages, want 3 (%v)", filepath.Base(f), topic, counts[topic], counts)
			}
		}
	}
}

// firstMessages returns each topic's first message data in a recording.
func firstMessages(t *testing.T, file string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	if _, err := record.Read(file, func(topic, _, _ string, m *mcap.Message) error {
		if _, ok := out[topic]; !ok {
			out[topic] = bytes.Clone(m.Data)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestServeWindowRecordsAndServesFoxglove: serve with a window, a
// recording and a Foxglove server at once (the window's GL context renders
// the sensors for both) records the same sensor messages as serve without
// a window, byte for byte, and reports the Foxglove server.
func TestServeWindowRecordsAndServesFoxglove(t *testing.T) {
	display := testkit.Xvfb(t, 1024, 768)
	dir := t.TempDir()
	scenePath := recordScene(t)
	withWindow, headless := filepath.Join(dir, "w.mcap"), filepath.Join(dir, "h.mcap")
	cmd := exec.Command(os.Args[0], "serve", scenePath, "--shm", filepath.Join(dir, "r1"), "--no-nats", "--fast", "--cycles", "4",
		"--window", "--record", withWindow, "--foxglove", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "SIMVIS_CLI_CHILD=1", "DISPLAY="+display)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("serve --window --record --foxglove: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "ws://127.0.0.1:") || !strings.Contains(string(out), "\nfoxglove: 0 frames sent") {
		t.Errorf("serve's output names no Foxglove server or its summary:\n%s", out)
	}
	if code, out, errOut := simvis(t, "serve", scenePath, "--shm", filepath.Join(dir, "r2"), "--no-nats", "--fast", "--cycles", "4", "--record", headless); code != 0 {
		t.Fatalf("serve --record: %s %s", out, errOut)
	}
	a, b := firstMessages(t, withWindow), firstMessages(t, headless)
	for _, topic := range []string{"/SCAN/scan", "/CLOUD/points", "/PSD/range", "/DEPTH/depth/image_raw", "/tf"} {
		if len(a[topic]) == 0 || !bytes.Equal(a[topic], b[topic]) {
			t.Errorf("%s: %d bytes with the window, %d without, or they differ", topic, len(a[topic]), len(b[topic]))
		}
	}
}

// TestRavonRecording: the RAVON scene captured with --mcap holds one
// message per sensor topic and its four model files as attachments, and
// play --rerender of it writes the scanners' scans equal to the capture's.
func TestRavonRecording(t *testing.T) {
	dir := t.TempDir()
	file, captured, played := filepath.Join(dir, "r.mcap"), filepath.Join(dir, "c"), filepath.Join(dir, "p")
	if code, out, errOut := simvis(t, "capture", "../scenes/ravon/scene.xml", "-o", captured, "--mcap", file); code != 0 {
		t.Fatalf("capture: %s %s", out, errOut)
	}
	counts := map[string]int{}
	rec, err := record.Read(file, func(topic, _, _ string, _ *mcap.Message) error {
		counts[topic]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range rec.Attachments {
		names = append(names, a.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"foliage.glb", "ravon.glb", "sky.glb", "terrain.glb"}) {
		t.Errorf("attachments %v", names)
	}
	for _, topic := range []string{"/LEFT/image_raw", "/RIGHT/image_raw", "/DEPTH/depth/image_raw", "/LIDAR/points", "/FRONT_LASER/scan", "/REAR_LASER/scan", "/GROUND_LASER/scan", "/tf_static"} {
		if counts[topic] != 1 {
			t.Errorf("%s: %d messages, want 1", topic, counts[topic])
		}
	}
	if code, out, errOut := simvis(t, "play", file, "--rerender", "-o", played, "--fast", "--no-nats", "--shm", filepath.Join(dir, "region")); code != 0 {
		t.Fatalf("play: %s %s", out, errOut)
	}
	for _, name := range []string{"FRONT_LASER", "REAR_LASER", "GROUND_LASER"} {
		var a, b struct{ Ranges []*float64 }
		da, _ := os.ReadFile(filepath.Join(captured, name+".scan.json"))
		db, _ := os.ReadFile(filepath.Join(played, name+"_0000.scan.json"))
		if json.Unmarshal(da, &a) != nil || json.Unmarshal(db, &b) != nil || len(a.Ranges) == 0 || len(a.Ranges) != len(b.Ranges) {
			t.Fatalf("%s: %d and %d ranges", name, len(a.Ranges), len(b.Ranges))
		}
		for k := range a.Ranges {
			if (a.Ranges[k] == nil) != (b.Ranges[k] == nil) || a.Ranges[k] != nil && *a.Ranges[k] != *b.Ranges[k] {
				t.Errorf("%s beam %d: captured %v, played %v", name, k, a.Ranges[k], b.Ranges[k])
				break
			}
		}
	}
}
