package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
)

// cutNet is three network namespaces, one per nats-server of a cluster,
// each joined by a veth pair to a bridge in a fourth (the switch), which
// the test's own namespace reaches through a veth pair of its own.
// Cutting a server's link (its port on the switch down) leaves it and the
// others running, each side unreachable from the other, as a pulled cable
// does: no connection is closed, packets are lost.
type cutNet struct {
	t    *testing.T
	sw   string    // the switch's namespace
	ns   [3]string // server k's namespace
	port [3]string // server k's port on the switch
	addr [3]string // server k's address
	self string    // the test's namespace's address on the switch
}

func newCutNet(t *testing.T) *cutNet {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root: the cluster link-cut test is skipped")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("the ip command (iproute2) is missing: the cluster link-cut test is skipped")
	}
	id := strconv.Itoa(os.Getpid() % 100000)
	// A subnet per process: the test's own end is in the shared
	// namespace, where another run's would be too.
	subnet := fmt.Sprintf("10.233.%d.", os.Getpid()%250)
	n := &cutNet{t: t, sw: "svW" + id, self: subnet + "100"}
	for k := range n.ns {
		n.ns[k] = fmt.Sprintf("svQ%d%s", k+1, id)
		n.port[k] = fmt.Sprintf("svq%d%s", k+1, id)
		n.addr[k] = fmt.Sprintf("%s%d", subnet, k+1)
	}
	testEnd, testPort := "svt"+id, "svu"+id
	if out, err := exec.Command("ip", "netns", "add", n.sw).CombinedOutput(); err != nil {
		t.Skipf("cannot make network namespaces here (%v: %s): the cluster link-cut test is skipped", err, out)
	}
	// Registered first, so run last: after the servers and the host,
	// which other cleanups stop.
	t.Cleanup(func() {
		for _, ns := range append([]string{n.sw}, n.ns[:]...) {
			exec.Command("ip", "netns", "del", ns).Run() // removes its veth ends, and their peers
		}
		exec.Command("ip", "link", "del", testEnd).Run()
	})
	steps := [][]string{
		{"-n", n.sw, "link", "add", "br0", "type", "bridge"},
		{"-n", n.sw, "link", "set", "br0", "up"},
		{"link", "add", testEnd, "type", "veth", "peer", "name", testPort},
		{"link", "set", testPort, "netns", n.sw},
		{"-n", n.sw, "link", "set", testPort, "master", "br0"},
		{"-n", n.sw, "link", "set", testPort, "up"},
		{"addr", "add", n.self + "/24", "dev", testEnd},
		{"link", "set", testEnd, "up"},
	}
	for k := range n.ns {
		end := fmt.Sprintf("svp%d%s", k+1, id)
		steps = append(steps, [][]string{
			{"netns", "add", n.ns[k]},
			{"link", "add", end, "type", "veth", "peer", "name", n.port[k]},
			{"link", "set", end, "netns", n.ns[k]},
			{"link", "set", n.port[k], "netns", n.sw},
			{"-n", n.sw, "link", "set", n.port[k], "master", "br0"},
			{"-n", n.sw, "link", "set", n.port[k], "up"},
			{"-n", n.ns[k], "addr", "add", n.addr[k] + "/24", "dev", end},
			{"-n", n.ns[k], "link", "set", end, "up"},
			{"-n", n.ns[k], "link", "set", "lo", "up"},
		}...)
	}
	for _, s := range steps {
		if out, err := exec.Command("ip", s...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(s, " "), err, out)
		}
	}
	return n
}

// link cuts (up false) or heals server k's link.
func (n *cutNet) link(k int, up bool) {
	n.t.Helper()
	state := "down"
	if up {
		state = "up"
	}
	if out, err := exec.Command("ip", "-n", n.sw, "link", "set", n.port[k], state).CombinedOutput(); err != nil {
		n.t.Fatalf("server %d's link %s: %v %s", k+1, state, err, out)
	}
}

// cutRequest is one request a driver sent, and what it saw.
type cutRequest struct {
	elem       string
	driver     int
	sent, done time.Time
	seq        uint64
	err        error
}

