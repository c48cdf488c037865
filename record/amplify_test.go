package record_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/record"
)

// hostileChanges writes a simvis recording of n zstd chunks, each one
// /simvis/changes message of size bytes (a command followed by a long
// run of spaces and 'A's: valid JSON that compresses to almost nothing),
// as issue 29's finding 4 built (20 of 400 MiB in 0.9 MB).
func hostileChanges(t testing.TB, n, size int) string {
	t.Helper()
	w := testkit.NewChangesRecording(t)
	for i := 1; i <= n; i++ {
		head := []byte(`{"seq":1,"source":"s.xml:2","dir":".","xml":"<element type=\"pose\" name=\"P`)
		tail := `\"/>"}`
		data := append(append(head, bytes.Repeat([]byte("A"), size-len(head)-len(tail))...), tail...)
		if err := w.WriteMessage(&mcap.Message{ChannelID: 1, Sequence: uint32(i), LogTime: uint64(i) * 1e8, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	return w.Close()
}

// TestReadRefusesAmplifiedChanges: issue 29, finding 4. A recording of
// zstd chunks that each decompress to one huge /simvis/changes message
// (here 6 of 32 MiB in a file of a few kB) made Read decompress every
// chunk into a buffer twice its size and keep every message: hundreds of
// MiB. Now a change message over its bound (1 MiB by default) is refused
// before its data is read, naming the file, the channel, the message's
// sequence and log time, and the flag that raises the bound; the refusal
// costs a few MiB.
func TestReadRefusesAmplifiedChanges(t *testing.T) {
	file := hostileChanges(t, 6, 32<<20)
	if st, _ := os.Stat(file); st.Size() > 1<<20 {
		t.Fatalf("the hostile file holds %d bytes; it should be small", st.Size())
	}
	var err error
	n := testkit.Allocated(func() { _, err = record.Read(file, nil) })
	want := file + ": /simvis/changes message 1 (log time 0.100000000 s): 33554432 bytes, over the bound of 1048576 bytes for one /simvis/changes message (raise it with record.ReadOptions.ChangeBytes / --max-change-mib)"
	if err == nil || err.Error() != want {
		t.Errorf("Read: %v\nwant %s", err, want)
	}
	if n > 16<<20 {
		t.Errorf("Read allocated %d MiB; want under 16", n>>20)
	}
}

// TestReadKeepsWithinBound: messages each within their bound still add
// up: what Read keeps is bounded (ReadOptions.KeptBytes, default 1 GiB),
// and a file over it is refused naming the flag; one within it is read.
func TestReadKeepsWithinBound(t *testing.T) {
	file := hostileChanges(t, 8, 3<<20)
	opts := record.ReadOptions{ChangeBytes: 4 << 20, KeptBytes: 16 << 20}
	_, err := record.ReadWith(file, nil, opts)
	if err == nil || !strings.Contains(err.Error(), "/simvis/changes message 6 (log time 0.600000000 s)") ||
		!strings.Contains(err.Error(), "over the bound of 16777216 bytes for what a reader keeps of a recording (raise it with record.ReadOptions.KeptBytes / --max-recording-mib)") {
		t.Errorf("8 changes of 3 MiB, 16 MiB kept: %v", err)
	}
	opts.KeptBytes = 32 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rec, err := record.ReadWith(file, nil, opts)
	runtime.GC()
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Changes) != 8 {
		t.Errorf("%d changes read, want 8", len(rec.Changes))
	}
	if held := int64(after.HeapAlloc) - int64(before.HeapAlloc); held > 32<<20 {
		t.Errorf("Read holds %d MiB, over its 32 MiB bound", held>>20)
	}
	runtime.KeepAlive(rec)
}

// TestInfoCountsWithoutData: Info counts the hostile file's messages
// without holding their data: from the summary and message indexes of a
// complete file (no chunk decompressed), and streaming through the chunks
// of one cut short (no summary), skipping every message's data.
func TestInfoCountsWithoutData(t *testing.T) {
	file := hostileChanges(t, 6, 32<<20)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.mcap")
	// Up to the data-end record: every chunk, no summary.
	at := bytes.LastIndex(data, []byte{byte(mcap.OpDataEnd), 4, 0, 0, 0, 0, 0, 0, 0})
	if at < 0 {
		t.Fatal("no data-end record")
	}
	if err := os.WriteFile(cut, data[:at], 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file     string
		complete bool
		limit    uint64
	}{{file, true, 1 << 20}, {cut, false, 24 << 20}} {
		var rec *record.Recording
		n := testkit.Allocated(func() { rec, err = record.Info(c.file, record.ReadOptions{}) })
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if rec.Complete != c.complete || rec.Messages != 6 || rec.ChangeMessages != 6 || len(rec.Topics) != 1 ||
			rec.Topics[0].Messages != 6 || rec.Start != 1e8 || rec.End != 6e8 || !rec.HasMeta || rec.Meta.Rate != 10 {
			t.Errorf("%s: %+v", c.file, rec)
		}
		if n > c.limit {
			t.Errorf("%s (complete %v): Info allocated %.1f MiB; want under %.1f", c.file, c.complete, float64(n)/(1<<20), float64(c.limit)/(1<<20))
		}
	}
}

// TestMessagesBounded: play's republishers read one message at a time,
// each within ReadOptions.RecordBytes, and name the bound they refuse.
func TestMessagesBounded(t *testing.T) {
	file := hostileChanges(t, 2, 4<<20)
	m, err := record.OpenMessagesWith(file, true, 0, record.ReadOptions{RecordBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	_, _, _, err = m.Next()
	if err == nil || !strings.Contains(err.Error(), "/simvis/changes message 1 (log time 0.100000000 s): 4194304 bytes, over the bound of 1048576 bytes for one record (raise it with record.ReadOptions.RecordBytes / --max-mcap-record-mib)") {
		t.Errorf("Next: %v", err)
	}
}
