package natsipc_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/ipc/natsipc"
	"github.com/simvis/simvis/scene"
)

// A host on a three-server cluster (change log in three replicas); a
// driver and a viewer on one server, s. The two other servers, the
// host's own among them, are killed (SIGKILL) while the driver writes at
// 100 Hz and sends requests one after the other. With one replica of
// three the change log has no quorum:
//   - values still flow through s both ways (core NATS needs none): the
//     host, moved to s, takes the driver's writes and the viewer sees them;
//   - the host goes on cycling (it does not wait for the log every cycle);
//   - a request gets no success while the log cannot be stored: it fails
//     after the client's timeout with an error naming the change log and
//     saying the host may yet execute it (not that the host stopped);
//   - the host reports the lost server once and the change log's outage
//     once, not per record or cycle;
//   - one server restarted (quorum back): requests succeed again, the
//     stream holds every acknowledged request once, in order, and every
//     command the host executed (failed requests included: it took them),
//     and a fresh mirror through the restarted server and the mirror
//     that followed through s all along rebuild the host's scene;
//   - the third restarted: the same, a fresh mirror through it.
func TestClusterTwoServersKilled(t *testing.T) {
	cl := startCluster(t, 3)
	name := uniqueName("clu2")
	var warnings syncBuffer
	nc, err := natsipc.ConnectHost(cl.urls(natsipc.RoleHost), name)
	if err != nil {
		t.Fatal(err)
	}
	s := serveConn(t, nc, name, natsipc.Limits{}, &warnings)
	if s.pub.Replicas() != 3 {
		t.Fatalf("change log: %d replicas, want 3", s.pub.Replicas())
	}
	hostOn := cl.node(nc.ConnectedUrl())
	if hostOn < 0 {
		t.Fatalf("the host is connected to %s, none of the cluster's servers", nc.ConnectedUrl())
	}
	surv, other := (hostOn+1)%3, (hostOn+2)%3
	dial := func(r natsipc.Role, i int) *ipc.Client {
		t.Helper()
		c, err := ipc.Dial(cl.url(r, i) + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	mirror := func(via int) *ipc.Mirror {
		t.Helper()
		m, err := ipc.NewMirror(dial(natsipc.RoleViewer, via), nil, scene.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Close)
		return m
	}
	c := dial(natsipc.RoleDriver, surv)
	// Short enough that requests sent during the outage fail within it.
	c.RequestTimeout = 4 * time.Second
	viewer := dial(natsipc.RoleViewer, surv)
	m0 := mirror(surv)
	yaw, err := c.Param("R_POSE", "yaw")
	if err != nil {
		t.Fatal(err)
	}
	x, err := c.Param("R_POSE", "x")
	if err != nil {
		t.Fatal(err)
	}

	// The driver: yaw at 100 Hz on one goroutine, requests one after the
	// other on another, until the end.
	var mu sync.Mutex
	acked := map[string]uint64{} // element added -> its change-log number
	failed := map[string]error{}
	var order []string // acknowledged, in the order of their outcomes
	phase := "before"
	count := map[string][2]int{} // phase -> acknowledged, failed
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for v := 0; ; v++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			c.Set(yaw, float64(v%360))
		}
	}()
	go func() {
		defer wg.Done()
		// At most 30 requests: the scene's element budget (64) holds
		// them and the checks' own.
		for k := 1; k <= 30; k++ {
			select {
			case <-stop:
				return
			default:
			}
			elem := fmt.Sprintf("E%d", k)
			// A request counts in the phase it was sent in, not the
			// one its outcome arrives in: one sent before the kills
			// may be stored before them and acknowledged after.
			mu.Lock()
			sentIn := phase
			mu.Unlock()
			seq, err := c.Request(`<element type="pose" name="` + elem + `" insert_at="ROOT"/>`)
			mu.Lock()
			n := count[sentIn]
			if err != nil {
				failed[elem] = err
				n[1]++
			} else {
				acked[elem] = seq
				order = append(order, elem)
				n[0]++
			}
			count[sentIn] = n
			mu.Unlock()
			time.Sleep(100 * time.Millisecond)
		}
	}()
	halt := func() {
		select {
		case <-stop:
		default:
			close(stop)
			wg.Wait()
		}
	}
	defer halt()
	// waitFor waits for ok, failing after limit (a bound on hangs only).
	waitFor := func(what string, limit time.Duration, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(limit); !ok(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				halt()
				t.Fatalf("%s: not within %v\nhost warnings:\n%s", what, limit, warnings.String())
			}
		}
	}
	inPhase := func(p string, acks, fails int) func() bool {
		return func() bool {
			mu.Lock()
			defer mu.Unlock()
			n := count[p]
			return n[0] >= acks && n[1] >= fails
		}
	}
	enter := func(p string) {
		mu.Lock()
		phase = p
		mu.Unlock()
	}
	waitFor("5 requests before the kill", 20*time.Second, inPhase("before", 5, 0))

	// Two of three down: the host's server and another. The outage
	// phase starts once both are dead: a request sent before (a loaded
	// machine may hold this goroutine up between the phase's start and
	// the kills) can be stored, and rightly acknowledged.
	heard := viewer.Conn().(ipc.Confirmer).HostCycles
	c0, t0 := heard(), time.Now()
	cl.stop(hostOn, syscall.SIGKILL)
	cl.stop(other, syscall.SIGKILL)
	enter("outage")
	waitFor("the host on the surviving server", 20*time.Second, func() bool {
		return nc.IsConnected() && cl.node(nc.ConnectedUrl()) == surv
	})
	// Values both ways: a write the host confirms in a values message
	// through s, which the viewer sees too, and the 100 Hz yaw moving in
	// the viewer's copy.
	setBoth := func(v float64) {
		t.Helper()
		flush := c.Conn().(interface{ Flush() error }).Flush
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			err := c.SetConfirmed([]ipc.ValueWrite{{Index: x, Value: v}}, 10*time.Second, flush)
			var lost *ipc.RefusedError
			if err == nil {
				break
			}
			// A write sent while the host was moving to s is lost; set
			// again, as simvis set's user would.
			if !errors.As(err, &lost) || lost.Reason != "" || time.Now().After(deadline) {
				halt()
				t.Fatalf("set x=%v: %v\nhost warnings:\n%s", v, err, warnings.String())
			}
		}
		waitFor(fmt.Sprintf("the viewer sees x=%v", v), 10*time.Second, func() bool {
			got, err := viewer.Get(x)
			return err == nil && got == v
		})
	}
	setBoth(1.25)
	seen := map[float64]bool{}
	waitFor("the viewer sees yaw move", 20*time.Second, func() bool {
		if v, err := viewer.Get(yaw); err == nil {
			seen[v] = true
		}
		return len(seen) >= 20
	})
	// Requests fail, saying why, while the log has no quorum.
	waitFor("2 requests failing in the outage", 30*time.Second, inPhase("outage", 0, 2))
	mu.Lock()
	if n := count["outage"]; n[0] > 0 {
		t.Errorf("%d requests acknowledged with two servers of three down", n[0])
	}
	var example error
	for elem, err := range failed {
		example = err
		if !strings.Contains(err.Error(), "change log") || !strings.Contains(err.Error(), "may yet") {
			t.Errorf("%s failed in the outage with an error that names neither the change log nor what may become of it: %v", elem, err)
		}
		if errors.Is(err, ipc.ErrHostStopped) {
			t.Errorf("%s failed in the outage as if the host had stopped: %v", elem, err)
		}
	}
	mu.Unlock()
	setBoth(1.5)
	t.Logf("in the outage: the viewer heard %d host cycles in %v; a failed request: %v", heard()-c0, time.Since(t0).Round(time.Millisecond), example)

	// check: a set and a request succeed; the stream holds every
	// acknowledged request once, where its number says, and every failed
	// one at most once; mirror m catches up and rebuilds the host's scene.
	check := func(round int, via int, m *ipc.Mirror) {
		t.Helper()
		want := float64(100 + round)
		setBoth(want)
		last, err := c.Request(fmt.Sprintf(`<element type="pose" name="LAST%d" insert_at="ROOT"/>`, round))
		if err != nil {
			t.Fatalf("round %d: request: %v", round, err)
		}
		stored := streamRecords(t, cl.url(natsipc.RoleHost, via), name, last)
		inLog := map[string]int{}
		for _, xml := range stored {
			if i := strings.Index(xml, `name="`); i >= 0 {
				n, _, _ := strings.Cut(xml[i+6:], `"`)
				inLog[n]++
			}
		}
		mu.Lock()
		for elem, seq := range acked {
			if inLog[elem] != 1 {
				t.Errorf("round %d: %s acknowledged as change %d is in the log %d times", round, elem, seq, inLog[elem])
			} else if !strings.Contains(stored[seq-1], `name="`+elem+`"`) {
				t.Errorf("round %d: %s acknowledged as change %d; change %d is %s", round, elem, seq, seq, stored[seq-1])
			}
		}
		for elem, err := range failed {
			if inLog[elem] > 1 {
				t.Errorf("round %d: %s (failed: %v) is in the log %d times", round, elem, err, inLog[elem])
			}
		}
		for i := 1; i < len(order); i++ {
			if acked[order[i]] <= acked[order[i-1]] {
				t.Errorf("round %d: %s acknowledged as %d after %s as %d", round, order[i], acked[order[i]], order[i-1], acked[order[i-1]])
			}
		}
		t.Logf("round %d: %d requests acknowledged, %d failed (as their client saw); %d records in the stream", round, len(acked), len(failed), len(stored))
		mu.Unlock()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			err := m.Sync()
			v, _ := m.Scene().Value("R_POSE", "x")
			if err == nil && m.Applied() == last && v == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the mirror is at change %d of %d, x %v: %v", round, m.Applied(), last, v, err)
			}
		}
		s.pause()
		defer s.resume()
		if h, r := elementList(s.host.Scene), elementList(m.Scene()); h != r {
			t.Errorf("round %d: host elements:\n%s\nmirror:\n%s", round, h, r)
		}
	}

	// One server back: quorum.
	enter("quorum")
	cl.start(other)
	cl.waitReady(other, 2)
	waitFor("3 requests acknowledged with quorum back", 30*time.Second, inPhase("quorum", 3, 0))
	halt()
	check(1, other, mirror(other))
	check(2, surv, m0)

	// The third back.
	cl.start(hostOn)
	cl.waitReady(hostOn, 3)
	check(3, hostOn, mirror(hostOn))

	w := warnings.String()
	for _, want := range []string{"lost the NATS server", "the change log cannot be stored", "the change log is stored again"} {
		if k := strings.Count(w, want); k != 1 {
			t.Errorf("host warnings have %q %d times, want once:\n%s", want, k, w)
		}
	}
	t.Logf("host warnings:\n%s", w)
}
