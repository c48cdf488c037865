package cli

import (
	"flag"

	"github.com/simvis/simvis/live"
)

// webFlags configure the web viewer of serve, mirror, play and view
// (docs/web.md).
type webFlags struct{ o live.WebOptions }

func (f *webFlags) register(fs *flag.FlagSet) {
	o := &f.o
	fs.StringVar(&o.Addr, "web", "", "serve the scene to browsers at http://ADDR/, e.g. 127.0.0.1:8080 (docs/web.md; not loopback: pages need a token)")
	fs.StringVar(&o.Token, "web-token", "", "driver token: its page may set and request (default $SIMVIS_WEB_TOKEN, else one made up and printed)")
	fs.StringVar(&o.ViewerToken, "web-viewer-token", "", "viewer token: its page may only watch (default $SIMVIS_WEB_VIEWER_TOKEN)")
	fs.StringVar(&o.TLSCert, "web-cert", "", "TLS certificate file: serve https:// (with --web-key)")
	fs.StringVar(&o.TLSKey, "web-key", "", "TLS key file")
	fs.StringVar(&o.Origins, "web-origins", "", "browser origins to accept besides the server's own, comma-separated host patterns")
	fs.IntVar(&o.MaxClients, "web-max-clients", 16, "pages connected at once")
	fs.Float64Var(&o.Rate, "web-rate", 30, "states a second a page gets at most (a slow page skips states)")
}

// options are the flags as live takes them.
func (f *webFlags) options() (live.WebOptions, error) {
	if f.o.MaxClients < 1 || !(f.o.Rate > 0 && f.o.Rate <= 1000) {
		return f.o, usagef("--web-max-clients %d, --web-rate %v: want at least 1 page and (0, 1000] states a second", f.o.MaxClients, f.o.Rate)
	}
	return f.o, nil
}
