package natsipc_test

import (
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/simvis/simvis/ipc/natsipc"
)

func chunk(subject, id, part, size string, data string) *nats.Msg {
	m := nats.NewMsg(subject)
	m.Header.Set("Simvis-Epoch", "7")
	m.Header.Set("Simvis-Kind", "depth")
	m.Header.Set("Simvis-Info", `{"sensor":"D"}`)
	if part != "" {
		m.Header.Set("Simvis-Chunk", part)
		m.Header.Set("Simvis-Frame", id)
		m.Header.Set("Simvis-Size", size)
	}
	m.Data = []byte(data)
	return m
}

// A frame with a lost chunk is dropped and counted, never delivered short
// or spliced with the next; chunks of two sensors interleave; a size over
// the bound and a malformed chunk header are refused.
func TestAssemblerDropsIncompleteFrames(t *testing.T) {
	var a natsipc.Assembler
	a.MaxBytes = 100
	const s1, s2 = "simvis.x.sensor.A", "simvis.x.sensor.B"
	steps := []struct {
		m       *nats.Msg
		want    string // the frame's data, "" for none
		wantErr string
	}{
		{chunk(s1, "1", "0/3", "9", "abc"), "", ""},
		{chunk(s1, "1", "2/3", "9", "ghi"), "", "chunk 2/3 of frame 1 out of order"}, // chunk 1 lost
		{chunk(s2, "5", "0/2", "4", "wx"), "", ""},
		{chunk(s1, "2", "0/2", "4", "jk"), "", ""},
		{chunk(s2, "5", "1/2", "4", "yz"), "wxyz", ""},
		{chunk(s1, "2", "1/2", "4", "lm"), "jklm", ""},
		{chunk(s1, "3", "0/2", "6", "no"), "", ""},
		{chunk(s1, "4", "0/2", "4", "pq"), "", ""}, // frame 3 never completed
		{chunk(s1, "4", "1/2", "4", "rs"), "pqrs", ""},
		{chunk(s1, "5", "0/2", "1000", "x"), "", "at most 100"},
		{chunk(s1, "6", "3/2", "4", "x"), "", "bad Simvis-Chunk"},
		{chunk(s1, "", "", "", "whole"), "whole", ""},
	}
	for i, st := range steps {
		f, err := a.Add(st.m)
		switch {
		case st.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), st.wantErr) || f != nil {
				t.Errorf("step %d: %v, want %q", i, err, st.wantErr)
			}
		case err != nil:
			t.Errorf("step %d: %v", i, err)
		case st.want == "" && f != nil:
			t.Errorf("step %d: a frame %q", i, f.Data)
		case st.want != "" && (f == nil || string(f.Data) != st.want || string(f.Info) != `{"sensor":"D"}` || f.Epoch != 7 || f.Kind != "depth"):
			t.Errorf("step %d: %+v, want %q", i, f, st.want)
		}
	}
	if a.Dropped != 2 {
		t.Errorf("%d frames dropped, want 2", a.Dropped)
	}
}
