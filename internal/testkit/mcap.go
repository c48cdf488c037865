package testkit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/simvis/simvis/record"
)

// ChangesRecording is a hand-made simvis recording in the layout of the
// first recordings (a JSON /simvis/changes channel, ID 1, after the
// header and simvis metadata), zstd chunks of 1 KiB: what hostile-file
// tests fill with messages of their own. Close finishes it.
type ChangesRecording struct {
	*mcap.Writer
	Path string
	f    *os.File
	t    testing.TB
}

// NewChangesRecording starts one in the test's temporary directory.
func NewChangesRecording(t testing.TB) *ChangesRecording {
	t.Helper()
	path := filepath.Join(t.TempDir(), "r.mcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := mcap.NewWriter(f, &mcap.WriterOptions{Chunked: true, ChunkSize: 1 << 10, Compression: mcap.CompressionZSTD})
	if err != nil {
		t.Fatal(err)
	}
	meta, _ := json.Marshal(record.Meta{Scene: "s.xml", Rate: 10})
	for _, err := range []error{
		w.WriteHeader(&mcap.Header{Profile: "ros2"}),
		w.WriteMetadata(&mcap.Metadata{Name: record.MetadataName, Metadata: map[string]string{"json": string(meta)}}),
		w.WriteSchema(&mcap.Schema{ID: 1, Name: "simvis/Change", Encoding: "jsonschema", Data: []byte("{}")}),
		w.WriteChannel(&mcap.Channel{ID: 1, SchemaID: 1, Topic: record.TopicChanges, MessageEncoding: "json"}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return &ChangesRecording{Writer: w, Path: path, f: f, t: t}
}

// Close writes the summary and closes the file, and returns its path.
func (r *ChangesRecording) Close() string {
	r.t.Helper()
	if err := r.Writer.Close(); err != nil {
		r.t.Fatal(err)
	}
	if err := r.f.Close(); err != nil {
		r.t.Fatal(err)
	}
	return r.Path
}

// Allocated returns the bytes fn allocates (runtime.MemStats.TotalAlloc:
// every allocation counts, whether kept or collected).
func Allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}