// Three JetStream-clustered Debian nats-servers, each in its own network
// namespace (cutNet), the shipped configuration and its defaults (no
// faster pings); a host (simvis serve --nats URL1,URL2,URL3 --replicas 3)
// whose change log has three replicas. A driver on the host's server
// writes values at 100 Hz and sends requests one after the other; a
// second driver sends requests through another server. The links of the
// two servers that are not the host's are cut for 10 s (every server
// alone: no quorum anywhere, the log's leader wherever it was) and healed:
//   - during the cut the host keeps cycling and taking values through its
//     server; no request sent during the cut succeeds before the heal,
//     and each that fails, fails visibly (an error its client sees);
//   - after the heal requests through both servers succeed again; every
//     request a driver saw succeed is in the stream once, at the number
//     it was given, in the order the driver saw them; none is there twice;
//     the stream is the one made before the cut (not recreated), with
//     three replicas;
//   - a fresh mirror through a server that was cut, and a mirror made
//     before the cut through the other, rebuild the host's scene (its
//     elements and values as simvis elements --json lists them);
//   - the host says once that the log cannot be stored and once that it
//     is stored again, and never that it lost its server.
//
// The time from the heal to the first request acknowledged and to the
// fresh mirror holding its record is logged (FIGURES).
//
// It runs twice: with nats-server's defaults (a route's pings every 2
// minutes: the cut routes stay open, their packets are sent again by the
// kernel, further and further apart), and with the pings the leaf-node
// configuration uses (every 2 s, three unanswered: the cut routes are
// closed and dialled again every second or so).
func TestClusterTwoLinksCut(t *testing.T) {
	for _, c := range []struct{ name, conf string }{
		{"defaults", ""},
		{"pings2s", "ping_interval: \"2s\"\nping_max: 3\n"},
	} {
		t.Run(c.name, func(t *testing.T) { clusterTwoLinksCut(t, c.conf) })
	}
}

