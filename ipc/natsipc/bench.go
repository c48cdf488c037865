package natsipc

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
)

// BenchResult is what Bench measured.
type BenchResult struct {
	Rate         float64 // host cycles per second
	Sent         float64 // value writes per second 8 clients published
	Applied      float64 // value writes per second the host applied
	Dropped      uint64  // writes the host dropped over its limit
	WriteLatency ipc.Percentiles
	MirrorLag    ipc.Percentiles // host applied to a mirror's replica holding it
	CatchUpCmds  int
	CatchUp      time.Duration // a new mirror replaying the change-log stream
}

// Bench measures the NATS transport against the server at serverURL: a
// host of its own publishes a scene there (named bench-PID) and cycles at
// rate Hz while 8 clients write for d, then a probe client measures
// write-to-applied latency while a mirror follows, then a mirror replays a
// 10,000-command change log.
func Bench(serverURL string, rate float64, d time.Duration) (BenchResult, error) {
	return BenchRoles(serverURL, serverURL, rate, d)
}

// BenchRoles is Bench with the host logging in at hostURL and the clients
// and mirrors at clientURL (a driver's credentials), so that the server
// checks their permissions as it does in use.
func BenchRoles(hostURL, clientURL string, rate float64, d time.Duration) (BenchResult, error) {
	res := BenchResult{Rate: rate, CatchUpCmds: 10000}
	dir, err := os.MkdirTemp("", "simvis-bench-nats")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	sceneFile, err := ipc.BenchScene(dir)
	if err != nil {
		return res, err
	}
	name := fmt.Sprintf("bench-%d", os.Getpid())
	h, nc, pub, err := benchHost(hostURL, filepath.Join(dir, "region"), sceneFile, name, ipc.HostOptions{Rate: rate, Warnings: io.Discard})
	if err != nil {
		return res, err
	}
	stop := run(h, nc, pub)
	target := clientURL + "/" + name
	err = res.writeRates(target, pub, d)
	if err == nil {
		err = res.latencies(target, rate, h)
	}
	if stopErr := stop(); err == nil {
		err = stopErr
	}
	if err != nil {
		return res, err
	}
	res.CatchUp, err = catchUp(hostURL, clientURL, dir, name+"-catchup", res.CatchUpCmds)
	return res, err
}

// run cycles the host on a goroutine; stop ends it and closes everything.
func run(h *ipc.Host, nc *nats.Conn, pub *Publisher) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx, 0, nil) }()
	return func() error {
		cancel()
		err := <-done
		pub.Close()
		nc.Close()
		h.Close()
		return err
	}
}

func benchHost(serverURL, region, sceneFile, name string, opts ipc.HostOptions) (*ipc.Host, *nats.Conn, *Publisher, error) {
	if opts.Sizes == (ipc.Sizes{}) {
		opts.Sizes = ipc.DefaultSizes
		opts.Sizes.LogBytes = 16 << 20
	}
	h, err := ipc.NewHost(region, sceneFile, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	nc, err := nats.Connect(serverURL)
	if err != nil {
		h.Close()
		return nil, nil, nil, err
	}
	pub, err := Publish(h, nc, name, Limits{})
	if err != nil {
		nc.Close()
		h.Close()
		return nil, nil, nil, err
	}
	return h, nc, pub, nil
}

// writeRates has 8 clients write their own values for d, then waits until
// the host has taken every write.
func (res *BenchResult) writeRates(target string, pub *Publisher, d time.Duration) error {
	applied0, dropped0 := pub.Stats()
	var sent atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	start := time.Now()
	for k := 0; k < 8; k++ {
		c, err := ipc.Dial(target)
		if err != nil {
			return err
		}
		defer c.Close()
		i, err := c.Param(fmt.Sprintf("W%d", k), "x")
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := int64(0)
			// At least one write each, however late the client starts on
			// a loaded machine: the rates then rest on something sent.
			for v := 1.0; n == 0 || time.Since(start) < d; v++ {
				if err := c.Set(i, v); err != nil {
					errs <- err
					return
				}
				n++
			}
			sent.Add(n)
			errs <- c.Conn().(*Conn).nc.Flush()
		}()
	}
	wg.Wait()
	for k := 0; k < 8; k++ {
		select {
		case err := <-errs:
			if err != nil {
				return err
			}
		default:
		}
	}
	sendTime := time.Since(start)
	// The host has taken every write once it has applied or dropped as many
	// as were sent; writes the server itself lost (a slow consumer) are
	// never counted, so a count that stops growing ends the wait too, but
	// only once it has started: on a loaded machine the host may take its
	// first write late.
	total := uint64(sent.Load())
	last, stable, lastGrowth := uint64(0), 0, time.Now()
	for deadline := time.Now().Add(time.Minute); ; {
		a, dr := pub.Stats()
		taken := a + dr - applied0 - dropped0
		if taken >= total || (taken > 0 && stable >= 20) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the host took %d of %d writes within a minute", taken, total)
		}
		time.Sleep(5 * time.Millisecond)
		if taken == last {
			stable++
		} else {
			last, stable, lastGrowth = taken, 0, time.Now()
		}
	}
	applied, dropped := pub.Stats()
	took := lastGrowth.Sub(start)
	if stable == 0 {
		took = time.Since(start)
	}
	res.Sent = float64(sent.Load()) / sendTime.Seconds()
	res.Applied = float64(applied-applied0) / took.Seconds()
	res.Dropped = dropped - dropped0
	return nil
}

