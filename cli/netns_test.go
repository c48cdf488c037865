package cli

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simvis/simvis/internal/testkit"
)

// hosts is three network namespaces: the host in A, a mirror in B and a
// client in C, A joined to each of the others by a veth pair.
type hosts struct {
	t       *testing.T
	a, b, c string
	aForB   string // A's address as B reaches it
	aForC   string
	bLink   string // B's end of the A-B link
}

// newHosts makes the namespaces, or skips the test with the reason.
func newHosts(t *testing.T) *hosts {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root: the multi-host tests are skipped")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("the ip command (iproute2) is missing: the multi-host tests are skipped")
	}
	id := fmt.Sprintf("%d", os.Getpid()%100000)
	h := &hosts{t: t, a: "svA" + id, b: "svB" + id, c: "svC" + id, aForB: "10.231.1.1", aForC: "10.231.2.1", bLink: "svb" + id}
	run := func(args ...string) error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	t.Cleanup(func() {
		for _, ns := range []string{h.a, h.b, h.c} {
			exec.Command("ip", "netns", "del", ns).Run() // removes its veth ends too
		}
	})
	steps := [][]string{
		{"netns", "add", h.a}, {"netns", "add", h.b}, {"netns", "add", h.c},
		{"link", "add", "sva" + id, "type", "veth", "peer", "name", h.bLink},
		{"link", "add", "svx" + id, "type", "veth", "peer", "name", "svc" + id},
		{"link", "set", "sva" + id, "netns", h.a}, {"link", "set", "svx" + id, "netns", h.a},
		{"link", "set", h.bLink, "netns", h.b}, {"link", "set", "svc" + id, "netns", h.c},
		{"-n", h.a, "addr", "add", h.aForB + "/24", "dev", "sva" + id},
		{"-n", h.a, "addr", "add", h.aForC + "/24", "dev", "svx" + id},
		{"-n", h.b, "addr", "add", "10.231.1.2/24", "dev", h.bLink},
		{"-n", h.c, "addr", "add", "10.231.2.2/24", "dev", "svc" + id},
		{"-n", h.a, "link", "set", "sva" + id, "up"}, {"-n", h.a, "link", "set", "svx" + id, "up"},
		{"-n", h.b, "link", "set", h.bLink, "up"}, {"-n", h.c, "link", "set", "svc" + id, "up"},
		{"-n", h.a, "link", "set", "lo", "up"}, {"-n", h.b, "link", "set", "lo", "up"}, {"-n", h.c, "link", "set", "lo", "up"},
	}
	for _, s := range steps {
		if err := run(s...); err != nil {
			if strings.HasPrefix(s[0], "netns") {
				t.Skipf("cannot make network namespaces here (%v): the multi-host tests are skipped", err)
			}
			t.Fatal(err)
		}
	}
	return h
}

// in runs the simvis command line (this test binary) in namespace ns.
func (h *hosts) in(ns string, args ...string) *exec.Cmd {
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, os.Args[0]}, args...)...)
	cmd.Env = append(os.Environ(), "SIMVIS_CLI_CHILD=1")
	return cmd
}

func (h *hosts) link(up bool) {
	state := "down"
	if up {
		state = "up"
	}
	if out, err := exec.Command("ip", "-n", h.b, "link", "set", h.bLink, state).CombinedOutput(); err != nil {
		h.t.Fatalf("link %s: %v %s", state, err, out)
	}
}

// background runs cmd, collecting its output lines; wait returns when a
// line contains want (or fails the test after timeout).
type background struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	seen  chan struct{}
}

func start(t *testing.T, cmd *exec.Cmd) *background {
	t.Helper()
	b := &background{cmd: cmd, seen: make(chan struct{}, 1)}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			b.mu.Lock()
			b.lines = append(b.lines, sc.Text())
			b.mu.Unlock()
			select {
			case b.seen <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
		}
	})
	return b
}

func (b *background) wait(t *testing.T, want string, timeout time.Duration) string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		b.mu.Lock()
		for _, l := range b.lines {
			if strings.Contains(l, want) {
				b.mu.Unlock()
				return l
			}
		}
		b.mu.Unlock()
		select {
		case <-b.seen:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			b.mu.Lock()
			defer b.mu.Unlock()
			t.Fatalf("no line with %q after %v:\n%s", want, timeout, strings.Join(b.lines, "\n"))
		}
	}
}

