package ipc

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// Percentiles summarize a latency distribution.
type Percentiles struct {
	P50, P99, Max time.Duration
	N             int
}

// PercentilesOf summarizes latencies (it sorts d).
func PercentilesOf(d []time.Duration) Percentiles {
	if len(d) == 0 {
		return Percentiles{}
	}
	slices.Sort(d)
	at := func(q float64) time.Duration { return d[min(len(d)-1, int(q*float64(len(d))))] }
	return Percentiles{P50: at(0.50), P99: at(0.99), Max: d[len(d)-1], N: len(d)}
}

func (p Percentiles) String() string {
	us := func(d time.Duration) string { return fmt.Sprintf("%.0f us", float64(d)/1e3) }
	return fmt.Sprintf("p50 %s, p99 %s, max %s (%d samples)", us(p.P50), us(p.P99), us(p.Max), p.N)
}

// BenchResult is what BenchIPC measured.
type BenchResult struct {
	Rate           float64 // host cycles per second during the latency runs
	WritesOne      float64 // values written per second by one client
	WritesEight    float64 // by 8 clients together
	WriteLatency   Percentiles
	NextCycle      int // write samples applied by the first cycle that started after the write
	RequestTrip    Percentiles
	CatchUpCmds    int
	CatchUp        time.Duration // a new mirror replaying the log and copying the values
	HostLoad       time.Duration // the host executing the same commands from its scene file
	RegionLocation string
}

// BenchIPC measures the shared-array interface in this process, with every
// client on a mapping of its own: value write rates, write-to-host latency
// and request round trips against a host cycling at rate Hz, and the time a
// new mirror takes to catch up with a 10,000-command change log. d is the
// time given to each write-rate run.
func BenchIPC(rate float64, d time.Duration) (BenchResult, error) {
	res := BenchResult{Rate: rate}
	dir, err := os.MkdirTemp("", "simvis-bench-ipc")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	shmDir := dir
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		shmDir = "/dev/shm" // tmpfs, where regions normally live
	}
	res.RegionLocation = shmDir
	region := filepath.Join(shmDir, fmt.Sprintf("simvis-bench-%d", os.Getpid()))

	small, err := BenchScene(dir)
	if err != nil {
		return res, err
	}
	h, err := NewHost(region, small, HostOptions{Rate: rate, Warnings: io.Discard}) // late cycles show in the latencies
	if err != nil {
		return res, err
	}
	defer h.Close()
	c, err := Open(region)
	if err != nil {
		return res, err
	}
	defer c.Close()

	if res.WritesOne, err = writeRate(region, 1, d); err != nil {
		return res, err
	}
	if res.WritesEight, err = writeRate(region, 8, d); err != nil {
		return res, err
	}

	// Latency runs against the host cycling in real time. The probe element
	// is applied with the time its value was written.
	probe, _ := c.Param("PROBE", "t")
	var seen atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	var late int
	var appliedIn atomic.Uint64 // the number of the cycle that applied the latest sample
	start := time.Now()
	record := func(v float64) {
		now := time.Since(start)
		mu.Lock()
		lat = append(lat, now-time.Duration(v))
		mu.Unlock()
		appliedIn.Store(h.Region.Cycles() + 1) // counted at the cycle's end
		seen.Store(int64(v))
	}
	defer OnProbe(h.Scene, record)()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hostDone := make(chan error, 1)
	go func() { hostDone <- h.Run(ctx, 0, nil) }()
	period := time.Duration(float64(time.Second) / rate)
	rng := rand.New(rand.NewPCG(1, 2))
	samples := min(500, max(50, int(2*time.Second/period)))
	for i := 0; i < samples; i++ {
		t := time.Since(start)
		if err := c.Set(probe, float64(t)); err != nil {
			return res, err
		}
		// Read after the write: cycle done+1 may be under way, cycle
		// done+2 starts after the write, and must have applied it. (Read
		// before the write, a writer preempted between the two on a busy
		// machine would count a host that did its job as late.)
		done := c.Region().Cycles()
		for seen.Load() != int64(t) {
			sleepPrecise(20 * time.Microsecond)
		}
		if appliedIn.Load() > done+2 {
			late++
		}
		SleepUntil(time.Now().Add(time.Duration(rng.Int64N(int64(period)))))
	}
	mu.Lock()
	res.WriteLatency = PercentilesOf(lat)
	res.NextCycle = len(lat) - late
	mu.Unlock()

	var trips []time.Duration
	for i := 0; i < samples; i++ {
		t0 := time.Now()
		if _, err := c.Request(fmt.Sprintf(`<element type="pose" name="Q%d" insert_at="ROOT"/>`, i)); err != nil {
			return res, err
		}
		trips = append(trips, time.Since(t0))
		SleepUntil(time.Now().Add(time.Duration(rng.Int64N(int64(period)))))
	}
	res.RequestTrip = PercentilesOf(trips)
	cancel()
	if err := <-hostDone; err != nil {
		return res, err
	}

	res.CatchUpCmds = 10000
	res.HostLoad, res.CatchUp, err = catchUp(dir, region+"-catchup", res.CatchUpCmds)
	return res, err
}

