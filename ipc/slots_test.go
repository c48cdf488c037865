package ipc_test

import (
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/simvis/simvis/ipc"
)

// An outcome whose requester was alive when the host first looked for it,
// and died afterwards, is freed soon after the death, not only after
// KeepOutcomes: the host keeps looking for the process.
func TestOutcomeFreedAfterLateRequesterDeath(t *testing.T) {
	h, shm := startHost(t, ipc.HostOptions{AbandonAfter: time.Second, KeepOutcomes: time.Hour, Warnings: io.Discard})
	now := time.Unix(1000, 0)
	h.SetClock(func() time.Time { return now })
	requester := exec.Command("sleep", "60")
	if err := requester.Start(); err != nil {
		t.Fatal(err)
	}
	defer requester.Process.Kill()
	c := open(t, shm)
	a := attacker(t, shm)
	seq, err := c.Submit(`<element type="pose" name="ORPHAN" insert_at="ROOT"/>`)
	if err != nil {
		t.Fatal(err)
	}
	pid := uint32(requester.Process.Pid)
	b := a.Slot(seq)
	b[4], b[5], b[6], b[7] = byte(pid), byte(pid>>8), byte(pid>>16), byte(pid>>24) // the requester's pid
	cycle := func(step time.Duration) {
		t.Helper()
		now = now.Add(step)
		if err := h.Cycle(); err != nil {
			t.Fatal(err)
		}
	}
	cycle(0) // executes it; the outcome waits in the slot
	if st := a.Slot(seq)[0]; st != ipc.SlotOK {
		t.Fatalf("slot state %d after execution, want %d", st, ipc.SlotOK)
	}
	cycle(1100 * time.Millisecond) // the requester lives: the outcome stays
	if st := a.Slot(seq)[0]; st != ipc.SlotOK {
		t.Fatalf("outcome of a live requester freed after 1.1 s (state %d)", st)
	}
	requester.Process.Kill()
	requester.Wait()
	cycle(1100 * time.Millisecond)
	if st := a.Slot(seq)[0]; st != ipc.SlotFree {
		t.Errorf("outcome of a requester that died 1.1 s ago still held (state %d), KeepOutcomes is an hour", st)
	}
}

// A rewound desc_count is damage a reader reports, not a shorter list of
// elements; a record scribbled past the last one is cleared by the host, so
// readers are not locked out by it.
func TestDescCountRewound(t *testing.T) {
	defer ipc.SetReadPatience(50 * time.Millisecond)()
	h, shm := startHost(t, ipc.HostOptions{Warnings: io.Discard})
	c := open(t, shm)
	a := attacker(t, shm)
	seq, err := c.Submit(`<element type="pose" name="SECOND" insert_at="ROOT"/>`)
	if err != nil {
		t.Fatal(err)
	}
	h.Cycle()
	if _, err := c.Outcome(seq); err != nil {
		t.Fatal(err)
	}
	a.Poke32(ipc.OffDescCount, 1)
	if ds, err := c.Elements(); err == nil || !strings.Contains(err.Error(), "damaged region") ||
		!strings.Contains(err.Error(), "past desc_count 1") {
		t.Errorf("desc_count rewound from 2 to 1: %d elements, %v", len(ds), err)
	}
	h.Cycle()
	if ds, err := c.Elements(); err != nil || len(ds) != 2 || ds[1].Name != "SECOND" {
		t.Fatalf("after the host's cycle: %+v %v", ds, err)
	}
	desc := a.DescSection()
	copy(desc[2*256:], "FORGED")
	if _, err := c.Elements(); err == nil {
		t.Error("a named record past desc_count read as nothing")
	}
	before := h.Repairs()
	h.Cycle()
	if ds, err := c.Elements(); err != nil || len(ds) != 2 || desc[2*256] != 0 || h.Repairs() != before+1 {
		t.Errorf("after the host's cycle: %d elements, %v; record byte %d; repairs %d, want %d", len(ds), err, desc[2*256], h.Repairs(), before+1)
	}
}

// A client attached to a live host keeps working while another process
// writes a dead process's id into host_pid: it looks for the host's
// process by the id it read when it attached.
func TestForgedHostPID(t *testing.T) {
	_, shm := startHost(t, ipc.HostOptions{Warnings: io.Discard})
	c := open(t, shm)
	yaw, err := c.Param("R_POSE", "yaw")
	if err != nil {
		t.Fatal(err)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	attacker(t, shm).Poke32(ipc.OffPID, uint32(gone.Process.Pid)) // reaped: no such process
	if err := c.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
	if err := c.Set(yaw, 1); err != nil {
		t.Errorf("Set: %v", err)
	}
	if _, err := c.Get(yaw); err != nil {
		t.Errorf("Get: %v", err)
	}
	if _, err := c.Elements(); err != nil {
		t.Errorf("Elements: %v", err)
	}
}
