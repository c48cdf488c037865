package natsipc_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/ipc/natsipc"
	"github.com/simvis/simvis/scene"
)

// external is a nats-server process nobody here wrote (Debian's), run with
// the shipped configuration (nats-server.conf) or none.
type external struct {
	t         *testing.T
	bin, dir  string
	conf      bool
	port      int
	cmd       *exec.Cmd
	passwords map[natsipc.Role]string
}

func startExternal(t *testing.T, conf bool) *external {
	t.Helper()
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/nats-server"); serr != nil {
			t.Skip("no nats-server here (Debian package nats-server; make deps)")
		}
		bin = "/usr/sbin/nats-server"
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	x := &external{t: t, bin: bin, dir: t.TempDir(), conf: conf, port: port, passwords: map[natsipc.Role]string{
		natsipc.RoleHost: "h0st-pw", natsipc.RoleDriver: "dr1ver-pw", natsipc.RoleViewer: "v1ewer-pw"}}
	x.start()
	t.Cleanup(x.stop)
	return x
}

func (x *external) start() {
	x.t.Helper()
	args := []string{"-js", "-sd", x.dir, "-a", "127.0.0.1", "-p", fmt.Sprint(x.port)}
	if x.conf {
		args = append(args, "-c", "nats-server.conf")
	}
	x.cmd = exec.Command(x.bin, args...)
	x.cmd.Env = append(os.Environ(),
		"SIMVIS_HOST_PASSWORD="+x.passwords[natsipc.RoleHost],
		"SIMVIS_DRIVER_PASSWORD="+x.passwords[natsipc.RoleDriver],
		"SIMVIS_VIEWER_PASSWORD="+x.passwords[natsipc.RoleViewer])
	var out syncBuffer
	x.cmd.Stdout, x.cmd.Stderr = &out, &out
	if err := x.cmd.Start(); err != nil {
		x.t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", x.port)); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("nats-server did not start: %s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the server as an operator would (SIGTERM) and waits for it.
func (x *external) stop() {
	if x.cmd == nil {
		return
	}
	x.cmd.Process.Signal(syscall.SIGTERM)
	x.cmd.Wait()
	x.cmd = nil
}

func (x *external) url(r natsipc.Role) string {
	if !x.conf {
		return fmt.Sprintf("nats://127.0.0.1:%d", x.port)
	}
	return fmt.Sprintf("nats://%s:%s@127.0.0.1:%d", r, x.passwords[r], x.port)
}

// An external nats-server restarted mid-run, with its store and then
// without it, with a mirror (viewer) and a client (driver) attached: the
// host reports the outage and the recovery, keeps its change log in file
// storage, recreates and refills it from its own log when the server lost
// it; the client's requests and writes work again and the mirror has
// every change, each time within 10 s.
func TestExternalServerRestart(t *testing.T) {
	x := startExternal(t, true)
	name := uniqueName("ext")
	var warnings syncBuffer
	s := serveAt(t, x.url(natsipc.RoleHost), name, natsipc.Limits{}, &warnings)
	if got := s.pub.Storage(); got != jetstream.FileStorage {
		t.Errorf("change log in %v, want file storage", got)
	}
	c, err := ipc.Dial(x.url(natsipc.RoleDriver) + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mc, err := ipc.Dial(x.url(natsipc.RoleViewer) + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer mc.Close()
	m, err := ipc.NewMirror(mc, nil, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	yaw, _ := c.Param("R_POSE", "yaw")

	for i, keepStore := range []bool{true, false} {
		time.Sleep(1100 * time.Millisecond) // the host reports each kind of warning at most once a second
		x.stop()
		if !keepStore {
			x.dir = t.TempDir()
		}
		time.Sleep(300 * time.Millisecond)
		x.start()
		restarted := time.Now()
		deadline := restarted.Add(10 * time.Second)
		elem := fmt.Sprintf("AFTER%d", i)
		var seq uint64
		for {
			seq, err = c.Request(`<element type="pose" name="` + elem + `" insert_at="ROOT"/>`)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("restart %d: no request got through in 10 s: %v", i+1, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		want := float64(50 + i)
		for {
			c.Set(yaw, want)
			err := m.Sync()
			v, _ := m.Scene().Value("R_POSE", "yaw")
			if err == nil && m.Applied() == seq && v == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("restart %d: the mirror is at change %d of %d, yaw %v (want %v) 10 s after: %v", i+1, m.Applied(), seq, v, want, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("restart %d (store kept: %v): client and mirror back after %v", i+1, keepStore, time.Since(restarted).Round(time.Millisecond))
	}
	if m.Rebuilds != 0 {
		t.Errorf("the mirror rebuilt %d times: the host did not restart", m.Rebuilds)
	}
	// Nothing lost: the replica has every element of the host, in order.
	s.pause()
	var hostNames, mirrorNames []string
	for _, e := range s.host.Scene.Elements() {
		hostNames = append(hostNames, e.Name)
	}
	for _, e := range m.Scene().Elements() {
		mirrorNames = append(mirrorNames, e.Name)
	}
	if strings.Join(hostNames, " ") != strings.Join(mirrorNames, " ") {
		t.Errorf("host elements %v, replica %v", hostNames, mirrorNames)
	}
	w := warnings.String()
	for _, want := range []string{"lost the NATS server", "the NATS server is back after", "the change-log stream is intact",
		"the change-log stream is recreated (5 of its records were lost), refilled with "} {
		if !strings.Contains(w, want) {
			t.Errorf("host warnings lack %q:\n%s", want, w)
		}
	}
}