// writeRate runs n clients, each on its own mapping writing its own value
// slot, for d and returns the values written per second in all.
func writeRate(region string, n int, d time.Duration) (float64, error) {
	var total atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	begin := make(chan struct{})
	for k := 0; k < n; k++ {
		c, err := Open(region)
		if err != nil {
			return 0, err
		}
		defer c.Close()
		i, err := c.Param(fmt.Sprintf("W%d", k), "x")
		if err != nil {
			return 0, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-begin
			end := time.Now().Add(d)
			count := int64(0)
			for v := 0.0; time.Now().Before(end); {
				for j := 0; j < 4096; j++ {
					v++
					if err := c.Set(i, v); err != nil {
						errs <- err
						return
					}
				}
				count += 4096
			}
			total.Add(count)
		}()
	}
	t0 := time.Now()
	close(begin)
	wg.Wait()
	elapsed := time.Since(t0)
	select {
	case err := <-errs:
		return 0, err
	default:
	}
	return float64(total.Load()) / elapsed.Seconds(), nil
}

// catchUp makes a host whose scene file holds cmds commands (half parts,
// half pose elements on them) and times a mirror replaying its log.
func catchUp(dir, region string, cmds int) (load, replay time.Duration, err error) {
	file, err := CatchUpScene(dir, cmds)
	if err != nil {
		return 0, 0, err
	}
	sz := DefaultSizes
	sz.Elements = cmds
	t0 := time.Now()
	h, err := NewHost(region, file, HostOptions{Sizes: sz})
	if err != nil {
		return 0, 0, err
	}
	defer h.Close()
	load = time.Since(t0)
	c, err := Open(region)
	if err != nil {
		return load, 0, err
	}
	defer c.Close()
	t0 = time.Now()
	mirror, err := NewMirror(c, nil, scene.Options{})
	if err != nil {
		return load, 0, err
	}
	replay = time.Since(t0)
	if got := mirror.Applied(); got != uint64(cmds) {
		return load, replay, fmt.Errorf("mirror replayed %d of %d commands", got, cmds)
	}
	return load, replay, nil
}

// The latency probe: an element whose Apply reports the value it gets (the
// time it was written). Registered only when a benchmark runs.
const probeType = "simvis-bench-probe"

var (
	registerProbe sync.Once
	probeApplied  atomic.Pointer[probeHook] // set while a benchmark measures
)

type probeHook struct {
	scene *scene.Scene // only this scene's probe reports (a mirror has one too)
	f     func(v float64)
}

type probe struct{ scene *scene.Scene }

func newProbe(ctx *scene.Context) (scene.Element, error) { return probe{ctx.Scene}, nil }

func (probe) Params() []scene.Param { return []scene.Param{{Name: "t"}} }

func (p probe) Apply(v []float64) error {
	if h := probeApplied.Load(); h != nil && h.scene == p.scene && v[0] != 0 {
		h.f(v[0])
	}
	return nil
}

