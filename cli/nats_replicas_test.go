package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --replicas needs a cluster (--nats) and stays within JetStream's 1 to 5.
func TestServeNATSReplicasRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--replicas", "3"}, "the embedded server is one server"},
		{[]string{"--replicas", "7", "--nats", "nats://127.0.0.1:1"}, "want 1 to 5"},
		{[]string{"--replicas", "-1", "--nats", "nats://127.0.0.1:1"}, "want 1 to 5"},
	} {
		shm := filepath.Join(t.TempDir(), fmt.Sprintf("simvis-repl%d", os.Getpid()))
		args := append([]string{"serve", "--shm", shm, "--cycles", "1", "--listen", "127.0.0.1:0"}, c.args...)
		code, _, errOut := simvis(t, append(args, quickstart)...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %s; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}