// Host, mirror and client on three network namespaces: the mirror
// replicates the scene over the link (model files fetched over it too, as
// on a machine without them), the client moves R_POSE from the third
// place, and the mirror's camera shows the robot where the client put it.
func TestMultiHostMirror(t *testing.T) {
	h, dir, _ := h3host(t)
	forC := "nats://s3cret@" + h.aForC + ":4222/lab"
	forB := "nats://s3cret@" + h.aForB + ":4222/lab"
	if out, err := h.in(h.c, "set", "--connect", forC, "R_POSE.yaw=90", "R_POSE.x=-1").CombinedOutput(); err != nil {
		t.Fatalf("client in C: %v\n%s", err, out)
	}
	if out, err := h.in(h.c, "elements", "--connect", "nats://"+h.aForC+":4222/lab").CombinedOutput(); err == nil {
		t.Errorf("a client without the token was let in:\n%s", out)
	}
	time.Sleep(300 * time.Millisecond)
	mirrorOut := filepath.Join(dir, "mirror")
	if out, err := h.in(h.b, "mirror", "--connect", forB, "-o", mirrorOut, "--latest", "--fetch-files").CombinedOutput(); err != nil {
		t.Fatalf("mirror in B: %v\n%s", err, out)
	}
	want := filepath.Join(dir, "want")
	if code, _, errOut := simvis(t, "capture", quickstart, "-o", want, "--set", "R_POSE.yaw=90", "--set", "R_POSE.x=-1"); code != 0 {
		t.Fatal(errOut)
	}
	if d := testkit.MaxDiff(testkit.ReadPNG(t, filepath.Join(mirrorOut, "ROBOT_CAM.png")), testkit.ReadPNG(t, filepath.Join(want, "ROBOT_CAM.png"))); d > 2 {
		t.Errorf("the mirror's camera differs from a capture with the client's values by %d levels", d)
	}
}

// The link to the mirror goes down while the client changes the scene
// (a new element, new values); when it comes back the mirror catches up
// with nothing lost.
func TestMultiHostLinkCut(t *testing.T) {
	h, dir, host := h3host(t)
	forC := "nats://s3cret@" + h.aForC + ":4222/lab"
	mirrorOut := filepath.Join(dir, "mirror")
	mirror := start(t, h.in(h.b, "mirror", "--connect", "nats://s3cret@"+h.aForB+":4222/lab", "-o", mirrorOut,
		"--latest", "--frames", "1000", "--rate", "10"))
	mirror.wait(t, "frame 1 (2 of 1000): change 4", 15*time.Second)

	h.link(false)
	client := func(args ...string) {
		if out, err := h.in(h.c, args...).CombinedOutput(); err != nil {
			t.Fatalf("client in C %v: %v\n%s", args, err, out)
		}
	}
	client("request", "--connect", forC, `<part file="robot.gltf" name="ROBOT2" insert_at="WORLD" pose_offset="1 1 0 0 0 0"/>`)
	client("request", "--connect", forC, `<element type="pose" name="R2_POSE" insert_at="ROBOT2" yaw="45"/>`)
	client("set", "--connect", forC, "R_POSE.yaw=-60", "R2_POSE.x=0.5")
	mirror.wait(t, "retrying", 10*time.Second) // the mirror found the host silent
	h.link(true)
	line := mirror.wait(t, "change 6", 30*time.Second)
	time.Sleep(300 * time.Millisecond) // a frame after the values arrived
	t.Logf("mirror caught up: %q", line)

	host.cmd.Process.Signal(os.Interrupt)
	host.wait(t, "6 changes logged", 10*time.Second)
	want := filepath.Join(dir, "want")
	scene := filepath.Join(dir, "scene.xml")
	os.WriteFile(scene, []byte(`<scene>
  <part file="`+absQuickstart(t, "world.gltf")+`" name="WORLD"/>
  <part file="`+absQuickstart(t, "robot.gltf")+`" name="ROBOT" insert_at="WORLD"/>
  <element type="pose" name="R_POSE" insert_at="ROBOT" x="-2" y="-1" yaw="-60"/>
  <sensor type="camera" name="ROBOT_CAM" insert_at="ROBOT" pose_offset="0.2 0 1.1 0 12 0" width="640" height="480" fov="70"/>
  <part file="`+absQuickstart(t, "robot.gltf")+`" name="ROBOT2" insert_at="WORLD" pose_offset="1 1 0 0 0 0"/>
  <element type="pose" name="R2_POSE" insert_at="ROBOT2" x="0.5" yaw="45"/>
</scene>`), 0o644)
	if code, _, errOut := simvis(t, "capture", scene, "-o", want); code != 0 {
		t.Fatal(errOut)
	}
	if d := testkit.MaxDiff(testkit.ReadPNG(t, filepath.Join(mirrorOut, "ROBOT_CAM.png")), testkit.ReadPNG(t, filepath.Join(want, "ROBOT_CAM.png"))); d > 2 {
		t.Errorf("after the cut the mirror's camera differs from the host's scene by %d levels", d)
	}
}

// h3host makes the namespaces and starts the host (scene "lab", token
// s3cret) in A, listening on all its addresses.
func h3host(t *testing.T) (*hosts, string, *background) {
	h := newHosts(t)
	dir := t.TempDir()
	host := start(t, h.in(h.a, "serve", quickstart, "--shm", filepath.Join(dir, "simvis-lab"), "--rate", "20",
		"--listen", "0.0.0.0:4222", "--token", "s3cret"))
	host.wait(t, "serving", 10*time.Second)
	return h, dir, host
}

func absQuickstart(t *testing.T, file string) string {
	p, err := filepath.Abs(filepath.Join(filepath.Dir(quickstart), file))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
