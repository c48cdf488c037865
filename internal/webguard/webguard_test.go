package webguard_test

import (
	"net/http/httptest"
	"testing"

	"github.com/simvis/simvis/internal/webguard"
)

// Loopback names and addresses, and the look-alikes that are not.
func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LocalHost.": true, "127.0.0.1": true, "127.8.9.10": true, "::1": true,
		"": false, "0.0.0.0": false, "::": false, "localhost.evil.example": false, "127.0.0.1.nip.io": false, "10.0.0.1": false,
	} {
		if got := webguard.Loopback(host); got != want {
			t.Errorf("Loopback(%q) = %v", host, got)
		}
	}
	for hostport, want := range map[string]bool{
		"127.0.0.1:8080": true, "[::1]:80": true, "[::1]": true, "localhost": true, "LOCALHOST:1": true,
		"evil.example:8080": false, "127.0.0.1.evil.example:80": false, "": false,
	} {
		if got := webguard.LoopbackHost(hostport); got != want {
			t.Errorf("LoopbackHost(%q) = %v", hostport, got)
		}
	}
}

// The query's token comes first, then a bearer header; other schemes
// carry none.
func TestToken(t *testing.T) {
	for _, tc := range []struct{ url, auth, want string }{
		{"/ws?token=a%20b", "", "a b"},
		{"/ws?token=q", "Bearer h", "q"},
		{"/ws", "Bearer h", "h"},
		{"/ws", "Basic aDpo", ""},
		{"/ws", "bearer h", ""},
		{"/ws?token=", "", ""},
	} {
		r := httptest.NewRequest("GET", tc.url, nil)
		if tc.auth != "" {
			r.Header.Set("Authorization", tc.auth)
		}
		if got := webguard.Token(r); got != tc.want {
			t.Errorf("%s with %q: token %q, want %q", tc.url, tc.auth, got, tc.want)
		}
	}
	if webguard.Same("", "") || !webguard.Same("t", "t") || webguard.Same("t", "") || webguard.Same("t ", "t") {
		t.Error("Same: an empty configured token matched, or a match was missed")
	}
}

// An origin is the server's own (by its Host, any case) or matches a
// pattern; nothing else, however alike.
func TestOriginAllowed(t *testing.T) {
	patterns := []string{"*.trusted.example", "app.example:*"}
	for _, tc := range []struct {
		origin, host string
		want         bool
	}{
		{"http://127.0.0.1:8080", "127.0.0.1:8080", true},
		{"https://LOCALHOST:8080", "localhost:8080", true},
		{"http://127.0.0.1:8081", "127.0.0.1:8080", false},
		{"http://127.0.0.1:8080.evil.example", "127.0.0.1:8080", false},
		{"http://a.trusted.example", "127.0.0.1:8080", true},
		{"http://trusted.example", "127.0.0.1:8080", false},
		{"http://app.example:9", "127.0.0.1:8080", true},
		{"http://app.example", "127.0.0.1:8080", true}, // port "*": the default one too
		{"null", "127.0.0.1:8080", false},
		{"", "127.0.0.1:8080", false},
		{"file:///etc/passwd", "", false},
	} {
		if got := webguard.OriginAllowed(tc.origin, tc.host, patterns); got != tc.want {
			t.Errorf("origin %q for host %q: %v", tc.origin, tc.host, got)
		}
	}
}
