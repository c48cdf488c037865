package ipc

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// A host killed but not yet reaped by its parent still answers kill(pid,
// 0); it counts as gone all the same.
func TestZombieHostIsGone(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if zombie(pid) {
		t.Fatal("a running process reads as a zombie")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !zombie(pid) {
		if time.Now().After(deadline) {
			t.Fatal("the killed, unreaped child never read as a zombie")
		}
		time.Sleep(time.Millisecond)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("kill(pid, 0) on the zombie: %v (the case zombie exists for is gone?)", err)
	}
	cmd.Wait()
	if zombie(os.Getpid()) {
		t.Error("this process reads as a zombie")
	}
}
