package foxglove

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	_ "github.com/simvis/simvis/elements"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
)

// tclient is a minimal protocol client for tests.
type tclient struct {
	t    *testing.T
	conn *websocket.Conn
}

func dial(t *testing.T, url, token string, header http.Header) (*tclient, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if token != "" {
		url += "?token=" + token
	}
	conn, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{Subprotocol}, HTTPHeader: header})
	if err != nil {
		return nil, resp, err
	}
	conn.SetReadLimit(64 << 20)
	c := &tclient{t, conn}
	t.Cleanup(func() { conn.CloseNow() })
	return c, resp, nil
}

func (c *tclient) send(v any) {
	c.t.Helper()
	data, _ := json.Marshal(v)
	if err := c.conn.Write(context.Background(), websocket.MessageText, data); err != nil {
		c.t.Fatal(err)
	}
}

// read returns the next message: a JSON object, or a binary message.
func (c *tclient) read() (map[string]any, []byte) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	typ, data, err := c.conn.Read(ctx)
	if err != nil {
		c.t.Fatalf("reading: %v", err)
	}
	if typ == websocket.MessageBinary {
		return nil, data
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		c.t.Fatalf("%v: %s", err, data)
	}
	return m, nil
}

// until reads until a JSON message of op for which ok holds (nil: any).
func (c *tclient) until(op string, ok func(map[string]any) bool) map[string]any {
	c.t.Helper()
	for {
		m, _ := c.read()
		if m != nil && m["op"] == op && (ok == nil || ok(m)) {
			return m
		}
	}
}

// channels reads the server's hello and returns its channels by topic.
func (c *tclient) channels() map[string]uint32 {
	c.t.Helper()
	c.until("serverInfo", nil)
	adv := c.until("advertise", nil)
	out := map[string]uint32{}
	for _, ch := range adv["channels"].([]any) {
		m := ch.(map[string]any)
		out[m["topic"].(string)] = uint32(m["id"].(float64))
	}
	return out
}

