package ipc

import "time"

// HostClock is implemented by connections that know the host's scene
// clock, so that a mirror can stamp its frames with the time of the
// state it shows rather than with a clock of its own.
type HostClock interface {
	// HostTime returns the scene time of the host's latest completed
	// cycle (cycle n at n periods, as `serve` stamps its own frames), and
	// false while no cycle has completed or the figures do not check out.
	HostTime() (time.Duration, bool)
}

// maxHostPeriod bounds a believable host cycle period (serve's --rate
// must be above 0; a client may scribble anything into a region header).
const maxHostPeriod = time.Hour

// HostTime is the scene time of cycle cycles-1 at period, for transports
// that learn the two figures from a host; they are checked, as anything
// from another process.
func HostTime(cycles uint64, period time.Duration) (time.Duration, bool) {
	if cycles == 0 || period <= 0 || period > maxHostPeriod || cycles-1 > uint64(1<<62)/uint64(period) {
		return 0, false
	}
	return time.Duration(cycles-1) * period, true
}

// HostTime returns the host's scene time (see HostClock), where the
// transport knows it.
func (c *Client) HostTime() (time.Duration, bool) {
	if hc, ok := c.conn.(HostClock); ok {
		return hc.HostTime()
	}
	return 0, false
}

// HostTime reads the host's cycle count and period from the region header.
func (c *shmConn) HostTime() (time.Duration, bool) {
	return HostTime(c.region.Cycles(), time.Duration(c.region.field64(offPeriod)))
}
