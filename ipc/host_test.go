package ipc_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/simvis/simvis/internal/testkit"

	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
)

// sceneCopy copies the quickstart scene into a fresh directory, so tests
// can put files and links beside it.
func sceneCopy(t *testing.T) string {
	return filepath.Join(testkit.CopyFiles(t, "../scenes/quickstart", "scene.xml", "robot.gltf", "world.gltf"), "scene.xml")
}

// startHost runs a host on a copy of the quickstart scene, cycling in a
// goroutine every millisecond until the test ends.
func startHost(t *testing.T, opts ipc.HostOptions) (*ipc.Host, string) {
	t.Helper()
	shm := filepath.Join(t.TempDir(), "region")
	if opts.Sizes == (ipc.Sizes{}) {
		opts.Sizes = testSizes
	}
	h, err := ipc.NewHost(shm, sceneCopy(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h, shm
}

// cycleWhile runs host cycles, as the serve loop does, until stop.
func cycleWhile(t *testing.T, h *ipc.Host) (stop func()) {
	return testkit.Loop(t, h.Cycle, 200*time.Microsecond)
}

func open(t *testing.T, shm string) *ipc.Client {
	t.Helper()
	c, err := ipc.Open(shm)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// A client adds an element by request, finds its value index once, moves
// it, and the host's graph follows; the change log holds the scene file's
// commands and the request, in order.
func TestRequestAndSet(t *testing.T) {
	h, shm := startHost(t, ipc.HostOptions{})
	stop := cycleWhile(t, h)
	defer stop()
	c := open(t, shm)
	seq, err := c.Request(`<element type="rotation" name="PAN" insert_at="ROBOT" axis="0 0 1"/>`)
	if err != nil || seq != 5 {
		t.Fatalf("request: change %d, %v; want change 5 (after the file's 4 commands)", seq, err)
	}
	pan, err := c.Param("PAN", "angle")
	if err != nil {
		t.Fatal(err)
	}
	yaw, err := c.Param("R_POSE", "yaw")
	if err != nil || pan != 6 || yaw != 5 {
		t.Fatalf("indices PAN.angle %d, R_POSE.yaw %d (%v); want 6 and 5", pan, yaw, err)
	}
	if err := c.Set(yaw, 90); err != nil {
		t.Fatal(err)
	}
	waitCycles(t, c, 2)
	stop()
	if p := testkit.WorldPose(t, h.Scene, "ROBOT"); math.Abs(p.Yaw-90) > 1e-9 || math.Abs(p.X+2) > 1e-12 {
		t.Errorf("ROBOT at %+v, want x -2 yaw 90", p)
	}
	recs, err := c.Follow(0).Poll()
	if err != nil || len(recs) != 5 {
		t.Fatalf("change log: %d records, %v", len(recs), err)
	}
	if !strings.HasSuffix(recs[0].Source, "scene.xml:4") || !strings.Contains(recs[0].XML, `name="WORLD"`) ||
		!strings.HasPrefix(recs[4].Source, "request 0 from pid ") || !strings.Contains(recs[4].XML, `name="PAN"`) ||
		!filepath.IsAbs(recs[4].Dir) {
		t.Errorf("change log %+v", recs)
	}
	if later, _ := c.Follow(4).Poll(); len(later) != 2 || later[0].Seq != 4 {
		t.Errorf("Follow(4) gave %+v", later)
	}
	if _, err := c.Param("PAN", "tilt"); err == nil || !strings.Contains(err.Error(), `has no parameter "tilt" (has angle)`) {
		t.Errorf("unknown parameter: %v", err)
	}
	if err := c.Set(1000, 1); err == nil {
		t.Error("index beyond the values in use accepted")
	}
	if err := c.Set(yaw, math.NaN()); err == nil {
		t.Error("client accepted NaN")
	}
}

func waitCycles(t *testing.T, c *ipc.Client, n uint64) {
	t.Helper()
	target := c.Region().Cycles() + n
	for deadline := time.Now().Add(5 * time.Second); c.Region().Cycles() < target; {
		if time.Now().After(deadline) {
			t.Fatal("host cycles stalled")
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// Hostile and malformed requests get an error outcome naming the request,
// the scene is unchanged, and the host goes on serving.
func TestBadRequests(t *testing.T) {
	h, shm := startHost(t, ipc.HostOptions{})
	dir := filepath.Dir(h.Scene.Parts()[0].File)
	outside := t.TempDir()
	data, _ := os.ReadFile(filepath.Join(dir, "robot.gltf"))
	os.WriteFile(filepath.Join(outside, "robot.gltf"), data, 0o644)
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	stop := cycleWhile(t, h)
	defer stop()
	c := open(t, shm)
	cases := []struct{ xml, want string }{
		{`<element type="pose" name="A"`, "XML syntax"},
		{`<element type="warp" name="A" insert_at="ROOT"/>`, `unknown element type "warp"`},
		{`<element type="pose" name="R_POSE" insert_at="ROOT"/>`, `"R_POSE" is already`},
		{`<element type="pose" name="A" insert_at="NOWHERE"/>`, `NOWHERE`},
		{`<element type="pose" name="A" insert_at="ROOT"/><element type="pose" name="B" insert_at="ROOT"/>`, "want exactly one command, got 2"},
		{`<part file="` + filepath.Join(outside, "robot.gltf") + `" name="P" insert_at="ROOT"/>`, "absolute path"},
		{`<part file="../robot.gltf" name="P" insert_at="ROOT"/>`, "leaves the scene's directory"},
		{`<part file="link/robot.gltf" name="P" insert_at="ROOT"/>`, "symbolic link leads out"},
		{`<part file="missing.gltf" name="P" insert_at="ROOT"/>`, "missing.gltf"},
	}
	for _, tc := range cases {
		_, err := c.Request(tc.xml)
		var re *ipc.RequestError
		if !errors.As(err, &re) || !strings.Contains(re.Msg, tc.want) || !strings.Contains(re.Msg, "request ") {
			t.Errorf("%s: got %v, want a refusal mentioning %q and the request", tc.xml, err, tc.want)
		}
	}
	big := `<element type="pose" name="BIG" insert_at="ROOT" x="` + strings.Repeat("0", 5000) + `"/>`
	if _, err := c.Request(big); err == nil || !strings.Contains(err.Error(), "larger than a request slot") {
		t.Errorf("oversized request: %v", err)
	}
	if seq, err := c.Request(`<part file="robot.gltf" name="ROBOT2" insert_at="ROOT" pose_offset="3 0 0 0 0 0"/>`); err != nil || seq != 5 {
		t.Errorf("a good request after the bad ones: change %d, %v", seq, err)
	}
	stop()
	if n := len(h.Scene.Parts()); n != 3 {
		t.Errorf("%d parts after the requests, want 3", n)
	}
}

// A full request log is an error for the producer, never a dropped request;
// outcomes nobody reads are freed after KeepOutcomes.
func TestRequestLogFull(t *testing.T) {
	h, shm := startHost(t, ipc.HostOptions{KeepOutcomes: 50 * time.Millisecond})
	c := open(t, shm)
	var seqs []uint64
	for i := 0; i < testSizes.Requests; i++ {
		seq, err := c.Submit(fmt.Sprintf(`<element type="pose" name="E%d" insert_at="ROOT"/>`, i))
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, seq)
	}
	if _, err := c.Submit(`<element type="pose" name="X" insert_at="ROOT"/>`); !errors.Is(err, ipc.ErrRequestLogFull) {
		t.Fatalf("request beyond the capacity: %v", err)
	}
	h.Cycle()
	// Executed, but the outcomes are unread: still full.
	if _, err := c.Submit(`<element type="pose" name="X" insert_at="ROOT"/>`); !errors.Is(err, ipc.ErrRequestLogFull) {
		t.Fatalf("request while outcomes are unread: %v", err)
	}
	if logSeq, err := c.Outcome(seqs[0]); err != nil || logSeq != 5 {
		t.Fatalf("first outcome: %d %v", logSeq, err)
	}
	seq, err := c.Submit(`<element type="pose" name="X" insert_at="ROOT"/>`)
	if err != nil {
		t.Fatalf("request after an outcome was read: %v", err)
	}
	time.Sleep(60 * time.Millisecond)
	h.Cycle() // executes X, frees the seven outcomes nobody read
	c.RequestTimeout = 50 * time.Millisecond
	// Its outcome was freed unread, but the change log says it ran.
	if logSeq, err := c.Outcome(seqs[1]); err != nil || logSeq != 6 {
		t.Errorf("outcome read after it was freed: change %d, %v; want 6 from the change log", logSeq, err)
	}
	if _, err := c.Outcome(seq); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < testSizes.Requests-1; i++ {
		if _, err := c.Submit(fmt.Sprintf(`<element type="pose" name="F%d" insert_at="ROOT"/>`, i)); err != nil {
			t.Fatalf("request %d after the slots were freed: %v", i, err)
		}
	}
	if n := len(h.Scene.Elements()); n != 1+testSizes.Requests+1 {
		t.Errorf("%d elements, want %d", n, 1+testSizes.Requests+1)
	}
}

// A command too big for what is left of the change log is refused before
// it runs: the scene and the log stay equal.
func TestChangeLogFull(t *testing.T) {
	sz := testSizes
	sz.LogBytes = 4096
	sz.Elements = 100
	h, shm := startHost(t, ipc.HostOptions{Sizes: sz})
	stop := cycleWhile(t, h)
	defer stop()
	c := open(t, shm)
	var err error
	n := 0
	for ; err == nil && n < 100; n++ {
		_, err = c.Request(fmt.Sprintf(`<element type="pose" name="E%d" insert_at="ROOT" x="1"/>`, n))
	}
	if !strings.Contains(fmt.Sprint(err), "change log full") {
		t.Fatalf("after %d requests: %v", n, err)
	}
	recs, _ := c.Follow(0).Poll()
	elems, _ := c.Elements()
	if len(recs) != 4+n-1 || len(elems) != 1+n-1 {
		t.Errorf("%d log records and %d elements after %d accepted requests", len(recs), len(elems), n-1)
	}
}

// Values that are not finite or that an element refuses are reset to the
// element's last accepted values and counted; the host goes on.
func TestRejectedValues(t *testing.T) {
	var warnings strings.Builder
	h, shm := startHost(t, ipc.HostOptions{Warnings: &warnings})
	if _, err := h.Scene.Value("R_POSE", "x"); err != nil {
		t.Fatal(err)
	}
	c := open(t, shm)
	if _, err := c.Submit(`<element type="switch" name="SW" insert_at="ROBOT"/>`); err != nil {
		t.Fatal(err)
	}
	h.Cycle()
	v := c.Region().Values() // raw writes, as a C or Python writer would do
	v[0], v[1], v[6] = math.NaN(), math.Inf(1), 2
	v[5] = 45
	if err := h.Cycle(); err != nil {
		t.Fatal(err)
	}
	if v[0] != -2 || v[1] != -1 || v[5] != 20 || v[6] != 1 {
		t.Errorf("values after the cycle %v, want the last accepted -2 -1 ... 20, 1", v[:7])
	}
	if n := c.Region().Rejected(); n != 4 {
		t.Errorf("rejected count %d, want 4 (x, y and yaw of R_POSE, on of SW)", n)
	}
	if !strings.Contains(warnings.String(), `rejected 3 value(s) of element "R_POSE"`) {
		t.Errorf("warnings: %q", warnings.String())
	}
	v[5] = 45
	h.Cycle()
	if p := testkit.WorldPose(t, h.Scene, "ROBOT"); math.Abs(p.Yaw-45) > 1e-9 {
		t.Errorf("a good value after bad ones: yaw %v", p.Yaw)
	}
}

// Child processes for the fault tests: a producer killed while writing a
// request, and a host killed without closing its region.
func TestMain(m *testing.M) {
	switch os.Getenv("SIMVIS_TEST_CHILD") {
	case "stall":
		c, err := ipc.Open(os.Getenv("SIMVIS_TEST_SHM"))
		if err != nil {
			os.Exit(3)
		}
		c.StallWriting(`<element type="pose" name="HALF" insert_at="ROOT"/>`)
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	case "claimall":
		// Claims every request slot, finishes none and exits.
		c, err := ipc.Open(os.Getenv("SIMVIS_TEST_SHM"))
		if err != nil {
			os.Exit(3)
		}
		for i := 0; i < c.Region().SlotCount(); i++ {
			if i%2 == 0 {
				c.ClaimOnly()
			} else {
				c.StallWriting(`<element type="pose" name="HALF" insert_at="ROOT"/>`)
			}
		}
		os.Exit(0)
	case "readyall":
		// Sends a request into every slot and exits without reading any
		// outcome.
		c, err := ipc.Open(os.Getenv("SIMVIS_TEST_SHM"))
		if err != nil {
			os.Exit(3)
		}
		for i := 0; i < c.Region().SlotCount(); i++ {
			if _, err := c.Submit(fmt.Sprintf(`<element type="pose" name="DEAD%d" insert_at="ROOT"/>`, i)); err != nil {
				os.Exit(4)
			}
		}
		os.Exit(0)
	case "host":
		h, err := ipc.NewHost(os.Getenv("SIMVIS_TEST_SHM"), quickstart, ipc.HostOptions{Sizes: testSizes})
		if err != nil {
			os.Exit(3)
		}
		fmt.Println("ready", h.Region.Epoch())
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func child(t *testing.T, kind, shm string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SIMVIS_TEST_CHILD="+kind, "SIMVIS_TEST_SHM="+shm)
	return cmd
}

// A producer killed in the middle of writing a request holds up the log
// only until AbandonAfter: its request fails, the next ones succeed.
func TestProducerKilledMidWrite(t *testing.T) {
	h, shm := startHost(t, ipc.HostOptions{AbandonAfter: 30 * time.Millisecond})
	var outcomes []error
	h.OnRequest(func(_ ipc.LogRecord, err error) { outcomes = append(outcomes, err) })
	if err := child(t, "stall", shm).Run(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("child: %v", err)
	}
	stop := cycleWhile(t, h)
	defer stop()
	c := open(t, shm)
	// (How long it waits is not asserted here: TestForgedSlots checks
	// AbandonAfter on the host's clock.)
	if seq, err := c.Request(`<element type="pose" name="AFTER" insert_at="ROOT"/>`); err != nil || seq != 5 {
		t.Fatalf("request after the killed producer: %d %v", seq, err)
	}
	stop()
	if len(outcomes) != 2 || outcomes[0] == nil || !strings.Contains(outcomes[0].Error(), "abandoned") || outcomes[1] != nil {
		t.Errorf("outcomes %v", outcomes)
	}
	if _, ok := h.Scene.Element("HALF"); ok {
		t.Error("the half-written request was executed")
	}
}

// Clients notice a host restart (the old file is marked replaced; Reopen
// finds the new epoch) and a host killed without a word (its process is
// gone); neither is read as garbage.
func TestHostRestartAndDeath(t *testing.T) {
	shm := filepath.Join(t.TempDir(), "region")
	host, err := ipc.NewHost(shm, quickstart, ipc.HostOptions{Sizes: testSizes})
	if err != nil {
		t.Fatal(err)
	}
	c := open(t, shm)
	yaw, _ := c.Param("R_POSE", "yaw")
	first := c.Epoch()
	host2, err := ipc.NewHost(shm, quickstart, ipc.HostOptions{Sizes: testSizes})
	if err != nil {
		t.Fatal(err)
	}
	host.Close() // must not remove the new host's file
	if err := c.Check(); !errors.Is(err, ipc.ErrHostReplaced) {
		t.Errorf("after a restart Check says %v", err)
	}
	if err := c.Set(yaw, 1); !errors.Is(err, ipc.ErrHostReplaced) {
		t.Errorf("Set on the old region: %v", err)
	}
	if _, err := c.Follow(0).Poll(); !errors.Is(err, ipc.ErrHostReplaced) {
		t.Errorf("Follow on the old region: %v", err)
	}
	if err := c.Reopen(); err != nil || c.Epoch() == first || c.Epoch() != host2.Region.Epoch() || c.Check() != nil {
		t.Fatalf("reopen: %v, epoch %d (first %d)", err, c.Epoch(), first)
	}
	host2.Close()
	if err := c.Check(); !errors.Is(err, ipc.ErrHostStopped) {
		t.Errorf("after the host closed: %v", err)
	}
	if _, err := os.Stat(shm); !os.IsNotExist(err) {
		t.Errorf("a closed host left its file: %v", err)
	}

	cmd := child(t, "host", shm)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if n, _ := out.Read(buf); !strings.HasPrefix(string(buf[:n]), "ready") {
		t.Fatalf("child host said %q", buf[:n])
	}
	if err := c.Reopen(); err != nil || c.Check() != nil {
		t.Fatalf("attach to the child host: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if err := c.Check(); !errors.Is(err, ipc.ErrHostStopped) || !strings.Contains(err.Error(), " is not running (pid ") {
		t.Errorf("after the host was killed: %v", err)
	}
	if _, err := c.Request(`<element type="pose" name="A" insert_at="ROOT"/>`); !errors.Is(err, ipc.ErrHostStopped) {
		t.Errorf("request to a dead host: %v", err)
	}
}

// The benchmark runs end to end and its figures hold together: every write
// applied by the first cycle that started after it, a 10,000-command log
// replayed. (Speed is reported by `simvis bench-ipc`, not asserted here.)
func TestBenchIPC(t *testing.T) {
	if testing.Short() {
		t.Skip("benchmark run")
	}
	res, err := ipc.BenchIPC(1000, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if res.WritesOne <= 0 || res.WritesEight <= 0 || res.WriteLatency.N < 50 || res.NextCycle != res.WriteLatency.N ||
		res.RequestTrip.N < 50 || res.CatchUp <= 0 || res.CatchUpCmds != 10000 {
		t.Errorf("%+v", res)
	}
	t.Logf("%+v", res)
}

// In real time a cycle whose work takes longer than its period is
// reported, at most once a second with a count of the others; --fast
// cycles are never overruns.
func TestOverrunWarnings(t *testing.T) {
	var warnings strings.Builder
	h, _ := startHost(t, ipc.HostOptions{Rate: 500, Warnings: &warnings})
	slow := func(cycle int, _ time.Duration) error {
		if cycle%2 == 1 {
			time.Sleep(3 * time.Millisecond)
		}
		return nil
	}
	if err := h.Run(context.Background(), 10, slow); err != nil {
		t.Fatal(err)
	}
	// Every slow cycle overran; on a loaded machine a preempted fast one
	// may have too, so the count is at least 5, and the one line is about
	// whichever came first.
	w := warnings.String()
	if strings.Count(w, "\n") != 1 || !strings.Contains(w, "simvis serve: cycle ") || !strings.Contains(w, "over its 2ms period") {
		t.Errorf("warnings %q, want one line about an overrun", w)
	}
	if n := h.Overruns(); n < 5 || n > 10 {
		t.Errorf("%d overruns counted, want 5 (or more if fast cycles were preempted)", n)
	}
	warnings.Reset()
	// At 1 Hz, real time would take 4 s between the first and the fifth
	// cycle; --fast does not wait.
	hf, _ := startHost(t, ipc.HostOptions{Rate: 1, Fast: true, Warnings: &warnings})
	start := time.Now()
	var times []time.Duration
	if err := hf.Run(context.Background(), 5, func(_ int, at time.Duration) error { times = append(times, at); return slow(1, at) }); err != nil {
		t.Fatal(err)
	}
	if warnings.Len() != 0 || times[4] != 4*time.Second || time.Since(start) >= 4*time.Second {
		t.Errorf("fast mode: warnings %q, scene times %v, took %v", warnings.String(), times, time.Since(start))
	}
}

// A command whose elements do not fit the descriptor section is refused and
// undone: scene, descriptors and change log keep agreeing.
func TestDescriptorsFull(t *testing.T) {
	sz := testSizes
	sz.Elements = 2
	// The element budget lifted, so that the table itself overflows (with
	// its default the budget follows the table and refuses first).
	h, shm := startHost(t, ipc.HostOptions{Sizes: sz, Limits: scene.Limits{Elements: -1}})
	stop := cycleWhile(t, h)
	defer stop()
	c := open(t, shm)
	if _, err := c.Request(`<element type="pose" name="A" insert_at="ROOT"/>`); err != nil {
		t.Fatal(err)
	}
	_, err := c.Request(`<element type="pose" name="B" insert_at="ROOT"/>`)
	if err == nil || !strings.Contains(err.Error(), "3 elements do not fit the 2 descriptor records") {
		t.Fatalf("third element: %v", err)
	}
	// The name is free again: the refused command was undone.
	if _, err := c.Request(`<part file="robot.gltf" name="B" insert_at="ROOT"/>`); err != nil {
		t.Fatalf("part named like the refused element: %v", err)
	}
	stop()
	recs, _ := c.Follow(0).Poll()
	elems, _ := c.Elements()
	if len(recs) != 6 || len(elems) != 2 || len(h.Scene.Elements()) != 2 {
		t.Errorf("%d log records, %d descriptors, %d scene elements; want 6, 2, 2", len(recs), len(elems), len(h.Scene.Elements()))
	}
}

// A forged request claiming more bytes than a slot holds is refused, not
// read past its slot.
func TestForgedRequestLength(t *testing.T) {
	h, shm := startHost(t, ipc.HostOptions{})
	c := open(t, shm)
	seq := c.SubmitForged(1 << 30)
	h.Cycle()
	_, err := c.Outcome(seq)
	if err == nil || !strings.Contains(err.Error(), "oversized: 1073741824 bytes declared") {
		t.Errorf("forged length: %v", err)
	}
}

// Many producers on their own mappings claim slots concurrently: every
// request is executed exactly once, and each producer's outcome names the
// change-log record of its own command.
func TestConcurrentProducers(t *testing.T) {
	sz := testSizes
	sz.Elements = 256
	h, shm := startHost(t, ipc.HostOptions{Sizes: sz})
	stop := cycleWhile(t, h)
	defer stop()
	const producers, each = 8, 20
	logSeqs := make([][]uint64, producers)
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		c := open(t, shm)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				xml := fmt.Sprintf(`<element type="pose" name="P%d_%d" insert_at="ROOT"/>`, p, i)
				for {
					seq, err := c.Request(xml)
					if errors.Is(err, ipc.ErrRequestLogFull) {
						time.Sleep(time.Millisecond)
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					logSeqs[p] = append(logSeqs[p], seq)
					break
				}
			}
		}()
	}
	wg.Wait()
	stop()
	c := open(t, shm)
	recs, err := c.Follow(0).Poll()
	if err != nil || len(recs) != 4+producers*each {
		t.Fatalf("%d change-log records (%v), want %d", len(recs), err, 4+producers*each)
	}
	for p, seqs := range logSeqs {
		for i, seq := range seqs {
			if want := fmt.Sprintf(`name="P%d_%d"`, p, i); !strings.Contains(recs[seq-1].XML, want) {
				t.Errorf("producer %d request %d: change %d is %s", p, i, seq, recs[seq-1].XML)
			}
		}
	}
}

// The first cycle renders every sensor for the first time (shaders
// compiled, meshes uploaded) and publishes the whole change log: that
// one-time cost is not an overrun, so `serve` does not start with a warning.
func TestFirstCycleIsNoOverrun(t *testing.T) {
	var warnings strings.Builder
	h, _ := startHost(t, ipc.HostOptions{Rate: 10, Warnings: &warnings})
	firstSlow := func(cycle int, _ time.Duration) error {
		if cycle == 0 {
			time.Sleep(250 * time.Millisecond) // 2.5 periods
		}
		return nil
	}
	if err := h.Run(context.Background(), 3, firstSlow); err != nil {
		t.Fatal(err)
	}
	if n := h.Overruns(); n != 0 || warnings.Len() != 0 {
		t.Errorf("%d overruns, warnings %q: want none for a slow first cycle", n, warnings.String())
	}
}