func TestListenNeedsTokenOffLoopback(t *testing.T) {
	if _, err := Listen(Options{Addr: "0.0.0.0:0"}, nil); !errors.Is(err, ErrTokenRequired) || !strings.Contains(err.Error(), `"0.0.0.0:0"`) {
		t.Fatalf("off loopback without a token: %v", err)
	}
	if _, err := Listen(Options{Addr: "127.0.0.1:0", DriverToken: "x", ViewerToken: "x"}, nil); err == nil {
		t.Fatal("equal driver and viewer tokens accepted")
	}
	if _, err := Listen(Options{Addr: "127.0.0.1:0", TLSCert: "cert.pem"}, nil); err == nil {
		t.Fatal("a certificate without a key accepted")
	}
	s, err := Listen(Options{Addr: "0.0.0.0:0", ViewerToken: "v"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// Tokens decide the role; the client limit and the subprotocol are
// enforced before a client gets anything.
func TestTokensRolesAndClientLimit(t *testing.T) {
	s, err := Listen(Options{Addr: "127.0.0.1:0", DriverToken: "drive", ViewerToken: "view", MaxClients: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tok := range []string{"", "wrong"} {
		if _, resp, err := dial(t, s.URL(), tok, nil); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("token %q: %v %v, want 401", tok, err, resp)
		}
	}
	v, _, err := dial(t, s.URL(), "view", nil)
	if err != nil {
		t.Fatal(err)
	}
	if info := v.until("serverInfo", nil); info["metadata"].(map[string]any)["role"] != "viewer" {
		t.Errorf("viewer's serverInfo: %v", info)
	}
	d, _, err := dial(t, s.URL(), "", http.Header{"Authorization": {"Bearer drive"}})
	if err != nil {
		t.Fatal(err)
	}
	if info := d.until("serverInfo", nil); info["metadata"].(map[string]any)["role"] != "driver" {
		t.Errorf("driver's serverInfo: %v", info)
	}
	if _, resp, err := dial(t, s.URL(), "view", nil); err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a third client with a limit of 2: %v %v, want 503", err, resp)
	}
	// A viewer may not call services either.
	call := make([]byte, 13, 64)
	call[0] = 2
	binary.LittleEndian.PutUint32(call[1:], 1)
	binary.LittleEndian.PutUint32(call[5:], 9)
	binary.LittleEndian.PutUint32(call[9:], 4)
	call = append(append(call, "json"...), `{"xml":"<part/>"}`...)
	if err := v.conn.Write(context.Background(), websocket.MessageBinary, call); err != nil {
		t.Fatal(err)
	}
	if f := v.until("serviceCallFailure", nil); !strings.Contains(f["message"].(string), "viewer token may only subscribe") || f["callId"].(float64) != 9 {
		t.Errorf("viewer's call: %v", f)
	}
	if st := s.Stats(); st.Refused != 3 || st.Clients != 2 || st.CallsRefused != 1 {
		t.Errorf("stats %+v: want 3 refused, 2 clients, 1 call refused", st)
	}
	// Without tokens, a request naming another host (DNS rebinding) is
	// refused.
	open, err := Listen(Options{Addr: "127.0.0.1:0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	ctx0, cancel0 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel0()
	if _, resp, err := websocket.Dial(ctx0, open.URL(), &websocket.DialOptions{Subprotocols: []string{Subprotocol}, Host: "evil.example"}); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("a foreign Host header: %v %v, want 403", err, resp)
	}
	if c, _, err := dial(t, open.URL(), "", nil); err != nil {
		t.Errorf("a loopback Host: %v", err)
	} else {
		c.until("serverInfo", nil)
	}
	// Without the subprotocol the server closes the connection.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s2, err := Listen(Options{Addr: "127.0.0.1:0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	conn, _, err := websocket.Dial(ctx, s2.URL(), nil)
	if err == nil {
		_, _, err = conn.Read(ctx)
		if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
			t.Errorf("no subprotocol: %v, want a policy-violation close", err)
		}
	}
}

// A client that does not read loses frames, the latest of each channel
// always kept, and publishing never waits for it: every frame published
// was either written to it or dropped, and the last one arrives.
func TestSlowClientLosesFramesNeverStalls(t *testing.T) {
	s, err := Listen(Options{Addr: "127.0.0.1:0", WriteTimeout: time.Minute}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id := s.Advertise(Channel{Topic: "/big", Encoding: "json", SchemaName: "x"})
	c, _, err := dial(t, s.URL(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.channels()
	c.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 7, "channelId": id}}})
	// The subscription is in once a reply to a later request arrives.
	c.send(map[string]any{"op": "getParameters", "parameterNames": []string{}, "id": "sync"})
	c.until("parameterValues", nil)

	const n = 2000
	payload := make([]byte, 256<<10) // 500 MB in all: far more than socket buffers hold
	frames := make([][]byte, n)
	for i := range frames {
		// Each frame carries its number; the bulk is shared.
		frames[i] = append(binary.LittleEndian.AppendUint32(nil, uint32(i+1)), payload...)
		s.Publish(id, uint64(i+1), frames[i])
	}
	// Only now the client reads: what was written, then the last frame,
	// and a notice of what it lost.
	got, last := 0, uint32(0)
	told := 0 // drops the client was told of (at most once a second)
	for last != n || told == 0 {
		m, data := c.read()
		if m != nil && m["op"] == "status" {
			var k int
			if _, err := fmt.Sscanf(m["message"].(string), "%d messages dropped", &k); err != nil || m["level"].(float64) != 1 {
				t.Errorf("status %v", m)
			}
			told += k
		}
		if data == nil {
			continue
		}
		if data[0] != 1 || binary.LittleEndian.Uint32(data[1:]) != 7 {
			t.Fatalf("message data header %v, want opcode 1 subscription 7", data[:5])
		}
		seq := binary.LittleEndian.Uint32(data[13:])
		if seq <= last || binary.LittleEndian.Uint64(data[5:]) != uint64(seq) {
			t.Fatalf("frame %d after %d (timestamp %d)", seq, last, binary.LittleEndian.Uint64(data[5:]))
		}
		got, last = got+1, seq
	}
	st := s.Stats()
	if st.Dropped == 0 || uint64(got)+st.Dropped != n || st.Sent != uint64(got) {
		t.Errorf("received %d, stats %+v: want received + dropped = %d, some dropped", got, st, n)
	}
	if told == 0 || uint64(told) > st.Dropped {
		t.Errorf("the client was told of %d drops, want some of its %d", told, st.Dropped)
	}
	t.Logf("%d of %d frames reached the slow client, %d dropped", got, n, st.Dropped)
}

// A client that takes nothing for WriteTimeout is disconnected; the
// others go on.
func TestStalledClientIsDisconnected(t *testing.T) {
	s, err := Listen(Options{Addr: "127.0.0.1:0", WriteTimeout: 200 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id := s.Advertise(Channel{Topic: "/big", Encoding: "json", SchemaName: "x"})
	c, _, err := dial(t, s.URL(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.channels()
	c.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 1, "channelId": id}}})
	c.send(map[string]any{"op": "getParameters", "parameterNames": []string{}, "id": "sync"})
	c.until("parameterValues", nil)
	payload := make([]byte, 4<<20)
	deadline := time.Now().Add(30 * time.Second)
	for st := s.Stats(); (st.SlowClosed == 0 || st.Clients > 0) && time.Now().Before(deadline); st = s.Stats() {
		s.Publish(id, 1, payload)
		time.Sleep(5 * time.Millisecond)
	}
	if st := s.Stats(); st.SlowClosed != 1 || st.Clients != 0 {
		t.Fatalf("stats %+v: want the stalled client disconnected", st)
	}
}

// hostScene is a scene with a limited joint, a point overlay and a label.
func hostScene(t *testing.T) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "scene.xml")
	err := os.WriteFile(f, []byte(`<scene>
  <element type="rotation" name="JOINT" insert_at="ROOT" axis="0 0 1" min="-45" max="45" angle="10"/>
  <element type="pointcloud" name="PTS" insert_at="ROOT" max_points="4" points="1 2 3 4 5 6" point_size="0.1" color="0 0 1" sensed="false"/>
  <element type="label" name="NOTE" insert_at="ROOT" text="hi" x="0" y="0" z="2" size="0.5" sensed="false"/>
</scene>`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// runHost runs a host of the scene at 100 Hz with the server's Update in
// its cycles, and a driver client of its region.
func runHost(t *testing.T, sceneFile string, opts Options) *Server {
	t.Helper()
	h, err := ipc.NewHost(filepath.Join(t.TempDir(), "region"), sceneFile, ipc.HostOptions{Rate: 100, Warnings: &strings.Builder{}})
	if err != nil {
		t.Fatal(err)
	}
	drv, err := ipc.Open(h.Region.Path())
	if err != nil {
		t.Fatal(err)
	}
	opts.Addr = "127.0.0.1:0"
	if opts.DriverToken == "" && opts.ViewerToken == "" {
		opts.AnonymousDrivers = true // the tests' clients drive without a token
	}
	s, err := Listen(opts, drv)
	if err != nil {
		t.Fatal(err)
	}
	h.AddHook(ipc.CycleHook{After: func() error {
		s.Update(h.Scene, h.Region.Cycles()*10_000_000)
		return nil
	}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- h.Run(ctx, 0, nil) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		s.Close()
		drv.Close()
		h.Close()
	})
	return s
}

func params(m map[string]any) map[string]float64 {
	out := map[string]float64{}
	for _, p := range m["parameters"].([]any) {
		pm := p.(map[string]any)
		out[pm["name"].(string)] = pm["value"].(float64)
	}
	return out
}

// A value the host refuses comes back as the value it keeps, with a
// status message; one it takes comes back as set, and subscribers hear
// of it. Overlays are drawn as primitives in their insertion point's frame.
func TestParametersThroughTheHost(t *testing.T) {
	s := runHost(t, hostScene(t), Options{})
	c, _, err := dial(t, s.URL(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var overlays uint32
	for overlays == 0 {
		for _, ch := range c.until("advertise", nil)["channels"].([]any) {
			if m := ch.(map[string]any); m["topic"] == TopicOverlays {
				overlays = uint32(m["id"].(float64))
			}
		}
	}
	c.send(map[string]any{"op": "getParameters", "parameterNames": []string{}, "id": "all"})
	all := params(c.until("parameterValues", func(m map[string]any) bool { return m["id"] == "all" }))
	if all["JOINT.angle"] != 10 || all["PTS.count"] != 2 || all["PTS.x1"] != 4 || all["NOTE.size"] != 0.5 {
		t.Errorf("getParameters: %v", all)
	}
	c.send(map[string]any{"op": "subscribeParameterUpdates", "parameterNames": []string{"JOINT.angle"}})
	c.send(map[string]any{"op": "setParameters", "id": "bad", "parameters": []any{map[string]any{"name": "JOINT.angle", "value": 90}}})
	st := c.until("status", nil)
	if st["level"].(float64) != 2 || !strings.Contains(st["message"].(string), "the host refused JOINT.angle = 90 (it stays 10)") {
		t.Errorf("refusal status: %v", st)
	}
	if got := params(c.until("parameterValues", func(m map[string]any) bool { return m["id"] == "bad" })); got["JOINT.angle"] != 10 {
		t.Errorf("refused write answered %v, want 10", got)
	}
	c.send(map[string]any{"op": "setParameters", "id": "good", "parameters": []any{
		map[string]any{"name": "JOINT.angle", "value": 30, "type": "float64"},
		map[string]any{"name": "NO.such", "value": 1},
		map[string]any{"name": "PTS.x0", "value": "text"}}})
	st = c.until("status", nil)
	if !strings.Contains(st["message"].(string), `NO.such: no such parameter`) || !strings.Contains(st["message"].(string), `PTS.x0: value "text" is not a number`) {
		t.Errorf("bad names and values: %v", st)
	}
	// The update to subscribers and the reply, in either order.
	var update, reply map[string]float64
	for update == nil || reply == nil {
		m := c.until("parameterValues", nil)
		if m["id"] == "good" {
			reply = params(m)
		} else if _, has := m["id"]; !has {
			update = params(m)
		}
	}
	if reply["JOINT.angle"] != 30 || reply["PTS.x0"] != 1 || update["JOINT.angle"] != 30 {
		t.Errorf("set 30: reply %v, update %v", reply, update)
	}
	if _, listed := reply["NO.such"]; listed {
		t.Errorf("an unknown name answered: %v", reply)
	}

	c.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 3, "channelId": overlays}}})
	var data []byte
	for data == nil {
		_, data = c.read()
	}
	var up struct {
		Entities []struct {
			ID      string
			FrameID string `json:"frame_id"`
			Cubes   []struct {
				Pose struct{ Position struct{ X, Y, Z float64 } }
				Size struct{ X float64 }
			}
			Texts []struct {
				Text     string
				FontSize float64 `json:"font_size"`
			}
		}
	}
	if err := json.Unmarshal(data[13:], &up); err != nil {
		t.Fatal(err)
	}
	if len(up.Entities) != 2 {
		t.Fatalf("overlays: %s", data[13:])
	}
	pts, note := up.Entities[0], up.Entities[1]
	if pts.FrameID != "ROOT" || len(pts.Cubes) != 2 || pts.Cubes[1].Pose.Position.Y != 5 || pts.Cubes[0].Size.X != 0.1 {
		t.Errorf("points entity %+v", pts)
	}
	if len(note.Texts) != 1 || note.Texts[0].Text != "hi" || note.Texts[0].FontSize != 0.5 {
		t.Errorf("label entity %+v", note)
	}
}

// Calls go through the driver under the host's rules; errors come back as
// serviceCallFailure.
func TestServicesThroughTheHost(t *testing.T) {
	s := runHost(t, hostScene(t), Options{})
	c, _, err := dial(t, s.URL(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	svcs := c.until("advertiseServices", nil)["services"].([]any)
	ids := map[string]uint32{}
	for _, sv := range svcs {
		m := sv.(map[string]any)
		ids[m["name"].(string)] = uint32(m["id"].(float64))
	}
	call := func(svc string, callID uint32, body string) {
		msg := make([]byte, 13, 64)
		msg[0] = 2
		binary.LittleEndian.PutUint32(msg[1:], ids[svc])
		binary.LittleEndian.PutUint32(msg[5:], callID)
		binary.LittleEndian.PutUint32(msg[9:], 4)
		msg = append(append(msg, "json"...), body...)
		if err := c.conn.Write(context.Background(), websocket.MessageBinary, msg); err != nil {
			t.Fatal(err)
		}
	}
	call("/simvis/add_element", 1, `{"xml":"<element type=\"label\" name=\"MORE\" insert_at=\"ROOT\" text=\"x\"/>"}`)
	for {
		_, data := c.read()
		if data != nil && data[0] == 3 {
			if id := binary.LittleEndian.Uint32(data[5:]); id != 1 || string(data[17:]) != `{"seq":4}` {
				t.Errorf("response to call %d: %s, want change 4", id, data[17:])
			}
			break
		}
	}
	for _, tc := range []struct{ svc, body, want string }{
		{"/simvis/request", `{"xml":"<part file=\"../../etc/passwd\" name=\"P\" insert_at=\"ROOT\"/>"}`, "passwd"},
		{"/simvis/add_part", `{"xml":"<element type=\"label\" name=\"L\" insert_at=\"ROOT\" text=\"x\"/>"}`, "takes one <part> command, not a <element> command"},
		{"/simvis/request", `{"nothing":1}`, `want {"xml"`},
		{"/simvis/request", `{"xml":"<element type=\"label\" name=\"MORE\" insert_at=\"ROOT\" text=\"x\"/>"}`, "MORE"},
	} {
		call(tc.svc, 2, tc.body)
		f := c.until("serviceCallFailure", nil)
		if msg := f["message"].(string); !strings.Contains(msg, tc.want) || !strings.HasPrefix(msg, tc.svc) {
			t.Errorf("%s %s: %q, want it to name the service and %q", tc.svc, tc.body, msg, tc.want)
		}
	}
}

// A client that sends requests faster than it takes the replies (here:
// never) fills its control queue and is disconnected; its replies never
// pile up beyond MaxQueue.
func TestUnreadRepliesDisconnect(t *testing.T) {
	s, err := Listen(Options{Addr: "127.0.0.1:0", MaxQueue: 256}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, _, err := dial(t, s.URL(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	req := []byte(`{"op":"getParameters","parameterNames":["nothing.here.but.a.long.name.to.fill.the.replies"],"id":"x"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := 0; i < 2_000_000 && s.Stats().SlowClosed == 0; i++ {
		if err := c.conn.Write(ctx, websocket.MessageText, req); err != nil {
			break // the server closed the connection
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for st := s.Stats(); (st.SlowClosed == 0 || st.Clients > 0) && time.Now().Before(deadline); st = s.Stats() {
		time.Sleep(10 * time.Millisecond)
	}
	if st := s.Stats(); st.SlowClosed != 1 || st.Clients != 0 {
		t.Fatalf("stats %+v: want the client disconnected for its full queue", st)
	}
}

// A new scene given to Update (a mirror rebuilt after its host restarted)
// replaces the old one's parameters and entities.
func TestNewSceneReplacesParameters(t *testing.T) {
	s, err := Listen(Options{Addr: "127.0.0.1:0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first, err := scene.Load(hostScene(t), scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "other.xml")
	if err := os.WriteFile(f, []byte(`<scene><element type="translation" name="SLIDE" insert_at="ROOT" axis="1 0 0" offset="0.5"/></scene>`), 0o644); err != nil {
		t.Fatal(err)
	}
	second, err := scene.Load(f, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := dial(t, s.URL(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, sc := range []*scene.Scene{first, second} {
		s.Update(sc, uint64(i))
		c.send(map[string]any{"op": "getParameters", "parameterNames": []string{}, "id": fmt.Sprint(i)})
		got := params(c.until("parameterValues", func(m map[string]any) bool { return m["id"] == fmt.Sprint(i) }))
		_, joint := got["JOINT.angle"]
		if i == 0 && (!joint || len(got) != 18) || i == 1 && (joint || len(got) != 1 || got["SLIDE.offset"] != 0.5) {
			t.Errorf("scene %d: parameters %v", i, got)
		}
	}
}

// UpdateParams lists the scene's parameters before anything else of the
// cycle goes out (a client setting a joint on its first joint states
// finds it), and the Update after it does not read them again: settling a
// write counts cycles by those reads.
func TestUpdateParamsFirst(t *testing.T) {
	s, err := Listen(Options{Addr: "127.0.0.1:0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sc, err := scene.Load(hostScene(t), scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := dial(t, s.URL(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	s.UpdateParams(sc)
	c.send(map[string]any{"op": "getParameters", "parameterNames": []string{"JOINT.angle"}, "id": "early"})
	got := params(c.until("parameterValues", func(m map[string]any) bool { return m["id"] == "early" }))
	if v, ok := got["JOINT.angle"]; !ok || v != 10 {
		t.Errorf("after UpdateParams, before the cycle's Update: %v", got)
	}
	reads := func() uint64 {
		s.params.mu.Lock()
		defer s.params.mu.Unlock()
		return s.params.gen
	}
	s.Update(sc, 1)
	if n := reads(); n != 1 {
		t.Errorf("UpdateParams then Update read the parameters %d times, want 1", n)
	}
	s.Update(sc, 2)
	if n := reads(); n != 2 {
		t.Errorf("a cycle of Update alone: %d reads in all, want 2", n)
	}
}

// With certificate and key files the server speaks wss://.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	s, err := Listen(Options{Addr: "127.0.0.1:0", TLSCert: certFile, TLSKey: keyFile, ViewerToken: "v"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.URL(), "wss://") {
		t.Fatalf("URL %s, want wss://", s.URL())
	}
	pool := x509.NewCertPool()
	cert, _ := x509.ParseCertificate(der)
	pool.AddCert(cert)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	conn, _, err := websocket.Dial(ctx, s.URL()+"?token=v", &websocket.DialOptions{Subprotocols: []string{Subprotocol}, HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	_, data, err := conn.Read(ctx)
	if err != nil || !strings.Contains(string(data), `"op":"serverInfo"`) {
		t.Fatalf("over TLS: %v %s", err, data)
	}
	if _, err := Listen(Options{Addr: "127.0.0.1:0", TLSCert: keyFile, TLSKey: certFile}, nil); err == nil {
		t.Error("swapped certificate and key accepted")
	}
}