// latencies writes the time into the probe at random moments and times
// how long the host takes to apply it and a mirror to hold it.
func (res *BenchResult) latencies(target string, rate float64, h *ipc.Host) error {
	c, err := ipc.Dial(target)
	if err != nil {
		return err
	}
	defer c.Close()
	probe, err := c.Param("PROBE", "t")
	if err != nil {
		return err
	}
	mc, err := ipc.Dial(target)
	if err != nil {
		return err
	}
	defer mc.Close()
	mirror, err := ipc.NewMirror(mc, nil, scene.Options{})
	if err != nil {
		return err
	}
	start := time.Now()
	var mu sync.Mutex
	appliedAt := map[float64]time.Duration{}
	var lat, lag []time.Duration
	var seen, lags atomic.Int64
	defer ipc.OnProbe(h.Scene, func(v float64) {
		now := time.Since(start)
		mu.Lock()
		appliedAt[v] = now
		lat = append(lat, now-time.Duration(v))
		mu.Unlock()
		seen.Store(int64(v))
	})()
	done := make(chan struct{})
	mirrorDone := make(chan error, 1)
	go func() {
		last := 0.0
		for {
			select {
			case <-done:
				mirrorDone <- nil
				return
			default:
			}
			if err := mirror.Sync(); err != nil {
				mirrorDone <- err
				return
			}
			if v, _ := mirror.Scene().Value("PROBE", "t"); v != last && v != 0 {
				now := time.Since(start)
				mu.Lock()
				// A value the host's callback has not recorded yet is
				// looked at again next time.
				if at, ok := appliedAt[v]; ok {
					lag = append(lag, now-at)
					lags.Add(1)
					last = v
				}
				mu.Unlock()
			}
			time.Sleep(200 * time.Microsecond) // a Go sleep: it leaves the processor to others
		}
	}()
	period := time.Duration(float64(time.Second) / rate)
	rng := rand.New(rand.NewPCG(3, 4))
	samples := min(500, max(50, int(2*time.Second/period)))
	for i := 0; i < samples; i++ {
		t := time.Since(start)
		if err := c.Set(probe, float64(t)); err != nil {
			close(done)
			return err
		}
		// Each probe is applied and then held by the mirror before the
		// next is written, so that every sample yields both figures
		// whatever the machine's load.
		for deadline := time.Now().Add(5 * time.Second); seen.Load() != int64(t) || lags.Load() <= int64(i); {
			if time.Now().After(deadline) {
				close(done)
				return fmt.Errorf("probe %d: the host (applied: %v) or the mirror (samples: %d) did not take it within 5 s", i, seen.Load() == int64(t), lags.Load())
			}
			time.Sleep(50 * time.Microsecond)
		}
		ipc.SleepUntil(time.Now().Add(time.Duration(rng.Int64N(int64(period)))))
	}
	time.Sleep(50 * time.Millisecond) // the mirror's last sample
	close(done)
	if err := <-mirrorDone; err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	res.WriteLatency = ipc.PercentilesOf(lat)
	res.MirrorLag = ipc.PercentilesOf(lag)
	return nil
}

// catchUp times a new mirror replaying a host's cmds-command change log
// from the stream.
func catchUp(hostURL, clientURL, dir, name string, cmds int) (time.Duration, error) {
	sceneFile, err := ipc.CatchUpScene(dir, cmds)
	if err != nil {
		return 0, err
	}
	sz := ipc.DefaultSizes
	sz.Elements, sz.LogBytes = cmds, 16<<20
	h, nc, pub, err := benchHost(hostURL, filepath.Join(dir, "region-catchup"), sceneFile, name, ipc.HostOptions{Sizes: sz, Warnings: io.Discard})
	if err != nil {
		return 0, err
	}
	defer run(h, nc, pub)() // descriptors and snapshots are answered in cycles
	t0 := time.Now()
	c, err := ipc.Dial(clientURL + "/" + name)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	m, err := ipc.NewMirror(c, nil, scene.Options{})
	took := time.Since(t0)
	if err != nil {
		return took, err
	}
	if m.Applied() != uint64(cmds) {
		return took, fmt.Errorf("mirror replayed %d of %d commands", m.Applied(), cmds)
	}
	return took, nil
}

// BenchServer is BenchRoles through the server at connect, or, with
// "embedded", through one started on loopback for the run, whose host and
// clients log in with their own roles (the server checks every message's
// permissions, as in use). It prints the result on w as `simvis bench-ipc
// --connect` does.
func BenchServer(w io.Writer, connect string, rate float64, d time.Duration) error {
	serverURL, clientURL := connect, connect
	if connect == "embedded" {
		srv, err := StartServer(ServerOptions{Listen: "127.0.0.1:0"})
		if err != nil {
			return err
		}
		defer srv.Close()
		serverURL, clientURL = srv.URL(), srv.URLFor(RoleDriver)
	}
	res, err := BenchRoles(serverURL, clientURL, rate, d)
	if err != nil {
		return err
	}
	u, err := url.Parse(serverURL)
	if err == nil {
		u.User = nil
	}
	period := time.Duration(float64(time.Second) / rate)
	fmt.Fprintf(w, "NATS at %s, host at %g Hz (cycle %v)\n", u, rate, period.Round(time.Microsecond))
	fmt.Fprintf(w, "value writes, 8 clients:  %.0f/s sent, %.0f/s applied, %d dropped\n", res.Sent, res.Applied, res.Dropped)
	fmt.Fprintf(w, "write to applied:         %v\n", res.WriteLatency)
	fmt.Fprintf(w, "mirror lag:               %v (host applied to replica)\n", res.MirrorLag)
	_, err = fmt.Fprintf(w, "change-log replay:        %d commands in %v\n", res.CatchUpCmds, res.CatchUp.Round(time.Millisecond))
	return err
}
