package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/simvis/simvis/record"
)

// writeMCAP writes an unchunked MCAP file: simvis metadata, one change
// (source given), a topic and an attachment of the names given.
func writeMCAP(t *testing.T, source, topic, attachment string) string {
	t.Helper()
	var b bytes.Buffer
	w, err := mcap.NewWriter(&b, &mcap.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	meta, _ := json.Marshal(record.Meta{Scene: "s.xml", Rate: 10})
	ch, _ := json.Marshal(record.Change{Seq: 1, Source: source, Dir: ".", XML: `<element type="pose" name="P"/>`})
	for _, err := range []error{
		w.WriteHeader(&mcap.Header{Profile: "ros2"}),
		w.WriteMetadata(&mcap.Metadata{Name: record.MetadataName, Metadata: map[string]string{"json": string(meta)}}),
		w.WriteSchema(&mcap.Schema{ID: 1, Name: "s", Encoding: "jsonschema", Data: []byte("{}")}),
		w.WriteChannel(&mcap.Channel{ID: 1, SchemaID: 1, Topic: record.TopicChanges, MessageEncoding: "json"}),
		w.WriteChannel(&mcap.Channel{ID: 2, SchemaID: 1, Topic: topic, MessageEncoding: "json"}),
		w.WriteMessage(&mcap.Message{ChannelID: 1, Sequence: 1, LogTime: 5, Data: ch}),
		w.WriteMessage(&mcap.Message{ChannelID: 2, Sequence: 1, LogTime: 6, Data: []byte("{}")}),
		w.WriteAttachment(&mcap.Attachment{Name: attachment, DataSize: 1, Data: bytes.NewReader([]byte("x"))}),
		w.Close(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(t.TempDir(), "h.mcap")
	if err := os.WriteFile(file, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestHostileRecording: info quotes names holding control characters
// instead of sending them to the terminal; play refuses an attachment
// that would land outside its temporary directory and a change whose
// source holds a control character, each with an error naming the file.
func TestHostileRecording(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // play's temporary directory goes here
	file := writeMCAP(t, "s.xml:2", "/\x1b[2Jtopic", "a\x07.glb")
	code, out, errOut := simvis(t, "info", file)
	if code != 0 {
		t.Fatalf("info: %s", errOut)
	}
	if strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, `"/\x1b[2Jtopic"`) || !strings.Contains(out, `attachment "a\a.glb" (1 bytes)`) {
		t.Errorf("info printed:\n%s", out)
	}
	file = writeMCAP(t, "s.xml:2", "/t", "../escape.glb")
	if code, _, errOut := simvis(t, "play", file, "--no-nats"); code != 1 || errOut != "simvis play: "+file+`: attachment "../escape.glb": not a relative path inside the recording`+"\n" {
		t.Errorf("play, an attachment outside: exit %d, %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(os.TempDir(), "escape.glb")); err == nil {
		t.Error("escape.glb written beside the temporary directory")
	}
	file = writeMCAP(t, "s.xml:2\x1b[2J", "/t", "a.glb")
	if code, _, errOut := simvis(t, "play", file, "--no-nats"); code != 1 || errOut != "simvis play: "+file+": /simvis/changes message 1: source or dir holds a control character\n" {
		t.Errorf("play, a control character in a source: exit %d, %q", code, errOut)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}

// TestPlayRemovesItsDirectory: play writes a recording's files into a
// private temporary directory and removes it when it ends, whether the
// (the failing cases are in TestHostileRecording).
func TestPlayRemovesItsDirectory(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	file := writeMCAP(t, "s.xml:2", "/t", "a.glb")
	code, out, errOut := simvis(t, "play", file, "--no-nats", "--fast", "--shm", filepath.Join(t.TempDir(), "region"))
	if code != 0 || !strings.Contains(out, "1 of 1 changes") {
		t.Fatalf("play: exit %d: %s %s", code, out, errOut)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Fatalf("left in TMPDIR: %v", left)
	}
}
