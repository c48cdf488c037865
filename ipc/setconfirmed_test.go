package ipc_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/simvis/simvis/ipc"
)

// SetConfirmed waits for the host's cycle after the writes: a value in a
// joint's range is taken (nil), one beyond it comes back refused with the
// element's own words, read from the region's header, and the slot reads
// the last accepted value again.
func TestSetConfirmedReportsRefusal(t *testing.T) {
	h, shm := startHost(t, ipc.HostOptions{Warnings: io.Discard})
	stop := cycleWhile(t, h)
	defer stop()
	c := open(t, shm)
	if _, err := c.Request(`<element type="rotation" name="J" insert_at="ROOT" axis="0 0 1" min="-45" max="45"/>`); err != nil {
		t.Fatal(err)
	}
	i, err := c.Param("J", "angle")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetConfirmed([]ipc.ValueWrite{{Index: i, Value: 30}}, 5*time.Second, nil); err != nil {
		t.Fatalf("a value in range: %v", err)
	}
	err = c.SetConfirmed([]ipc.ValueWrite{{Index: i, Value: 90}}, 5*time.Second, nil)
	var refused *ipc.RefusedError
	if !errors.As(err, &refused) || refused.Index != i || refused.Now != 30 ||
		!strings.Contains(err.Error(), "angle = 90° is outside the joint's limits [-45, 45]°") {
		t.Fatalf("a value beyond the joint's range: %v", err)
	}
	if x, ok := h.Region.LastRejection(); !ok || x.First != i || x.Count != 1 {
		t.Errorf("the header's last refusal: %+v %v", x, ok)
	}
}
