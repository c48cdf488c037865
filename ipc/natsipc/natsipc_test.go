package natsipc_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simvis/simvis/internal/testkit"

	"github.com/nats-io/nats.go"

	_ "github.com/simvis/simvis/elements"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/ipc/natsipc"
	"github.com/simvis/simvis/scene"
	_ "github.com/simvis/simvis/sensors"
)

var sizes = ipc.Sizes{Elements: 64, NameBytes: 4096, Values: 1024, Requests: 8, RequestBytes: 4096, LogBytes: 1 << 16}

// quickstartCopy copies the quickstart scene into a fresh directory.
func quickstartCopy(t *testing.T) string {
	return filepath.Join(testkit.CopyFiles(t, "../../scenes/quickstart", "scene.xml", "robot.gltf", "world.gltf"), "scene.xml")
}

// served is a host published over an embedded NATS server, cycling every
// 2 ms on its own goroutine until stopped.
type served struct {
	host   *ipc.Host
	pub    *natsipc.Publisher
	pause  func() // stops cycling; the host's scene may then be read
	resume func() // cycles again after pause
	stop   func() // stops and closes everything (the scene's values go with the region)
}

func serve(t *testing.T, srv *natsipc.Server, limits natsipc.Limits, warnings *syncBuffer) *served {
	t.Helper()
	return serveAt(t, srv.URL(), "test", limits, warnings)
}

// serveAt publishes a host as scene name through the server at serverURL
// (with the host role's credentials).
func serveAt(t *testing.T, serverURL, name string, limits natsipc.Limits, warnings *syncBuffer) *served {
	t.Helper()
	return serveConn(t, hostConn(t, serverURL), name, limits, warnings)
}

// serveFile publishes a host of sceneFile as scene "test" through srv.
func serveFile(t *testing.T, srv *natsipc.Server, sceneFile string) *served {
	t.Helper()
	return serveSceneConn(t, hostConn(t, srv.URL()), sceneFile, "test", natsipc.Limits{}, nil)
}

// fetchingMirror dials scene "test" through srv and mirrors it, fetching
// the host's files; both close when the test ends.
func fetchingMirror(t *testing.T, srv *natsipc.Server) (*ipc.Client, *ipc.Mirror) {
	t.Helper()
	c, err := ipc.Dial(srv.URL() + "/test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	m, err := ipc.NewMirrorWith(c, ipc.MirrorOptions{FetchFiles: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return c, m
}

// hostConn connects to serverURL as a host does: reconnecting for ever.
func hostConn(t *testing.T, serverURL string) *nats.Conn {
	t.Helper()
	var tlsOpts []nats.Option
	if ca := os.Getenv("SIMVIS_NATS_CA"); ca != "" {
		tlsOpts = append(tlsOpts, nats.RootCAs(ca))
	}
	nc, err := nats.Connect(serverURL, append(tlsOpts, nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))...)
	if err != nil {
		t.Fatal(err)
	}
	return nc
}

// serveConn publishes a host of the quickstart scene as scene name over
// connection nc, which it closes at the end.
func serveConn(t *testing.T, nc *nats.Conn, name string, limits natsipc.Limits, warnings *syncBuffer) *served {
	t.Helper()
	return serveSceneConn(t, nc, quickstartCopy(t), name, limits, warnings)
}

