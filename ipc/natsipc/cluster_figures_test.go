package natsipc_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/ipc/natsipc"
	"github.com/simvis/simvis/scene"
)

// TestClusterFigures prints failover and mirror-lag figures for
// docs/nats.md ("Figures") on three Debian nats-server processes; it runs
// only with SIMVIS_CLUSTER_FIGURES=1 and asserts nothing about durations.
//
// Failover: the host's server, leading the change log, is killed; from
// the kill to (a) the host's next values message at a subscriber on
// another server, (b) the first request sent after the kill succeeding
// (a driver on another server), (c) a mirror on the third server holding
// that request's record. Lag: 5 hosts with 4 mirrors each (spread over
// the servers; SIMVIS_FIGURES_HOSTS and SIMVIS_FIGURES_MIRRORS change
// the counts), a value written at each host every 50 ms on its own
// goroutine, to the mirrors' replicas holding it.
func TestClusterFigures(t *testing.T) {
	if os.Getenv("SIMVIS_CLUSTER_FIGURES") != "1" {
		t.Skip("figures only with SIMVIS_CLUSTER_FIGURES=1")
	}
	load, _ := os.ReadFile("/proc/loadavg")
	t.Logf("machine: %d CPUs, load average %s", runtime.NumCPU(), load)
	cl := startCluster(t, 3)

	// Failover.
	name := uniqueName("fig")
	nc, err := natsipc.ConnectHost(cl.urls(natsipc.RoleHost), name)
	if err != nil {
		t.Fatal(err)
	}
	s := serveConn(t, nc, name, natsipc.Limits{}, &syncBuffer{})
	victim := cl.node(nc.ConnectedUrl())
	b, c3 := (victim+1)%3, (victim+2)%3
	leadOn(t, cl.url(natsipc.RoleHost, b), name, cl.nodes[victim].name)
	driver, err := ipc.Dial(cl.url(natsipc.RoleDriver, b) + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer driver.Close()
	driver.RequestTimeout = 30 * time.Second
	mc, err := ipc.Dial(cl.url(natsipc.RoleViewer, c3) + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer mc.Close()
	m, err := ipc.NewMirror(mc, nil, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	watch, err := nats.Connect(cl.url(natsipc.RoleViewer, b), nats.CustomInboxPrefix(natsipc.ViewerInbox))
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	var mu sync.Mutex
	var killedAt, valuesAt time.Time
	var killCycle uint64
	sub, err := watch.Subscribe("simvis."+name+".values", func(msg *nats.Msg) {
		if len(msg.Data) < 16 {
			return
		}
		cycle := binary.LittleEndian.Uint64(msg.Data[8:])
		mu.Lock()
		if !killedAt.IsZero() && valuesAt.IsZero() && cycle > killCycle {
			valuesAt = time.Now()
		}
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	// The mirror syncs every millisecond, noting when it held each record.
	heldAt := map[uint64]time.Time{}
	stopMirror := make(chan struct{})
	mirrorDone := make(chan struct{})
	go func() {
		defer close(mirrorDone)
		for {
			select {
			case <-stopMirror:
				return
			case <-time.After(time.Millisecond):
			}
			if m.Sync() == nil {
				mu.Lock()
				if _, ok := heldAt[m.Applied()]; !ok {
					heldAt[m.Applied()] = time.Now()
				}
				mu.Unlock()
			}
		}
	}()
	if _, err := driver.Request(`<element type="pose" name="BEFORE" insert_at="ROOT"/>`); err != nil {
		t.Fatal(err)
	}
	// The host paused for the kill's moment: its cycle count read without
	// racing its goroutine; values of later cycles are published after.
	s.pause()
	mu.Lock()
	killCycle = s.host.Region.Cycles()
	killedAt = time.Now()
	mu.Unlock()
	cl.stop(victim, syscall.SIGKILL)
	s.resume()
	var reqAt time.Time
	var seq uint64
	for k := 0; ; k++ {
		seq, err = driver.Request(fmt.Sprintf(`<element type="pose" name="AFTER%d" insert_at="ROOT"/>`, k))
		if err == nil {
			reqAt = time.Now()
			break
		}
		if time.Since(killedAt) > time.Minute {
			t.Fatalf("no request succeeded within a minute of the kill: %v", err)
		}
	}
	var mirrorAt time.Time
	for deadline := time.Now().Add(time.Minute); mirrorAt.IsZero(); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		for applied, at := range heldAt {
			if applied >= seq && (mirrorAt.IsZero() || at.Before(mirrorAt)) {
				mirrorAt = at
			}
		}
		mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatal("the mirror did not hold the first record after the kill within a minute")
		}
	}
	close(stopMirror)
	<-mirrorDone
	mu.Lock()
	t.Logf("FIGURES failover (the host's server, leading the change log, killed): (a) values at a client on another server after %v, (b) first request succeeding after %v, (c) a mirror on another server in sync after %v",
		valuesAt.Sub(killedAt).Round(time.Millisecond), reqAt.Sub(killedAt).Round(time.Millisecond), mirrorAt.Sub(killedAt).Round(time.Millisecond))
	mu.Unlock()
	s.stop()
	cl.start(victim)
	cl.waitReady(victim, 3)

	// Mirror lag: 5 hosts x 4 mirrors, or as many as
	// SIMVIS_FIGURES_HOSTS and SIMVIS_FIGURES_MIRRORS say.
	hosts, mirrors := figuresCount(t, "SIMVIS_FIGURES_HOSTS", 5), figuresCount(t, "SIMVIS_FIGURES_MIRRORS", 4)
	var lags []time.Duration
	var lagMu sync.Mutex
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for h := 0; h < hosts; h++ {
		name := uniqueName(fmt.Sprintf("lag%d-", h))
		nc, err := natsipc.ConnectHost(cl.urls(natsipc.RoleHost), name)
		if err != nil {
			t.Fatal(err)
		}
		s := serveConn(t, nc, name, natsipc.Limits{}, &syncBuffer{})
		// The host writes R_POSE.x = k every 50 ms, on its own goroutine
		// (a cycle hook), noting when.
		var wmu sync.Mutex
		writtenAt := map[float64]time.Time{}
		var last time.Time
		k := 0.0
		s.pause()
		s.host.AddHook(ipc.CycleHook{Before: func() error {
			if time.Since(last) < 50*time.Millisecond {
				return nil
			}
			k++
			last = time.Now()
			if err := s.host.Scene.Set("R_POSE", "x", k); err != nil {
				return err
			}
			wmu.Lock()
			writtenAt[k] = last
			wmu.Unlock()
			return nil
		}})
		s.resume()
		for j := 0; j < mirrors; j++ {
			mc, err := ipc.Dial(cl.url(natsipc.RoleViewer, (h+j)%3) + "/" + name)
			if err != nil {
				t.Fatal(err)
			}
			defer mc.Close()
			m, err := ipc.NewMirror(mc, nil, scene.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			wg.Add(1)
			go func() {
				defer wg.Done()
				seen := 0.0
				for {
					select {
					case <-stop:
						return
					case <-time.After(time.Millisecond):
					}
					if m.Sync() != nil {
						continue
					}
					v, _ := m.Scene().Value("R_POSE", "x")
					if v == seen {
						continue
					}
					now := time.Now()
					wmu.Lock()
					at, ok := writtenAt[v]
					wmu.Unlock()
					if ok {
						seen = v
						lagMu.Lock()
						lags = append(lags, now.Sub(at))
						lagMu.Unlock()
					}
				}
			}()
		}
	}
	time.Sleep(20 * time.Second)
	close(stop)
	wg.Wait()
	load, _ = os.ReadFile("/proc/loadavg")
	t.Logf("FIGURES mirror lag, %d hosts x %d mirrors, a value written at each host every 50 ms for 20 s, to the mirror holding it: %v; load average after: %s",
		hosts, mirrors, ipc.PercentilesOf(lags), load)
}

// figuresCount is the positive integer in environment variable name, or
// def where it is unset.
func figuresCount(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}
