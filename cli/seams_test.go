package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/simvis/simvis/ipc/record"
)

// TestMirrorFromRecords: mirror --from renders a viewpoint instead of the
// sensors' files, yet a recording still gets every sensor's frame each
// cycle (it recorded none before: the viewpoint branch skipped them), and
// without -o no view.png lands in the working directory.
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
	counts := map[string]int{}
	if _, err := record.Read(file, func(topic, _, _ string, _ *mcap.Message) error {
		counts[topic]++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{"/SCAN/scan", "/CLOUD/points", "/PSD/range", "/DEPTH/depth/image_raw"} {
		if counts[topic] != 3 {
			t.Errorf("%s: %d messages, want 3 (%v)", topic, counts[topic], counts)
		}
	}
}
