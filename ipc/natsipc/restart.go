package natsipc

import (
	"time"

	"github.com/simvis/simvis/ipc"
)

// followRun follows the host into a new run, which a removal starts (a
// new region, epoch and change log: ipc.Host): the change-log stream is
// made anew and the new run's log published from its start, as at
// Publish; value writes queued for the old run are dropped as stale, and
// the next values message carries every value. Clients learn the new
// epoch from it and start over, as after a host restart.
func (p *Publisher) followRun() {
	epoch := p.h.Region.Epoch()
	if epoch == p.epoch {
		return
	}
	p.mu.Lock()
	p.epoch = epoch
	p.stale += uint64(len(p.writes))
	p.writes = nil
	p.mu.Unlock()
	p.logCur, p.unpublished, p.last = ipc.LogCursor{}, nil, nil
	p.waitCheck() // a look or remake of the old run's stream
	if err := p.createStream(2 * time.Second); err != nil {
		// checkStream makes it when it can; records wait meanwhile.
		p.h.Warn("nats-log", "the new run's change log: %v", err)
		p.recheck.Store(true)
	}
}
