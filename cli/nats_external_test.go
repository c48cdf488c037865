package cli

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serve --nats through Debian's nats-server with the shipped
// ipc/natsipc/nats-server.conf: the driver sets, the viewer reads and is
// refused a write, with the exit status saying so.
func TestServeThroughConfiguredServer(t *testing.T) {
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		if bin = "/usr/sbin/nats-server"; func() bool { _, err := os.Stat(bin); return err != nil }() {
			t.Skip("no nats-server here (Debian package nats-server; make deps)")
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	srv := exec.Command(bin, "-c", "../ipc/natsipc/nats-server.conf", "-js", "-sd", t.TempDir(), "-a", "127.0.0.1", "-p", fmt.Sprint(port))
	srv.Env = append(os.Environ(), "SIMVIS_HOST_PASSWORD=hpw", "SIMVIS_DRIVER_PASSWORD=dpw", "SIMVIS_VIEWER_PASSWORD=vpw")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() }()
	waitFor(t, func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
		}
		return err == nil
	}, "nats-server")
	name := fmt.Sprintf("conf%d", os.Getpid())
	at := func(user, pw string) string { return fmt.Sprintf("nats://%s:%s@127.0.0.1:%d", user, pw, port) }
	stop := startServe(t, quickstart, "--shm", filepath.Join(t.TempDir(), "simvis-"+name), "--rate", "20", "--nats", at("host", "hpw"))
	defer stop()
	if code, _, errOut := simvis(t, "set", "--connect", at("driver", "dpw")+"/"+name, "R_POSE.yaw=33"); code != 0 {
		t.Fatalf("driver set: %d %q", code, errOut)
	}
	code, _, errOut := simvis(t, "set", "--connect", at("viewer", "vpw")+"/"+name, "R_POSE.yaw=44")
	if code != 1 || !strings.Contains(errOut, "refuses this client's role publishing to simvis."+name+".set") {
		t.Errorf("viewer set: %d %q", code, errOut)
	}
	if code, _, errOut := simvis(t, "request", "--connect", at("viewer", "vpw")+"/"+name, `<element type="pose" name="V" insert_at="ROOT"/>`); code != 1 || !strings.Contains(errOut, "refuses this client's role") {
		t.Errorf("viewer request: %d %q", code, errOut)
	}
	if code, _, errOut := simvis(t, "elements", "--connect", at("viewer", "wrong")+"/"+name); code != 1 || !strings.Contains(strings.ToLower(errOut), "authorization") {
		t.Errorf("a wrong password: %d %q", code, errOut)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, out, errOut := simvis(t, "elements", "--connect", at("viewer", "vpw")+"/"+name)
		if code == 0 && strings.Contains(out, "yaw=33") && !strings.Contains(out, "V (") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("elements as the viewer: %d %q %q", code, out, errOut)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
