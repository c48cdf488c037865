package natsipc

import (
	"time"

	"github.com/simvis/simvis/ipc"
)

// HostTime returns the scene time of the host cycle whose values were
// applied last (ipc.HostClock).
func (c *Conn) HostTime() (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ipc.HostTime(c.cycle, c.period)
}
