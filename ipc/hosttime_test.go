package ipc_test

import (
	"math"
	"testing"
	"time"

	"github.com/simvis/simvis/ipc"
)

// A client reads the host's scene time from the region: cycle n at n
// periods, as serve stamps its own frames; nothing before the first cycle.
func TestHostTimeFromRegion(t *testing.T) {
	h, shm := startHost(t, ipc.HostOptions{Rate: 8})
	c := open(t, shm)
	if at, ok := c.HostTime(); ok {
		t.Errorf("before any cycle: host time %v", at)
	}
	for i := 0; i < 5; i++ {
		if err := h.Cycle(); err != nil {
			t.Fatal(err)
		}
	}
	if at, ok := c.HostTime(); !ok || at != 4*125*time.Millisecond {
		t.Errorf("after 5 cycles at 8 Hz: host time %v (%v), want 500ms", at, ok)
	}
	for _, bad := range []struct {
		cycles uint64
		period time.Duration
	}{{0, time.Second}, {3, 0}, {3, -time.Second}, {3, 2 * time.Hour}, {math.MaxUint64, time.Second}} {
		if at, ok := ipc.HostTime(bad.cycles, bad.period); ok {
			t.Errorf("HostTime(%d, %v) = %v, want refused", bad.cycles, bad.period, at)
		}
	}
}
