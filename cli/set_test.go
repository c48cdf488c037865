package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// set waits for the host's cycle after its writes: a value the host takes
// exits 0, one it refuses (beyond a joint's range) exits 1 with the host's
// reason, naming the argument.
func TestSetReportsRefusal(t *testing.T) {
	shm := filepath.Join(t.TempDir(), "region")
	startServe(t, quickstart, "--shm", shm, "--rate", "50", "--no-nats")
	if code, _, errOut := simvis(t, "request", "--shm", shm, `<element type="rotation" name="J" insert_at="ROOT" axis="0 0 1" min="-45" max="45"/>`); code != 0 {
		t.Fatalf("request: %s", errOut)
	}
	if code, _, errOut := simvis(t, "set", "--shm", shm, "J.angle=30"); code != 0 {
		t.Fatalf("set in range: %d %s", code, errOut)
	}
	code, _, errOut := simvis(t, "set", "--shm", shm, "J.angle=90")
	if code != 1 || !strings.Contains(errOut, "J.angle=90: the host refused 90") || !strings.Contains(errOut, "outside the joint's limits [-45, 45]") {
		t.Errorf("set beyond the joint's range: %d %q", code, errOut)
	}
}