func clusterTwoLinksCut(t *testing.T, extra string) {
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/nats-server"); serr != nil {
			t.Skip("no nats-server here (Debian package nats-server)")
		}
		bin = "/usr/sbin/nats-server"
	}
	n := newCutNet(t)
	dir := t.TempDir()
	shipped, err := os.ReadFile("../ipc/natsipc/nats-server.conf")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "nats-server.conf"), shipped, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cut.conf"), []byte("include ./nats-server.conf\n"+extra), 0o644); err != nil {
		t.Fatal(err)
	}
	env := os.Environ()
	for k, v := range leafPasswords {
		env = append(env, k+"="+v)
	}
	var procs []*exec.Cmd
	t.Cleanup(func() {
		for _, p := range procs {
			p.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { p.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				p.Process.Kill()
				<-done
			}
		}
	})
	logOf := func(k int) string {
		b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("s%d.log", k+1)))
		return string(b)
	}
	for k := range n.ns {
		var routes []string
		for j := range n.ns {
			if j != k {
				routes = append(routes, "nats://"+n.addr[j]+":6222")
			}
		}
		// ip netns exec execs the server: the process is the server's.
		cmd := exec.Command("ip", "netns", "exec", n.ns[k], bin, "-c", filepath.Join(dir, "cut.conf"),
			"-js", "-sd", filepath.Join(dir, fmt.Sprintf("s%d", k+1)), "--server_name", fmt.Sprintf("s%d", k+1),
			"-a", "0.0.0.0", "-p", "4222", "-m", "8222", "--cluster_name", "simvis-cut",
			"--cluster", "nats://0.0.0.0:6222", "--routes", strings.Join(routes, ","))
		cmd.Env = env
		out, err := os.Create(filepath.Join(dir, fmt.Sprintf("s%d.log", k+1)))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
	}
	as := func(role string, k int) string {
		return "nats://" + role + ":" + leafPasswords["SIMVIS_"+strings.ToUpper(role)+"_PASSWORD"] + "@" + n.addr[k] + ":4222"
	}
	for k := range n.ns {
		waitHub(t, as("viewer", k), "", func(string) string { return logOf(k) })
	}
	// Every server answering is not yet a cluster that can place three
	// replicas: under load the JetStream meta group takes longer to form
	// than the host's patience for three replicas ("no suitable peers for
	// placement").
	waitMetaGroup(t, n)

	// The host, through all three servers.
	const name = "ccut"
	host := start(t, cliChild(env, "serve", quickstart, "--shm", filepath.Join(dir, "simvis-"+name), "--rate", "50",
		"--max-elements", "400", "--replicas", "3",
		"--nats", as("host", 0)+","+n.addr[1]+":4222,"+n.addr[2]+":4222"))
	host.wait(t, "serving", 20*time.Second)
	hs := hostServer(t, n, name)
	o1, o2 := (hs+1)%3, (hs+2)%3
	dial := func(role string, k int) *ipc.Client {
		t.Helper()
		c, err := ipc.Dial(as(role, k) + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	mirror := func(k int) *ipc.Mirror {
		t.Helper()
		m, err := ipc.NewMirror(dial("viewer", k), nil, scene.Options{})
		if err != nil {
			t.Fatalf("a mirror through s%d: %v", k+1, err)
		}
		t.Cleanup(m.Close)
		return m
	}
	near, far, probe := dial("driver", hs), dial("driver", o1), dial("driver", hs)
	// Short enough that requests sent during the cut fail within it.
	near.RequestTimeout, far.RequestTimeout, probe.RequestTimeout = 4*time.Second, 4*time.Second, 30*time.Second
	m0 := mirror(o2)
	yaw, err := near.Param("R_POSE", "yaw")
	if err != nil {
		t.Fatal(err)
	}
	x, err := near.Param("R_POSE", "x")
	if err != nil {
		t.Fatal(err)
	}
	before := logStream(t, as("host", hs), name)
	t.Logf("the host is on s%d; the change log has %d replicas, led by %s; s%d and s%d will be cut",
		hs+1, before.Config.Replicas, before.Cluster.Leader, o1+1, o2+1)
	if before.Config.Replicas != 3 {
		t.Fatalf("the change log has %d replicas, want 3", before.Config.Replicas)
	}

	// The drivers.
	var mu sync.Mutex
	var reqs []*cutRequest
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(3)
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
			near.Set(yaw, float64(v%360))
		}
	}()
	for d, c := range []*ipc.Client{near, far} {
		go func() {
			defer wg.Done()
			for k := 1; k <= 60; k++ {
				select {
				case <-stop:
					return
				case <-time.After(300 * time.Millisecond):
				}
				r := &cutRequest{elem: fmt.Sprintf("D%dE%d", d, k), driver: d, sent: time.Now()}
				r.seq, r.err = c.Request(`<element type="pose" name="` + r.elem + `" insert_at="ROOT"/>`)
				r.done = time.Now()
				mu.Lock()
				reqs = append(reqs, r)
				mu.Unlock()
			}
		}()
	}
	halt := func() {
		select {
		case <-stop:
		default:
			close(stop)
			wg.Wait()
		}
	}
	defer halt()
	// count is how many requests of driver d sent after since succeeded
	// (or failed, ok false), and the first that succeeded.
	count := func(d int, since time.Time, ok bool) (int, *cutRequest) {
		mu.Lock()
		defer mu.Unlock()
		k := 0
		var first *cutRequest
		for _, r := range reqs {
			if r.driver == d && !r.sent.Before(since) && (r.err == nil) == ok {
				k++
				if first == nil || r.done.Before(first.done) {
					first = r
				}
			}
		}
		return k, first
	}
	waitFor := func(what string, limit time.Duration, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(limit); !ok(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				halt()
				t.Fatalf("%s: not within %v\nhost:\n%s\ns%d:\n%s", what, limit, tail(strings.Join(host.snapshot(), "\n"), 20), hs+1, tail(logOf(hs), 20))
			}
		}
	}
	setX := func(v float64, limit time.Duration) {
		t.Helper()
		flush := near.Conn().(interface{ Flush() error }).Flush
		for deadline := time.Now().Add(limit); ; time.Sleep(200 * time.Millisecond) {
			err := near.SetConfirmed([]ipc.ValueWrite{{Index: x, Value: v}}, 5*time.Second, flush)
			var lost *ipc.RefusedError
			if err == nil {
				return
			}
			if !errors.As(err, &lost) || lost.Reason != "" || time.Now().After(deadline) {
				halt()
				t.Fatalf("set x=%v: %v", v, err)
			}
		}
	}
	start0 := time.Now()
	waitFor("4 requests through each server before the cut", 20*time.Second, func() bool {
		a, _ := count(0, start0, true)
		b, _ := count(1, start0, true)
		return a >= 4 && b >= 4
	})

	// The cut: the two servers that are not the host's, each alone.
	n.link(o1, false)
	n.link(o2, false)
	cut := time.Now()
	// The host takes values through its server all along.
	setX(1.25, 5*time.Second)
	waitFor("a request through each server failing in the cut", 12*time.Second, func() bool {
		a, _ := count(0, cut, false)
		b, _ := count(1, cut, false)
		return a >= 1 && b >= 1
	})
	setX(1.5, 5*time.Second)
	time.Sleep(time.Until(cut.Add(10 * time.Second)))
	n.link(o1, true)
	n.link(o2, true)
	healed := time.Now()

	// At the heal: a request sent at once through the host's server (its
	// client waits up to 30 s) succeeds; a fresh mirror through a server
	// that was cut, made at once, holds its record.
	probed := make(chan *cutRequest, 1)
	go func() {
		r := &cutRequest{elem: "HEALED", driver: 2, sent: time.Now()}
		r.seq, r.err = probe.Request(`<element type="pose" name="HEALED" insert_at="ROOT"/>`)
		r.done = time.Now()
		mu.Lock()
		reqs = append(reqs, r)
		mu.Unlock()
		probed <- r
	}()
	// A client started while its server's routes are still down finds
	// no host; started again, as simvis mirror --patience does.
	var m1c *ipc.Client
	var dialErrs []string
	for deadline := time.Now().Add(30 * time.Second); m1c == nil; {
		if m1c, err = ipc.Dial(as("viewer", o1) + "/" + name); err != nil {
			dialErrs = append(dialErrs, err.Error())
			if time.Now().After(deadline) {
				halt()
				t.Fatalf("a client through s%d, 30 s after the heal: %v", o1+1, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	t.Cleanup(func() { m1c.Close() })
	dialled := make(chan time.Time, 1)
	dialled <- time.Now() // the connection ready: the host and the log answered
	if len(dialErrs) > 0 {
		t.Logf("a client through s%d at the heal failed %d times before it connected, first: %s", o1+1, len(dialErrs), dialErrs[0])
	}
	m1, err := ipc.NewMirror(m1c, nil, scene.Options{})
	if err != nil {
		halt()
		t.Fatalf("a mirror through s%d at the heal: %v", o1+1, err)
	}
	t.Cleanup(m1.Close)
	made := time.Now()
	firstReq := <-probed
	if firstReq.err != nil {
		halt()
		t.Fatalf("a request sent at the heal: %v\nhost:\n%s", firstReq.err, tail(strings.Join(host.snapshot(), "\n"), 20))
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		err := m1.Sync()
		if err == nil && m1.Applied() >= firstReq.seq {
			break
		}
		if time.Now().After(deadline) {
			halt()
			t.Fatalf("the fresh mirror through s%d is at change %d, not %d, 30 s after: %v", o1+1, m1.Applied(), firstReq.seq, err)
		}
	}
	mirrored := time.Now()
	var nearFirst *cutRequest
	waitFor("a request through the host's server sent after the heal succeeding", 40*time.Second, func() bool {
		_, nearFirst = count(0, healed, true)
		return nearFirst != nil
	})
	var farFirst *cutRequest
	waitFor("a request through a server that was cut, sent after the heal, succeeding", 40*time.Second, func() bool {
		_, farFirst = count(1, healed, true)
		return farFirst != nil
	})
	halt()

	// The last value and request, then the stream and the mirrors.
	setX(101, 20*time.Second)
	last, err := near.Request(`<element type="pose" name="LAST" insert_at="ROOT"/>`)
	if err != nil {
		t.Fatalf("the last request: %v", err)
	}
	after := logStream(t, as("host", o2), name)
	if !after.Created.Equal(before.Created) || after.Config.Replicas != 3 {
		t.Errorf("the change log: made %v with %d replicas, before the cut %v with 3: recreated", after.Created, after.Config.Replicas, before.Created)
	}
	stored := logRecords(t, as("host", o2), name, last)
	inLog := map[string]int{}
	for _, xml := range stored {
		if i := strings.Index(xml, `name="`); i >= 0 {
			e, _, _ := strings.Cut(xml[i+6:], `"`)
			inLog[e]++
		}
	}
	var acked, failed [3]int
	var prev [3]uint64
	for _, r := range reqs { // each driver's, in the order it saw them
		if r.err != nil {
			failed[r.driver]++
			if inLog[r.elem] > 1 {
				t.Errorf("%s (failed: %v) is in the log %d times", r.elem, r.err, inLog[r.elem])
			}
			continue
		}
		acked[r.driver]++
		if inLog[r.elem] != 1 {
			t.Errorf("%s, acknowledged as change %d, is in the log %d times", r.elem, r.seq, inLog[r.elem])
		} else if r.seq == 0 || r.seq > uint64(len(stored)) || !strings.Contains(stored[r.seq-1], `name="`+r.elem+`"`) {
			t.Errorf("%s acknowledged as change %d, which is not it", r.elem, r.seq)
		}
		if r.seq <= prev[r.driver] {
			t.Errorf("%s acknowledged as change %d after change %d", r.elem, r.seq, prev[r.driver])
		}
		prev[r.driver] = r.seq
		if r.sent.After(cut) && r.done.Before(healed) {
			t.Errorf("%s, sent %v into the cut, succeeded before the heal (change %d): no server had quorum", r.elem, r.sent.Sub(cut).Round(time.Millisecond), r.seq)
		}
	}
	for _, r := range reqs {
		if r.err != nil && r.sent.After(cut) && r.sent.Before(healed) {
			t.Logf("a request failing in the cut (driver %d): %v", r.driver, r.err)
			break
		}
	}

	// The host's scene, as it lists it, and the two mirrors'.
	out, err := cliChild(env, "elements", "--connect", as("driver", hs)+"/"+name, "--json").Output()
	if err != nil {
		t.Fatalf("simvis elements: %v", err)
	}
	var listed []struct {
		Name, At, Type string
		Params         []string
		Values         []float64
	}
	if err := json.Unmarshal(out, &listed); err != nil {
		t.Fatal(err)
	}
	for i, m := range []*ipc.Mirror{m1, m0} {
		via := []int{o1, o2}[i]
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			err := m.Sync()
			v, _ := m.Scene().Value("R_POSE", "x")
			if err == nil && m.Applied() == last && v == 101 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the mirror through s%d is at change %d of %d, x %v: %v", via+1, m.Applied(), last, v, err)
			}
		}
		els := m.Scene().Elements()
		if len(els) != len(listed) {
			t.Errorf("the mirror through s%d has %d elements, the host %d", via+1, len(els), len(listed))
			continue
		}
		for j, e := range listed {
			if els[j].Name != e.Name || els[j].Type != e.Type || els[j].At != e.At {
				t.Errorf("s%d's mirror, element %d: %s %s at %s; the host's %s %s at %s", via+1, j, els[j].Name, els[j].Type, els[j].At, e.Name, e.Type, e.At)
				continue
			}
			for p, param := range e.Params {
				if v, err := m.Scene().Value(e.Name, param); err != nil || v != e.Values[p] {
					t.Errorf("s%d's mirror: %s.%s %v (%v), the host's %v", via+1, e.Name, param, v, err, e.Values[p])
				}
			}
		}
	}

	lines := strings.Join(host.snapshot(), "\n")
	for want, times := range map[string]int{"the change log cannot be stored": 1, "the change log is stored again": 1, "lost the NATS server": 0, "recreated": 0} {
		if k := strings.Count(lines, want); k != times {
			t.Errorf("the host's output has %q %d times, want %d:\n%s", want, k, times, lines)
		}
	}
	t.Logf("%d and %d requests acknowledged, %d and %d failed (through s%d and s%d); %d records in the stream",
		acked[0], acked[1], failed[0], failed[1], hs+1, o1+1, len(stored))
	t.Logf("FIGURES two links cut for %v: from the heal to a request sent at the heal acknowledged %v; "+
		"to a fresh mirror through a server that was cut, made at the heal (connected %v, built %v), holding it %v; "+
		"the drivers' first requests sent after the heal acknowledged %v (through the host's server) and %v (through s%d)",
		healed.Sub(cut).Round(time.Millisecond), firstReq.done.Sub(healed).Round(time.Millisecond),
		(<-dialled).Sub(healed).Round(time.Millisecond), made.Sub(healed).Round(time.Millisecond), mirrored.Sub(healed).Round(time.Millisecond),
		nearFirst.done.Sub(healed).Round(time.Millisecond), farFirst.done.Sub(healed).Round(time.Millisecond), o1+1)
	t.Logf("host:\n%s", tail(lines, 8))
}

// cliChild runs the simvis command line (this test binary) in the test's
// namespace with env.
func cliChild(env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append([]string{}, env...), "SIMVIS_CLI_CHILD=1")
	return cmd
}

