package cli

import (
	"flag"

	"github.com/simvis/simvis/live"
)

// foxgloveFlags configure the Foxglove WebSocket server of serve and
// mirror (docs/foxglove.md).
type foxgloveFlags struct{ o live.FoxgloveOptions }

func (f *foxgloveFlags) register(fs *flag.FlagSet) {
	o, d := &f.o, live.DefaultFoxglove
	fs.StringVar(&o.Addr, "foxglove", "", "serve the Foxglove WebSocket protocol on ADDR, e.g. 127.0.0.1:8765 (not loopback: needs a token)")
	fs.StringVar(&o.Token, "foxglove-token", "", "driver token: may set parameters and call services (default $SIMVIS_FOXGLOVE_TOKEN)")
	fs.StringVar(&o.ViewerToken, "foxglove-viewer-token", "", "viewer token: may only subscribe (default $SIMVIS_FOXGLOVE_VIEWER_TOKEN)")
	fs.StringVar(&o.TLSCert, "foxglove-tls-cert", "", "TLS certificate file: serve wss:// (with --foxglove-tls-key)")
	fs.StringVar(&o.TLSKey, "foxglove-tls-key", "", "TLS key file")
	fs.StringVar(&o.Origins, "foxglove-origins", "", "browser origins to accept besides Foxglove's app and localhost, comma-separated host patterns ('*': any)")
	fs.IntVar(&o.MaxClients, "foxglove-max-clients", d.MaxClients, "Foxglove clients connected at once")
	fs.BoolVar(&o.TokenlessDriving, "foxglove-tokenless-driving", false, "let loopback clients without a token drive (every local user); default: they watch, driving takes the driver token")
	fs.IntVar(&o.MaxMessageKiB, "foxglove-max-message-kib", d.MaxMessageKiB, "largest message a Foxglove client may send, KiB")
	fs.IntVar(&o.MaxQueue, "foxglove-max-queue", d.MaxQueue, "control messages queued for one Foxglove client before it is disconnected")
	fs.IntVar(&o.MaxQueueMiB, "foxglove-max-queue-mib", d.MaxQueueMiB, "MiB of control messages queued for one Foxglove client before it is disconnected")
	fs.IntVar(&o.MaxPending, "foxglove-max-pending", d.MaxPending, "setParameters messages and service calls of one Foxglove connection waiting for the host (each)")
	fs.IntVar(&o.MaxSetEntries, "foxglove-max-set-entries", d.MaxSetEntries, "entries of one Foxglove setParameters message")
	fs.IntVar(&o.MaxPendingSets, "foxglove-max-pending-sets", d.MaxPendingSets, "parameter writes of all Foxglove clients waiting for the host to show them")
	fs.IntVar(&o.MaxSceneMiB, "foxglove-max-scene-mib", d.MaxSceneMiB, "MiB of models kept encoded for Foxglove's scene channel (one copy per distinct model)")
}

// options are the flags as live takes them: a bound given as 0 is out
// of range, not the default.
func (f *foxgloveFlags) options() (live.FoxgloveOptions, error) {
	o := f.o
	for _, b := range []struct {
		name string
		v    int
	}{{"--foxglove-max-clients", o.MaxClients}, {"--foxglove-max-message-kib", o.MaxMessageKiB}, {"--foxglove-max-queue", o.MaxQueue},
		{"--foxglove-max-queue-mib", o.MaxQueueMiB}, {"--foxglove-max-pending", o.MaxPending}, {"--foxglove-max-set-entries", o.MaxSetEntries},
		{"--foxglove-max-pending-sets", o.MaxPendingSets}, {"--foxglove-max-scene-mib", o.MaxSceneMiB}} {
		if b.v < 1 {
			return o, usagef("%s %d: want at least 1", b.name, b.v)
		}
	}
	return o, nil
}
