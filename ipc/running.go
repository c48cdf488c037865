package ipc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// HostRunningError is NewHost's refusal to take the name of a host that
// another live process runs: the first host would go on running,
// unreachable, and never learn why its clients left.
type HostRunningError struct {
	Path string // the region's file
	PID  int    // the running host's process
}

func (e *HostRunningError) Error() string {
	return fmt.Sprintf("host %s is already running (pid %d): stop it first, or replace it on purpose (serve --replace)", hostName(e.Path), e.PID)
}

// hostName is the name a region's path was made from by Path, or the path.
func hostName(path string) string {
	if dir, base := filepath.Split(path); dir == "/dev/shm/" && strings.HasPrefix(base, "simvis-") {
		return strings.TrimPrefix(base, "simvis-")
	}
	return path
}

// RunningHost returns the process of the host whose region is at path, if
// one of this user's is there, says it is running, and its process lives
// (not a zombie); 0 otherwise. A host of this very process does not count:
// a program that restarts its own host replaces it knowingly.
func RunningHost(path string) int {
	f, st, err := openOwned(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	if st.Size() < pageSize {
		return 0
	}
	hdr := make([]byte, offState+4)
	if _, err := f.ReadAt(hdr, 0); err != nil || !bytes.Equal(hdr[:8], []byte(magic)) {
		return 0
	}
	pid := int(binary.NativeEndian.Uint32(hdr[offPID:]))
	state := binary.NativeEndian.Uint32(hdr[offState:])
	if state != stateRunning || pid <= 0 || pid > 1<<22 || pid == os.Getpid() {
		return 0
	}
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) || zombie(pid) {
		return 0
	}
	return pid
}