// hostServer is the server the host of scene name is connected to, as
// the servers' monitoring (connz) lists their clients.
func hostServer(t *testing.T, n *cutNet, name string) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		for k, addr := range n.addr {
			resp, err := http.Get("http://" + addr + ":8222/connz")
			if err != nil {
				continue
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(body), `"simvis host `+name+`"`) {
				return k
			}
		}
	}
	t.Fatalf("no server lists the host of %s among its clients", name)
	return -1
}

// logStream is the change-log stream of scene name, as its leader
// describes it.
func logStream(t *testing.T, url, name string) *jetstream.StreamInfo {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	var last error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		st, err := js.Stream(ctx, "SIMVIS_"+name)
		cancel()
		if err == nil && st.CachedInfo().Cluster != nil && st.CachedInfo().Cluster.Leader != "" {
			return st.CachedInfo()
		}
		last = err
	}
	t.Fatalf("the change log's stream: no answer with a leader in 20 s: %v", last)
	return nil
}

// logRecords reads the change-log stream of scene name, checking that it
// holds records 1 to last, stream message i holding record i.
func logRecords(t *testing.T, url, name string, last uint64) []string {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, "SIMVIS_"+name)
	if err != nil {
		t.Fatal(err)
	}
	info := st.CachedInfo()
	if info.State.Msgs != last || info.State.LastSeq != last {
		t.Errorf("the stream has %d messages, the last %d; want %d", info.State.Msgs, info.State.LastSeq, last)
	}
	var out []string
	for seq := uint64(1); seq <= info.State.LastSeq; seq++ {
		msg, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("stream message %d: %v", seq, err)
		}
		if got := msg.Header.Get("Simvis-Seq"); got != strconv.FormatUint(seq, 10) {
			t.Errorf("stream message %d holds record %s", seq, got)
		}
		out = append(out, string(msg.Data))
	}
	return out
}

// snapshot is the lines collected so far.
func (b *background) snapshot() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.lines...)
}

// waitMetaGroup waits until the JetStream meta group has a leader that
// sees both other servers current: a stream of three replicas can be
// placed.
func waitMetaGroup(t *testing.T, n *cutNet) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		for _, addr := range n.addr {
			resp, err := http.Get("http://" + addr + ":8222/jsz")
			if err != nil {
				continue
			}
			var jsz struct {
				Meta struct {
					Leader   string
					Replicas []struct {
						Current, Offline bool
					}
				} `json:"meta_cluster"`
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			last = string(body)
			if json.Unmarshal(body, &jsz) != nil || jsz.Meta.Leader == "" || len(jsz.Meta.Replicas) != 2 {
				continue
			}
			current := 0
			for _, r := range jsz.Meta.Replicas {
				if r.Current && !r.Offline {
					current++
				}
			}
			if current == 2 {
				return
			}
		}
	}
	t.Fatalf("the JetStream meta group did not form with three current servers in 60 s; last /jsz: %.400s", last)
}
