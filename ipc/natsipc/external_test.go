package natsipc_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
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
				t.Fatalf("restart %d: no request got through in 10 s: %v\nhost warnings:\n%s", i+1, err, warnings.String())
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

// A 1920x1080 depth frame (8.3 MB) goes through a nats-server with the
// default 1 MiB message limit, in chunks under that limit, and comes out
// whole; so do a small frame and a large scan (a JSON kind) around it.
func TestLargeFrameDefaultServer(t *testing.T) {
	x := startExternal(t, false)
	name := uniqueName("big")
	s := serveAt(t, x.url(natsipc.RoleHost), name, natsipc.Limits{}, nil)
	nc, _ := roleConn(t, x.url(natsipc.RoleViewer))
	if nc.MaxPayload() != 1<<20 {
		t.Fatalf("server max_payload %d, want the default 1 MiB", nc.MaxPayload())
	}
	sub, err := nc.SubscribeSync("simvis." + name + ".sensor.>")
	if err != nil {
		t.Fatal(err)
	}
	sub.SetPendingLimits(-1, -1)
	nc.Flush()

	const w, h = 1920, 1080
	depth := make([]byte, 4*w*h)
	for i := 0; i < w*h; i++ {
		binary.LittleEndian.PutUint32(depth[4*i:], math.Float32bits(float32(i%w)*0.01+float32(i/w)))
	}
	info := []byte(`{"sensor":"DEPTH","intrinsics":{"width":1920,"height":1080}}`)
	scan := []byte(`{"ranges":[` + strings.Repeat("1.5,", 400000) + `1.5],"too_close":[]}`)
	s.pause() // PublishSensor runs on the host's goroutine
	for _, f := range []struct {
		sensor, kind string
		info, data   []byte
	}{{"SMALL", "depth", info, depth[:4*64]}, {"DEPTH", "depth", info, depth}, {"LASER", "scan", scan, nil}} {
		if err := s.pub.PublishSensor(f.sensor, f.kind, f.info, f.data); err != nil {
			t.Fatal(err)
		}
	}
	var a natsipc.Assembler
	var got []*natsipc.Frame
	msgs := 0
	for len(got) < 3 {
		m, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("after %d messages, %d frames: %v", msgs, len(got), err)
		}
		msgs++
		if len(m.Data)+len(m.Header.Get("Simvis-Info")) > 1<<20 {
			t.Errorf("a message of %d bytes", len(m.Data))
		}
		f, err := a.Add(m)
		if err != nil {
			t.Fatal(err)
		}
		if f != nil {
			got = append(got, f)
		}
	}
	if got[0].Sensor != "SMALL" || !bytes.Equal(got[0].Data, depth[:4*64]) {
		t.Errorf("small frame: %s, %d bytes", got[0].Sensor, len(got[0].Data))
	}
	if got[1].Sensor != "DEPTH" || got[1].Kind != "depth" || string(got[1].Info) != string(info) || !bytes.Equal(got[1].Data, depth) {
		t.Errorf("depth frame: %s %s, %d bytes of %d", got[1].Sensor, got[1].Kind, len(got[1].Data), len(depth))
	}
	// A pixel at a known place: row 1000, column 1234.
	if v := math.Float32frombits(binary.LittleEndian.Uint32(got[1].Data[4*(1000*w+1234):])); v != float32(1234)*0.01+1000 {
		t.Errorf("depth at (1234, 1000): %v", v)
	}
	if got[2].Kind != "scan" || !bytes.Equal(got[2].Info, scan) || got[2].Data != nil {
		t.Errorf("scan: %d bytes", len(got[2].Info))
	}
	if msgs != 1+8+2 || a.Dropped != 0 { // 8.3 MB in chunks of just under 1 MiB
		t.Errorf("%d messages, %d frames dropped", msgs, a.Dropped)
	}
}
