package viewer

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// checkDisplay connects to the X server that DISPLAY names and hangs up:
// GLFW reports an unreachable display only on its own stderr log and then
// panics in g3n's window setup, so the viewer asks first and says what
// went wrong in one error.
func checkDisplay(display string) error {
	host, rest, ok := strings.Cut(display, ":")
	if !ok {
		return fmt.Errorf("DISPLAY=%q is not an X display name (want [HOST]:N[.SCREEN], e.g. :0)", display)
	}
	num, _, _ := strings.Cut(rest, ".")
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 || n > 65535-6000 {
		return fmt.Errorf("DISPLAY=%q is not an X display name (want [HOST]:N[.SCREEN], e.g. :0)", display)
	}
	network, addr := "unix", "/tmp/.X11-unix/X"+strconv.Itoa(n)
	if host != "" && host != "unix" {
		network, addr = "tcp", net.JoinHostPort(host, strconv.Itoa(6000+n))
	}
	c, err := net.DialTimeout(network, addr, 5*time.Second)
	if err != nil {
		return fmt.Errorf("cannot reach the X display DISPLAY=%q (%v); render into a file with -o FILE.png instead", display, err)
	}
	return c.Close()
}
