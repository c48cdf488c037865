package testkit

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
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

// CloseWindow asks an X window to close as a window manager's close button
// does: a WM_PROTOCOLS ClientMessage carrying WM_DELETE_WINDOW, sent to the
// client that owns the window (X11 core protocol, written here since the
// test machine has no window manager and no X library for scripts).
func CloseWindow(t testing.TB, display string, window uint32) {
	t.Helper()
	n := strings.TrimPrefix(display, ":")
	if i := strings.IndexByte(n, '.'); i >= 0 {
		n = n[:i]
	}
	conn, err := net.Dial("unix", "/tmp/.X11-unix/X"+n)
	if err != nil {
		t.Fatalf("connecting to X display %s: %v", display, err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	le := binary.LittleEndian
	// Connection setup: little-endian, protocol 11.0, no authorization.
	setup := make([]byte, 12)
	setup[0] = 'l'
	le.PutUint16(setup[2:], 11)
	if _, err := conn.Write(setup); err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 8)
	if _, err := io.ReadFull(conn, head); err != nil {
		t.Fatal(err)
	}
	if head[0] != 1 {
		t.Fatalf("X server refused the connection (status %d)", head[0])
	}
	if _, err := io.ReadFull(conn, make([]byte, 4*int(le.Uint16(head[6:])))); err != nil {
		t.Fatal(err)
	}
	atom := func(name string) uint32 {
		pad := (4 - len(name)%4) % 4
		req := make([]byte, 8+len(name)+pad)
		req[0] = 16 // InternAtom
		le.PutUint16(req[2:], uint16(len(req)/4))
		le.PutUint16(req[4:], uint16(len(name)))
		copy(req[8:], name)
		if _, err := conn.Write(req); err != nil {
			t.Fatal(err)
		}
		reply := make([]byte, 32)
		if _, err := io.ReadFull(conn, reply); err != nil {
			t.Fatal(err)
		}
		if reply[0] != 1 {
			t.Fatalf("InternAtom %s: X error %d", name, reply[1])
		}
		return le.Uint32(reply[8:])
	}
	protocols, del := atom("WM_PROTOCOLS"), atom("WM_DELETE_WINDOW")
	req := make([]byte, 44)
	req[0] = 25 // SendEvent, propagate false
	le.PutUint16(req[2:], 11)
	le.PutUint32(req[4:], window)
	le.PutUint32(req[8:], 0) // no event mask: to the window's owner
	ev := req[12:]
	ev[0] = 33 // ClientMessage
	ev[1] = 32 // format: 32-bit data
	le.PutUint32(ev[4:], window)
	le.PutUint32(ev[8:], protocols)
	le.PutUint32(ev[12:], del)
	if _, err := conn.Write(req); err != nil {
		t.Fatal(err)
	}
	// A request with a reply after it: the server has handled SendEvent
	// (or reported its error, which would arrive first) once it answers.
	_ = atom("WM_DELETE_WINDOW")
}
