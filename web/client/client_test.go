package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/web/client"
)

// A binary message decodes to what was encoded; a truncated or lying one
// is an error, never a panic.
func TestBinaryRoundTrip(t *testing.T) {
	values := []float64{0, -1.5, math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(1)}
	st := client.State{Epoch: 1 << 63, Status: client.Running, Cycle: 7, Records: []client.Record{{Seq: 1, XML: `<part a="&lt;"/>`}}, Complete: true}
	msg, err := client.EncodeBinary(client.KindState, st, client.PutValues(nil, values))
	if err != nil {
		t.Fatal(err)
	}
	var got client.State
	kind, tail, err := client.DecodeBinary(msg, &got)
	if err != nil || kind != client.KindState || got.Epoch != st.Epoch || got.Records[0].XML != st.Records[0].XML {
		t.Fatalf("decoded %q %+v, %v", kind, got, err)
	}
	vals, err := client.ReadValues(tail)
	if err != nil || len(vals) != len(values) {
		t.Fatal(vals, err)
	}
	for i := range vals {
		if math.Float64bits(vals[i]) != math.Float64bits(values[i]) {
			t.Errorf("value %d: %v, want %v", i, vals[i], values[i])
		}
	}
	for n := 0; n < len(msg); n++ {
		if _, _, err := client.DecodeBinary(msg[:n], &got); err == nil && n < len(msg)-len(tail) {
			t.Errorf("a message cut to %d of %d bytes decoded", n, len(msg))
		}
	}
	if _, err := client.ReadValues(make([]byte, 7)); err == nil {
		t.Error("7 value bytes read")
	}
}

func FuzzDecodeBinary(f *testing.F) {
	msg, _ := client.EncodeBinary(client.KindFile, client.FileReply{ID: 1, Size: 10}, []byte("abc"))
	f.Add(msg)
	f.Add([]byte("S\xff\xff\xff\xff{}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var st client.State
		if _, tail, err := client.DecodeBinary(b, &st); err == nil && len(tail) > len(b) {
			t.Fatal("a tail longer than the message")
		}
	})
}

func TestWebSocketURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8080/":               "ws://127.0.0.1:8080/ws",
		"https://host/some/page?x=1#token=abc": "wss://host/ws",
		"ws://h:1/ws":                          "ws://h:1/ws",
	} {
		if got, err := client.WebSocketURL(in); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := client.WebSocketURL("ftp://h/"); err == nil {
		t.Error("ftp:// accepted")
	}
}

