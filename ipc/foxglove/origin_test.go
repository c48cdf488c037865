package foxglove

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
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
	if !same("a", "a") || same("", "") || same("a", "") || same("ab", "a") {
		t.Error("same: wrong answer")
	}
}

// TestQueueBytesBound: a driver that sends writes whose refusals echo
// them (100 KiB names of no parameter) and reads nothing is disconnected by
// the bytes its replies take (1 MiB here), long before the message count
// (100,000) would.
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
	req := []byte(`{"op":"setParameters","parameters":[{"name":"` + strings.Repeat("n", 100<<10) + `","value":1}]}`)
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
		if _, err := fmt.Sscanf(w[strings.LastIndex(w, "): ")+3:], "%d messages (%d bytes)", &n, &b); err != nil || n >= 1000 || b > 1<<20 {
			t.Errorf("warning %q: want fewer than 1000 messages, at most 1 MiB", w)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("not disconnected: %+v", s.Stats())
	}
}
