package web_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coder/websocket"
	_ "github.com/simvis/simvis/elements"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
	_ "github.com/simvis/simvis/sensors" // the quickstart scene has a camera
	"github.com/simvis/simvis/web"
	"github.com/simvis/simvis/web/client"
)

// sizes keep the test regions small (the defaults map a 64 MiB log).
var sizes = ipc.Sizes{Elements: 1024, NameBytes: 1 << 16, Values: 8192, Requests: 16, RequestBytes: 16 << 10, LogBytes: 4 << 20}

// quickstart copies the quickstart scene into a fresh directory and
// returns the scene file's path.
func quickstart(t *testing.T) string {
	t.Helper()
	return filepath.Join(testkit.CopyFiles(t, "../scenes/quickstart", "scene.xml", "robot.gltf", "world.gltf"), "scene.xml")
}

// hostRun is an in-process host cycling in real time on a goroutine, as
// simvis serve runs it.
type hostRun struct {
	H      *ipc.Host
	Dir    string // the scene's directory
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

func startHost(t *testing.T, region, sceneFile string, rate float64) *hostRun {
	t.Helper()
	h, err := ipc.NewHost(region, sceneFile, ipc.HostOptions{Sizes: sizes, Rate: rate, Warnings: &strings.Builder{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &hostRun{H: h, Dir: filepath.Dir(sceneFile), cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- h.Run(ctx, 0, nil) }()
	t.Cleanup(func() {
		if err := r.stop(); err != nil {
			t.Error(err)
		}
		h.Close()
	})
	return r
}

// stop ends the host's cycles (the region stays up, its values frozen),
// so that the test may read H.Scene.
func (r *hostRun) stop() (err error) {
	r.once.Do(func() {
		r.cancel()
		err = <-r.done
	})
	return err
}

// page is the page files the tests serve: the browser program is not
// needed to prove the server.
var page = fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>simvis</title>")}}

// listen starts a server showing the host at region, on loopback.
func listen(t *testing.T, region string, opts web.Options) *web.Server {
	t.Helper()
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.Dial == nil {
		opts.Dial = func() (*ipc.Client, error) { return ipc.Open(region) }
	}
	if opts.Assets == nil {
		opts.Assets = page
	}
	if opts.Rate == 0 {
		opts.Rate = 100
	}
	s, err := web.Listen(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func wsURL(t *testing.T, s *web.Server) string {
	t.Helper()
	u, err := client.WebSocketURL(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// dial connects a client.Conn to s, closed when the test ends.
func dial(t *testing.T, s *web.Server, token string) *client.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, wsURL(t, s), token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// rawDial opens a bare WebSocket to s (offering the subprotocol unless
// opts names others), for what client.Conn would never send.
func rawDial(t *testing.T, s *web.Server, token string, opts *websocket.DialOptions) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	u := wsURL(t, s)
	if token != "" {
		u += "?token=" + url.QueryEscape(token)
	}
	if opts == nil {
		opts = &websocket.DialOptions{}
	}
	if opts.Subprotocols == nil {
		opts.Subprotocols = []string{client.Subprotocol}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, u, opts)
	if err == nil {
		t.Cleanup(func() { ws.CloseNow() })
	}
	return ws, resp, err
}

// status is the HTTP status of a refused handshake.
func status(resp *http.Response) int {
	if resp == nil {
		return 0
	}
	return resp.StatusCode
}

func send(t *testing.T, ws *websocket.Conn, v any) {
	t.Helper()
	msg, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ws.Write(ctx, websocket.MessageText, msg); err != nil {
		t.Fatal(err)
	}
}

// nextReply reads past the welcome and the states to the next reply.
func nextReply(t *testing.T, ws *websocket.Conn) client.Reply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		typ, msg, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("waiting for a reply: %v", err)
		}
		if typ != websocket.MessageText {
			continue
		}
		var r client.Reply
		if err := json.Unmarshal(msg, &r); err != nil {
			t.Fatalf("text message %q: %v", msg, err)
		}
		if r.Op == client.OpReply {
			return r
		}
	}
}

// eventually polls cond until it holds or 10 s passed.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// syncUntil syncs m until cond holds; errors of Sync are kept for the
// failure message only (a state may come between a host's two steps).
func syncUntil(t *testing.T, m *ipc.Mirror, what string, cond func() bool) {
	t.Helper()
	var last error
	for deadline := time.Now().Add(10 * time.Second); ; {
		last = m.Sync()
		if last == nil && cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (last sync: %v)", what, last)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func param(t *testing.T, c *ipc.Client, element, p string) int {
	t.Helper()
	i, err := c.Param(element, p)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// sameScene compares every frame's world pose and every value of the
// host's scene with the replica's.
func sameScene(t *testing.T, host, replica *scene.Scene) {
	t.Helper()
	frames := host.FrameNames()
	if len(frames) < 5 {
		t.Fatalf("the host has only frames %v: nothing worth comparing", frames)
	}
	for _, name := range frames {
		want, got := testkit.WorldPose(t, host, name), testkit.WorldPose(t, replica, name)
		if d := math.Max(math.Abs(want.X-got.X), math.Max(math.Abs(want.Y-got.Y), math.Max(math.Abs(want.Z-got.Z),
			math.Max(math.Abs(want.Roll-got.Roll), math.Max(math.Abs(want.Pitch-got.Pitch), math.Abs(want.Yaw-got.Yaw)))))); d > 1e-9 {
			t.Errorf("frame %s: host %+v, replica %+v", name, want, got)
		}
	}
	for _, e := range host.Elements() {
		for _, p := range e.Params {
			want, _ := host.Value(e.Name, p.Name)
			got, err := replica.Value(e.Name, p.Name)
			if err != nil || got != want {
				t.Errorf("%s.%s: host %v, replica %v (%v)", e.Name, p.Name, want, got, err)
			}
		}
	}
}

// fetchLog is a client.Conn that notes the files fetched through it.
type fetchLog struct {
	*client.Conn
	mu    sync.Mutex
	files map[string][]byte
}

func (f *fetchLog) FetchFile(dir, path string) ([]byte, error) {
	data, err := f.Conn.FetchFile(dir, path)
	if err == nil {
		f.mu.Lock()
		f.files[path] = data
		f.mu.Unlock()
	}
	return data, err
}

// A mirror through the web server replicates the host: every frame's
// world pose and every value after values were set on the host, and the
// models, whose files came through the protocol's file op.
func TestMirrorThroughWeb(t *testing.T) {
	region := filepath.Join(t.TempDir(), "region")
	hr := startHost(t, region, quickstart(t), 200)
	s := listen(t, region, web.Options{})
	shm, err := ipc.Open(region)
	if err != nil {
		t.Fatal(err)
	}
	defer shm.Close()

	conn := &fetchLog{Conn: dial(t, s, ""), files: map[string][]byte{}}
	m, err := ipc.NewMirrorWith(ipc.NewClient(conn), ipc.MirrorOptions{FetchFiles: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, f := range []string{"robot.gltf", "world.gltf"} {
		want, err := os.ReadFile(filepath.Join(hr.Dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := conn.files[f]; !ok || !bytes.Equal(got, want) {
			t.Errorf("%s: fetched %v, %d bytes; want the host's %d bytes", f, ok, len(got), len(want))
		}
	}

	yaw, x := param(t, shm, "R_POSE", "yaw"), param(t, shm, "R_POSE", "x")
	shm.Set(yaw, 77)
	shm.Set(x, 0.5)
	syncUntil(t, m, "the set values", func() bool {
		y, _ := m.Scene().Value("R_POSE", "yaw")
		x, _ := m.Scene().Value("R_POSE", "x")
		return y == 77 && x == 0.5
	})
	// The host's scene is read once its cycles stop; the state after the
	// last cycle reaches the mirror within a few of the server's periods.
	if err := hr.stop(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if err := m.Sync(); err != nil {
		t.Fatal(err)
	}
	if len(m.Scene().Parts()) != 2 || m.Applied() != 4 {
		t.Errorf("the replica has %d parts at change %d, want 2 at 4", len(m.Scene().Parts()), m.Applied())
	}
	sameScene(t, hr.H.Scene, m.Scene())
}

// Tokens give roles: a driver sets and requests; a viewer can do
// neither, whether client.Conn stops it or the server does; a page
// without a token is a viewer on loopback; a wrong token is refused.
func TestRoles(t *testing.T) {
	region := filepath.Join(t.TempDir(), "region")
	startHost(t, region, quickstart(t), 200)
	s := listen(t, region, web.Options{DriverToken: "drive-secret", ViewerToken: "view-secret", Requests: true})
	shm, err := ipc.Open(region)
	if err != nil {
		t.Fatal(err)
	}
	defer shm.Close()
	yaw := param(t, shm, "R_POSE", "yaw")

	drv := dial(t, s, "drive-secret")
	if r := drv.Welcome().Role; r != client.Driver {
		t.Fatalf("driver token: role %q", r)
	}
	m, err := ipc.NewMirror(ipc.NewClient(drv), nil, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := drv.Set(yaw, 55); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the driver's set on the host", func() bool { v, _ := shm.Get(yaw); return v == 55 })
	seq, err := drv.Request(`<part file="robot.gltf" name="ROBOT2" insert_at="WORLD" pose_offset="1 2 0 0 0 90"/>`, 5*time.Second)
	if err != nil || seq != 5 {
		t.Fatalf("driver's request: change %d, %v; want change 5", seq, err)
	}
	syncUntil(t, m, "the requested part in the mirror", func() bool {
		_, err := m.Scene().Transform("ROBOT2", scene.WorldFrame)
		return err == nil && len(m.Scene().Parts()) == 3
	})
	var refused *ipc.RequestError
	if _, err := drv.Request(`<part file="robot.gltf" name="ROBOT2" insert_at="WORLD"/>`, 5*time.Second); !errors.As(err, &refused) {
		t.Errorf("a request the host refuses: %v, want an *ipc.RequestError", err)
	}

	view := dial(t, s, "view-secret")
	if r := view.Welcome().Role; r != client.Viewer {
		t.Fatalf("viewer token: role %q", r)
	}
	if err := view.Set(yaw, 99); !errors.Is(err, client.ErrViewer) {
		t.Errorf("viewer's set: %v", err)
	}
	if _, err := view.Request(`<element type="pose" name="V" insert_at="ROOT"/>`, time.Second); !errors.Is(err, client.ErrViewer) {
		t.Errorf("viewer's request: %v", err)
	}
	// A page that skips client.Conn's check is refused by the server.
	ws, _, err := rawDial(t, s, "view-secret", nil)
	if err != nil {
		t.Fatal(err)
	}
	denied := s.Stats().Denied
	send(t, ws, map[string]any{"op": "set", "id": 7, "epoch": fmt.Sprint(shm.Epoch()), "index": yaw, "value": 99})
	if r := nextReply(t, ws); r.ID != 7 || !strings.Contains(r.Error, "viewer") {
		t.Errorf("viewer's raw set: %+v", r)
	}
	send(t, ws, map[string]any{"op": "request", "id": 8, "xml": `<element type="pose" name="V" insert_at="ROOT"/>`})
	if r := nextReply(t, ws); r.ID != 8 || !strings.Contains(r.Error, "viewer") {
		t.Errorf("viewer's raw request: %+v", r)
	}
	if d := s.Stats().Denied - denied; d != 2 {
		t.Errorf("%d commands denied, want 2", d)
	}
	time.Sleep(50 * time.Millisecond) // cycles that would have taken a set
	if v, _ := shm.Get(yaw); v != 55 {
		t.Errorf("the viewer's set reached the host: yaw %v", v)
	}
	if _, err := shm.Element("V"); err == nil {
		t.Error("the viewer's request reached the host")
	}

	for _, token := range []string{"", "wrong", "drive-secre", "view-secret "} {
		if _, resp, err := rawDial(t, s, token, nil); err == nil || status(resp) != http.StatusUnauthorized {
			t.Errorf("token %q with both tokens set: %v (HTTP %d), want 401", token, err, status(resp))
		}
	}
	// The bearer header carries a token as the query does.
	if _, _, err := rawDial(t, s, "", &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer drive-secret"}}}); err != nil {
		t.Errorf("bearer driver token: %v", err)
	}
}

// Without a viewer token, a loopback page without a token watches.
func TestAnonymousViewer(t *testing.T) {
	region := filepath.Join(t.TempDir(), "region")
	startHost(t, region, quickstart(t), 200)
	for _, opts := range []web.Options{{}, {DriverToken: "drive-secret", Requests: true}} {
		s := listen(t, region, opts)
		c := dial(t, s, "")
		if r := c.Welcome().Role; r != client.Viewer {
			t.Errorf("tokens %q/%q: a page without a token has role %q", opts.DriverToken, opts.ViewerToken, r)
		}
		ws, _, err := rawDial(t, s, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		send(t, ws, map[string]any{"op": "set", "id": 1, "epoch": fmt.Sprint(c.Epoch()), "index": 0, "value": 1})
		if r := nextReply(t, ws); !strings.Contains(r.Error, "viewer") {
			t.Errorf("an anonymous page's set: %+v", r)
		}
		if _, resp, err := rawDial(t, s, "wrong", nil); err == nil || status(resp) != http.StatusUnauthorized {
			t.Errorf("a wrong token: %v (HTTP %d), want 401", err, status(resp))
		}
	}
}

// Listen refuses what would expose a host: no token off loopback, the
// same token for both roles.
func TestListenRefuses(t *testing.T) {
	dialNone := func() (*ipc.Client, error) { return nil, errors.New("no host") }
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		s, err := web.Listen(web.Options{Addr: addr, Dial: dialNone, Assets: page})
		if !errors.Is(err, web.ErrTokenRequired) {
			t.Errorf("%s without tokens: %v, want ErrTokenRequired", addr, err)
		}
		if s != nil {
			s.Close()
		}
	}
	if s, err := web.Listen(web.Options{Addr: "127.0.0.1:0", Dial: dialNone, Assets: page, DriverToken: "same", ViewerToken: "same"}); err == nil {
		s.Close()
		t.Error("equal driver and viewer tokens accepted")
	}
	// With a token, any address is fine.
	s, err := web.Listen(web.Options{Addr: "127.0.0.1:0", Dial: dialNone, Assets: page, ViewerToken: "v"})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// A foreign Origin is refused, the server's own accepted; a tokenless
// request that names the server by a non-loopback Host (DNS rebinding) is
// refused before anything is served.
func TestOriginAndHost(t *testing.T) {
	region := filepath.Join(t.TempDir(), "region")
	startHost(t, region, quickstart(t), 200)
	s := listen(t, region, web.Options{Origins: []string{"trusted.example:*"}})
	own := strings.TrimSuffix(s.URL(), "/")
	hostport := strings.TrimPrefix(own, "http://")
	origin := func(o string) *websocket.DialOptions {
		return &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {o}}}
	}

	for _, o := range []string{"http://evil.example", "http://" + hostport + ".evil.example", "null", "http://localhost.evil.example:" + strings.Split(hostport, ":")[1]} {
		if _, resp, err := rawDial(t, s, "", origin(o)); err == nil || status(resp) != http.StatusForbidden {
			t.Errorf("origin %s: %v (HTTP %d), want 403", o, err, status(resp))
		}
	}
	for _, o := range []string{own, "http://trusted.example:8443"} {
		if _, _, err := rawDial(t, s, "", origin(o)); err != nil {
			t.Errorf("origin %s: %v", o, err)
		}
	}
	refused := s.Stats().Refused
	if _, resp, err := rawDial(t, s, "", &websocket.DialOptions{Host: "rebound.example:" + strings.Split(hostport, ":")[1]}); err == nil || status(resp) != http.StatusForbidden {
		t.Errorf("a non-loopback Host without a token: %v (HTTP %d), want 403", err, status(resp))
	}
	if s.Stats().Refused != refused+1 {
		t.Errorf("the rebinding request was not counted as refused")
	}
	if _, _, err := rawDial(t, s, "", &websocket.DialOptions{Host: "localhost:" + strings.Split(hostport, ":")[1]}); err != nil {
		t.Errorf("Host localhost: %v", err)
	}
	// The page itself is served with the headers that keep it from being
	// framed or sniffed.
	resp, err := http.Get(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("page: HTTP %d, headers %v", resp.StatusCode, resp.Header)
	}
}

// A server with a token admits pages that name it by any Host: the token,
// not the name, is the proof.
func TestTokenAnyHost(t *testing.T) {
	region := filepath.Join(t.TempDir(), "region")
	startHost(t, region, quickstart(t), 200)
	s := listen(t, region, web.Options{ViewerToken: "view-secret"})
	port := s.URL()[strings.LastIndex(s.URL(), ":")+1 : len(s.URL())-1]
	if _, _, err := rawDial(t, s, "view-secret", &websocket.DialOptions{Host: "viewer.example:" + port}); err != nil {
		t.Errorf("a token and a non-loopback Host: %v", err)
	}
}

// MaxClients bounds the pages connected at once; a page that goes makes
// room for another.
func TestClientLimit(t *testing.T) {
	region := filepath.Join(t.TempDir(), "region")
	startHost(t, region, quickstart(t), 200)
	s := listen(t, region, web.Options{MaxClients: 2})
	a := dial(t, s, "")
	dial(t, s, "")
	if _, resp, err := rawDial(t, s, "", nil); err == nil || status(resp) != http.StatusServiceUnavailable {
		t.Errorf("a third page: %v (HTTP %d), want 503", err, status(resp))
	}
	if st := s.Stats(); st.Clients != 2 || st.Refused != 1 {
		t.Errorf("stats %+v, want 2 clients and 1 refused", st)
	}
	a.Close()
	eventually(t, "the first page to leave", func() bool { return s.Stats().Clients == 1 })
	dial(t, s, "")
}

// manyPoses is a scene whose value table is large: each state is tens of
// kilobytes, so that a page that never reads fills its TCP buffers fast.
func manyPoses(t *testing.T, n int) string {
	t.Helper()
	dir := filepath.Dir(quickstart(t))
	var b strings.Builder
	b.WriteString("<scene>\n")
	for i := range n {
		fmt.Fprintf(&b, `<element type="pose" name="P%d" insert_at="ROOT" x="%d"/>`+"\n", i, i)
	}
	b.WriteString("</scene>\n")
	f := filepath.Join(dir, "many.xml")
	if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// A page that never reads holds up neither the host nor other pages: the
// host keeps its cycle rate, another page keeps getting states, and the
// states the stuck page misses are counted as dropped.
func TestSlowPage(t *testing.T) {
	const hostRate, rate = 100, 100
	region := filepath.Join(t.TempDir(), "region")
	startHost(t, region, manyPoses(t, 600), hostRate)
	s := listen(t, region, web.Options{Rate: rate})
	good := dial(t, s, "")
	// The first and the last value change all the time, so that every
	// state carries the whole table (pages get the values that changed).
	writer, err := ipc.Open(region)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	last := 600*6 - 1
	stopWriting, writerDone := make(chan struct{}), make(chan struct{})
	// The writer ends before its client closes (the deferred Close runs
	// after this): a Set racing Close read an unmapped region.
	defer func() { close(stopWriting); <-writerDone }()
	go func() {
		defer close(writerDone)
		for i := 0; ; i++ {
			select {
			case <-stopWriting:
				return
			case <-time.After(time.Millisecond):
			}
			writer.Set(0, float64(i%1000))
			writer.Set(last, float64(i%360))
		}
	}()

	// The stuck page: it reads its welcome, then nothing.
	stuck, _, err := rawDial(t, s, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, _, err := stuck.Read(ctx); err != nil {
		t.Fatal(err)
	}

	// Wait until its buffers are full: states go on being published but
	// no more are written to it.
	eventually(t, "the stuck page's buffers to fill", func() bool { return s.Stats().Dropped > 20 })

	const window = 2 * time.Second
	// The host's cycle count as a client reads it (the host's own Region
	// is its goroutine's).
	shm, err := ipc.Open(region)
	if err != nil {
		t.Fatal(err)
	}
	defer shm.Close()
	hostCycles := shm.Conn().(ipc.Confirmer).HostCycles
	cycles0 := hostCycles()
	goodStates0, _, _ := good.Stats()
	dropped0 := s.Stats().Dropped
	time.Sleep(window)
	cycles := hostCycles() - cycles0
	goodStates, _, _ := good.Stats()
	goodStates -= goodStates0
	st := s.Stats()
	t.Logf("in %v: %d host cycles, %d states to the other page, %d dropped for the stuck one", window, cycles, goodStates, st.Dropped-dropped0)
	// Two cores are shared with the rest of the tests (and -race slows
	// the server's encoding): half the host's rate and a quarter of the
	// server's are far above what a host or page held up by the stuck
	// page would get (none).
	if want := uint64(hostRate * window.Seconds()); cycles < want/2 {
		t.Errorf("the host ran %d cycles in %v, want about %d", cycles, window, want)
	}
	if want := uint64(rate * window.Seconds()); goodStates < want/4 {
		t.Errorf("the other page got %d states in %v, want about %d", goodStates, window, want)
	}
	if st.Clients != 2 || st.SlowClosed != 0 {
		t.Errorf("stats %+v: the stuck page should still be connected (it has %v to take a message)", st, 10*time.Second)
	}
	d := st.Dropped - dropped0
	if d < uint64(rate*window.Seconds())/4 {
		t.Errorf("%d states dropped for the stuck page in %v, want about %d", d, window, int(rate*window.Seconds()))
	}
	_, cycle, age := good.Stats()
	if age > time.Second || cycle == 0 {
		t.Errorf("the other page's newest state is of cycle %d, %v old", cycle, age)
	}

	// The stuck page reads again: it gets the newest state, which tells
	// it how many it missed.
	stuck.SetReadLimit(client.MaxServerMessage + 1024)
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		typ, msg, err := stuck.Read(ctx)
		if err != nil {
			t.Fatalf("the stuck page, reading again: %v", err)
		}
		var h client.State
		if typ == websocket.MessageBinary && msg[0] == client.KindState {
			if _, _, err := client.DecodeBinary(msg, &h); err != nil {
				t.Fatal(err)
			}
			if h.Dropped >= d {
				break
			}
		}
	}
}

// binarySTL writes a binary STL of n small triangles: a model file of
// 84 + 50n bytes.
func binarySTL(t *testing.T, path string, n int) []byte {
	t.Helper()
	buf := make([]byte, 84, 84+50*n)
	copy(buf, "simvis test")
	binary.LittleEndian.PutUint32(buf[80:], uint32(n))
	for i := range n {
		var tri [50]byte
		x := float32(i%100) * 0.01
		y := float32(i/100) * 0.01
		for k, v := range []float32{0, 0, 1, x, y, 0, x + 0.01, y, 0, x, y + 0.01, 0} {
			binary.LittleEndian.PutUint32(tri[4*k:], math.Float32bits(v))
		}
		buf = append(buf, tri[:]...)
	}
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	return buf
}

// The file op serves the files the change log lists and nothing else:
// not a path no record names, not one with "..", not a listed file that
// became a symbolic link out of the scene or a FIFO; a listed file larger
// than a chunk comes back whole.
func TestFiles(t *testing.T) {
	region := filepath.Join(t.TempDir(), "region")
	sceneFile := quickstart(t)
	hr := startHost(t, region, sceneFile, 200)
	big := binarySTL(t, filepath.Join(hr.Dir, "big.stl"), 30000)
	if len(big) <= client.FileChunk {
		t.Fatalf("big.stl has %d bytes, not over a chunk", len(big))
	}
	secret := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(secret, []byte("not for pages"), 0o644)
	os.WriteFile(filepath.Join(hr.Dir, "unlisted.gltf"), []byte("{}"), 0o644)

	s := listen(t, region, web.Options{DriverToken: "drive-secret", Requests: true})
	c := dial(t, s, "drive-secret")
	if _, err := c.Request(`<part file="big.stl" name="BIG" insert_at="WORLD"/>`, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	var dir string
	eventually(t, "the request's record", func() bool {
		recs, _ := c.ReadLog(&ipc.LogCursor{})
		for _, r := range recs {
			for _, f := range r.Files {
				if f.Path == "big.stl" {
					dir = r.Dir
					return true
				}
			}
		}
		return false
	})

	got, err := c.FetchFile(dir, "big.stl")
	if err != nil || !bytes.Equal(got, big) {
		t.Errorf("big.stl: %d bytes (%v), want the %d on disk", len(got), err, len(big))
	}

	denied := s.Stats().Denied
	for _, p := range []string{"unlisted.gltf", "scene.xml", "../" + filepath.Base(hr.Dir) + "/robot.gltf", "./robot.gltf", "/etc/passwd", ""} {
		if _, err := c.FetchFile(dir, p); err == nil || !strings.Contains(err.Error(), "not a file the scene's logged commands loaded") {
			t.Errorf("unlisted %q: %v", p, err)
		}
	}
	if _, err := c.FetchFile(filepath.Dir(dir), filepath.Base(dir)+"/robot.gltf"); err == nil {
		t.Error("a listed file by another directory was served")
	}
	if d := s.Stats().Denied - denied; d != 7 {
		t.Errorf("%d file requests denied, want 7", d)
	}

	// Listed files replaced after the host loaded them: a link out of the
	// scene's directory, a FIFO (which must not stall the server).
	if err := os.Remove(filepath.Join(hr.Dir, "world.gltf")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(hr.Dir, "world.gltf")); err != nil {
		t.Fatal(err)
	}
	if data, err := c.FetchFile(dir, "world.gltf"); err == nil || !strings.Contains(err.Error(), "leads out") || strings.Contains(err.Error(), secret) {
		t.Errorf("a listed link out of the scene: %q, %v", data, err)
	}
	os.Remove(filepath.Join(hr.Dir, "robot.gltf"))
	if err := mkfifo(filepath.Join(hr.Dir, "robot.gltf")); err != nil {
		t.Skip(err)
	}
	start := time.Now()
	if _, err := c.FetchFile(dir, "robot.gltf"); err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("a listed FIFO: %v after %v", err, time.Since(start))
	}
	// The page is still served.
	if got, err := c.FetchFile(dir, "big.stl"); err != nil || len(got) != len(big) {
		t.Errorf("after the refusals: %d bytes, %v", len(got), err)
	}
}

// A server that fetches the files from its host (FetchFiles: a server
// on another machine, following a web server here) serves them checked
// against the change log's hashes.
func TestFilesFetchedThroughChain(t *testing.T) {
	region := filepath.Join(t.TempDir(), "region")
	hr := startHost(t, region, quickstart(t), 200)
	big := binarySTL(t, filepath.Join(hr.Dir, "big.stl"), 30000)
	near := listen(t, region, web.Options{DriverToken: "d1", Requests: true})
	far := listen(t, "", web.Options{DriverToken: "d2", Requests: true, FetchFiles: true,
		Dial: func() (*ipc.Client, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := client.Dial(ctx, wsURL(t, near), "d1")
			if err != nil {
				return nil, err
			}
			return ipc.NewClient(c), nil
		}})
	c := dial(t, far, "d2")
	if _, err := c.Request(`<part file="big.stl" name="BIG" insert_at="WORLD"/>`, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	m, err := ipc.NewMirrorWith(ipc.NewClient(c), ipc.MirrorOptions{FetchFiles: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	syncUntil(t, m, "the requested part through two servers", func() bool { return len(m.Scene().Parts()) == 3 })
	recs, _ := c.ReadLog(&ipc.LogCursor{})
	got, err := c.FetchFile(recs[0].Dir, "big.stl")
	if err != nil || !bytes.Equal(got, big) {
		t.Errorf("big.stl through two servers: %d bytes (%v), want %d", len(got), err, len(big))
	}
	// A file changed on the host since it was logged (and before any
	// page asked for it): its hash no longer matches, and the far server
	// says so rather than serve it.
	os.WriteFile(filepath.Join(hr.Dir, "extra.gltf"), []byte(`{"asset":{"version":"2.0"}}`), 0o644)
	if _, err := c.Request(`<part file="extra.gltf" name="EXTRA" insert_at="WORLD"/>`, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(hr.Dir, "extra.gltf"), []byte(`{"asset":{"version":"2.0"},"scenes":[]}`), 0o644)
	eventually(t, "the far server to list extra.gltf", func() bool {
		_, err := c.FetchFile(recs[0].Dir, "extra.gltf")
		return err != nil && !strings.Contains(err.Error(), "not a file the scene's logged commands loaded")
	})
	if _, err := c.FetchFile(recs[0].Dir, "extra.gltf"); err == nil || !strings.Contains(err.Error(), "SHA-256") {
		t.Errorf("a file changed since it was logged: %v", err)
	}
}

// syncLog is a Log writer tests read while the server writes.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A host that stops and a new one under the same name: a mirror through
// the web rebuilds once and shows the new run, a driver drives the new
// run, and the server logs the outage once and the return once.
func TestHostRestart(t *testing.T) {
	region := filepath.Join(t.TempDir(), "region")
	h1 := startHost(t, region, quickstart(t), 200)
	var log syncLog
	s := listen(t, region, web.Options{DriverToken: "drive-secret", Log: &log})
	c := dial(t, s, "drive-secret")
	m, err := ipc.NewMirrorWith(ipc.NewClient(c), ipc.MirrorOptions{FetchFiles: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	epoch1 := c.Epoch()

	h1.stop()
	h1.H.Close()
	eventually(t, "the server to see the host gone", func() bool { return strings.Contains(log.String(), "not available") })
	eventually(t, "the page to learn the host stopped", func() bool { return errors.Is(c.Check(), ipc.ErrHostStopped) })
	time.Sleep(200 * time.Millisecond) // a few of the follower's failed reads: logged once

	// The new run differs: R_POSE starts elsewhere and it has one more
	// element.
	dir2 := filepath.Dir(quickstart(t))
	xml, _ := os.ReadFile(filepath.Join(dir2, "scene.xml"))
	xml = bytes.Replace(xml, []byte(`x="-2"`), []byte(`x="3"`), 1)
	xml = bytes.Replace(xml, []byte("</scene>"), []byte(`<element type="rotation" name="PAN" insert_at="ROBOT" axis="0 0 1" angle="15"/></scene>`), 1)
	os.WriteFile(filepath.Join(dir2, "scene.xml"), xml, 0o644)
	h2 := startHost(t, region, filepath.Join(dir2, "scene.xml"), 200)

	syncUntil(t, m, "the mirror to rebuild", func() bool { return m.Rebuilds >= 1 })
	if m.Rebuilds != 1 || c.Epoch() == epoch1 || c.Epoch() != h2.H.Region.Epoch() {
		t.Errorf("%d rebuilds, page's run %d (first %d, new host's %d)", m.Rebuilds, c.Epoch(), epoch1, h2.H.Region.Epoch())
	}
	if x, _ := m.Scene().Value("R_POSE", "x"); x != 3 {
		t.Errorf("R_POSE.x %v in the rebuilt mirror, want the new run's 3", x)
	}
	if _, ok := m.Scene().Element("PAN"); !ok {
		t.Error("the new run's element is not in the rebuilt mirror")
	}
	shm, err := ipc.Open(region)
	if err != nil {
		t.Fatal(err)
	}
	defer shm.Close()
	pan := param(t, shm, "PAN", "angle")
	if err := c.Set(pan, 40); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the driver's set on the new host", func() bool { v, _ := shm.Get(pan); return v == 40 })
	syncUntil(t, m, "the new value in the mirror", func() bool { v, _ := m.Scene().Value("PAN", "angle"); return v == 40 })

	out := log.String()
	if n := strings.Count(out, "not available"); n != 1 {
		t.Errorf("the outage logged %d times:\n%s", n, out)
	}
	if n := strings.Count(out, "the host is back"); n != 1 {
		t.Errorf("the return logged %d times:\n%s", n, out)
	}
}

// A binary message closes the page; malformed JSON and an unknown op get
// an error reply, and the connection goes on; a page that offers no
// subprotocol is closed.
func TestProtocolErrors(t *testing.T) {
	region := filepath.Join(t.TempDir(), "region")
	startHost(t, region, quickstart(t), 200)
	s := listen(t, region, web.Options{DriverToken: "drive-secret", Requests: true})

	ws, _, err := rawDial(t, s, "drive-secret", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws.Write(ctx, websocket.MessageText, []byte(`{"op":"set",`))
	if r := nextReply(t, ws); !strings.Contains(r.Error, "not a command") {
		t.Errorf("malformed JSON: %+v", r)
	}
	send(t, ws, map[string]any{"op": "frobnicate", "id": 42})
	if r := nextReply(t, ws); r.ID != 42 || !strings.Contains(r.Error, "unknown op") {
		t.Errorf("unknown op: %+v", r)
	}
	for _, v := range []string{`"NaN"`, `1e999`} {
		ws.Write(ctx, websocket.MessageText, []byte(`{"op":"set","id":5,"epoch":"1","index":0,"value":`+v+`}`))
		if r := nextReply(t, ws); r.Error == "" {
			t.Errorf("value %s: %+v", v, r)
		}
	}
	send(t, ws, map[string]any{"op": "set", "id": 6, "epoch": "1", "index": 1 << 30, "value": 1})
	if r := nextReply(t, ws); r.ID != 6 || r.Error == "" {
		t.Errorf("an index out of range: %+v", r)
	}
	big, _, err := rawDial(t, s, "drive-secret", nil)
	if err != nil {
		t.Fatal(err)
	}
	big.Write(ctx, websocket.MessageText, bytes.Repeat([]byte(" "), client.MaxClientMessage+1))
	for {
		if _, _, err := big.Read(ctx); err != nil {
			if st := websocket.CloseStatus(err); st != websocket.StatusMessageTooBig {
				t.Errorf("after a message over the limit: %v (status %v), want closed with %v", err, st, websocket.StatusMessageTooBig)
			}
			break
		}
	}
	ws.Write(ctx, websocket.MessageBinary, []byte("S\x00\x00\x00\x00"))
	for {
		_, _, err := ws.Read(ctx)
		if err != nil {
			if st := websocket.CloseStatus(err); st != websocket.StatusUnsupportedData {
				t.Errorf("after a binary message: %v (status %v), want closed with %v", err, st, websocket.StatusUnsupportedData)
			}
			break
		}
	}

	none, _, err := rawDial(t, s, "drive-secret", &websocket.DialOptions{Subprotocols: []string{"other"}})
	if err == nil {
		_, _, err = none.Read(ctx)
		if st := websocket.CloseStatus(err); st != websocket.StatusPolicyViolation {
			t.Errorf("no subprotocol: %v, want closed with %v", err, websocket.StatusPolicyViolation)
		}
	}
	eventually(t, "the pages to go", func() bool { return s.Stats().Clients == 0 })
}

// Random and mangled commands from a driver: every one is answered or
// closes the page, nothing panics, and the server serves on.
func TestCommandFuzz(t *testing.T) {
	region := filepath.Join(t.TempDir(), "region")
	startHost(t, region, quickstart(t), 200)
	s := listen(t, region, web.Options{DriverToken: "drive-secret", Requests: true})
	seeds := []string{
		`{"op":"set","id":1,"epoch":"1","index":0,"value":1}`,
		`{"op":"request","id":2,"xml":"<element type=\"pose\" name=\"F\" insert_at=\"ROOT\"/>"}`,
		`{"op":"file","id":3,"dir":"/","path":"robot.gltf","offset":0}`,
		`{"op":"file","id":4,"dir":"","path":"","offset":-1}`,
		`{"op":"request","id":5,"xml":"<part file=\"/dev/zero\" name=\"Z\"/>"}`,
		`{"op":"set","id":6,"epoch":"x","index":-1}`,
		`{"op":7}`, `[]`, `null`, `""`, `{}`, `{"op":"set","id":-1}`, `{"id":18446744073709551616}`,
	}
	state := uint64(1)
	rnd := func(n int) int { // xorshift: the same inputs every run
		state ^= state << 13
		state ^= state >> 7
		state ^= state << 17
		return int(state % uint64(n))
	}
	ws, _, err := rawDial(t, s, "drive-secret", nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(client.MaxServerMessage + 1024)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() { // the states and replies; nobody needs them
		for {
			if _, _, err := ws.Read(ctx); err != nil {
				return
			}
		}
	}()
	for i := 0; i < 400; i++ {
		msg := []byte(seeds[rnd(len(seeds))])
		for k := rnd(4); k > 0 && len(msg) > 0; k-- {
			switch j := rnd(len(msg)); rnd(3) {
			case 0:
				msg[j] = byte(rnd(256))
			case 1:
				msg = append(msg[:j], msg[j+1:]...)
			default:
				msg = append(msg[:j], append([]byte{" \"{}:,0-9e"[rnd(10)]}, msg[j:]...)...)
			}
		}
		if err := ws.Write(ctx, websocket.MessageText, msg); err != nil {
			t.Fatalf("message %d %q: %v", i, msg, err)
		}
	}
	ws.Close(websocket.StatusNormalClosure, "")
	c := dial(t, s, "drive-secret")
	if _, err := c.Request(`<element type="pose" name="AFTER" insert_at="ROOT"/>`, 5*time.Second); err != nil {
		t.Errorf("after the fuzz: %v", err)
	}
}

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }

// reopens counts the Reopen calls of a connection.
type reopens struct {
	ipc.Conn
	n *atomic.Int32
}

func (r reopens) Reopen() error { r.n.Add(1); return r.Conn.Reopen() }

// The server's connections to the host are reopened after a restart
// only: requests, sets and file reads do not remap the host's region.
func TestNoReopenWithoutRestart(t *testing.T) {
	region := filepath.Join(t.TempDir(), "region")
	startHost(t, region, quickstart(t), 200)
	var n atomic.Int32
	s := listen(t, region, web.Options{DriverToken: "drive-secret", Requests: true, Dial: func() (*ipc.Client, error) {
		c, err := ipc.Open(region)
		if err != nil {
			return nil, err
		}
		return ipc.NewClient(reopens{c.Conn(), &n}), nil
	}})
	c := dial(t, s, "drive-secret")
	for i := range 3 {
		if _, err := c.Request(fmt.Sprintf(`<element type="pose" name="E%d" insert_at="ROOT"/>`, i), 5*time.Second); err != nil {
			t.Fatal(err)
		}
		if err := c.Set(0, float64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if n.Load() != 0 {
		t.Errorf("%d reopens of the host's region without a restart", n.Load())
	}
}

// A change log larger than one message comes in several; a page's Dial
// waits for all of it, and a mirror replays every record.
func TestLargeLog(t *testing.T) {
	dir := filepath.Dir(quickstart(t))
	var b strings.Builder
	b.WriteString("<scene>\n")
	const n = 40
	// Long numbers: records of 60 KiB that cost the host nothing to run.
	zeros := strings.Repeat("0", 60<<10)
	for i := range n {
		fmt.Fprintf(&b, `<element type="pose" name="L%d" insert_at="ROOT" x="%d.%s"/>`+"\n", i, i, zeros)
	}
	b.WriteString("</scene>\n")
	f := filepath.Join(dir, "labels.xml")
	os.WriteFile(f, []byte(b.String()), 0o644)
	region := filepath.Join(t.TempDir(), "region")
	startHost(t, region, f, 200)
	s := listen(t, region, web.Options{})
	c := dial(t, s, "")
	recs, err := c.ReadLog(&ipc.LogCursor{})
	if err != nil || len(recs) != n || len(recs[0].XML) < 60<<10 {
		t.Fatalf("the page has %d records (%v) once dialed, want %d of over 60 KiB", len(recs), err, n)
	}
	m, err := ipc.NewMirror(ipc.NewClient(c), nil, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Applied() != n {
		t.Errorf("the mirror replayed %d records, want %d", m.Applied(), n)
	}
	if st := s.Stats(); st.States < 3 {
		t.Errorf("%d states for %d KiB of records: not split", st.States, n*60)
	}
}

// The page's files: index at /, the program gzip-encoded to browsers
// that take it and decoded for the others, an ETag that spares a reload,
// nothing else (no subdirectories, no .gz by name, GET and HEAD only).
func TestPageFiles(t *testing.T) {
	program := []byte("\x00asm fake program")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(program)
	zw.Close()
	assets := fstest.MapFS{
		"index.html":     {Data: []byte("<!doctype html>")},
		"app.js":         {Data: []byte("start()")},
		"simvis.wasm.gz": {Data: gz.Bytes()},
		"sub/x.js":       {Data: []byte("no")},
	}
	s, err := web.Listen(web.Options{Addr: "127.0.0.1:0", Assets: assets, Dial: func() (*ipc.Client, error) { return nil, errors.New("no host") }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	get := func(method, path string, h http.Header) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, s.URL()+path, nil)
		for k, v := range h {
			req.Header[k] = v
		}
		resp, err := http.DefaultTransport.RoundTrip(req) // no transparent gzip
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}
	if resp, body := get("GET", "", nil); resp.StatusCode != 200 || string(body) != "<!doctype html>" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("/: HTTP %d %q %v", resp.StatusCode, body, resp.Header)
	}
	resp, body := get("GET", "simvis.wasm", http.Header{"Accept-Encoding": {"gzip, br"}})
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(body, gz.Bytes()) || resp.Header.Get("Content-Type") != "application/wasm" {
		t.Errorf("program, gzip taken: HTTP %d, %v, %d bytes", resp.StatusCode, resp.Header, len(body))
	}
	for _, ae := range []string{"", "gzip;q=0", "identity"} {
		resp, body := get("GET", "simvis.wasm", http.Header{"Accept-Encoding": {ae}})
		if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, program) {
			t.Errorf("program, Accept-Encoding %q: HTTP %d, %v, %q", ae, resp.StatusCode, resp.Header, body)
		}
	}
	tag := resp.Header.Get("ETag")
	if resp, _ := get("GET", "simvis.wasm", http.Header{"If-None-Match": {tag}, "Accept-Encoding": {"gzip"}}); tag == "" || resp.StatusCode != http.StatusNotModified {
		t.Errorf("reload with ETag %s: HTTP %d", tag, resp.StatusCode)
	}
	for _, p := range []string{"simvis.wasm.gz", "sub/x.js", "..%2fweb.go", "missing.js"} {
		if resp, _ := get("GET", p, nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: HTTP %d, want 404", p, resp.StatusCode)
		}
	}
	if resp, _ := get("POST", "app.js", nil); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: HTTP %d", resp.StatusCode)
	}
	// A build without the program says how to build it.
	delete(assets, "simvis.wasm.gz")
	if resp, body := get("GET", "simvis.wasm", nil); resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "go generate") {
		t.Errorf("no program: HTTP %d %q", resp.StatusCode, body)
	}
}

// A page gets the whole value table once, then only the run of values
// that changed since its last state: a host whose values stand still
// sends states without values.
func TestValuesOnlyChanged(t *testing.T) {
	region := filepath.Join(t.TempDir(), "region")
	startHost(t, region, manyPoses(t, 50), 50)
	s := listen(t, region, web.Options{Rate: 50})
	ws, _, err := rawDial(t, s, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(client.MaxServerMessage + 1024)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	next := func() client.State {
		for {
			typ, msg, err := ws.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if typ != websocket.MessageBinary || msg[0] != client.KindState {
				continue
			}
			var h client.State
			if _, _, err := client.DecodeBinary(msg, &h); err != nil {
				t.Fatal(err)
			}
			return h
		}
	}
	// A page that connects before the server's first look at the host
	// gets its "stopped" state, which has no values yet.
	first := next()
	for first.Status != client.Running {
		first = next()
	}
	if first.ValuesFrom != 0 || first.Values != 300 {
		t.Fatalf("first state: values [%d, +%d), want the whole table of 300", first.ValuesFrom, first.Values)
	}
	for range 3 {
		if st := next(); st.Values != 0 {
			t.Fatalf("a state of a still host carries values [%d, +%d)", st.ValuesFrom, st.Values)
		}
	}
	c, err := ipc.Open(region)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	i := param(t, c, "P17", "y")
	if err := c.Set(i, 2.5); err != nil {
		t.Fatal(err)
	}
	for {
		st := next()
		if st.Values == 0 {
			continue
		}
		if st.ValuesFrom != i || st.Values != 1 {
			t.Errorf("after one set: values [%d, +%d), want [%d, +1)", st.ValuesFrom, st.Values, i)
		}
		break
	}
}