// fakeServer speaks the protocol as a test script says: a welcome, then
// what script sends; it answers every file command with reply.
func fakeServer(t *testing.T, states func(send func(kind byte, h any, tail []byte)), file func(client.Command) (client.FileReply, []byte)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{client.Subprotocol}})
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx := r.Context()
		welcome, _ := json.Marshal(client.Welcome{Op: client.OpWelcome, Protocol: 1, Role: client.Driver})
		ws.Write(ctx, websocket.MessageText, welcome)
		send := func(kind byte, h any, tail []byte) {
			msg, _ := client.EncodeBinary(kind, h, tail)
			ws.Write(ctx, websocket.MessageBinary, msg)
		}
		states(send)
		for {
			_, msg, err := ws.Read(ctx)
			if err != nil {
				return
			}
			var cmd client.Command
			json.Unmarshal(msg, &cmd)
			if cmd.Op == client.OpFile && file != nil {
				fr, data := file(cmd)
				fr.ID = cmd.ID
				send(client.KindFile, fr, data)
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws"
}

func dial(t *testing.T, url string) (*client.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, url, "")
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

var oneRun = func(send func(byte, any, []byte)) {
	send(client.KindState, client.State{Epoch: 5, Status: client.Running, Complete: true,
		Records:  []client.Record{{Seq: 1, Dir: "/scene", XML: `<element type="pose" name="P" insert_at="ROOT"/>`, Files: []ipc.FileHash{{Path: "m.gltf"}}}},
		Elements: []client.Element{{Name: "P", At: "ROOT", Type: "pose", Params: []string{"x"}}}, Values: 1}, client.PutValues(nil, []float64{2.5}))
}

// FetchFile puts chunks together and refuses a server whose chunks do not
// continue the file, overrun its size or stall.
func TestFetchFileChecksChunks(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 100)
	for _, tc := range []struct {
		name  string
		reply func(client.Command) (client.FileReply, []byte)
		want  string // "" for data
	}{
		{"chunks", func(c client.Command) (client.FileReply, []byte) {
			return client.FileReply{Size: int64(len(data)), Offset: c.Offset}, data[c.Offset:min(c.Offset+300, int64(len(data)))]
		}, ""},
		{"wrong offset", func(c client.Command) (client.FileReply, []byte) {
			return client.FileReply{Size: int64(len(data)), Offset: c.Offset + 1}, data[:10]
		}, "does not continue"},
		{"past the size", func(c client.Command) (client.FileReply, []byte) {
			return client.FileReply{Size: 5, Offset: c.Offset}, data[:10]
		}, "does not continue"},
		{"empty chunk", func(c client.Command) (client.FileReply, []byte) {
			return client.FileReply{Size: int64(len(data)), Offset: c.Offset}, nil
		}, "empty chunk"},
		{"negative size", func(c client.Command) (client.FileReply, []byte) {
			return client.FileReply{Size: -1, Offset: c.Offset}, nil
		}, "does not continue"},
		{"refused", func(c client.Command) (client.FileReply, []byte) {
			return client.FileReply{Error: "m.gltf is not a file the scene's logged commands loaded"}, nil
		}, "not a file"},
	} {
		c, err := dial(t, fakeServer(t, oneRun, tc.reply))
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.FetchFile("/scene", "m.gltf")
		switch {
		case tc.want == "" && (err != nil || !bytes.Equal(got, data)):
			t.Errorf("%s: %d bytes, %v", tc.name, len(got), err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}

// A state the client cannot take (records going back, values from a
// negative index) ends the connection: the Conn reports it lost rather
// than show a wrong scene.
func TestBadStatesEndTheConnection(t *testing.T) {
	for name, bad := range map[string]func(send func(byte, any, []byte)){
		"records going back": func(send func(byte, any, []byte)) {
			send(client.KindState, client.State{Epoch: 5, Status: client.Running, Records: []client.Record{{Seq: 2}, {Seq: 1}}, Complete: true}, nil)
		},
		"negative values index": func(send func(byte, any, []byte)) {
			send(client.KindState, client.State{Epoch: 5, Status: client.Running, ValuesFrom: -1, Values: 1, Complete: true}, client.PutValues(nil, []float64{1}))
		},
		"more values than bytes": func(send func(byte, any, []byte)) {
			send(client.KindState, client.State{Epoch: 5, Status: client.Running, Values: 2, Complete: true}, client.PutValues(nil, []float64{1}))
		},
		"bytes left over": func(send func(byte, any, []byte)) {
			send(client.KindState, client.State{Epoch: 5, Status: client.Running, Values: 1, Complete: true}, client.PutValues(nil, []float64{1, 2}))
		},
		"returns beyond the tail": func(send func(byte, any, []byte)) {
			send(client.KindState, client.State{Epoch: 5, Status: client.Running, Complete: true,
				Returns: []client.Returns{{Sensor: "S", Points: 2}}}, client.PutPoints(nil, []mgl64.Vec3{{1, 2, 3}}))
		},
		"odd value bytes": func(send func(byte, any, []byte)) {
			send(client.KindState, client.State{Epoch: 5, Status: client.Running, Values: 1, Complete: true}, []byte{1, 2, 3})
		},
		"unknown kind": func(send func(byte, any, []byte)) {
			send('Q', client.State{}, nil)
		},
	} {
		_, err := dial(t, fakeServer(t, bad, nil))
		if err == nil || !strings.Contains(err.Error(), "connection to the server lost") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The good run for contrast: its element and value arrive.
	c, err := dial(t, fakeServer(t, oneRun, nil))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(0); err != nil || v != 2.5 {
		t.Errorf("value 0: %v, %v", v, err)
	}
	if _, err := c.Get(1); err == nil {
		t.Error("a value the server never sent was read")
	}
	if err := c.Check(); err != nil {
		t.Error(err)
	}
	// Closed, it says so.
	c.Close()
	if _, err := c.Get(0); err == nil {
		t.Error("a closed Conn read a value")
	}
}

// A range sensor's returns arrive after the values, to float32 precision,
// and TakeReturns hands each sensor's newest on once.
func TestReturnsArrive(t *testing.T) {
	pts := []mgl64.Vec3{{1.5, -2.25, 0.125}, {3, 4, 5}}
	c, err := dial(t, fakeServer(t, func(send func(byte, any, []byte)) {
		send(client.KindState, client.State{Epoch: 5, Status: client.Running, Complete: true, Values: 1,
			Returns: []client.Returns{{Sensor: "SCAN", Origin: [3]float64{1, 2, 3}, Points: 2}}},
			client.PutPoints(client.PutValues(nil, []float64{7}), pts))
	}, nil))
	if err != nil {
		t.Fatal(err)
	}
	got := c.TakeReturns()
	if len(got) != 1 || got[0].Sensor != "SCAN" || got[0].Origin != (mgl64.Vec3{1, 2, 3}) || len(got[0].Points) != 2 ||
		got[0].Points[0] != pts[0] || got[0].Points[1] != pts[1] {
		t.Fatalf("returns %+v, want SCAN from (1 2 3) with %v", got, pts)
	}
	if v, err := c.Get(0); err != nil || v != 7 {
		t.Errorf("the value before the returns: %v, %v", v, err)
	}
	if again := c.TakeReturns(); len(again) != 0 {
		t.Errorf("returns handed on twice: %+v", again)
	}
}
