package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/ipc/record"
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
	if _, err := os.Stat(filepath.Join(wd, "view_0000.png")); err == nil {
		os.Remove(filepath.Join(wd, "view_0000.png"))
		t.Error("view_0000.png written into the working directory without -o")
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