// serveSceneConn is serveConn of sceneFile.
func serveSceneConn(t *testing.T, nc *nats.Conn, sceneFile, name string, limits natsipc.Limits, warnings *syncBuffer) *served {
	t.Helper()
	opts := ipc.HostOptions{Sizes: sizes, Rate: 500}
	if warnings != nil {
		opts.Warnings = warnings
	}
	h, err := ipc.NewHost(filepath.Join(t.TempDir(), "region"), sceneFile, opts)
	if err != nil {
		nc.Close()
		t.Fatal(err)
	}
	pub, err := natsipc.Publish(h, nc, name, limits)
	if err != nil {
		t.Fatal(err)
	}
	var loopMu sync.Mutex
	stopLoop := testkit.Loop(t, h.Cycle, 2*time.Millisecond)
	pause := func() {
		loopMu.Lock()
		defer loopMu.Unlock()
		if stopLoop != nil {
			stopLoop()
			stopLoop = nil
		}
	}
	resume := func() {
		loopMu.Lock()
		defer loopMu.Unlock()
		if stopLoop == nil {
			stopLoop = testkit.Loop(t, h.Cycle, 2*time.Millisecond)
		}
	}
	var once sync.Once
	s := &served{host: h, pub: pub, pause: pause, resume: resume, stop: func() {
		once.Do(func() {
			pause()
			pub.Close()
			nc.Close()
			h.Close()
		})
	}}
	t.Cleanup(s.stop)
	return s
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startServer(t *testing.T, o natsipc.ServerOptions) *natsipc.Server {
	t.Helper()
	if o.Listen == "" {
		o.Listen = "127.0.0.1:0"
	}
	srv, err := natsipc.StartServer(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !ok(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// The shared-array client API works unchanged over NATS: look up, set,
// request (with the same rules), follow the log, mirror, notice a restart.
func TestClientOverNATS(t *testing.T) {
	srv := startServer(t, natsipc.ServerOptions{})
	s := serve(t, srv, natsipc.Limits{}, nil)
	c, err := ipc.Dial(srv.URL() + "/test")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	yaw, err := c.Param("R_POSE", "yaw")
	if err != nil || yaw != 5 {
		t.Fatalf("R_POSE.yaw at %d (%v)", yaw, err)
	}
	if v, err := c.Get(yaw); err != nil || v != 20 {
		t.Errorf("R_POSE.yaw reads %v (%v), want 20", v, err)
	}
	if err := c.Set(yaw, 75); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the host's value to come back", func() bool { v, _ := c.Get(yaw); return v == 75 })

	seq, err := c.Request(`<element type="rotation" name="PAN" insert_at="ROBOT/MAST_TOP" axis="0 0 1"/>`)
	if err != nil || seq != 5 {
		t.Fatalf("request: change %d, %v", seq, err)
	}
	_, err = c.Request(`<part file="../robot.gltf" name="P" insert_at="ROOT"/>`)
	var re *ipc.RequestError
	if !errors.As(err, &re) || !strings.Contains(re.Msg, "remote request 2 from ") || !strings.Contains(re.Msg, "leaves the scene's directory") {
		t.Errorf("escaping request: %v", err)
	}
	var recs []ipc.LogRecord
	f := c.Follow(0)
	eventually(t, "the change log", func() bool {
		more, err := f.Poll()
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, more...)
		return len(recs) >= 5
	})
	if len(recs) != 5 || !strings.HasPrefix(recs[4].Source, "remote request 1 from ") || !strings.Contains(recs[4].XML, `name="PAN"`) {
		t.Errorf("change log over NATS: %+v", recs)
	}

	m, err := ipc.NewMirror(c, nil, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pan, _ := c.Param("PAN", "angle")
	c.Set(pan, -33)
	eventually(t, "the mirror to follow", func() bool {
		if err := m.Sync(); err != nil {
			t.Fatal(err)
		}
		v, _ := m.Scene().Value("PAN", "angle")
		return v == -33
	})
	s.stop()
	if p := testkit.WorldPose(t, m.Scene(), "ROBOT"); math.Abs(p.Yaw-75) > 1e-9 {
		t.Errorf("mirror's ROBOT yaw %v, want 75", p.Yaw)
	}
	eventually(t, "the client to hear the host stopped", func() bool { return errors.Is(c.Check(), ipc.ErrHostStopped) })

	// A new host run under the same name: the mirror rebuilds.
	serve(t, srv, natsipc.Limits{}, nil)
	eventually(t, "the restart to be noticed", func() bool { return errors.Is(c.Check(), ipc.ErrHostReplaced) })
	if err := m.Sync(); err != nil {
		t.Fatal(err)
	}
	if m.Rebuilds != 1 || m.Applied() != 4 {
		t.Errorf("after the restart: %d rebuilds, at change %d", m.Rebuilds, m.Applied())
	}
	if _, ok := m.Scene().Element("PAN"); ok {
		t.Error("the rebuilt replica kept PAN from the earlier run")
	}
}

// Exposing the server needs credentials; clients without them are refused.
func TestAuthentication(t *testing.T) {
	if _, err := natsipc.StartServer(natsipc.ServerOptions{Listen: "0.0.0.0:0"}); err == nil || !strings.Contains(err.Error(), "give a token or a user and password") {
		t.Errorf("exposed without credentials: %v", err)
	}
	srv := startServer(t, natsipc.ServerOptions{Listen: "0.0.0.0:0", Token: "s3cret"})
	serve(t, srv, natsipc.Limits{}, nil)
	port := srv.Port()
	if _, err := ipc.Dial("nats://127.0.0.1:" + itoa(port) + "/test"); err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Errorf("without the token: %v", err)
	}
	if _, err := ipc.Dial("nats://wrong@127.0.0.1:" + itoa(port) + "/test"); err == nil {
		t.Error("a wrong token was accepted")
	}
	c, err := ipc.Dial("nats://s3cret@127.0.0.1:" + itoa(port) + "/test")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	users := startServer(t, natsipc.ServerOptions{User: "robot", Password: "pw"})
	serve(t, users, natsipc.Limits{}, nil)
	if _, err := ipc.Dial("nats://robot:nope@127.0.0.1:" + itoa(users.Port()) + "/test"); err == nil {
		t.Error("a wrong password was accepted")
	}
	if c, err := ipc.Dial(users.URL() + "/test"); err != nil {
		t.Error(err)
	} else {
		c.Close()
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// A flood from one client is bounded: writes beyond the pending limit are
// dropped and reported, requests beyond the queue are refused at once,
// and the host keeps cycling.
func TestFloodIsBounded(t *testing.T) {
	srv := startServer(t, natsipc.ServerOptions{})
	var warnings syncBuffer
	s := serve(t, srv, natsipc.Limits{PendingValues: 100, PendingRequests: 2}, &warnings)
	c, err := ipc.Dial(srv.URL() + "/test")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// 100,000 writes as fast as the connection takes them.
	for i := 0; i < 100000; i++ {
		if err := c.Set(0, float64(i)); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the drop report", func() bool { return strings.Contains(warnings.String(), "dropped") })
	// Requests sent all at once: some are refused as the queue is full.
	var wg sync.WaitGroup
	var mu sync.Mutex
	full := 0
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.Request(`<element type="pose" name="F` + itoa(i) + `" insert_at="ROOT"/>`)
			if errors.Is(err, ipc.ErrRequestLogFull) {
				mu.Lock()
				full++
				mu.Unlock()
			} else if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	// The host's cycle count as a client of its region reads it (the
	// host's own Region is its goroutine's: reading it here races).
	shm, err := ipc.Open(s.host.Region.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer shm.Close()
	hostCycles := shm.Conn().(ipc.Confirmer).HostCycles
	before := hostCycles()
	eventually(t, "the host to keep cycling", func() bool { return hostCycles() > before+5 })
	t.Logf("%d of 50 simultaneous requests refused as the queue was full; warnings: %q", full, warnings.String())
}

// The NATS benchmark runs end to end: every write from the 8 clients is
// applied or counted, the probe's writes reach the host and a mirror, the
// 10,000-command log is replayed. (Speed is reported by bench-ipc.)
func TestBench(t *testing.T) {
	if testing.Short() {
		t.Skip("benchmark run")
	}
	srv := startServer(t, natsipc.ServerOptions{})
	res, err := natsipc.BenchRoles(srv.URL(), srv.URLFor(natsipc.RoleDriver), 500, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent <= 0 || res.Applied <= 0 || res.WriteLatency.N < 50 || res.MirrorLag.N < 25 || res.CatchUp <= 0 {
		t.Errorf("%+v", res)
	}
	t.Logf("%+v", res)
}

// A mirror on a machine without the host's scene directory fetches the
// model files over NATS (here forced with FetchFiles); the host serves
// only files inside the directories its change log names.
func TestMirrorFetchesFiles(t *testing.T) {
	srv := startServer(t, natsipc.ServerOptions{})
	s := serve(t, srv, natsipc.Limits{}, nil)
	hostDir := filepath.Dir(s.host.Scene.Parts()[0].File)
	big := make([]byte, 1300<<10) // more than two reply chunks
	for i := range big {
		big[i] = byte(i * 7)
	}
	os.WriteFile(filepath.Join(hostDir, "big.bin"), big, 0o644)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("no"), 0o644)
	os.Symlink(outside, filepath.Join(hostDir, "out"))

	_, m := fetchingMirror(t, srv)
	for _, p := range m.Scene().Parts() {
		if strings.HasPrefix(p.File, hostDir) {
			t.Errorf("part %s read from the host's directory %s", p.Name, p.File)
		}
	}
	s.pause()
	for _, frame := range []string{"ROBOT", "ROBOT_CAM", "ROBOT/MAST_TOP"} {
		want, got := testkit.WorldPose(t, s.host.Scene, frame), testkit.WorldPose(t, m.Scene(), frame)
		if want != got {
			t.Errorf("%s: host %v, replica %v", frame, want, got)
		}
	}
	if n := len(m.Scene().Parts()[0].Node.Children()); n == 0 {
		t.Error("the fetched world model is empty")
	}
	s.stop()

	s2 := serve(t, srv, natsipc.Limits{}, nil)
	dir2 := filepath.Dir(s2.host.Scene.Parts()[0].File)
	// A model larger than two reply chunks, loaded by a request: served
	// whole. Files nobody loaded are not served, whatever they are.
	robot, _ := os.ReadFile(filepath.Join(dir2, "robot.gltf"))
	var doc map[string]any
	json.Unmarshal(robot, &doc)
	doc["asset"].(map[string]any)["extras"] = map[string]any{"padding": string(bytes.Repeat([]byte("x"), len(big)))}
	bigModel, _ := json.Marshal(doc)
	os.WriteFile(filepath.Join(dir2, "big.gltf"), bigModel, 0o644)
	os.WriteFile(filepath.Join(dir2, "big.bin"), big, 0o644)
	os.WriteFile(filepath.Join(dir2, ".secret"), []byte("no"), 0o600)
	os.Symlink(outside, filepath.Join(dir2, "out"))
	c2, err := ipc.Dial(srv.URL() + "/test")
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := c2.Request(`<part file="big.gltf" name="BIG" insert_at="ROOT"/>`); err != nil {
		t.Fatal(err)
	}
	conn, err := natsipc.Dial(srv.URL() + "/test")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if data, err := conn.FetchFile(dir2, "big.gltf"); err != nil || string(data) != string(bigModel) {
		t.Errorf("big file: %d bytes, %v", len(data), err)
	}
	for _, tc := range []struct{ dir, path string }{
		{dir2, "scene.xml"}, {dir2, ".secret"}, {dir2, "big.bin"}, {dir2, "../scene.xml"},
		{dir2, "out/secret"}, {outside, "secret"}, {dir2, "missing.gltf"},
	} {
		want := tc.path + " in " + tc.dir + " is not a file the scene's logged commands loaded"
		if _, err := conn.FetchFile(tc.dir, tc.path); err == nil || err.Error() != want {
			t.Errorf("fetch %s in %s: %v, want %q", tc.path, tc.dir, err, want)
		}
	}
}

// writeCert writes a self-signed certificate for 127.0.0.1 and its key.
func writeCert(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "simvis test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
	return cert, key
}

// With TLS files the server speaks TLS: a client trusting the certificate
// (SIMVIS_NATS_CA) connects with tls://, a plain one cannot.
func TestTLS(t *testing.T) {
	cert, key := writeCert(t, t.TempDir())
	srv := startServer(t, natsipc.ServerOptions{Token: "s3cret", TLSCert: cert, TLSKey: key})
	t.Setenv("SIMVIS_NATS_CA", cert)
	if !strings.HasPrefix(srv.URL(), "tls://") {
		t.Fatalf("server URL %s", srv.URL())
	}
	serve(t, srv, natsipc.Limits{}, nil)
	c, err := ipc.Dial(srv.URL() + "/test")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Param("R_POSE", "yaw"); err != nil {
		t.Error(err)
	}
	t.Setenv("SIMVIS_NATS_CA", "")
	if _, err := ipc.Dial(srv.URL() + "/test"); err == nil {
		t.Error("a client that does not trust the certificate connected")
	}
}

// A sensor frame larger than the server's message limit arrives in
// chunks that the Assembler puts together; one whose description alone
// does not fit is refused with ErrFrameTooBig (the host reports it and
// goes on); one that fits arrives whole with its kind and info.
func TestSensorFrames(t *testing.T) {
	srv := startServer(t, natsipc.ServerOptions{MaxPayload: 64 << 10})
	s := serve(t, srv, natsipc.Limits{}, nil)
	s.pause() // frames are published from the host's goroutine
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	sub, _ := nc.SubscribeSync("simvis.test.sensor.CAM")
	nc.Flush()
	big := make([]byte, 100<<10)
	for i := range big {
		big[i] = byte(i / 1000)
	}
	if err := s.pub.PublishSensor("CAM", "image", []byte(`{"sensor":"CAM"}`), big); err != nil {
		t.Errorf("100 KiB frame on a 64 KiB server: %v", err)
	}
	if err := s.pub.PublishSensor("CAM", "image", bytes.Repeat([]byte("x"), 64<<10), big); !errors.Is(err, natsipc.ErrFrameTooBig) {
		t.Errorf("a 64 KiB description on a 64 KiB server: %v", err)
	}
	if err := s.pub.PublishSensor("CAM", "image", []byte(`{"sensor":"CAM"}`), make([]byte, 12)); err != nil {
		t.Fatal(err)
	}
	var a natsipc.Assembler
	for i, want := range []int{-1, len(big), 12} {
		msg, err := sub.NextMsg(2 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		f, err := a.Add(msg)
		switch {
		case err != nil:
			t.Fatal(err)
		case want < 0 && f != nil:
			t.Errorf("message %d: a frame from the first chunk", i)
		case want >= 0 && (f == nil || f.Kind != "image" || string(f.Info) != `{"sensor":"CAM"}` || len(f.Data) != want):
			t.Errorf("message %d: frame %v", i, f != nil)
		case want == len(big) && !bytes.Equal(f.Data, big):
			t.Error("the reassembled frame differs")
		}
	}
}
