package live

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/record"
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
// (a region named after this process, no NATS) that a driver's page may
// change, served by the web viewer. It runs serve's cycle loop for the
// pages alone: the sensors they want (the returns their scan overlays
// draw, the cameras they show) render from the live scene, nothing while
// no page wants one.
func ViewWeb(ctx context.Context, o WebViewOptions, w io.Writer) error {
	path := ipc.Path(fmt.Sprintf("view-%d", os.Getpid()))
	const rate = 30
	h, err := ipc.NewHost(path, o.Scene, ipc.HostOptions{Sizes: ipc.DefaultSizes, Rate: rate, Warnings: os.Stderr,
		Limits: o.Limits, PackagePath: o.PackagePath, Command: "simvis view"})
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
	frames := &webFrames{srv: ws.srv}
	// The renderer is made when a page first wants a sensor: a machine
	// that cannot render still shows the scene.
	loop := &Loop{Clock: NewClock(), Fails: NewFailures(h.Warn), Sink: frames, HostRate: rate, Warn: h.Warn}
	defer loop.Close()
	return h.Run(ctx, 0, func(_ int, t time.Duration) error {
		frames.Cycle(h.Scene, t.Seconds())
		loop.Cycle(h.Scene, t.Seconds())
		return nil
	})
}

// webFrames hands the web viewer what its pages draw of the sensors' frames:
// the returns the host's scan overlays draw, and the pictures of the
// cameras pages show as insets.
type webFrames struct {
	srv *web.Server
	s   *scene.Scene
	// recorded tells the sensors whose frames come from a recording at
	// the playback position (play): those are not rendered for pages.
	recorded func(se *scene.SensorEntry) bool
	commands int // len(s.Log()) when the sensors' sights were published
}

// Cycle takes the scene of the cycle (a removal replaces it) and, when its
// commands changed, tells pages what each sensor sees (scene.Sighted:
// their field-of-view lines; the page has no sensor of its own to ask).
func (w *webFrames) Cycle(s *scene.Scene, _ float64) error {
	if s != w.s || len(s.Log()) != w.commands {
		sights := map[string]scene.FieldOfView{}
		for _, se := range s.Sensors() {
			if sg, ok := se.Sensor.(scene.Sighted); ok {
				sights[se.Name] = sg.FieldOfView()
			}
		}
		w.srv.PublishSights(sights)
		w.commands = len(s.Log())
	}
	w.s = s
	return nil
}

// Wants is true, while pages are connected, for the sensors whose returns
// the scene's overlays draw and the cameras pages show: a host that serves
// only pages renders those, and nothing while no page is there.
func (w *webFrames) Wants(s *scene.Scene, sensor string) bool {
	if w.recorded != nil {
		if se := sensorNamed(s, sensor); se != nil && w.recorded(se) {
			return false
		}
	}
	return w.pagesWant(s, sensor)
}

func (w *webFrames) pagesWant(s *scene.Scene, sensor string) bool {
	return w.srv.WantsImage(sensor) || s.WantsReturns(sensor) && w.srv.Pages() > 0
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

// wantsRecorded reports whether pages want a sensor whose frames the
// recording holds: only then does a player read them for pages.
func (w *webFrames) wantsRecorded(s *scene.Scene) bool {
	for _, se := range s.Sensors() {
		if w.recorded(se) && w.pagesWant(s, se.Name) {
			return true
		}
	}
	return false
}

// recordedFrame publishes a frame read from a recording if pages want it,
// as Frame does a rendered one.
func (w *webFrames) recordedFrame(s *scene.Scene, f *record.Frame) error {
	if !w.pagesWant(s, f.Sensor) {
		return nil
	}
	fr, err := sensors.DecodeFrame(f.Sensor, f.Kind, f.Info, f.Data)
	if errors.Is(err, sensors.ErrNotDecoded) {
		return nil // nothing pages draw (a depth camera's)
	} else if err != nil {
		return err
	}
	w.s = s
	return w.Frame(&scene.SensorEntry{Name: f.Sensor}, fr, nil)
}

func sensorNamed(s *scene.Scene, name string) *scene.SensorEntry {
	for _, se := range s.Sensors() {
		if se.Name == name {
			return se
		}
	}
	return nil
}
