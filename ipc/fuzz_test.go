package ipc

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	_ "github.com/simvis/simvis/elements"
)

var fuzzSizes = Sizes{Elements: 32, NameBytes: 4096, Values: 256, Requests: 4, RequestBytes: 256, LogBytes: 1 << 14}

// FuzzRequestSlots writes arbitrary bytes over a live host's header and
// request slots, as any process mapping the region could, and runs host
// cycles on a clock that passes AbandonAfter and KeepOutcomes. The host
// must not fail or panic, must re-assert every header field it owns, keep
// request_claim in range, leave every slot free once nobody holds it, and
// publish a change log and descriptors a client reads back equal to its
// own.
func FuzzRequestSlots(f *testing.F) {
	dir := f.TempDir()
	sceneFile := filepath.Join(dir, "scene.xml")
	if err := os.WriteFile(sceneFile, []byte(`<scene><element type="pose" name="P" insert_at="ROOT"/></scene>`), 0o644); err != nil {
		f.Fatal(err)
	}
	slot := func(state uint32, seq uint64, text string) []byte {
		b := make([]byte, slotHeader+len(text))
		binary.LittleEndian.PutUint32(b[slotState:], state)
		binary.LittleEndian.PutUint32(b[slotPID:], 1)
		binary.LittleEndian.PutUint64(b[slotSeq:], seq)
		binary.LittleEndian.PutUint32(b[slotTextLen:], uint32(len(text)))
		copy(b[slotHeader:], text)
		return append(b, make([]byte, fuzzSizes.RequestBytes-len(b))...)
	}
	good := `<element type="pose" name="Q" insert_at="ROOT"/>`
	f.Add(uint64(1), []byte{}, slot(slotReady, 0, good))
	f.Add(uint64(2), []byte{}, append(slot(slotReady, 0, good), slot(slotWriting, 1, good[:10])...))
	f.Add(uint64(1), []byte{}, slot(slotReady, 7, good))
	f.Add(uint64(1), []byte{}, slot(slotCancelled, 0, good))
	f.Add(uint64(1), []byte{}, slot(slotExecuting, 0, good))
	f.Add(^uint64(0), []byte{}, slot(slotReady, 0, good))
	f.Add(uint64(4), make([]byte, headerUsed), slot(0xffffffff, 0, "<"))
	f.Fuzz(func(t *testing.T, claim uint64, header, slots []byte) {
		now := time.Unix(1000, 0)
		h, err := NewHost(filepath.Join(t.TempDir(), "region"), sceneFile, HostOptions{Sizes: fuzzSizes, Warnings: io.Discard, KeepOutcomes: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		h.now = func() time.Time { return now }
		r := h.Region
		copy(r.mem[:headerUsed], header)
		copy(r.mem[r.lay.reqOff:r.lay.reqOff+r.lay.reqSlots*r.lay.reqSize], slots)
		r.store64(offReqClaim, claim)
		for i := 0; i < 8; i++ {
			if err := h.Cycle(); err != nil {
				t.Fatalf("cycle %d: %v", i, err)
			}
			now = now.Add(600 * time.Millisecond)
		}
		for _, f := range hostFields {
			if f[1] == 8 && r.get64(f[0]) != r.hget64(f[0]) || f[1] == 4 && r.get32(f[0]) != r.hget32(f[0]) {
				t.Errorf("header field at %d not re-asserted", f[0])
			}
		}
		done := r.get64(offReqDone)
		if c := r.get64(offReqClaim); c != done || done != h.requests.done {
			t.Errorf("request_claim %d, request_done %d (host %d) after every request was settled", c, done, h.requests.done)
		}
		for i := 0; i < r.lay.reqSlots; i++ {
			if st := slotLoad(r.slot(uint64(i))); st != slotFree {
				t.Errorf("slot %d in state %d", i, st)
			}
		}
		c, err := Attach(r.path)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var cur, hostCur LogCursor
		recs, err := c.ReadLog(&cur)
		hostRecs, herr := r.ReadLog(&hostCur)
		if err != nil || herr != nil || !reflect.DeepEqual(recs, hostRecs) || len(recs) != len(h.Scene.Log()) {
			t.Errorf("change log read back: %d records (%v), host %d (%v), scene %d", len(recs), err, len(hostRecs), herr, len(h.Scene.Log()))
		}
		descs, _, err := c.Descriptors()
		hostDescs, _, herr := r.Descriptors()
		if err != nil || herr != nil || !reflect.DeepEqual(descs, hostDescs) || len(descs) != len(h.Scene.Elements()) {
			t.Errorf("descriptors read back: %d (%v), host %d (%v)", len(descs), err, len(hostDescs), herr)
		}
	})
}

// FuzzClientRead writes arbitrary bytes over a region's header, descriptor
// records, names and change log, and has a client attach and read it: any
// content gives records and descriptors that check out, or an error,
// never a panic or a read outside the mapping.
func FuzzClientRead(f *testing.F) {
	defer SetReadPatience(0)() // one look: the fuzzer has no host to repair anything
	dir := f.TempDir()
	seedPath := filepath.Join(dir, "seed")
	h, err := NewHost(seedPath, writeFuzzScene(f, dir), HostOptions{Sizes: fuzzSizes, Warnings: io.Discard})
	if err != nil {
		f.Fatal(err)
	}
	r := h.Region
	valid := func(off, n int) []byte { return append([]byte(nil), r.mem[off:off+n]...) }
	hdr, desc, names, log := valid(0, headerUsed), valid(r.lay.descOff, 2*descSize), valid(r.lay.namesOff, 64), valid(r.lay.logOff, 512)
	h.Close()
	f.Add(hdr, desc, names, log)
	odd := append([]byte(nil), hdr...)
	odd[offDescSeq]++
	f.Add(odd, desc, names, log)
	rewound := append([]byte(nil), hdr...)
	binary.LittleEndian.PutUint64(rewound[offLogUsed:], 0)
	f.Add(rewound, desc, names, log)
	badDesc := append([]byte(nil), desc...)
	binary.LittleEndian.PutUint32(badDesc[200:], 1<<31)
	f.Add(hdr, badDesc, names, log)
	badLog := append([]byte(nil), log...)
	binary.LittleEndian.PutUint32(badLog[recTextLen:], 1<<31)
	f.Add(hdr, desc, names, badLog)
	f.Fuzz(func(t *testing.T, hdr, desc, names, log []byte) {
		path := filepath.Join(t.TempDir(), "region")
		r, err := Create(path, fuzzSizes)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		copy(r.mem[:headerUsed], hdr)
		copy(r.mem[r.lay.descOff:r.lay.descOff+r.lay.descCap*descSize], desc)
		copy(r.mem[r.lay.namesOff:r.lay.namesOff+r.lay.namesCap], names)
		copy(r.mem[r.lay.logOff:r.lay.logOff+r.lay.logCap], log)
		c, err := Attach(path)
		if err != nil {
			return
		}
		defer c.Close()
		if ds, used, err := c.Descriptors(); err == nil {
			for _, d := range ds {
				if d.Start < 0 || d.Start+len(d.Params) > used || used > c.lay.valuesCap {
					t.Errorf("descriptor %+v beyond %d values in use", d, used)
				}
			}
		}
		var cur LogCursor
		if recs, err := c.ReadLog(&cur); err == nil {
			for i, rec := range recs {
				if rec.Seq != uint64(i+1) {
					t.Errorf("record %d has sequence %d", i, rec.Seq)
				}
			}
			if cur.Pos > uint64(c.lay.logCap) {
				t.Errorf("cursor %d beyond the log", cur.Pos)
			}
		}
	})
}

func writeFuzzScene(f *testing.F, dir string) string {
	sceneFile := filepath.Join(dir, "scene.xml")
	if err := os.WriteFile(sceneFile, []byte(`<scene><element type="pose" name="P" insert_at="ROOT"/><element type="rotation" name="Q" insert_at="ROOT" axis="0 0 1"/></scene>`), 0o644); err != nil {
		f.Fatal(err)
	}
	return sceneFile
}