// BenchScene writes the benchmarks' scene into dir: a probe element PROBE
// (parameter t; see OnProbe) and eight pose elements W0 ... W7 for
// writers. It returns the file's path.
func BenchScene(dir string) (string, error) {
	registerProbe.Do(func() { scene.RegisterElement(probeType, newProbe) })
	var xml strings.Builder
	xml.WriteString("<scene>\n<element type=\"" + probeType + "\" name=\"PROBE\" insert_at=\"ROOT\"/>\n")
	for i := 0; i < 8; i++ {
		fmt.Fprintf(&xml, "<element type=\"pose\" name=\"W%d\" insert_at=\"ROOT\"/>\n", i)
	}
	xml.WriteString("</scene>\n")
	path := filepath.Join(dir, "bench.xml")
	return path, os.WriteFile(path, []byte(xml.String()), 0o644)
}

// OnProbe has f called with every value scene s (a host's) applies to
// PROBE.t, on the goroutine that updates s, until the returned function is
// called.
func OnProbe(s *scene.Scene, f func(v float64)) (stop func()) {
	probeApplied.Store(&probeHook{s, f})
	return func() { probeApplied.Store(nil) }
}

// CatchUpScene writes a scene of cmds commands into dir, half parts (a
// small box model) and half pose elements on them, for catch-up benchmarks.
func CatchUpScene(dir string, cmds int) (string, error) {
	m := models.NewModel("box")
	m.AddNode(nil, "box", mgl64.Ident4(), models.Box("box", 0.2, 0.2, 0.2, [4]float32{0.6, 0.6, 0.6, 1}))
	if err := models.Write(filepath.Join(dir, "box.gltf"), m); err != nil {
		return "", err
	}
	var xml strings.Builder
	xml.WriteString("<scene>\n")
	for i := 0; i < cmds/2; i++ {
		fmt.Fprintf(&xml, "<part file=\"box.gltf\" name=\"B%d\" insert_at=\"ROOT\" pose_offset=\"%d %d 0 0 0 0\"/>\n", i, i%100, i/100)
		fmt.Fprintf(&xml, "<element type=\"pose\" name=\"P%d\" insert_at=\"B%d\" z=\"0.1\"/>\n", i, i)
	}
	xml.WriteString("</scene>\n")
	path := filepath.Join(dir, "catchup.xml")
	return path, os.WriteFile(path, []byte(xml.String()), 0o644)
}

// SleepUntil waits for t with the kernel's precise timers (Go's own sleeps
// round up to about a millisecond on Linux), so that benchmark samples do
// not lock onto the phase of the host's cycles.
func SleepUntil(t time.Time) { waitUntil(context.Background(), t) }

// WriteText prints the result for people, as `simvis bench-ipc` does; rate
// is the host's cycles per second the latency runs used.
func (res BenchResult) WriteText(w io.Writer, rate float64) error {
	period := time.Duration(float64(time.Second) / rate)
	fmt.Fprintf(w, "region in %s, host at %g Hz (cycle %v)\n", res.RegionLocation, rate, period.Round(time.Microsecond))
	fmt.Fprintf(w, "value writes, 1 client:   %6.1f million/s\n", res.WritesOne/1e6)
	fmt.Fprintf(w, "value writes, 8 clients:  %6.1f million/s\n", res.WritesEight/1e6)
	fmt.Fprintf(w, "write to applied:         %v; %d of %d by the first cycle after the write\n",
		res.WriteLatency, res.NextCycle, res.WriteLatency.N)
	fmt.Fprintf(w, "request round trip:       %v; target p99 < %v\n", res.RequestTrip, (period + time.Millisecond).Round(time.Microsecond))
	_, err := fmt.Fprintf(w, "mirror catch-up:          %d commands in %v (the host loading them: %v)\n",
		res.CatchUpCmds, res.CatchUp.Round(time.Millisecond), res.HostLoad.Round(time.Millisecond))
	return err
}
