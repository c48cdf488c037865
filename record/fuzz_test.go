package record_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/simvis/simvis/record"
)

// unchunked returns a small recording without chunks or compression, so
// that mutations reach the records themselves: metadata, a change and a
// values message, an attachment.
func unchunked(t testing.TB) []byte {
	var b bytes.Buffer
	w, err := mcap.NewWriter(&b, &mcap.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	meta, _ := json.Marshal(record.Meta{Scene: "s.xml", Rate: 10})
	ch, _ := json.Marshal(record.Change{Seq: 1, Source: "s.xml:2", Dir: ".", XML: `<part file="a.glb" name="A"/>`})
	vals, _ := json.Marshal(record.Values{Values: map[string]float64{"P.x": 1}})
	for _, err := range []error{
		w.WriteHeader(&mcap.Header{Profile: "ros2"}),
		w.WriteMetadata(&mcap.Metadata{Name: record.MetadataName, Metadata: map[string]string{"json": string(meta)}}),
		w.WriteSchema(&mcap.Schema{ID: 1, Name: "simvis/Change", Encoding: "jsonschema", Data: []byte("{}")}),
		w.WriteChannel(&mcap.Channel{ID: 1, SchemaID: 1, Topic: record.TopicChanges, MessageEncoding: "json"}),
		w.WriteChannel(&mcap.Channel{ID: 2, SchemaID: 1, Topic: record.TopicValues, MessageEncoding: "json"}),
		w.WriteMessage(&mcap.Message{ChannelID: 1, Sequence: 1, LogTime: 5, Data: ch}),
		w.WriteMessage(&mcap.Message{ChannelID: 2, Sequence: 1, LogTime: 6, Data: vals}),
		w.WriteAttachment(&mcap.Attachment{Name: "./a.glb", MediaType: "model/gltf-binary", DataSize: 4, Data: bytes.NewReader([]byte("glTF"))}),
		w.Close(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// FuzzRead reads hostile files as play and info do: Read and OpenMessages
// never panic,
// and a recording it accepts has only changes whose directory stays inside
// the recording and attachments within their bound. Seeds: an unchunked
// file (above), a compressed one of record.Create, and
// testdata/fuzz/FuzzRead.
func FuzzRead(f *testing.F) {
	f.Add(unchunked(f))
	dir := f.TempDir()
	w, err := record.Create(filepath.Join(dir, "z.mcap"), record.Options{Meta: record.Meta{Rate: 10}})
	if err != nil {
		f.Fatal(err)
	}
	if err := w.Close(); err != nil {
		f.Fatal(err)
	}
	z, err := os.ReadFile(filepath.Join(dir, "z.mcap"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(z)
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(t.TempDir(), "f.mcap")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		// play's republishers read the file again through the index.
		for _, indexed := range []bool{true, false} {
			if m, err := record.OpenMessages(file, indexed, 0); err == nil {
				for n := 0; n <= len(data); n++ { // a message takes bytes
					if _, _, _, err := m.Next(); err != nil {
						break
					}
				}
				m.Close()
			}
		}
		messages := 0
		rec, err := record.Read(file, func(topic, schema, encoding string, m *mcap.Message) error {
			messages++
			return nil
		})
		if err != nil {
			return
		}
		if rec.Messages != messages {
			t.Fatalf("%d messages counted, %d seen", rec.Messages, messages)
		}
		for _, c := range rec.Changes {
			if !filepath.IsLocal(c.Msg.Dir) {
				t.Fatalf("change %d: dir %q outside the recording", c.Msg.Seq, c.Msg.Dir)
			}
		}
		total := 0
		for _, a := range rec.Attachments {
			total += len(a.Data)
		}
		if total > record.MaxAttachmentBytes {
			t.Fatalf("%d attachment bytes held", total)
		}
	})
}

// TestReadMalformedChunk: a 49-byte file whose chunk names a compression
// longer than the MCAP library's buffer (the library panics there, found
// by FuzzRead; Read's own scanner refuses it) is an error naming the file
// and the record from Read; OpenMessages refuses it too.
func TestReadMalformedChunk(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bad.mcap")
	data := []byte("\x89MCAP0\r\n\x06000\x00\x00\x00\x00\x0000000000000000000000000000000000")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := record.Read(file, nil)
	if err == nil || err.Error() != file+": record 0x6 at offset 8: a compression name of 808464432 bytes" {
		t.Fatalf("Read: %v", err)
	}
	m, err := record.OpenMessages(file, false, 0)
	if err == nil {
		_, _, _, err = m.Next()
		m.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "a compression name of 808464432 bytes") {
		t.Fatalf("OpenMessages, Next: %v", err)
	}
}

// TestCursor: a cursor hands out each message once, when the position
// reaches its log time, and again after a seek back.
func TestCursor(t *testing.T) {
	file := filepath.Join(t.TempDir(), "u.mcap")
	if err := os.WriteFile(file, unchunked(t), 0o600); err != nil {
		t.Fatal(err)
	}
	c := record.NewCursor(file, false)
	defer c.Close()
	var got []uint64
	until := func(limit int64) {
		t.Helper()
		if err := c.Until(limit, func(_ *mcap.Schema, _ *mcap.Channel, m *mcap.Message) { got = append(got, m.LogTime) }); err != nil {
			t.Fatal(err)
		}
	}
	until(10) // not started: nothing
	if err := c.SeekTo(0); err != nil {
		t.Fatal(err)
	}
	until(4)
	until(5)
	until(5)
	until(100)
	if err := c.SeekTo(6); err != nil {
		t.Fatal(err)
	}
	until(100)
	if fmt.Sprint(got) != "[5 6 6]" {
		t.Errorf("log times %v, want [5 6 6]", got)
	}
}
