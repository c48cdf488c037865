package ipc_test

import (
	"io"
	"os/exec"
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
