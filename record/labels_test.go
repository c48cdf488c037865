package record_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/simvis/simvis/record"
)

// labelsFile writes a recording whose /SEG/labels channel carries msgs at
// log times 10, 20, ...
func labelsFile(t *testing.T, msgs ...string) string {
	var b bytes.Buffer
	w, err := mcap.NewWriter(&b, &mcap.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	errs := []error{
		w.WriteHeader(&mcap.Header{Profile: "ros2"}),
		w.WriteSchema(&mcap.Schema{ID: 1, Name: record.TypeLabels, Encoding: "jsonschema", Data: []byte("{}")}),
		w.WriteChannel(&mcap.Channel{ID: 1, SchemaID: 1, Topic: "/SEG" + record.SuffixLabels, MessageEncoding: "json"}),
	}
	for i, m := range msgs {
		errs = append(errs, w.WriteMessage(&mcap.Message{ChannelID: 1, Sequence: uint32(i), LogTime: uint64(10 * (i + 1)), Data: []byte(m)}))
	}
	for _, err := range append(errs, w.Close()) {
		if err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "l.mcap")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A frame's labels are the last ones logged at or before it; labels a
// segmentation sensor cannot have made are refused with the topic and
// message named.
func TestLabelsChannel(t *testing.T) {
	rec, err := record.Read(labelsFile(t,
		`{"sensor":"SEG","instances":{"1":{"name":"A","class_id":0}},"classes":{}}`,
		`{"sensor":"SEG","instances":{"1":{"name":"A","class_id":0},"2":{"name":"B","class":"crate","class_id":1}},"classes":{"1":"crate"}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		t         int64
		ok        bool
		instances int
	}{{9, false, 0}, {10, true, 1}, {19, true, 1}, {20, true, 2}, {1000, true, 2}} {
		l, ok := rec.LabelsAt("/SEG/labels", c.t)
		if ok != c.ok || len(l.Instances) != c.instances {
			t.Errorf("labels at %d: %v, %d instances; want %v, %d", c.t, ok, len(l.Instances), c.ok, c.instances)
		}
	}
	if l, _ := rec.LabelsAt("/SEG/labels", 20); l.Instances["2"].Class != "crate" || l.Classes["1"] != "crate" {
		t.Errorf("labels at 20: %+v", l)
	}
	for _, c := range []struct{ msg, want string }{
		{`{"sensor":"SEG","instances":{"0":{"name":"A"}}}`, `/SEG/labels message 0: instance id "0": want a decimal 1 to 65535`},
		{`{"sensor":"SEG","instances":{"65536":{"name":"A"}}}`, `instance id "65536"`},
		{`{"sensor":"SEG","instances":{"01":{"name":"A"}}}`, `instance id "01"`},
		{`{"sensor":"SEG","instances":{"1":{"name":"A\u001b[2J"}}}`, `instance 1: class id 0 out of range or a name with a control character`},
		{`{"sensor":"SEG","instances":{"1":{"name":"A","class_id":70000}}}`, `instance 1: class id 70000`},
		{`{"sensor":"SEG","classes":{"x":"crate"}}`, `class id "x"`},
		{`{"sensor":"SEG","instances":[]}`, `/SEG/labels message 0: json: cannot unmarshal array`},
	} {
		_, err := record.Read(labelsFile(t, c.msg), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.msg, err, c.want)
		}
	}
}
