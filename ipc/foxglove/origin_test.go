package foxglove

import (
	"net/http"
	"testing"
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
