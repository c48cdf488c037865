package ipc_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simvis/simvis/ipc"
)

// A second host under the name of one that another live process runs is
// refused, naming the name and the running host's process; Replace takes
// the name on purpose (the first host's clients learn it was replaced); once
// the first host's process is gone, its leftover file is no obstacle.
func TestSecondHostRefused(t *testing.T) {
	shm := filepath.Join(t.TempDir(), "region")
	cmd := child(t, "host", shm)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	buf := make([]byte, 64)
	if n, _ := out.Read(buf); !strings.HasPrefix(string(buf[:n]), "ready") {
		t.Fatalf("child host said %q", buf[:n])
	}
	if pid := ipc.RunningHost(shm); pid != cmd.Process.Pid {
		t.Fatalf("RunningHost = %d, want the child's pid %d", pid, cmd.Process.Pid)
	}
	_, err := ipc.NewHost(shm, quickstart, ipc.HostOptions{Sizes: testSizes})
	var running *ipc.HostRunningError
	if !errors.As(err, &running) || running.PID != cmd.Process.Pid ||
		!strings.Contains(err.Error(), fmt.Sprintf("host %s is already running (pid %d)", shm, cmd.Process.Pid)) {
		t.Fatalf("second host: %v, want a HostRunningError naming pid %d", err, cmd.Process.Pid)
	}
	c := open(t, shm)
	if err := c.Check(); err != nil {
		t.Fatalf("the first host's client after the refusal: %v", err)
	}
	h, err := ipc.NewHost(shm, quickstart, ipc.HostOptions{Sizes: testSizes, Replace: true})
	if err != nil {
		t.Fatalf("replace on purpose: %v", err)
	}
	if err := c.Check(); !errors.Is(err, ipc.ErrHostReplaced) {
		t.Errorf("the first host's client after a replacement: %v", err)
	}
	h.Close()

	// A host killed without a word leaves its file: the next one starts.
	shm2 := filepath.Join(t.TempDir(), "region")
	dead := child(t, "host", shm2)
	out2, _ := dead.StdoutPipe()
	if err := dead.Start(); err != nil {
		t.Fatal(err)
	}
	if n, _ := out2.Read(buf); !strings.HasPrefix(string(buf[:n]), "ready") {
		t.Fatalf("child host said %q", buf[:n])
	}
	dead.Process.Kill()
	dead.Wait()
	h2, err := ipc.NewHost(shm2, quickstart, ipc.HostOptions{Sizes: testSizes})
	if err != nil {
		t.Fatalf("a host after a killed one: %v", err)
	}
	h2.Close()
}
