package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/ipc/natsipc"
	"github.com/simvis/simvis/scene"
)

// leafPasswords are the roles' passwords on every server of the leaf
// test (the shipped nats-server.conf reads them from the environment),
// and the leaf node's on the hub.
var leafPasswords = map[string]string{
	"SIMVIS_HOST_PASSWORD": "h0st-pw", "SIMVIS_DRIVER_PASSWORD": "dr1ver-pw", "SIMVIS_VIEWER_PASSWORD": "v1ewer-pw",
	"SIMVIS_LEAF_PASSWORD": "l3af-pw",
}

// A robot: its host serves through the robot's own nats-server, a leaf
// node (JetStream domain "robot", where the host keeps its change log) of
// a three-server JetStream cluster, the hub. The robot is a network
// namespace joined to the hub by a veth pair; a mirror on the hub's side
// reads the robot's log through the domain (?domain=robot). The link is
// cut for 10 s and healed:
//   - on the robot, a local client's requests and value writes are taken
//     throughout (each succeeds, as the host confirms);
//   - the hub side hears nothing from the robot meanwhile;
//   - once healed, the mirror catches up: every change, the last values,
//     a scene equal to the host's (its elements and values as the host
//     lists them to a client on the robot), and a client on the hub that
//     only reads values has the last ones;
//   - two of the hub's servers killed, the leaf node's among them (no
//     quorum there): the robot's log does not depend on it, and the
//     mirror has the next change through the server left.
func TestLeafNodeLinkCut(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root: the leaf node test is skipped")
	}
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/nats-server"); serr != nil {
			t.Skip("no nats-server here (Debian package nats-server)")
		}
		bin = "/usr/sbin/nats-server"
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("the ip command (iproute2) is missing: the leaf node test is skipped")
	}
	id := strconv.Itoa(os.Getpid() % 100000)
	ns, hubEnd, robotEnd := "svR"+id, "svh"+id, "svr"+id
	const hubAddr, robotAddr = "10.232.9.1", "10.232.9.2"
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Skipf("cannot make network namespaces here (%v: %s): the leaf node test is skipped", err, out)
	}
	t.Cleanup(func() {
		exec.Command("ip", "netns", "del", ns).Run() // removes the robot's veth end, and with it the hub's
		exec.Command("ip", "link", "del", hubEnd).Run()
	})
	ip("link", "add", hubEnd, "type", "veth", "peer", "name", robotEnd)
	ip("link", "set", robotEnd, "netns", ns)
	ip("addr", "add", hubAddr+"/24", "dev", hubEnd)
	ip("-n", ns, "addr", "add", robotAddr+"/24", "dev", robotEnd)
	ip("link", "set", hubEnd, "up")
	ip("-n", ns, "link", "set", robotEnd, "up")
	ip("-n", ns, "link", "set", "lo", "up")

	dir := t.TempDir()
	shipped, err := os.ReadFile("../ipc/natsipc/nats-server.conf")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "nats-server.conf"), shipped, 0o644); err != nil {
		t.Fatal(err)
	}
	env := os.Environ()
	for k, v := range leafPasswords {
		env = append(env, k+"="+v)
	}
	// A cut link is noticed within about 6 s (a ping every 2 s, three
	// unanswered), not the default 2 minutes: the test cuts for 10.
	const pings = "ping_interval: \"2s\"\nping_max: 3\n"
	var procs []*exec.Cmd
	t.Cleanup(func() {
		for _, p := range procs {
			p.Process.Signal(syscall.SIGTERM)
			p.Wait()
		}
	})
	run := func(name string, cmd *exec.Cmd) {
		t.Helper()
		cmd.Env = env
		out, err := os.Create(filepath.Join(dir, name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
	}
	logOf := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(dir, name+".log"))
		return string(b)
	}

	// The hub: three servers on loopback, each taking leaf nodes on the
	// veth's hub end.
	ports := leafFreePorts(t, 9)
	var hubURLs, leafURLs []string
	for i := 0; i < 3; i++ {
		name := fmt.Sprintf("hub%d", i+1)
		conf := filepath.Join(dir, name+".conf")
		text := fmt.Sprintf("include ./nats-server.conf\n%sleafnodes {\n  listen: \"%s:%d\"\n  authorization { user: leaf, password: $SIMVIS_LEAF_PASSWORD }\n}\n", pings, hubAddr, ports[6+i])
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		var routes []string
		for j := 0; j < 3; j++ {
			if j != i {
				routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", ports[3+j]))
			}
		}
		run(name, exec.Command(bin, "-c", conf, "-js", "-sd", filepath.Join(dir, name), "--server_name", name,
			"-a", "127.0.0.1", "-p", strconv.Itoa(ports[i]), "--cluster_name", "simvis-hub",
			"--cluster", fmt.Sprintf("nats://127.0.0.1:%d", ports[3+i]), "--routes", strings.Join(routes, ",")))
		hubURLs = append(hubURLs, fmt.Sprintf("127.0.0.1:%d", ports[i]))
		leafURLs = append(leafURLs, fmt.Sprintf("\"nats-leaf://leaf:%s@%s:%d\"", leafPasswords["SIMVIS_LEAF_PASSWORD"], hubAddr, ports[6+i]))
	}
	hubAs := func(role, pwVar string) string {
		return "nats://" + role + ":" + leafPasswords[pwVar] + "@" + strings.Join(hubURLs, ",")
	}
	// The robot's server: the shipped users, JetStream domain "robot", a
	// leaf node of the hub (any of its servers).
	robotConf := filepath.Join(dir, "robot.conf")
	text := fmt.Sprintf("include ./nats-server.conf\n%sserver_name: robot\njetstream {\n  store_dir: \"%s\"\n  domain: robot\n}\nleafnodes {\n  remotes: [ { urls: [%s] } ]\n}\n",
		pings, filepath.Join(dir, "robot"), strings.Join(leafURLs, ", "))
	if err := os.WriteFile(robotConf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	waitHub(t, hubAs("viewer", "SIMVIS_VIEWER_PASSWORD"), "", logOf)
	run("robot", exec.Command("ip", "netns", "exec", ns, bin, "-c", robotConf, "-a", "127.0.0.1", "-p", "4222"))
	// The robot's JetStream answers on the hub once the leaf node is up.
	waitHub(t, hubAs("viewer", "SIMVIS_VIEWER_PASSWORD"), "robot", logOf)

	// The host and a client, on the robot.
	onRobot := func(args ...string) *exec.Cmd {
		cmd := exec.Command("ip", append([]string{"netns", "exec", ns, os.Args[0]}, args...)...)
		cmd.Env = append(append([]string{}, env...), "SIMVIS_CLI_CHILD=1")
		return cmd
	}
	host := start(t, onRobot("serve", quickstart, "--shm", filepath.Join(dir, "simvis-rob1"), "--rate", "50",
		"--nats", "nats://host:"+leafPasswords["SIMVIS_HOST_PASSWORD"]+"@127.0.0.1:4222"))
	host.wait(t, "serving", 15*time.Second)
	driver := "nats://driver:" + leafPasswords["SIMVIS_DRIVER_PASSWORD"] + "@127.0.0.1:4222/rob1"
	client := func(args ...string) string {
		t.Helper()
		out, err := onRobot(append([]string{args[0], "--connect", driver}, args[1:]...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("client on the robot %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	var last uint64 // the last change the client saw succeed
	request := func(xml string) {
		t.Helper()
		out := client("request", xml)
		var seq uint64
		if _, err := fmt.Sscanf(strings.TrimSpace(out), "change %d", &seq); err != nil || seq <= last {
			t.Fatalf("request %s: %q, after change %d", xml, out, last)
		}
		last = seq
	}
	request(`<element type="pose" name="BEFORE" insert_at="ROOT" x="1"/>`)

	// The mirror, on the hub's side.
	mc, err := ipc.Dial(hubAs("viewer", "SIMVIS_VIEWER_PASSWORD") + "/rob1?domain=robot")
	if err != nil {
		t.Fatalf("a client on the hub, reaching the robot's log through its domain: %v\n%s", err, logOf("robot"))
	}
	defer mc.Close()
	m, err := ipc.NewMirror(mc, nil, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	caughtUp := func(what string, yaw float64, limit time.Duration) {
		t.Helper()
		var err error
		for deadline := time.Now().Add(limit); ; time.Sleep(50 * time.Millisecond) {
			err = m.Sync()
			v, _ := m.Scene().Value("R_POSE", "yaw")
			if err == nil && m.Applied() == last && v == yaw {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the mirror is at change %d of %d, yaw %v of %v, after %v: %v\nrobot server:\n%s", what, m.Applied(), last, v, yaw, limit, err, tail(logOf("robot"), 20))
			}
		}
	}
	// A client on the hub's side reading values only (no mirror's
	// resynchronisation behind it).
	vc, err := ipc.Dial(hubAs("viewer", "SIMVIS_VIEWER_PASSWORD") + "/rob1?domain=robot")
	if err != nil {
		t.Fatal(err)
	}
	defer vc.Close()
	yawAt, err := vc.Param("R_POSE", "yaw")
	if err != nil {
		t.Fatal(err)
	}
	client("set", "R_POSE.yaw=10")
	caughtUp("before the cut", 10, 20*time.Second)

	// The cut: on the robot, the client's requests and writes are taken
	// all along.
	ip("link", "set", hubEnd, "down")
	cut := time.Now()
	yaw := 10.0
	for k := 1; time.Since(cut) < 7*time.Second; k++ {
		request(fmt.Sprintf(`<element type="pose" name="CUT%d" insert_at="ROOT" y="%d"/>`, k, k))
		yaw = float64(20 + k)
		client("set", fmt.Sprintf("R_POSE.yaw=%v", yaw), fmt.Sprintf("CUT%d.x=%d", k, -k))
	}
	time.Sleep(time.Until(cut.Add(10 * time.Second)))
	// The hub side heard nothing of it.
	if m.Sync() == nil && m.Applied() == last {
		t.Errorf("the mirror on the hub's side has change %d, made while the link was cut", last)
	}
	ip("link", "set", hubEnd, "up")
	healed := time.Now()
	caughtUp("after the link healed", yaw, 60*time.Second)
	// The values the host published while the link was cut never
	// reached the hub: the client notices the cycles it missed and asks
	// for all values again.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		v, err := vc.Get(yawAt)
		if err == nil && v == yaw {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a client on the hub reads yaw %v (%v) 10 s after the mirror caught up, the host's is %v", v, err, yaw)
		}
	}
	t.Logf("the link cut for %v; %d changes in all; the mirror caught up %v after it healed", healed.Sub(cut).Round(time.Millisecond), last, time.Since(healed).Round(time.Millisecond))

	// The same scene as the host's, as the host lists it.
	var listed []struct {
		Name, At, Type string
		Params         []string
		Values         []float64
	}
	if err := json.Unmarshal([]byte(client("elements", "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	els := m.Scene().Elements()
	if len(els) != len(listed) {
		t.Fatalf("the mirror has %d elements, the host %d", len(els), len(listed))
	}
	for i, e := range listed {
		if els[i].Name != e.Name || els[i].Type != e.Type || els[i].At != e.At {
			t.Errorf("element %d: the mirror's %s %s at %s, the host's %s %s at %s", i, els[i].Name, els[i].Type, els[i].At, e.Name, e.Type, e.At)
			continue
		}
		for j, p := range e.Params {
			if v, err := m.Scene().Value(e.Name, p); err != nil || v != e.Values[j] {
				t.Errorf("%s.%s: the mirror's %v (%v), the host's %v", e.Name, p, v, err, e.Values[j])
			}
		}
	}

	// Two of the hub's three servers killed: the hub's JetStream has no
	// quorum, which the robot's log does not need; the leaf node and
	// the clients move to the server left, and the mirror follows.
	// The server the leaf node uses is one of them.
	leafOn := -1
	for i := 0; i < 3; i++ {
		l := logOf(fmt.Sprintf("hub%d", i+1))
		if strings.Count(l, "Leafnode connection created") > strings.Count(l, "Leafnode connection closed") {
			leafOn = i
		}
	}
	if leafOn < 0 {
		t.Fatalf("no hub server has the robot's leaf node:\n%s", tail(logOf("hub1"), 10))
	}
	left := (leafOn + 1) % 3
	killed := time.Now()
	for i, p := range procs[:3] {
		if i != left {
			p.Process.Signal(syscall.SIGKILL)
			p.Wait()
		}
	}
	request(`<element type="pose" name="AFTER" insert_at="ROOT"/>`)
	yaw = -5
	client("set", "R_POSE.yaw=-5")
	caughtUp("two hub servers of three killed", yaw, 60*time.Second)
	t.Logf("two hub servers killed, hub%d (the leaf node's) among them: the mirror has the robot's next change %v after", leafOn+1, time.Since(killed).Round(time.Millisecond))
	t.Logf("robot server:\n%s", tail(logOf("robot"), 12))
}

// waitHub waits until the hub at url answers JetStream requests for
// domain ("" for its own) and knows its three servers.
func waitHub(t *testing.T, url, domain string, logOf func(string) string) {
	t.Helper()
	var last error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		nc, err := nats.Connect(url, nats.Timeout(time.Second), nats.CustomInboxPrefix(natsipc.ViewerInbox))
		if err != nil {
			last = err
			continue
		}
		js, err := jetstream.New(nc)
		if domain != "" {
			js, err = jetstream.NewWithDomain(nc, domain)
		}
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_, err = js.AccountInfo(ctx)
			cancel()
		}
		if err == nil && natsipc.ClusterSize(nc) < 3 {
			err = fmt.Errorf("knows %d servers", natsipc.ClusterSize(nc))
		}
		nc.Close()
		if err == nil {
			return
		}
		last = err
	}
	t.Fatalf("JetStream (domain %q) not ready in 30 s: %v\nhub1:\n%s\nrobot:\n%s", domain, last, tail(logOf("hub1"), 20), tail(logOf("robot"), 20))
}

func leafFreePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
