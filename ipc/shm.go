package ipc

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// shmConn is a Conn to a host on this machine: its region mapped.
type shmConn struct {
	name   string
	region *Region
	values []float64
	due    atomic.Bool // the next value access looks for the host's process
	mu     sync.Mutex  // guards timer
	timer  *time.Timer // sets due liveEvery after a check found the host alive
}

// liveEvery is how often Set and Get look for the host's process: a
// kill(pid, 0) costs about a microsecond, a value access a few nanoseconds.
const liveEvery = 10 * time.Millisecond

func openShm(name string) (*shmConn, error) {
	c := &shmConn{name: name}
	if err := c.attach(); err != nil {
		return nil, err
	}
	if err := c.Check(); err != nil {
		c.region.Close()
		return nil, err
	}
	return c, nil
}

func (c *shmConn) attach() error {
	r, err := Attach(Path(c.name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w (is 'simvis serve' running with --shm %s?)", err, c.name)
		}
		return err
	}
	c.region, c.values = r, r.Values()
	c.due.Store(true)
	return nil
}

// Region is the mapped region of a shared-memory client (nil for other
// transports), for direct access to the arrays.
func (c *Client) Region() *Region {
	if s, ok := c.conn.(*shmConn); ok {
		return s.region
	}
	return nil
}

func (c *shmConn) Epoch() uint64 { return c.region.Epoch() }

// Check reads the host's state from the header and looks for its process
// (host_pid as read at attach). The state is a field any client could
// overwrite: "stopped" or "replaced" is believed only once the file at the
// name is no longer this one (a host that stops removes it; a new one
// renames its own over it), or the process is gone.
func (c *shmConn) Check() error {
	if c.values == nil {
		return errClosed
	}
	r := c.region
	pid := int(r.hostPID)
	gone := pid <= 0 || pid > 1<<22 || errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) || zombie(pid)
	switch st := r.get32(offState); {
	case st == stateReplaced && !r.isFileAt(r.path):
		return fmt.Errorf("host %s: %w", c.name, ErrHostReplaced)
	case st == stateStopped && !r.isFileAt(r.path):
		return &HostGoneError{Host: c.name, PID: pid}
	case gone:
		return &HostGoneError{Host: c.name, PID: pid, Vanished: true}
	}
	c.due.Store(false)
	c.mu.Lock()
	if c.timer == nil {
		c.timer = time.AfterFunc(liveEvery, func() { c.due.Store(true) })
	} else {
		c.timer.Reset(liveEvery)
	}
	c.mu.Unlock()
	return nil
}

// live is Check for the value accesses: at once when the state field
// says the host is not running, else at most once every liveEvery (a timer
// raises due, so the common case costs two atomic loads, no clock read).
func (c *shmConn) live() error {
	if c.values == nil {
		return errClosed
	}
	if c.region.get32(offState) == stateRunning && !c.due.Load() {
		return nil
	}
	return c.Check()
}

func (c *shmConn) Reopen() error {
	old := c.region
	if err := c.attach(); err != nil {
		return err
	}
	return old.Close()
}

func (c *shmConn) Close() error {
	c.values = nil
	c.mu.Lock()
	if c.timer != nil {
		c.timer.Stop()
	}
	c.mu.Unlock()
	return c.region.Close()
}

func (c *shmConn) Elements() ([]Descriptor, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	d, _, err := c.region.Descriptors()
	return d, err
}

// index checks value indices against the values in use, itself checked
// against the layout read at attach.
func (c *shmConn) index(i, n int) error {
	if c.values == nil {
		return errClosed
	}
	used := int(c.region.get32(offValuesUse))
	if used > len(c.values) {
		return fmt.Errorf("ipc: %s: damaged region: values_used %d, capacity %d", c.region.path, used, len(c.values))
	}
	if i < 0 || n < 0 || i > used-n {
		return fmt.Errorf("value index %d: the host uses %d", i+n-1, used)
	}
	return nil
}

func (c *shmConn) Set(i int, v float64) error {
	if err := c.index(i, 1); err != nil {
		return err
	}
	if err := c.live(); err != nil {
		return err
	}
	atomic.StoreUint64((*uint64)(unsafe.Pointer(&c.values[i])), math.Float64bits(v))
	return nil
}

func (c *shmConn) Get(i int) (float64, error) {
	if err := c.index(i, 1); err != nil {
		return 0, err
	}
	if err := c.live(); err != nil {
		return 0, err
	}
	return math.Float64frombits(atomic.LoadUint64((*uint64)(unsafe.Pointer(&c.values[i])))), nil
}

func (c *shmConn) ReadValues(start int, dst []float64) error {
	if err := c.index(start, len(dst)); err != nil {
		return err
	}
	if err := c.live(); err != nil {
		return err
	}
	for k := range dst {
		dst[k] = math.Float64frombits(atomic.LoadUint64((*uint64)(unsafe.Pointer(&c.values[start+k]))))
	}
	return nil
}

func (c *shmConn) Request(xml string, timeout time.Duration) (uint64, error) {
	if err := c.Check(); err != nil {
		return 0, &notTakenError{0, err}
	}
	seq, err := c.region.submit(xml)
	if err != nil {
		return 0, err
	}
	return c.region.outcome(seq, time.Now().Add(timeout), timeout, c.Check)
}

// ReadLog fails once the host's process is gone; a host that stopped or
// was replaced left a complete log, which stays readable.
func (c *shmConn) ReadLog(cur *LogCursor) ([]LogRecord, error) {
	if err := c.Check(); errors.Is(err, ErrHostVanished) || errors.Is(err, errClosed) {
		return nil, err
	}
	return c.region.ReadLog(cur)
}

// zombie reports whether process pid has exited but was not yet reaped by
// its parent: kill(pid, 0) still succeeds on it, yet it will never cycle
// again. /proc/PID/stat reads "PID (COMM) STATE ...", COMM may hold
// spaces and parentheses, so the state follows the last ')'.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false // no /proc: kill's answer stands
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X')
}

// HostCycles is the number of cycles the host has completed.
func (c *shmConn) HostCycles() uint64 { return c.region.get64(offCycle) }

// LastRejection is the host's last refusal of values, from the header.
func (c *shmConn) LastRejection() (Rejection, bool) { return c.region.LastRejection() }
