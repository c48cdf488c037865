package foxglove

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// nopDriver takes every write and request.
type nopDriver struct{}

func (nopDriver) Set(int, float64) error         { return nil }
func (nopDriver) Request(string) (uint64, error) { return 1, nil }

// fuzzServer is a server with two channels (one with a message) and one
// parameter, whose clients the fuzz targets talk to without a connection.
func fuzzServer(f *testing.F) *Server {
	s, err := Listen(Options{Addr: "127.0.0.1:0", MaxQueue: 1 << 20}, nopDriver{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	s.Publish(s.Advertise(Channel{Topic: "/a", Encoding: "json"}), 1, []byte("{}"))
	s.Advertise(Channel{Topic: "/b", Encoding: "json"})
	s.params.mu.Lock()
	s.params.names, s.params.index, s.params.values = []string{"P.x"}, map[string]int{"P.x": 0}, []float64{0}
	s.params.mu.Unlock()
	return s
}

// check asserts what a client's state may hold after any input: its
// subscriptions pair up and name existing channels, its parameter
// subscriptions stay within their bound.
func check(t *testing.T, s *Server, c *client) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.subs) != len(c.bySub) || len(c.subs) > 2 {
		t.Fatalf("%d subscriptions, %d channels subscribed", len(c.subs), len(c.bySub))
	}
	for sid, ch := range c.subs {
		if c.bySub[ch] != sid || ch < 1 || ch > 2 {
			t.Fatalf("subscription %d to channel %d", sid, ch)
		}
	}
	if len(c.paramSubs) > 1+maxUnknownParamSubs {
		t.Fatalf("%d parameter subscriptions", len(c.paramSubs))
	}
	for _, m := range c.control {
		if m.typ != websocket.MessageText && m.typ != websocket.MessageBinary {
			t.Fatalf("queued a message of type %v", m.typ)
		}
	}
}

// FuzzClientText sends hostile JSON ops to a driver's connection: nothing
// panics and the client's state stays bounded. Seeds: every op, and
// testdata/fuzz/FuzzClientText.
func FuzzClientText(f *testing.F) {
	s := fuzzServer(f)
	for _, seed := range []string{
		`{"op":"subscribe","subscriptions":[{"id":1,"channelId":1},{"id":2,"channelId":9}]}`,
		`{"op":"unsubscribe","subscriptionIds":[1,7]}`,
		`{"op":"getParameters","parameterNames":["P.x","Q.y"],"id":"g"}`,
		`{"op":"setParameters","parameters":[{"name":"P.x","value":1.5},{"name":"P.x","value":"a"}],"id":"s"}`,
		`{"op":"subscribeParameterUpdates","parameterNames":["P.x"]}`,
		`{"op":"unsubscribeParameterUpdates","parameterNames":[]}`,
		`{"op":"advertise","channels":[]}`,
		`{"op":"getParameters","id":7}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := newClient(s, nil, RoleDriver, "fuzz")
		defer c.cancel()
		c.textMessage(data)
		c.textMessage(data) // twice: ids in use, subscriptions repeated
		check(t, s, c)
	})
}

// FuzzClientBinary sends hostile binary frames (service calls, client
// publications, unknown opcodes) to a driver's connection.
func FuzzClientBinary(f *testing.F) {
	s := fuzzServer(f)
	call := func(svc, id uint32, enc, body string) []byte {
		b := []byte{2}
		b = binary.LittleEndian.AppendUint32(b, svc)
		b = binary.LittleEndian.AppendUint32(b, id)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(enc)))
		return append(append(b, enc...), body...)
	}
	f.Add(call(1, 1, "json", `{"xml":"<part file=\"a.glb\" name=\"A\"/>"}`))
	f.Add(call(4, 2, "json", `{"xml":"<element type=\"pose\" name=\"P\"/>"}`))
	f.Add(call(9, 3, "cdr", ``))
	f.Add([]byte{1, 0, 0, 0, 0})
	f.Add([]byte{2, 1, 0, 0, 0, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		c := newClient(s, nil, RoleDriver, "fuzz")
		defer c.cancel()
		c.binaryMessage(data)
		check(t, s, c)
	})
}

// TestParamSubscriptionsBounded: a client subscribing to 2000 names that
// do not exist keeps 1024 of them besides the one parameter there is, and
// is told how many were refused; the existing one can still be added.
func TestParamSubscriptionsBounded(t *testing.T) {
	s, err := Listen(Options{Addr: "127.0.0.1:0"}, nopDriver{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.params.names, s.params.index, s.params.values = []string{"P.x"}, map[string]int{"P.x": 0}, []float64{0}
	c := newClient(s, nil, RoleViewer, "test")
	defer c.cancel()
	var names []string
	for i := range 2000 {
		names = append(names, fmt.Sprintf("Q%d.y", i))
	}
	s.subscribeParameters(c, names, true)
	s.subscribeParameters(c, []string{"P.x"}, true)
	if len(c.paramSubs) != 1025 || !c.paramSubs["P.x"] || !c.paramSubs["Q1023.y"] || c.paramSubs["Q1024.y"] {
		t.Fatalf("%d parameter subscriptions, P.x %v", len(c.paramSubs), c.paramSubs["P.x"])
	}
	last := string(c.control[1].data)
	if want := `"subscribeParameterUpdates: 976 names refused: a client may wait for at most 1024 parameters that do not exist yet"`; !strings.Contains(last, want) {
		t.Fatalf("status %s, want %s", last, want)
	}
}
