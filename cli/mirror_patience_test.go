package cli

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe to read while a command writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// mirror --connect keeps trying for --patience when no NATS server answers
// at the start (issue 13): started before its host, it says it retries,
// then replicates the host once it serves, with the credentials it finds
// in the host's secrets file.
func TestMirrorWaitsForServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	name := fmt.Sprintf("patient%d", os.Getpid())
	dir, out := t.TempDir(), t.TempDir()
	var stdout, stderr lockedBuffer
	code := make(chan int, 1)
	go func() {
		code <- Main([]string{"mirror", "--connect", fmt.Sprintf("nats://127.0.0.1:%d/%s", port, name), "-o", out, "--patience", "60s"}, &stdout, &stderr)
	}()
	waitFor(t, func() bool { return strings.Contains(stderr.String(), "retrying for 1m0s") }, "the mirror to retry")
	stop := startServe(t, quickstart, "--shm", filepath.Join(dir, "simvis-"+name), "--rate", "20", "--listen", fmt.Sprintf("127.0.0.1:%d", port))
	defer stop()
	select {
	case c := <-code:
		if c != 0 || !strings.Contains(stdout.String(), "replica at change 4") {
			t.Errorf("mirror: exit %d, %q, %q", c, stdout.String(), stderr.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("the mirror still waits: %q", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "ROBOT_CAM_0000.png")); err != nil {
		entries, _ := os.ReadDir(out)
		t.Errorf("no camera image: %v (%v)", err, entries)
	}
}
