package ipc

import (
	"errors"
	"fmt"
	"math"
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
}

func openShm(name string) (*shmConn, error) {
	c := &shmConn{name: name}
	return c, c.attach()
}

func (c *shmConn) attach() error {
	r, err := Attach(Path(c.name))
	if err != nil {
		return fmt.Errorf("%w (is 'simvis serve' running with --shm %s?)", err, c.name)
	}
	c.region, c.values = r, r.Values()
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

func (c *shmConn) Check() error {
	switch c.region.get32(offState) {
	case stateRunning:
		pid := int(c.region.get32(offPID))
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("%w: its process %d is gone", ErrHostStopped, pid)
		}
		return nil
	case stateReplaced:
		return ErrHostReplaced
	default:
		return ErrHostStopped
	}
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
	return c.region.Close()
}

func (c *shmConn) Elements() ([]Descriptor, error) {
	d, _, err := c.region.Descriptors()
	return d, err
}

func (c *shmConn) index(i, n int) error {
	if c.values == nil {
		return errClosed
	}
	if used := int(c.region.get32(offValuesUse)); i < 0 || i+n > used {
		return fmt.Errorf("value index %d: the host uses %d", i+n-1, used)
	}
	return nil
}

func (c *shmConn) Set(i int, v float64) error {
	if err := c.index(i, 1); err != nil {
		return err
	}
	if c.region.get32(offState) != stateRunning {
		return c.Check()
	}
	atomic.StoreUint64((*uint64)(unsafe.Pointer(&c.values[i])), math.Float64bits(v))
	return nil
}

func (c *shmConn) Get(i int) (float64, error) {
	if err := c.index(i, 1); err != nil {
		return 0, err
	}
	return math.Float64frombits(atomic.LoadUint64((*uint64)(unsafe.Pointer(&c.values[i])))), nil
}

func (c *shmConn) ReadValues(start int, dst []float64) error {
	if err := c.index(start, len(dst)); err != nil {
		return err
	}
	for k := range dst {
		dst[k] = math.Float64frombits(atomic.LoadUint64((*uint64)(unsafe.Pointer(&c.values[start+k]))))
	}
	return nil
}

func (c *shmConn) Request(xml string, timeout time.Duration) (uint64, error) {
	seq, err := c.region.submit(xml)
	if err != nil {
		return 0, err
	}
	return c.region.outcome(seq, time.Now().Add(timeout), c.Check)
}

func (c *shmConn) ReadLog(cur *LogCursor) ([]LogRecord, error) { return c.region.ReadLog(cur) }
