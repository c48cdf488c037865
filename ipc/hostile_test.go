package ipc_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
)

// The hostile suite: a test attacker with its own mapping of a live host's
// region writes where only the host may. After each attack the host keeps
// cycling, honest clients keep working and get right answers, and a mirror
// built afterwards equals the host's scene.

// liveHost is a host cycling on a goroutine, counting its cycles where the
// test (not the region, which an attacker may scribble) can read them.
type liveHost struct {
	h      *ipc.Host
	shm    string
	cycles atomic.Int64
	stop   func()
}

func startLive(t *testing.T, opts ipc.HostOptions) *liveHost {
	t.Helper()
	if opts.Warnings == nil {
		opts.Warnings = io.Discard
	}
	h, shm := startHost(t, opts)
	l := &liveHost{h: h, shm: shm}
	l.stop = testkit.Loop(t, func() error {
		err := h.Cycle()
		l.cycles.Add(1)
		return err
	}, 200*time.Microsecond)
	t.Cleanup(l.stop)
	return l
}

// waitCycles waits until the host completed n more cycles (it re-asserts
// what it owns at the start of each).
func (l *liveHost) waitCycles(t *testing.T, n int64) {
	t.Helper()
	target := l.cycles.Load() + n
	for deadline := time.Now().Add(10 * time.Second); l.cycles.Load() < target; {
		if time.Now().After(deadline) {
			t.Fatalf("the host stopped cycling (%d cycles)", l.cycles.Load())
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// attacker maps the region a second time, as another process would.
func attacker(t *testing.T, shm string) *ipc.Region {
	t.Helper()
	r, err := ipc.Attach(shm)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// honestWorks sets R_POSE.x through c and adds element name by request:
// both must work and come back right.
func honestWorks(t *testing.T, l *liveHost, c *ipc.Client, name string, x float64, wantSeq uint64) {
	t.Helper()
	xi, err := c.Param("R_POSE", "x")
	if err != nil {
		t.Fatalf("honest lookup: %v", err)
	}
	if err := c.Set(xi, x); err != nil {
		t.Fatalf("honest set: %v", err)
	}
	seq, err := c.Request(fmt.Sprintf(`<element type="pose" name="%s" insert_at="ROOT" x="%g"/>`, name, x))
	if err != nil || seq != wantSeq {
		t.Fatalf("honest request: change %d, %v; want change %d", seq, err, wantSeq)
	}
	l.waitCycles(t, 2)
	if v, err := c.Get(xi); err != nil || v != x {
		t.Fatalf("honest get: %v %v, want %v", v, err, x)
	}
	d, err := c.Element(name)
	if err != nil || d.Type != "pose" || len(d.Params) != 6 {
		t.Fatalf("the requested element: %+v %v", d, err)
	}
	if v, err := c.Get(d.Start); err != nil || v != x {
		t.Fatalf("%s.x %v %v, want %v", name, v, err, x)
	}
}

// mirrorMatches builds a mirror with a new client of the stopped host and
// compares it with the host's scene, record by record and value by value.
func mirrorMatches(t *testing.T, h *ipc.Host, shm string) {
	t.Helper()
	c := open(t, shm)
	recs, err := c.Follow(0).Poll()
	if err != nil {
		t.Fatalf("change log: %v", err)
	}
	log := h.Scene.Log()
	if len(recs) != len(log) {
		t.Fatalf("change log holds %d records, the host executed %d commands", len(recs), len(log))
	}
	for i, rec := range recs {
		if rec.Seq != uint64(i+1) || rec.XML != log[i].String() {
			t.Errorf("record %d: %d %s, want %s", i, rec.Seq, rec.XML, log[i].String())
		}
	}
	m, err := ipc.NewMirror(c, nil, scene.Options{})
	if err != nil {
		t.Fatalf("mirror: %v", err)
	}
	defer m.Close()
	if m.Applied() != uint64(len(log)) || len(m.Scene().Elements()) != len(h.Scene.Elements()) {
		t.Errorf("mirror replayed %d records, has %d elements; host %d, %d", m.Applied(), len(m.Scene().Elements()), len(log), len(h.Scene.Elements()))
	}
	sameScene(t, h.Scene, m.Scene())
}

// Every header field scribbled once, and request_claim rewound or pushed
// beyond the slots: the host repairs it, keeps cycling, the client that was
// attached before and a new one both work, and a mirror equals the host.
func TestHostileHeader(t *testing.T) {
	type poke struct {
		name string
		off  int
		size int
		val  func(old uint64) uint64
	}
	v := func(x uint64) func(uint64) uint64 { return func(uint64) uint64 { return x } }
	pokes := []poke{
		{"magic", 0, 8, v(0)},
		{"version", ipc.OffVersion, 4, v(99)},
		{"epoch", ipc.OffEpoch, 8, v(0)},
		{"host_pid dead", ipc.OffPID, 4, v(1<<22 - 1)},
		{"state stopped", ipc.OffState, 4, v(2)},
		{"state replaced", ipc.OffState, 4, v(3)},
		{"desc_offset", ipc.OffDescOff, 8, v(1 << 62)},
		{"desc_capacity", ipc.OffDescCap, 4, v(0xffffffff)},
		{"desc_size", ipc.OffDescSize, 4, v(0)},
		{"names_offset", ipc.OffNamesOff, 8, v(1<<40 + 4096)},
		{"names_capacity", ipc.OffNamesCap, 4, v(0)},
		{"values_offset", ipc.OffValuesOff, 8, v(4096)},
		{"values_capacity", ipc.OffValuesCap, 4, v(0xffffffff)},
		{"requests_offset", ipc.OffReqOff, 8, v(1 << 50)},
		{"request_slots 0", ipc.OffReqSlots, 4, v(0)},
		{"request_slots huge", ipc.OffReqSlots, 4, v(0xffffffff)},
		{"request_slot_size 0", ipc.OffReqSize, 4, v(0)},
		{"request_slot_size huge", ipc.OffReqSize, 4, v(0xfffffff8)},
		{"log_offset", ipc.OffLogOff, 8, v(1 << 45)},
		{"log_capacity", ipc.OffLogCap, 8, v(1 << 60)},
		{"log_used rewound", ipc.OffLogUsed, 8, v(0)},
		{"log_used huge", ipc.OffLogUsed, 8, v(1 << 60)},
		{"log_used unaligned", ipc.OffLogUsed, 8, func(o uint64) uint64 { return o - 3 }},
		{"log_count rewound", ipc.OffLogCount, 8, v(0)},
		{"log_count huge", ipc.OffLogCount, 8, v(1 << 60)},
		{"desc_seq odd", ipc.OffDescSeq, 4, func(o uint64) uint64 { return o + 1 }},
		{"desc_count huge", ipc.OffDescCount, 4, v(0xffffffff)},
		{"desc_count rewound", ipc.OffDescCount, 4, v(0)},
		{"values_used huge", ipc.OffValuesUsed, 4, v(0xffffffff)},
		{"names_used", ipc.OffNamesUsed, 4, v(0xffffffff)},
		{"rejected", ipc.OffRejected, 8, v(1 << 63)},
		{"request_done huge", ipc.OffReqDone, 8, v(1 << 63)},
		{"request_done rewound", ipc.OffReqDone, 8, v(0)},
		{"request_claim rewound", ipc.OffReqClaim, 8, v(0)},
		{"request_claim huge", ipc.OffReqClaim, 8, v(1<<64 - 5)},
		{"cycles", ipc.OffCycle, 8, v(1<<64 - 1)},
		{"period", ipc.OffPeriod, 8, v(0)},
	}
	for i, p := range pokes {
		t.Run(p.name, func(t *testing.T) {
			l := startLive(t, ipc.HostOptions{})
			before := open(t, l.shm)
			honestWorks(t, l, before, "BEFORE", 0.5, 5)
			a := attacker(t, l.shm)
			if p.size == 8 {
				a.Poke64(p.off, p.val(a.Peek64(p.off)))
			} else {
				a.Poke32(p.off, uint32(p.val(uint64(a.Peek32(p.off)))))
			}
			l.waitCycles(t, 3)
			honestWorks(t, l, before, "AFTER", 1.5+float64(i), 6)
			after := open(t, l.shm)
			honestWorks(t, l, after, "NEW_CLIENT", 2.5, 7)
			l.stop()
			if f := l.h.HostOwnedFieldsIntact(); f != "" {
				t.Errorf("after the host's cycles the header still differs: %s", f)
			}
			if l.h.Repairs() == 0 {
				t.Error("no repair counted")
			}
			mirrorMatches(t, l.h, l.shm)
		})
	}
}

// A client that meets damage the host has not repaired yet says so, naming
// what it found, instead of returning less; once the host cycled, it works.
func TestDamageReportedThenRepaired(t *testing.T) {
	defer ipc.SetReadPatience(50 * time.Millisecond)()
	var warnings strings.Builder
	h, shm := startHost(t, ipc.HostOptions{Warnings: &warnings})
	c := open(t, shm)
	a := attacker(t, shm)

	seq := a.Peek32(ipc.OffDescSeq)
	a.Poke32(ipc.OffDescSeq, seq+1)
	if _, err := c.Elements(); err == nil || !strings.Contains(err.Error(), "damaged region") || !strings.Contains(err.Error(), "desc_seq") {
		t.Errorf("descriptors locked for good: %v", err)
	}
	a.Poke32(ipc.OffDescCount, 1000)
	a.Poke32(ipc.OffDescSeq, seq)
	if _, err := c.Elements(); err == nil || !strings.Contains(err.Error(), "desc_count 1000") {
		t.Errorf("descriptor count out of range: %v", err)
	}
	h.Cycle()
	if ds, err := c.Elements(); err != nil || len(ds) != 1 || ds[0].Name != "R_POSE" {
		t.Errorf("after the host's cycle: %+v %v", ds, err)
	}

	// Rewound log counters: a new mirror must not start from a shorter log.
	used := a.Peek64(ipc.OffLogUsed)
	a.Poke64(ipc.OffLogUsed, 0)
	a.Poke64(ipc.OffLogCount, 0)
	if _, err := ipc.NewMirror(c, nil, scene.Options{}); err == nil || !strings.Contains(err.Error(), "damaged change log") ||
		!strings.Contains(err.Error(), "record 1 lies past log_used 0") {
		t.Errorf("mirror on a rewound log: %v", err)
	}
	// Rewound to a record boundary, both counters agreeing.
	h.Cycle()
	if a.Peek64(ipc.OffLogUsed) != used {
		t.Fatalf("log_used %d after the host's cycle, want %d", a.Peek64(ipc.OffLogUsed), used)
	}
	recs, err := c.Follow(0).Poll()
	if err != nil || len(recs) != 4 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	filesLen := 0 // the record's file list (LAYOUT.md) follows its text
	if len(recs[0].Files) > 0 {
		b, _ := json.Marshal(recs[0].Files)
		filesLen = len(b)
	}
	first := uint64(24+len(recs[0].Source)+len(recs[0].Dir)+len(recs[0].XML)+filesLen+7) &^ 7
	a.Poke64(ipc.OffLogUsed, first)
	a.Poke64(ipc.OffLogCount, 1)
	if _, err := ipc.NewMirror(c, nil, scene.Options{}); err == nil || !strings.Contains(err.Error(), "record 2 lies past log_used") {
		t.Errorf("mirror on a log rewound to its first record: %v", err)
	}
	h.Cycle()
	m, err := ipc.NewMirror(c, nil, scene.Options{})
	if err != nil || m.Applied() != 4 {
		t.Fatalf("mirror after the repair: %v", err)
	}
	if h.Repairs() == 0 || !strings.Contains(warnings.String(), "repaired the region") {
		t.Errorf("repairs %d, warnings %q", h.Repairs(), warnings.String())
	}
}

// A producer that claimed every slot (half of them left unclaimed-looking,
// half half-written) and exited blocks the log only until AbandonAfter:
// the host gives up on all of them in the same cycle, not one per
// AbandonAfter, and an honest request then runs.
func TestClaimAllAndDie(t *testing.T) {
	h, shm := startHost(t, ipc.HostOptions{AbandonAfter: 100 * time.Millisecond, KeepOutcomes: time.Hour, Warnings: io.Discard})
	if out, err := child(t, "claimall", shm).CombinedOutput(); err != nil {
		t.Fatalf("child: %v %s", err, out)
	}
	var cycles atomic.Int64
	var mu sync.Mutex
	abandonedIn := map[int64]int{} // cycle -> requests abandoned in it
	h.OnRequest(func(_ ipc.LogRecord, err error) {
		if err != nil && strings.Contains(err.Error(), "abandoned") {
			mu.Lock()
			abandonedIn[cycles.Load()]++
			mu.Unlock()
		}
	})
	stop := testkit.Loop(t, func() error { err := h.Cycle(); cycles.Add(1); return err }, 200*time.Microsecond)
	defer stop()
	c := open(t, shm)
	c.RequestTimeout = 20 * time.Second
	var seq uint64
	var err error
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
		seq, err = c.Request(`<element type="pose" name="AFTER" insert_at="ROOT"/>`)
		if !errors.Is(err, ipc.ErrRequestLogFull) || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || seq != 5 {
		t.Fatalf("request after the dead claimer: change %d, %v", seq, err)
	}
	stop()
	mu.Lock()
	defer mu.Unlock()
	if len(abandonedIn) != 1 {
		t.Errorf("abandoned requests per cycle: %v; want all %d in one cycle", abandonedIn, testSizes.Requests)
	}
	for _, n := range abandonedIn {
		if n != testSizes.Requests {
			t.Errorf("%d requests abandoned, want %d", n, testSizes.Requests)
		}
	}
	if _, ok := h.Scene.Element("HALF"); ok {
		t.Error("a half-written request ran")
	}
	mirrorMatches(t, h, shm)
}

// A producer that filled every slot with requests and exited without
// reading the outcomes holds the slots only until AbandonAfter (its
// process is gone), not KeepOutcomes.
func TestReadyAllAndDie(t *testing.T) {
	h, shm := startHost(t, ipc.HostOptions{AbandonAfter: 100 * time.Millisecond, KeepOutcomes: time.Hour, Warnings: io.Discard})
	if out, err := child(t, "readyall", shm).CombinedOutput(); err != nil {
		t.Fatalf("child: %v %s", err, out)
	}
	l := &liveHost{h: h, shm: shm}
	l.stop = testkit.Loop(t, func() error { err := h.Cycle(); l.cycles.Add(1); return err }, 200*time.Microsecond)
	defer l.stop()
	c := open(t, shm)
	var seq uint64
	var err error
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
		seq, err = c.Request(`<element type="pose" name="AFTER" insert_at="ROOT"/>`)
		if !errors.Is(err, ipc.ErrRequestLogFull) || time.Now().After(deadline) {
			break
		}
	}
	if want := uint64(4 + testSizes.Requests + 1); err != nil || seq != want {
		t.Fatalf("request after the dead producer: change %d, %v; want %d", seq, err, want)
	}
	l.stop()
	mirrorMatches(t, h, shm)
}

// A requester that times out before the host took its request cancels it:
// the host never executes it, and says so; the requester's error says so.
func TestTimeoutCancels(t *testing.T) {
	h, shm := startHost(t, ipc.HostOptions{Warnings: io.Discard})
	var outcomes []error
	h.OnRequest(func(_ ipc.LogRecord, err error) { outcomes = append(outcomes, err) })
	c := open(t, shm)
	c.RequestTimeout = 20 * time.Millisecond
	_, err := c.Request(`<element type="pose" name="LATE" insert_at="ROOT"/>`)
	if !errors.Is(err, ipc.ErrRequestCancelled) || !strings.Contains(err.Error(), "never executed") {
		t.Fatalf("timed-out request: %v", err)
	}
	for i := 0; i < 3; i++ {
		if err := h.Cycle(); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := h.Scene.Element("LATE"); ok || len(h.Scene.Log()) != 4 {
		t.Errorf("the cancelled request ran (%d commands logged)", len(h.Scene.Log()))
	}
	if len(outcomes) != 1 || !errors.Is(outcomes[0], ipc.ErrRequestCancelled) {
		t.Errorf("host outcomes %v", outcomes)
	}
	seq, err := c.Submit(`<element type="pose" name="NEXT" insert_at="ROOT"/>`)
	if err != nil {
		t.Fatal(err)
	}
	h.Cycle()
	if logSeq, err := c.Outcome(seq); err != nil || logSeq != 5 {
		t.Errorf("the next request: change %d, %v", logSeq, err)
	}
}

// A requester whose timeout passes while the host executes its request
// waits for the real outcome rather than guessing. The request is one the
// host refuses: a refusal leaves no change-log record, so only the outcome
// itself can tell the requester (a requester that looked in the log at its
// deadline would wrongly report it not executed).
func TestTimeoutWhileExecuting(t *testing.T) {
	h, shm := startHost(t, ipc.HostOptions{Warnings: io.Discard})
	h.OnRequest(func(_ ipc.LogRecord, err error) {
		// Not for the host's report of a cancelled try: a host slowed down
		// on those cancels every try after them, and the loop never ends.
		if err != nil && !errors.Is(err, ipc.ErrRequestCancelled) {
			time.Sleep(100 * time.Millisecond) // inside the execution, before the outcome
		}
	})
	stop := cycleWhile(t, h)
	defer stop()
	c := open(t, shm)
	c.RequestTimeout = 10 * time.Millisecond
	for {
		_, err := c.Request(`<element type="pose" name="SLOW" insert_at="NOWHERE"/>`)
		if errors.Is(err, ipc.ErrRequestCancelled) || errors.Is(err, ipc.ErrRequestLogFull) {
			// The host had not taken it yet (a loaded machine), or the
			// cancelled ones still hold slots: again.
			time.Sleep(time.Millisecond)
			continue
		}
		var refused *ipc.RequestError
		if !errors.As(err, &refused) || !strings.Contains(refused.Msg, "NOWHERE") {
			t.Fatalf("request the host was executing at the timeout: %v; want its refusal", err)
		}
		break
	}
}

// Forged slot states and fields, at the head of the log and in idle slots:
// the host refuses or frees them within AbandonAfter, keeps count, and an
// honest request then runs.
func TestForgedSlots(t *testing.T) {
	h, shm := startHost(t, ipc.HostOptions{Warnings: io.Discard})
	now := time.Unix(1000, 0)
	h.SetClock(func() time.Time { return now })
	c := open(t, shm)
	a := attacker(t, shm)
	n := a.SlotCount()
	put32 := func(b []byte, at int, v uint32) {
		b[at], b[at+1], b[at+2], b[at+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	states := []uint32{ipc.SlotExecuting, ipc.SlotReady, ipc.SlotOK, ipc.SlotFailed, ipc.SlotCancelled, ipc.SlotWriting, 0xdeadbeef, 7}
	for i := 0; i < n; i++ {
		b := a.Slot(uint64(i))
		put32(b, 0, states[i%len(states)])
		put32(b, 16, 0xffffffff) // text_len
		put32(b, 20, 0xffffffff) // outcome_len
		b[8] = byte(i + 77)      // seq: not the slot's
	}
	a.Poke64(ipc.OffReqClaim, 1) // request 0 pending, its slot "executing"
	for _, step := range []time.Duration{0, 500 * time.Millisecond, 600 * time.Millisecond, 500 * time.Millisecond} {
		now = now.Add(step)
		if err := h.Cycle(); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		if st := a.Slot(uint64(i))[0]; st != ipc.SlotFree {
			t.Errorf("slot %d in state %d after AbandonAfter", i, st)
		}
	}
	if a.Peek64(ipc.OffReqDone) != 1 || h.Repairs() < uint64(n-1) {
		t.Errorf("request_done %d, %d repairs", a.Peek64(ipc.OffReqDone), h.Repairs())
	}
	// A ready request whose seq field is not its own is refused, naming it.
	seq, _ := c.Submit(`<element type="pose" name="X" insert_at="ROOT"/>`)
	a.Slot(seq)[8] = 99
	h.Cycle()
	if _, err := c.Outcome(seq); err == nil || !strings.Contains(err.Error(), "slot holds sequence 99, expected 1 (damaged request)") ||
		!strings.Contains(err.Error(), "request 1 from pid ") {
		t.Errorf("forged seq: %v", err)
	}
	seq, _ = c.Submit(`<element type="pose" name="GOOD" insert_at="ROOT"/>`)
	h.Cycle()
	if logSeq, err := c.Outcome(seq); err != nil || logSeq != 5 {
		t.Errorf("honest request after the forgeries: change %d, %v", logSeq, err)
	}
	mirrorMatches(t, h, shm)
}

// Every client operation on a host that was killed fails, naming it, and
// Open of its leftover region does too.
func TestHostGone(t *testing.T) {
	shm := filepath.Join(t.TempDir(), "region")
	cmd := child(t, "host", shm)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if n, _ := out.Read(buf); !strings.HasPrefix(string(buf[:n]), "ready") {
		t.Fatalf("child host said %q", buf[:n])
	}
	c := open(t, shm)
	yaw, err := c.Param("R_POSE", "yaw")
	if err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	cmd.Process.Kill()
	cmd.Wait()
	want := fmt.Sprintf("host %s is not running (pid %d gone)", shm, pid)
	// Set and Get look for the process every 10 ms: the first one after
	// that fails, and every one after it.
	errSet := c.Set(yaw, 1)
	for deadline := time.Now().Add(10 * time.Second); errSet == nil && time.Now().Before(deadline); errSet = c.Set(yaw, 1) {
		time.Sleep(time.Millisecond)
	}
	_, errGet := c.Get(yaw)
	_, errElems := c.Elements()
	_, errLog := c.Follow(0).Poll()
	_, errReq := c.Request(`<element type="pose" name="A" insert_at="ROOT"/>`)
	_, errOpen := ipc.Open(shm)
	for name, err := range map[string]error{"Set": errSet, "Get": errGet, "Elements": errElems,
		"ReadLog": errLog, "Request": errReq, "Open": errOpen} {
		if !errors.Is(err, ipc.ErrHostStopped) || err.Error() != want {
			t.Errorf("%s: %v; want %q", name, err, want)
		}
	}
}

// The hint about 'simvis serve' is for a missing region only.
func TestOpenHint(t *testing.T) {
	dir := t.TempDir()
	_, err := ipc.Open(filepath.Join(dir, "none"))
	if err == nil || !strings.Contains(err.Error(), "is 'simvis serve' running with --shm") {
		t.Errorf("missing region: %v", err)
	}
	other := filepath.Join(dir, "other")
	os.WriteFile(other, make([]byte, 8192), 0o600)
	if _, err := ipc.Open(other); err == nil || strings.Contains(err.Error(), "simvis serve") || !strings.Contains(err.Error(), "not a simvis region") {
		t.Errorf("foreign file: %v", err)
	}
}

// A symbolic link planted where the host creates its files is never
// followed: the file it points to stays untouched, and clients refuse it.
func TestPlantedSymlink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	content := []byte("precious, not a region\n")
	if err := os.WriteFile(victim, content, 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "simvis-X")
	// The old temporary name, and the region's own name.
	os.Symlink(victim, fmt.Sprintf("%s.new-%d", path, os.Getpid()))
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	if _, err := ipc.Attach(path); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("attach through a link: %v", err)
	}
	r, err := ipc.Create(path, testSizes)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if data, _ := os.ReadFile(victim); string(data) != string(content) {
		t.Errorf("the link's target was written: %q", data)
	}
	if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
		t.Errorf("region file %v %v: want a regular file, mode 0600", st.Mode(), err)
	}
	if c, err := ipc.Attach(path); err != nil {
		t.Errorf("attach to the new region: %v", err)
	} else {
		c.Close()
	}
}

// A region file another user planted is neither opened by clients nor
// written by a new host (which replaces the name with its own file).
func TestForeignOwner(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give a file to another user")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "simvis-F")
	other, err := ipc.Create(path, testSizes)
	if err != nil {
		t.Fatal(err)
	}
	other.Close()
	keep := filepath.Join(dir, "keep")
	if err := os.Link(path, keep); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(keep)
	if _, err := ipc.Attach(path); err == nil || !strings.Contains(err.Error(), "belongs to user 65534") {
		t.Errorf("attach to another user's file: %v", err)
	}
	if _, err := ipc.Open(path); err == nil || !strings.Contains(err.Error(), "belongs to user 65534") {
		t.Errorf("open another user's file: %v", err)
	}
	r, err := ipc.Create(path, testSizes)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if after, _ := os.ReadFile(keep); string(after) != string(before) {
		t.Error("the new host wrote into another user's file")
	}
}

// Scribbled change-log records and descriptor records: a reader that can
// tell (a length that does not parse, names outside the blob) reports it;
// one that cannot (a changed byte of text) is covered by the host, which
// restores both from its private copies.
func TestScribbledRecords(t *testing.T) {
	defer ipc.SetReadPatience(50 * time.Millisecond)()
	h, shm := startHost(t, ipc.HostOptions{Warnings: io.Discard})
	c := open(t, shm)
	a := attacker(t, shm)
	want, err := c.Follow(0).Poll()
	if err != nil {
		t.Fatal(err)
	}
	log := a.LogSection()
	log[0] = 0xff // record 1's length
	if _, err := c.Follow(0).Poll(); err == nil || !strings.Contains(err.Error(), "damaged change log") ||
		!strings.Contains(err.Error(), "record at 0 does not parse") {
		t.Errorf("scribbled record length: %v", err)
	}
	h.Cycle()
	i := strings.Index(string(log), `name="WORLD"`)
	log[i+6] = 'X' // WORLD -> XORLD: only the host can tell
	desc := a.DescSection()
	desc[203] = 0xff // names_off of R_POSE, far outside the blob
	if _, err := c.Elements(); err == nil || !strings.Contains(err.Error(), "outside the 4096-byte blob") {
		t.Errorf("scribbled descriptor: %v", err)
	}
	h.Cycle()
	got, err := c.Follow(0).Poll()
	if err != nil || len(got) != len(want) || got[0].XML != want[0].XML {
		t.Errorf("after the host's cycle: %v, first record %q", err, got[0].XML)
	}
	if ds, err := c.Elements(); err != nil || len(ds) != 1 || ds[0].Params[5] != "yaw" {
		t.Errorf("descriptors after the host's cycle: %+v %v", ds, err)
	}
	if h.Repairs() < 3 {
		t.Errorf("%d repairs counted, want 3", h.Repairs())
	}
	mirrorMatches(t, h, shm)
}
