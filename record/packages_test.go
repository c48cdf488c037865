package record_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/simvis/simvis/record"
)

// A recording's package path entries are places among its own
// attachments: one that leaves them (an absolute path, "..") is refused,
// as a hostile file would use it to point a player's URDF parts outside.
func TestRecordedPackagePathStaysInside(t *testing.T) {
	for _, entry := range []string{`["../outside"]`, `["/abs"]`, `["ws/../../x"]`, `"not a list"`} {
		file := filepath.Join(t.TempDir(), "p.mcap")
		f, err := os.Create(file)
		if err != nil {
			t.Fatal(err)
		}
		w, err := mcap.NewWriter(f, &mcap.WriterOptions{Chunked: true})
		if err != nil {
			t.Fatal(err)
		}
		w.WriteHeader(&mcap.Header{Profile: "ros2"})
		w.WriteMetadata(&mcap.Metadata{Name: record.MetadataPackages, Metadata: map[string]string{"json": entry}})
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		_, err = record.Read(file, nil)
		if err == nil || !strings.Contains(err.Error(), record.MetadataPackages) {
			t.Errorf("package path %s: %v, want a refusal naming %s", entry, err, record.MetadataPackages)
		}
	}
}
