package live

import (
	"context"
	"math"
	"time"

	"github.com/simvis/simvis/ipc"
)

// relayWeb keeps a mirror's replica in sync and renders from it the
// sensors that the pages of the mirror's web viewer want (the returns
// their scan overlays draw, the cameras they show), until ctx ends. It
// renders on the mirror's machine, which fetched the scene's models, and
// never writes to the host: the host's cycle never waits for it. While no
// page wants a sensor it renders nothing and syncs once a second (to see
// overlays that requests add); the renderer is made when first needed, so
// that a mirror on a machine that cannot render still relays.
func relayWeb(ctx context.Context, m *ipc.Mirror, o *MirrorOptions, wf *webFrames) error {
	rate := o.Web.Rate
	if rate <= 0 {
		rate = 30
	}
	warn := ipc.NewWarnings(o.Warnings, "simvis mirror").Warn
	// The sensors' rates are met up to the relay's own (one frame a
	// tick): no warning that they exceed it.
	loop := &Loop{Clock: NewClock(), Fails: NewFailures(warn), Sink: wf, HostRate: math.Inf(1), Warn: warn}
	defer loop.Close()
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	start := time.Now()
	var synced time.Time
	patient := patientSync{forever: true} // the pages keep waiting for the host
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if want, _ := wanted(wf, m.Scene()); len(want) == 0 && time.Since(synced) < time.Second {
			continue
		}
		// A host away is said once (and its return); the pages see it
		// through the server, which follows the host on its own.
		synced = time.Now()
		if err, _ := patient.sync(m, o); err != nil {
			continue
		}
		t := time.Since(start).Seconds()
		wf.Cycle(m.Scene(), t)
		loop.Cycle(m.Scene(), t)
	}
}
