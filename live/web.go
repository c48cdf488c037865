package live

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
	"github.com/simvis/simvis/web"
	"github.com/simvis/simvis/web/client"
)

// WebOptions configure the web viewer of a run (docs/web.md): an HTTP
// server whose page shows the scene live in a browser.
type WebOptions struct {
	Addr string // "": no web viewer
	// Token is the driver token ($SIMVIS_WEB_TOKEN when empty; when that
	// is empty too, one is made up). The driver's address, with it, goes
	// to the run's warnings (standard error), not its report.
	// ViewerToken may only watch ($SIMVIS_WEB_VIEWER_TOKEN).
	Token, ViewerToken string
	TLSCert, TLSKey    string
	// Origins are browser origins to accept besides the server's own:
	// comma-separated host patterns ('*': any).
	Origins    string
	MaxClients int     // pages at once [16]
	Rate       float64 // states a second a page gets at most [30]
	// View is where the pages' camera starts (nil: Framed on the scene's
	// content, 1280x720, 70 degrees).
	View *Viewpoint
}

// webServer is a running web viewer and what to say of it.
type webServer struct {
	srv *web.Server
	url string // the page's address, with the driver token
}

// webHost is what a web viewer serves: the host dial reaches, titled
// title, its start view worked out on scene; whether it takes requests,
// and whether its model files must be fetched from it (a mirror on
// another machine).
type webHost struct {
	dial            func() (*ipc.Client, error)
	title           string
	scene           *scene.Scene
	requests, fetch bool
	log             io.Writer // connections, refusals, outages (standard error)
}

// start serves the host; it prints the page's address on w, the driver's
// (with its token) on the host's log.
func (o WebOptions) start(h webHost, w io.Writer) (*webServer, error) {
	if o.Token == "" {
		o.Token = os.Getenv("SIMVIS_WEB_TOKEN")
	}
	if o.ViewerToken == "" {
		o.ViewerToken = os.Getenv("SIMVIS_WEB_VIEWER_TOKEN")
	}
	if o.Token == "" {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		o.Token = hex.EncodeToString(b[:])
	}
	vp := Viewpoint{Auto: true, Width: 1280, Height: 720, FOV: 70}
	if o.View != nil {
		vp = *o.View
	}
	view, err := webView(h.scene, vp)
	if err != nil {
		return nil, err
	}
	var origins []string
	for _, p := range strings.Split(o.Origins, ",") {
		if p = strings.TrimSpace(p); p != "" {
			origins = append(origins, p)
		}
	}
	srv, err := web.Listen(web.Options{Addr: o.Addr, Dial: h.dial, DriverToken: o.Token, ViewerToken: o.ViewerToken,
		TLSCert: o.TLSCert, TLSKey: o.TLSKey, Origins: origins, MaxClients: o.MaxClients, Rate: o.Rate,
		Scene: h.title, View: func() client.View { return view }, Requests: h.requests, FetchFiles: h.fetch, Log: h.log})
	if err != nil {
		return nil, err
	}
	ws := &webServer{srv: srv, url: srv.URL() + "#token=" + o.Token}
	// The driver's address holds its token: on standard error, as
	// Foxglove's, not in the run's report, which may go to logs.
	fmt.Fprintf(h.log, "web viewer: to drive, open %s\n", ws.url)
	fmt.Fprintf(w, "web viewer at %s\n", srv.URL())
	return ws, nil
}

// webView is a viewpoint as the page takes it: in world coordinates.
func webView(s *scene.Scene, vp Viewpoint) (client.View, error) {
	vp = vp.resolved(s)
	base, err := s.Transform(vp.Frame, scene.WorldFrame)
	if err != nil {
		return client.View{}, err
	}
	p := scene.PoseFromMatrix(base.Mul4(vp.Pose.Matrix()))
	return client.View{X: p.X, Y: p.Y, Z: p.Z, Roll: p.Roll, Pitch: p.Pitch, Yaw: p.Yaw, FOV: vp.FOV,
		Near: 0.05, Far: 500, Background: sensors.DefaultBackground}, nil
}

// WebViewOptions configure ViewWeb.
type WebViewOptions struct {
	Scene       string // the scene file
	Limits      scene.Limits
	PackagePath []string
	// Values, when set, changes the scene before it is served (the
	// command line's --set values).
	Values func(*scene.Scene) error
	Web    WebOptions
}

// ViewWeb shows a scene file in browsers until ctx ends: a host of its own
// (a region named after this process, no NATS, no sensors rendered) that a
// driver's page may change, served by the web viewer.
func ViewWeb(ctx context.Context, o WebViewOptions, w io.Writer) error {
	path := ipc.Path(fmt.Sprintf("view-%d", os.Getpid()))
	h, err := ipc.NewHost(path, o.Scene, ipc.HostOptions{Sizes: ipc.DefaultSizes, Rate: 30, Warnings: os.Stderr,
		Limits: o.Limits, PackagePath: o.PackagePath})
	if err != nil {
		return err
	}
	defer h.Close()
	if o.Values != nil {
		if err := o.Values(h.Scene); err != nil {
			return err
		}
	}
	ws, err := o.Web.start(webHost{dial: func() (*ipc.Client, error) { return ipc.Open(path) }, title: o.Scene, scene: h.Scene, requests: true, log: os.Stderr}, w)
	if err != nil {
		return err
	}
	defer ws.srv.Close()
	return h.Run(ctx, 0, nil)
}

// webFrames hands the web viewer what its pages draw of the sensors' frames:
// the returns the host's scan overlays draw, and the pictures of the
// cameras pages show as insets.
type webFrames struct {
	srv *web.Server
	s   *scene.Scene
}

// Cycle takes the scene of the cycle (a removal replaces it).
func (w *webFrames) Cycle(s *scene.Scene, _ float64) error {
	w.s = s
	return nil
}

// Wants is true for the sensors whose returns the scene's overlays draw
// and the cameras pages show: a host that serves only pages renders those.
func (w *webFrames) Wants(s *scene.Scene, sensor string) bool {
	return s.WantsReturns(sensor) || w.srv.WantsImage(sensor)
}

// Frame publishes a frame's returns if the scene draws them, its picture
// if a page asked for it.
func (w *webFrames) Frame(se *scene.SensorEntry, f *sensors.Frame, _ *sensors.Stamp) error {
	if w.srv.WantsImage(se.Name) {
		if img, _ := f.ImageData(); img != nil {
			w.srv.PublishImage(se.Name, img)
		}
	}
	if w.s == nil || !w.s.WantsReturns(se.Name) {
		return nil
	}
	if r, ok := f.Returns(); ok {
		w.srv.PublishReturns(r)
	}
	return nil
}
