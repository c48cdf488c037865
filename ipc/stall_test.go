package ipc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// stallHost is a host with a single request slot on a clock of the test's,
// so that request n+1 reuses request n's slot, and a client region.
func stallHost(t *testing.T) (h *Host, c *Region, now *time.Time) {
	t.Helper()
	dir := t.TempDir()
	sceneFile := filepath.Join(dir, "scene.xml")
	if err := os.WriteFile(sceneFile, []byte(`<scene><element type="pose" name="P" insert_at="ROOT"/></scene>`), 0o644); err != nil {
		t.Fatal(err)
	}
	sz := fuzzSizes
	sz.Requests = 1
	h, err := NewHost(filepath.Join(dir, "region"), sceneFile, HostOptions{Sizes: sz, Warnings: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	now = new(time.Time)
	*now = time.Unix(1000, 0)
	h.now = func() time.Time { return *now }
	if c, err = Attach(h.Region.path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return h, c, now
}

// stallAt makes the hook block request seq until release is called.
func stallAt(hook *func(uint64), seq uint64) (stalled <-chan struct{}, release func()) {
	in, out := make(chan struct{}), make(chan struct{})
	*hook = func(s uint64) {
		if s == seq {
			close(in)
			<-out
		}
	}
	return in, func() { close(out) }
}

func noCheck() error { return nil }

// A producer that stalls past AbandonAfter while writing, and resumes once
// the next request (its slot's next user) is being written, cannot mark
// that half-written request ready: its compare-and-swap names its own
// request. It learns its request was given up on; the other request runs
// whole, for its own producer.
func TestStalledProducerCannotReadyTheNextRequest(t *testing.T) {
	defer func() { stallSubmit = nil }()
	h, c, now := stallHost(t)
	stalled0, release0 := stallAt(&stallSubmit, 0)
	err0 := make(chan error)
	go func() {
		_, err := c.submit(`<element type="pose" name="FIRST" insert_at="ROOT"/>`)
		err0 <- err
	}()
	<-stalled0
	h.Cycle() // request 0 seen pending, not ready
	*now = now.Add(1100 * time.Millisecond)
	h.Cycle() // given up on: its slot is free
	if h.requests.done != 1 {
		t.Fatalf("request_done %d after AbandonAfter, want 1", h.requests.done)
	}

	// Request 1 takes the slot and stalls before it is complete.
	stalled1, release1 := stallAt(&stallSubmit, 1)
	type result struct {
		seq uint64
		err error
	}
	res1 := make(chan result)
	second := `<element type="pose" name="SECOND" insert_at="ROOT"/>`
	go func() {
		seq, err := c.submit(second)
		res1 <- result{seq, err}
	}()
	<-stalled1
	release0()
	if err := <-err0; err == nil || !strings.Contains(err.Error(), "gave up on it") {
		t.Errorf("the stalled producer: %v; want told its request was given up on", err)
	}
	if st := slotLoad(c.slot(1)); st&0xff != slotWriting {
		t.Fatalf("request 1's slot in state %#x while its producer still writes it (want writing)", st)
	}
	h.Cycle()
	if _, ok := h.Scene.Element("SECOND"); ok {
		t.Fatal("a half-written request ran")
	}
	release1()
	r1 := <-res1
	if r1.err != nil || r1.seq != 1 {
		t.Fatalf("the second producer: request %d, %v", r1.seq, r1.err)
	}
	h.Cycle()
	if logSeq, err := c.outcome(1, time.Now().Add(time.Second), time.Second, noCheck); err != nil || logSeq != 2 {
		t.Errorf("request 1: change %d, %v; want change 2", logSeq, err)
	}
	if _, ok := h.Scene.Element("FIRST"); ok {
		t.Error("the given-up request ran")
	}
}

// A requester that stalls after finding its outcome, long enough for the
// host to free it (KeepOutcomes) and the slot to hold the next request's
// outcome, neither frees nor takes that outcome: it falls back on the
// change log, and the next requester gets its own outcome.
func TestStalledRequesterCannotTakeTheNextOutcome(t *testing.T) {
	defer func() { stallOutcome = nil }()
	h, c, now := stallHost(t)
	seq0, err := c.submit(`<element type="pose" name="A" insert_at="NOWHERE_A"/>`)
	if err != nil {
		t.Fatal(err)
	}
	h.Cycle() // refused: the outcome waits in the slot
	stalled, release := stallAt(&stallOutcome, seq0)
	res0 := make(chan error)
	go func() {
		_, err := c.outcome(seq0, time.Now().Add(time.Minute), time.Minute, noCheck)
		res0 <- err
	}()
	<-stalled
	*now = now.Add(11 * time.Second)
	h.Cycle() // KeepOutcomes passed: freed unread
	seq1, err := c.submit(`<element type="pose" name="B" insert_at="NOWHERE_B"/>`)
	if err != nil {
		t.Fatal(err)
	}
	h.Cycle() // refused too: its outcome in the same slot
	release()
	err0 := <-res0
	var refused *RequestError
	if errors.As(err0, &refused) {
		t.Errorf("request 0 got a refusal (%q) after its outcome was freed: it may be request 1's", refused.Msg)
	} else if err0 == nil || !strings.Contains(err0.Error(), "not executed") {
		t.Errorf("request 0: %v; want not executed, from the change log", err0)
	}
	_, err1 := c.outcome(seq1, time.Now().Add(time.Second), time.Second, noCheck)
	if !errors.As(err1, &refused) || !strings.Contains(refused.Msg, "NOWHERE_B") {
		t.Errorf("request 1: %v; want its own refusal", err1)
	}
}

// A client attaching while a header field is damaged looks again, and
// attaches once the host repaired it, rather than failing.
func TestAttachRetriesDamagedHeader(t *testing.T) {
	h, _, _ := stallHost(t)
	defer func() { attachDamaged = nil }()
	h.Region.store32(offReqSlots, 0)
	repaired := false
	attachDamaged = func() {
		if !repaired {
			repaired = true
			h.Cycle()
		}
	}
	c, err := Attach(h.Region.path)
	if err != nil {
		t.Fatalf("attach while the host repairs its header: %v", err)
	}
	c.Close()
	if !repaired {
		t.Error("the damaged header was not seen")
	}
	// Damage that stays is reported, after readPatience.
	defer SetReadPatience(20 * time.Millisecond)()
	attachDamaged = nil
	h.Region.store32(offReqSlots, 0)
	if _, err := Attach(h.Region.path); err == nil || !strings.Contains(err.Error(), "request slots 0") {
		t.Errorf("attach to a header damaged for good: %v", err)
	}
}

// A reader that meets damage in a change-log record waits until the host
// had the cycles to reach it with its window-a-cycle check, however many
// that takes, rather than a fixed time: the log it then returns is whole.
func TestReaderWaitsForTheLogCheckRound(t *testing.T) {
	defer func(b int) { logCheckBytes = b }(logCheckBytes)
	logCheckBytes = 64
	defer SetReadPatience(0)()
	maxPatience = time.Minute
	defer func() { readDamaged = nil }()
	h, c, _ := stallHost(t)
	for i := 0; i < 5; i++ {
		if _, err := h.Execute(fmt.Sprintf(`<element type="pose" name="E%d" insert_at="ROOT"/>`, i), "test"); err != nil {
			t.Fatal(err)
		}
	}
	o := h.Region.own
	last := 0
	for off := 0; off < len(o.log); off += int(*(*uint32)(unsafe.Pointer(&o.log[off]))) {
		last = off
	}
	if len(o.log) < 8*logCheckBytes {
		t.Fatalf("a %d-byte log: too short for the test", len(o.log))
	}
	h.Region.mem[h.Region.lay.logOff+last] ^= 0x40 // the last record's length
	o.logCheck = 0                                 // the host reaches it in several cycles

	damaged := make(chan struct{}, 1)
	readDamaged = func() {
		select {
		case damaged <- struct{}{}:
		default:
		}
	}
	type result struct {
		recs []LogRecord
		err  error
	}
	done := make(chan result)
	go func() {
		recs, err := c.ReadLog(&LogCursor{})
		done <- result{recs, err}
	}()
	cycles := 0
	for {
		select {
		case <-damaged:
			h.Cycle()
			cycles++
			continue
		case res := <-done:
			if res.err != nil || len(res.recs) != 6 {
				t.Errorf("read while the host repairs: %d records, %v", len(res.recs), res.err)
			}
		}
		break
	}
	if cycles < 3 {
		t.Errorf("repaired in %d cycles: the damage was not where the check reaches it late", cycles)
	}
}

// Stores of another producer that land in a slot after its own producer
// wrote the text (a producer that stalled in its step 3 past being given
// up on, resuming on the slot's next request) make the text differ from
// the checksum its own producer wrote: the host refuses it as damaged
// rather than run a request nobody sent.
func TestStrayTextIsRefused(t *testing.T) {
	defer func() { stallSubmit = nil }()
	h, c, _ := stallHost(t)
	stalled, release := stallAt(&stallSubmit, 0)
	type result struct {
		seq uint64
		err error
	}
	res := make(chan result)
	go func() {
		seq, err := c.submit(`<element type="pose" name="MEANT" insert_at="ROOT"/>`)
		res <- result{seq, err}
	}()
	<-stalled
	b := c.slot(0)
	text := b[slotHeader : slotHeader+int(*slot32(b, slotTextLen))]
	i := strings.Index(string(text), "MEANT")
	copy(text[i:], "STRAY") // same length: only the checksum can tell
	release()
	if r := <-res; r.err != nil || r.seq != 0 {
		t.Fatalf("producer: request %d, %v", r.seq, r.err)
	}
	h.Cycle()
	_, err := c.outcome(0, time.Now().Add(time.Second), time.Second, noCheck)
	var rerr *RequestError
	if !errors.As(err, &rerr) || !strings.Contains(rerr.Msg, "damaged: the text's CRC-32") {
		t.Errorf("outcome %v, want a refusal as damaged", err)
	}
	for _, name := range []string{"STRAY", "MEANT"} {
		if _, ok := h.Scene.Element(name); ok {
			t.Errorf("element %s exists: a damaged request ran", name)
		}
	}
}
