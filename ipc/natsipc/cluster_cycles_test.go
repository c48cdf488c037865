package natsipc_test

import (
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/ipc/natsipc"
)

// The host's cycle does not wait for JetStream while the change log's
// stream has no leader: its server, leading the stream, is killed (the
// two left elect a new leader, which takes seconds), then its next server
// too (one of three left: no quorum). After each kill the host moves on
// and looks at its stream; that look, unanswered until its timeout while
// there is no leader, runs off the host's goroutine. The host, set to
// cycle every 2 ms, completes at least 20 cycles in every second after
// each kill (a host whose cycles waited on the look, up to 300 ms each,
// and the stores that follow managed 2 to 4), and no cycle takes a
// second.
func TestClusterHostCyclesWithoutLeader(t *testing.T) {
	cl := startCluster(t, 3)
	name := uniqueName("cyc")
	var warnings syncBuffer
	nc, err := natsipc.ConnectHost(cl.urls(natsipc.RoleHost), name)
	if err != nil {
		t.Fatal(err)
	}
	s := serveConn(t, nc, name, natsipc.Limits{}, &warnings)
	if s.pub.Replicas() != 3 {
		t.Fatalf("change log: %d replicas, want 3", s.pub.Replicas())
	}
	var mu sync.Mutex
	var at []time.Time // when each cycle ended
	s.pause()
	s.host.AddHook(ipc.CycleHook{After: func() error {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
		return nil
	}})
	s.resume()
	// A request every 100 ms, so that records wait to be stored
	// throughout (the driver moves to a server left, as the host does).
	hostOn := cl.node(nc.ConnectedUrl())
	if hostOn < 0 {
		t.Fatalf("the host is connected to %s, none of the cluster's servers", nc.ConnectedUrl())
	}
	last := (hostOn + 2) % 3
	leadOn(t, cl.url(natsipc.RoleHost, last), name, cl.nodes[hostOn].name)
	c, err := ipc.Dial(cl.url(natsipc.RoleDriver, last) + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.RequestTimeout = 2 * time.Second
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			c.Request(`<element type="pose" name="P" insert_at="ROOT"/>`) // its outcome does not matter here
		}
	}()
	defer func() { close(stop); <-done }()

	// watch counts the cycles in each second of the 5 s after a kill.
	watch := func(what string, killed time.Time) {
		t.Helper()
		time.Sleep(time.Until(killed.Add(5 * time.Second)))
		mu.Lock()
		defer mu.Unlock()
		var perSecond [5]int
		var maxGap time.Duration
		prev := killed
		for _, x := range at {
			if x.Before(killed) {
				continue
			}
			if i := int(x.Sub(killed) / time.Second); i < len(perSecond) {
				perSecond[i]++
				maxGap = max(maxGap, x.Sub(prev))
				prev = x
			}
		}
		t.Logf("%s: cycles in each second after the kill %v, longest gap between two %v", what, perSecond, maxGap.Round(time.Millisecond))
		for _, n := range perSecond {
			if n < 20 {
				t.Errorf("%s: %v cycles in each second after the kill, want at least 20 in each (longest gap %v)\nhost warnings:\n%s", what, perSecond, maxGap, warnings.String())
				break
			}
		}
		if maxGap >= time.Second {
			t.Errorf("%s: a cycle took %v", what, maxGap)
		}
	}
	killed := time.Now()
	cl.stop(hostOn, syscall.SIGKILL)
	watch("the host's server, leading the stream, killed", killed)
	// The outage over (a new leader answers), the host's server again.
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(warnings.String(), "the NATS server is back"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the host did not report the server back within 30 s:\n%s", warnings.String())
		}
	}
	next := cl.node(nc.ConnectedUrl())
	if next < 0 || next == hostOn {
		t.Fatalf("the host is on %s, not a surviving server", nc.ConnectedUrl())
	}
	killed = time.Now()
	cl.stop(next, syscall.SIGKILL)
	watch("a second server killed (no quorum)", killed)
	t.Logf("host warnings:\n%s", warnings.String())
}

// A host that starts while its cluster is still forming (a server that
// was down is starting again) gets three replicas, not one: the stream's
// creation is asked again for a while before settling for one replica.
func TestClusterReplicasWhileForming(t *testing.T) {
	cl := startCluster(t, 3)
	cl.stop(2, syscall.SIGTERM)
	// The two others have their meta leader (server 2 may have been it):
	// on a loaded machine their election once outlasted the host's 10 s
	// start, which is not what this test is about.
	cl.waitReady(0, 2)
	name := uniqueName("form")
	var warnings syncBuffer
	// The host knows the three servers from its URL list; one is down.
	nc, err := natsipc.ConnectHost(cl.url(natsipc.RoleHost, 0)+","+cl.url(natsipc.RoleHost, 1)+","+cl.url(natsipc.RoleHost, 2), name)
	if err != nil {
		t.Fatal(err)
	}
	cl.start(2)
	s := serveConn(t, nc, name, natsipc.Limits{}, &warnings)
	if s.pub.Replicas() != 3 {
		t.Errorf("change log: %d replicas, want 3 (the third server was starting)\nhost warnings:\n%s", s.pub.Replicas(), warnings.String())
	}
}
