package natsipc_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/ipc/natsipc"
)

// Over NATS, SetConfirmed waits for the values message of a cycle after
// the writes and reports a refusal with the host's reason, which the host
// publishes on simvis.NAME.rejected (a subject a driver may read).
func TestSetConfirmedOverNATS(t *testing.T) {
	srv := startServer(t, natsipc.ServerOptions{})
	serve(t, srv, natsipc.Limits{}, nil)
	c, err := ipc.Dial(srv.URLFor(natsipc.RoleDriver) + "/test")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Request(`<element type="rotation" name="J" insert_at="ROOT" axis="0 0 1" min="-45" max="45"/>`); err != nil {
		t.Fatal(err)
	}
	var i int
	for deadline := time.Now().Add(5 * time.Second); ; {
		if i, err = c.Param("J", "angle"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// No flush given: SetConfirmed waits through the Conn's own.
	if err := c.SetConfirmed([]ipc.ValueWrite{{Index: i, Value: 30}}, 5*time.Second, nil); err != nil {
		t.Fatalf("a value in range: %v", err)
	}
	err = c.SetConfirmed([]ipc.ValueWrite{{Index: i, Value: 90}}, 5*time.Second, nil)
	var refused *ipc.RefusedError
	if !errors.As(err, &refused) || refused.Now != 30 || !strings.Contains(err.Error(), "outside the joint's limits [-45, 45]") {
		t.Fatalf("a value beyond the joint's range: %v", err)
	}
}
