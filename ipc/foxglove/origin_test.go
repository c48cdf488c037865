package foxglove

import (
	"github.com/simvis/simvis/internal/webguard"

	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/simvis/simvis/scene"
)

// TestOriginsAndTokens: a browser page of another site is refused (403)
// though it holds the token, Foxglove's app and a page of this machine are
// not, a non-browser client (no Origin) is not; tokens that are a prefix
// or an extension of the real one are refused.
func TestOriginsAndTokens(t *testing.T) {
	s, err := Listen(Options{Addr: "127.0.0.1:0", DriverToken: "drive-token", MaxClients: 64}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct {
		origin string
		want   int // HTTP status; 0: connected
	}{
		{"https://evil.example", http.StatusForbidden},
		{"http://127.0.0.1.evil.example", http.StatusForbidden},
		{"https://app.foxglove.dev", 0},
		{"http://localhost:8080", 0},
		{"", 0},
	} {
		h := http.Header{}
		if tc.origin != "" {
			h.Set("Origin", tc.origin)
		}
		c, resp, err := dial(t, s.URL(), "drive-token", h)
		switch {
		case tc.want == 0 && err != nil:
			t.Errorf("origin %q: %v, want a connection", tc.origin, err)
		case tc.want == 0:
			c.until("serverInfo", nil)
		case err == nil || resp == nil || resp.StatusCode != tc.want:
			t.Errorf("origin %q: %v %v, want %d", tc.origin, err, resp, tc.want)
		}
	}
	for _, tok := range []string{"drive-toke", "drive-token2", "DRIVE-TOKEN"} {
		if _, resp, err := dial(t, s.URL(), tok, nil); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("token %q: %v %v, want 401", tok, err, resp)
		}
	}
	if !webguard.Same("a", "a") || webguard.Same("", "") || webguard.Same("a", "") || webguard.Same("ab", "a") {
		t.Error("same: wrong answer")
	}
}

// TestQueueBytesBound: a driver that sends writes whose refusals echo
// them (1000-byte names of no parameter, echoed MaxEcho bytes) and reads
// nothing is disconnected by the bytes its replies take (1 MiB here),
// before the message count (100,000) would.
func TestQueueBytesBound(t *testing.T) {
	warned := make(chan string, 16)
	s, err := Listen(Options{Addr: "127.0.0.1:0", MaxQueue: 100000, MaxQueueBytes: 1 << 20, Warn: func(kind, format string, args ...any) {
		if kind == "foxglove-slow" {
			select {
			case warned <- fmt.Sprintf(format, args...):
			default:
			}
		}
	}}, nopDriver{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, _, err := dial(t, s.URL(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	req := []byte(`{"op":"setParameters","parameters":[{"name":"` + strings.Repeat("n", 1000) + `","value":1}]}`)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := 0; i < 100000 && s.Stats().SlowClosed == 0; i++ {
		if err := c.conn.Write(ctx, websocket.MessageText, req); err != nil {
			break
		}
	}
	select {
	case w := <-warned:
		var n, b int
		// Refusals echo at most MaxEcho bytes of a name: many small
		// replies, bounded by their bytes long before their count.
		if _, err := fmt.Sscanf(w[strings.LastIndex(w, "): ")+3:], "%d messages (%d bytes)", &n, &b); err != nil || n >= 100000 || b > 1<<20 {
			t.Errorf("warning %q: want fewer than 100000 messages, at most 1 MiB", w)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("not disconnected: %+v", s.Stats())
	}
}

// TestPendingSetAcrossNewScene: a driver's write waiting for the host when
// a new, smaller scene arrives (a mirror rebuilt after its host
// restarted) is refused as replaced; it indexed past the new table and
// panicked the server's Update before.
func TestPendingSetAcrossNewScene(t *testing.T) {
	s, err := Listen(Options{Addr: "127.0.0.1:0", Settle: time.Hour, AnonymousDrivers: true}, nopDriver{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first, err := scene.Load(hostScene(t), scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "other.xml")
	if err := os.WriteFile(f, []byte(`<scene><element type="translation" name="SLIDE" insert_at="ROOT" axis="1 0 0"/></scene>`), 0o644); err != nil {
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
	s.Update(first, 0)
	s.params.mu.Lock()
	last := s.params.names[len(s.params.names)-1]
	s.params.mu.Unlock()
	c.send(map[string]any{"op": "setParameters", "parameters": []map[string]any{{"name": last, "value": 0.25}}, "id": "w"})
	for deadline := time.Now().Add(10 * time.Second); ; {
		s.params.mu.Lock()
		n := len(s.params.pending)
		s.params.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the write never waited for the host")
		}
		time.Sleep(time.Millisecond)
	}
	s.Update(second, 1)
	st := c.until("status", func(m map[string]any) bool { return strings.Contains(fmt.Sprint(m["message"]), "refused") })
	if want := "setParameters: the host refused " + last + " = 0.25 (the scene was replaced)"; st["message"] != want {
		t.Errorf("status %q, want %q", st["message"], want)
	}
}
