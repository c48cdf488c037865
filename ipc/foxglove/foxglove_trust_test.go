package foxglove

import (
	"github.com/simvis/simvis/internal/webguard"

	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/simvis/simvis/scene"
)

// sceneSub subscribes c to the scene channel (subscription 1) and returns
// a function that reads the next scene message and its size in bytes.
func sceneSub(t *testing.T, c *tclient) func() (sceneMsg, int) {
	t.Helper()
	var id uint32
	for id == 0 {
		for _, ch := range c.until("advertise", nil)["channels"].([]any) {
			if m := ch.(map[string]any); m["topic"] == TopicScene {
				id = uint32(m["id"].(float64))
			}
		}
	}
	c.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 1, "channelId": id}}})
	return func() (sceneMsg, int) {
		for {
			_, data := c.read()
			if len(data) > 13 && data[0] == 1 && binary.LittleEndian.Uint32(data[1:5]) == 1 {
				var m sceneMsg
				if err := json.Unmarshal(data[13:], &m); err != nil {
					t.Fatal(err)
				}
				return m, len(data)
			}
		}
	}
}

// Finding 1 (issue 29): every added part re-sent every model. Now a
// client gets each entity's model once: N parts added one by one cost it
// about N models, not N²/2, and the server keeps one encoding of a model
// that N parts load.
func TestSceneModelsSentOncePerClient(t *testing.T) {
	s, err := Listen(Options{Addr: "127.0.0.1:0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	file := styleScene(t)
	sc, err := scene.Load(file, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Update(sc, 0)
	c, _, err := dial(t, s.URL(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	next := sceneSub(t, c)
	first, size := next()
	if len(first.Entities) != 2 {
		t.Fatalf("first scene: %d entities", len(first.Entities))
	}
	perModel := size / 2
	total := 0
	const adds = 12
	for i := 0; i < adds; i++ {
		name := fmt.Sprintf("P%d", i)
		cmd, err := scene.ParseCommand(fmt.Sprintf(`<part file="white.glb" name="%s" pose_offset="0 %d 0 0 0 0"/>`, name, i+5), "test", filepath.Dir(file))
		if err != nil {
			t.Fatal(err)
		}
		if err := sc.Exec(cmd); err != nil {
			t.Fatal(err)
		}
		if err := sc.Update(); err != nil {
			t.Fatal(err)
		}
		s.Update(sc, uint64(i+1))
		for {
			m, n := next()
			total += n
			if len(m.Entities) > 0 && m.Entities[len(m.Entities)-1].ID == "part:"+name {
				break
			}
		}
	}
	// Re-sending every part would cost perModel*(3+4+...+14) = 102 models.
	if total > 2*adds*perModel {
		t.Errorf("%d parts added one by one cost the client %d bytes, %.1f models of %d bytes: want about one model each", adds, total, float64(total)/float64(perModel), perModel)
	}
	s.flushScene()
	if n := len(s.build.byHash); n != 1 {
		t.Errorf("%d encodings kept for %d parts of one model, want 1", n, adds+2)
	}
	// A new subscriber gets every part once.
	c2, _, err := dial(t, s.URL(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := sceneSub(t, c2)(); len(m.Entities) != adds+2 {
		t.Errorf("a new subscriber got %d entities, want %d", len(m.Entities), adds+2)
	}
}

// The models kept for the scene channel are bounded: a model over
// MaxSceneBytes is not sent, its part comes without it, and the warning
// names the budget's flag.
func TestSceneBudget(t *testing.T) {
	var mu sync.Mutex
	var warned []string
	s, err := Listen(Options{Addr: "127.0.0.1:0", MaxSceneBytes: 100, Warn: func(kind, format string, args ...any) {
		mu.Lock()
		warned = append(warned, fmt.Sprintf(format, args...))
		mu.Unlock()
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sc, err := scene.Load(styleScene(t), scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Update(sc, 0)
	c, _, err := dial(t, s.URL(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := sceneSub(t, c)()
	if len(m.Entities) != 2 || len(m.Entities[0].Models) != 0 {
		t.Errorf("entities %+v: want both parts, without their models", m.Entities)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warned) == 0 || !strings.Contains(warned[0], "the budget is 0.0 MiB (raise it with --foxglove-max-scene-mib)") {
		t.Errorf("warnings %q", warned)
	}
}

// hostParams runs a server without a host (nopDriver) on hostScene's
// parameters; the caller calls Update.
func hostParams(t *testing.T, opts Options) (*Server, *scene.Scene) {
	t.Helper()
	opts.Addr = "127.0.0.1:0"
	opts.AnonymousDrivers = true
	s, err := Listen(opts, nopDriver{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	sc, err := scene.Load(hostScene(t), scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Update(sc, 0)
	return s, sc
}

func statusWith(c *tclient, text string) string {
	c.t.Helper()
	m := c.until("status", func(m map[string]any) bool { return strings.Contains(fmt.Sprint(m["message"]), text) })
	return fmt.Sprint(m["message"])
}

// Finding 8: entries per setParameters message and writes waiting in all
// are bounded; refusals name the budget and its flag.
func TestSetParametersBounded(t *testing.T) {
	s, sc := hostParams(t, Options{Settle: time.Hour, MaxPendingSets: 3})
	c, _, err := dial(t, s.URL(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	flood := make([]map[string]any, 1025)
	for i := range flood {
		flood[i] = map[string]any{"name": "JOINT.angle", "value": i}
	}
	c.send(map[string]any{"op": "setParameters", "id": "flood", "parameters": flood})
	if msg := statusWith(c, "entries"); msg != "setParameters refused: 1025 entries, over the budget of 1024 a message (raise it with --foxglove-max-set-entries)" {
		t.Errorf("flood: %q", msg)
	}
	if r := c.until("parameterValues", func(m map[string]any) bool { return m["id"] == "flood" }); len(r["parameters"].([]any)) != 0 {
		t.Errorf("flood answered %v", r)
	}
	c.send(map[string]any{"op": "setParameters", "id": "a", "parameters": []any{
		map[string]any{"name": "JOINT.angle", "value": 20}, map[string]any{"name": "NOTE.x", "value": 1}}})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
		s.params.mu.Lock()
		n := s.params.waiting
		s.params.mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the writes never waited for the host (%d)", n)
		}
	}
	c.send(map[string]any{"op": "setParameters", "id": "b", "parameters": []any{
		map[string]any{"name": "NOTE.y", "value": 1}, map[string]any{"name": "NOTE.z", "value": 1}}})
	if msg := statusWith(c, "budget"); !strings.Contains(msg, "2 parameter writes of all clients wait for the host already; 2 more would pass the budget of 3 (raise it with --foxglove-max-pending-sets)") {
		t.Errorf("over the pending budget: %q", msg)
	}
	// The host showing the values settles them (off the host's goroutine)
	// and frees the budget.
	if err := sc.Set("JOINT", "angle", 20); err != nil {
		t.Fatal(err)
	}
	if err := sc.Set("NOTE", "x", 1); err != nil {
		t.Fatal(err)
	}
	if err := sc.Update(); err != nil {
		t.Fatal(err)
	}
	s.Update(sc, 1)
	c.until("parameterValues", func(m map[string]any) bool { return m["id"] == "a" })
	s.params.mu.Lock()
	defer s.params.mu.Unlock()
	if s.params.waiting != 0 || len(s.params.pending) != 0 {
		t.Errorf("%d writes, %d sets still waiting", s.params.waiting, len(s.params.pending))
	}
}

// Finding 11: a null value is not a number.
func TestSetNullRefused(t *testing.T) {
	s, _ := hostParams(t, Options{})
	c, _, err := dial(t, s.URL(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.send(map[string]any{"op": "setParameters", "id": "n", "parameters": []any{map[string]any{"name": "JOINT.angle", "value": nil}}})
	if msg := statusWith(c, "refused"); msg != "setParameters refused 1 of 1: JOINT.angle: value null is not a number" {
		t.Errorf("null: %q", msg)
	}
	r := c.until("parameterValues", func(m map[string]any) bool { return m["id"] == "n" })
	if p := params(r); p["JOINT.angle"] != 10 {
		t.Errorf("answered %v, want the value as it is (10)", p)
	}
}

// blockingDriver holds every Request until release is closed and records
// the order of the commands it got.
type blockingDriver struct {
	mu      sync.Mutex
	order   []string
	started chan struct{}
	release chan struct{}
}

func (d *blockingDriver) Set(int, float64) error { return nil }
func (d *blockingDriver) Request(xml string) (uint64, error) {
	d.mu.Lock()
	d.order = append(d.order, xml)
	n := len(d.order)
	d.mu.Unlock()
	if n == 1 {
		close(d.started)
	}
	<-d.release
	return uint64(n), nil
}

func callReq(t *testing.T, c *tclient, svc, call uint32, xml string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"xml": xml})
	msg := make([]byte, 13, 13+4+len(body))
	msg[0] = 2
	binary.LittleEndian.PutUint32(msg[1:], svc)
	binary.LittleEndian.PutUint32(msg[5:], call)
	binary.LittleEndian.PutUint32(msg[9:], 4)
	msg = append(append(msg, "json"...), body...)
	if err := c.conn.Write(context.Background(), websocket.MessageBinary, msg); err != nil {
		t.Fatal(err)
	}
}

// Finding 10: the service queue is per connection: a driver that queues
// more than its share is refused (naming the budget's flag), and another
// driver's call is served in turn, not after the first one's backlog.
func TestServiceQueuePerConnection(t *testing.T) {
	d := &blockingDriver{started: make(chan struct{}), release: make(chan struct{})}
	s, err := Listen(Options{Addr: "127.0.0.1:0", AnonymousDrivers: true}, d)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer func() {
		select {
		case <-d.release:
		default:
			close(d.release)
		}
	}()
	a, _, err := dial(t, s.URL(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := dial(t, s.URL(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	const svc = 4 // /simvis/request
	callReq(t, a, svc, 0, `<element type="switch" name="A0" insert_at="ROOT"/>`)
	<-d.started // the worker holds A's first call
	const more = 100
	for i := 1; i <= more; i++ {
		callReq(t, a, svc, uint32(i), fmt.Sprintf(`<element type="switch" name="A%d" insert_at="ROOT"/>`, i))
	}
	for refused := 0; refused < more-64; {
		m := a.until("serviceCallFailure", nil)
		if msg := fmt.Sprint(m["message"]); !strings.Contains(msg, "64 calls of this connection wait for the host already, the budget per connection (raise it with --foxglove-max-pending)") {
			t.Fatalf("A's call refused with %q", msg)
		}
		refused++
	}
	callReq(t, b, svc, 1, `<element type="switch" name="B" insert_at="ROOT"/>`)
	// B's call is queued once its message was read: wait for it.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
		s.calls.mu.Lock()
		queued := false
		for _, l := range s.calls.q {
			queued = queued || len(l) == 1 // A has 64
		}
		s.calls.mu.Unlock()
		if queued {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("B's call never queued")
		}
	}
	close(d.release)
	for {
		_, data := b.read()
		if data != nil && data[0] == 3 {
			break
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	at := -1
	for i, x := range d.order {
		if strings.Contains(x, `name="B"`) {
			at = i
		}
	}
	if at < 0 || at > 2 {
		t.Errorf("B's call ran as number %d of %d, want within the first 3 (connections in turn)", at+1, len(d.order))
	}
}

// Finding 13: origin patterns are host patterns, not globs: [::1] pages
// are accepted, http://1:80 is not; a Host in capitals is a loopback name.
func TestOriginPatternsAndHostCase(t *testing.T) {
	s, err := Listen(Options{Addr: "127.0.0.1:0", MaxClients: 64}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct {
		origin string
		ok     bool
	}{
		{"http://[::1]:3000", true},
		{"http://[::1]", true},
		{"http://1:80", false},
		{"http://:80", false},
		{"http://LOCALHOST:3000", true},
		{"https://App.Foxglove.Dev", true},
		{"http://[::2]:3000", false},
		{"http://localhost.evil.example", false},
	} {
		h := http.Header{}
		h.Set("Origin", tc.origin)
		_, resp, err := dial(t, s.URL(), "", h)
		if tc.ok && err != nil {
			t.Errorf("origin %s: %v, want accepted", tc.origin, err)
		}
		if !tc.ok && (err == nil || resp == nil || resp.StatusCode != http.StatusForbidden) {
			t.Errorf("origin %s: %v %v, want 403", tc.origin, err, resp)
		}
	}
	upper := strings.Replace(s.URL(), "127.0.0.1", "LOCALHOST", 1)
	if c, _, err := dial(t, upper, "", nil); err != nil {
		t.Errorf("Host LOCALHOST: %v", err)
	} else {
		c.until("serverInfo", nil)
	}
	for p, host := range map[string]string{"[::1]:*": "[::1]:8080", "*.example.com": "a.example.com", "localhost": "LocalHost"} {
		if !webguard.MatchHost(p, host) {
			t.Errorf("pattern %s does not match %s", p, host)
		}
	}
	for p, host := range map[string]string{"[::1]:*": "1:80", "[::1]": "1", "localhost": "localhost:80", "*.example.com": "example.org"} {
		if webguard.MatchHost(p, host) {
			t.Errorf("pattern %s matches %s", p, host)
		}
	}
}

// Finding 14: a text message that is not UTF-8 fails the connection with
// 1007; errors echo at most MaxEcho bytes of the input.
func TestInvalidUTF8AndEchoBound(t *testing.T) {
	s, err := Listen(Options{Addr: "127.0.0.1:0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, _, err := dial(t, s.URL(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.until("advertiseServices", nil)
	op := strings.Repeat("x", 100000)
	c.send(map[string]any{"op": op})
	msg := statusWith(c, "unsupported op")
	if len(msg) > 200 || !strings.Contains(msg, "(100000 bytes)") {
		t.Errorf("status of %d bytes: %.300q", len(msg), msg)
	}
	if err := c.conn.Write(context.Background(), websocket.MessageText, []byte("{\"op\":\"\xff\xfe\"}")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		_, _, err := c.conn.Read(ctx)
		if err == nil {
			continue
		}
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.StatusInvalidFramePayloadData {
			t.Errorf("after invalid UTF-8: %v, want close 1007", err)
		}
		break
	}
}

// Finding 5 (the library's part): without tokens a loopback client
// watches; AnonymousDrivers is asked for; a driver token drives.
func TestTokenlessLoopbackWatches(t *testing.T) {
	s, err := Listen(Options{Addr: "127.0.0.1:0", DriverToken: "d"}, nopDriver{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for tok, want := range map[string]string{"": "viewer", "d": "driver"} {
		c, _, err := dial(t, s.URL(), tok, nil)
		if err != nil {
			t.Fatal(err)
		}
		if info := c.until("serverInfo", nil); info["metadata"].(map[string]any)["role"] != want {
			t.Errorf("token %q: role %v, want %s", tok, info["metadata"], want)
		}
	}
	if _, err := Listen(Options{Addr: "0.0.0.0:0", DriverToken: "d", AnonymousDrivers: true}, nil); err == nil {
		t.Error("tokenless driving off loopback accepted")
	}
}
