package testkit

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Xvfb starts a virtual X server (Xvfb) of width x height on a display
// number it picks itself (-displayfd: never one in use) and returns the
// DISPLAY value, ":N". The server is killed when the test ends. The test is
// skipped, with the reason, only where Xvfb is not installed or cannot
// start.
func Xvfb(t testing.TB, width, height int) string {
	t.Helper()
	bin, err := exec.LookPath("Xvfb")
	if err != nil {
		t.Skip("Xvfb is not installed (make deps installs xvfb)")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	size := strconv.Itoa(width) + "x" + strconv.Itoa(height) + "x24"
	cmd := exec.Command(bin, "-displayfd", "3", "-screen", "0", size, "-nolisten", "tcp", "-noreset")
	cmd.ExtraFiles = []*os.File{w}
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		w.Close()
		t.Skipf("Xvfb cannot start: %v", err)
	}
	w.Close()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		got <- strings.TrimSpace(line)
	}()
	select {
	case n := <-got:
		if n == "" {
			t.Skipf("Xvfb did not start: %s", errOut.String())
		}
		return ":" + n
	case <-time.After(30 * time.Second):
		t.Skipf("Xvfb did not report a display in 30 s: %s", errOut.String())
	}
	return ""
}
