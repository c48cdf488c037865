package ipc

import (
	"strings"
	"testing"
)

// TestDialHidesSecrets: a URL that does not parse is refused without
// repeating it or a password's characters.
func TestDialHidesSecrets(t *testing.T) {
	for _, raw := range []string{"nats://driver:s3cret%zz@127.0.0.1:4222/x", "nats://driver:s3cret wo@127.0.0.1:4222/x", "nats://tok-s3cret@[::1/x"} {
		_, err := Dial(raw)
		if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "the URL does not parse") {
			t.Errorf("Dial(%q): %v", raw, err)
		}
	}
	if u, err := ParseURL("nats://a:b@127.0.0.1:4222/x"); err != nil || u.User.Username() != "a" {
		t.Errorf("a valid URL: %v %v", u, err)
	}
}
