package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 29, finding 9, with real processes: a driver fills the host's
// element budget (--max-elements) by request and every further element is
// refused; `simvis request '<remove name=...>'` frees places, after which
// elements are added again, and the host's other elements keep their
// values.
func TestRemoveFreesTheElementBudget(t *testing.T) {
	dir := t.TempDir()
	shm := filepath.Join(dir, "simvis-rm")
	stop := startServe(t, quickstart, "--shm", shm, "--no-nats", "--max-elements", "6", "--rate", "50", "--remove-interval", "1ms")
	defer stop()
	for i := 1; i <= 5; i++ {
		if code, _, errOut := simvis(t, "request", "--shm", shm, fmt.Sprintf(`<element type="pose" name="FLOOD%d" insert_at="ROBOT"/>`, i)); code != 0 {
			t.Fatalf("element %d: %s", i, errOut)
		}
	}
	if code, _, errOut := simvis(t, "request", "--shm", shm, `<element type="pose" name="MINE" insert_at="ROBOT"/>`); code != 1 || !strings.Contains(errOut, "--max-elements") {
		t.Fatalf("a full scene took another element: %d %q", code, errOut)
	}
	if code, _, errOut := simvis(t, "set", "--shm", shm, "R_POSE.yaw=61"); code != 0 {
		t.Fatal(errOut)
	}
	for i := 1; i <= 5; i++ {
		code, out, errOut := simvis(t, "request", "--shm", shm, fmt.Sprintf(`<remove name="FLOOD%d"/>`, i))
		if code != 0 || out != fmt.Sprintf("change %d\n", 4+5-i) {
			t.Fatalf("removing FLOOD%d: %d %q %q", i, code, out, errOut)
		}
	}
	if code, out, errOut := simvis(t, "request", "--shm", shm, `<element type="pose" name="MINE" insert_at="ROBOT"/>`); code != 0 || out != "change 5\n" {
		t.Fatalf("an element after the removals: %d %q %q", code, out, errOut)
	}
	code, out, errOut := simvis(t, "elements", "--shm", shm, "--json")
	if code != 0 || strings.Contains(out, "FLOOD") || !strings.Contains(out, `"MINE"`) || !strings.Contains(out, "61") {
		t.Errorf("elements: %d %s %s", code, out, errOut)
	}
	if summary := stop(); !strings.Contains(summary, "changes logged") {
		t.Errorf("serve: %s", summary)
	}
}
