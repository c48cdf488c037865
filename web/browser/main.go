//go:build js && wasm

// Command browser is the web viewer's page program, compiled to
// WebAssembly (web/assets embeds it): it connects to the server that
// served the page, mirrors the host with ipc.Mirror over the WebSocket
// (web/client), and draws the replica with g3n's WebGL backend, with the
// controls of the desktop viewer (docs/web.md).
package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"syscall/js"
	"time"

	_ "github.com/simvis/simvis/elements" // the built-in element types
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/web/client"
)

func main() {
	loc := js.Global().Get("location")
	frag, _ := url.ParseQuery(strings.TrimPrefix(loc.Get("hash").String(), "#"))
	wsURL, err := client.WebSocketURL(loc.Get("href").String())
	if err != nil {
		showError(err.Error())
		return
	}
	p, err := newPage(frag.Get("ui") != "off", frag.Get("redraw") == "all", frag.Get("scale") == "full", frag.Get("cache") == "off")
	if err != nil {
		showError("simvis: " + err.Error())
		return
	}
	for attempt := 0; ; attempt++ {
		err := p.session(wsURL, frag.Get("token"))
		var refused *refusedError
		if errors.As(err, &refused) {
			showError("simvis: " + err.Error())
			return
		}
		p.setStatus(fmt.Sprintf("disconnected (%v); connecting again...", err))
		time.Sleep(time.Duration(min(attempt+1, 5)) * time.Second)
	}
}

// refusedError is a connection the server refused for good (a token, an
// origin): trying again would not help.
type refusedError struct{ err error }

func (e *refusedError) Error() string { return e.err.Error() }

// session connects, mirrors and draws until the connection ends.
func (p *page) session(wsURL, token string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	conn, err := client.Dial(ctx, wsURL, token)
	cancel()
	if err != nil {
		if strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "403") {
			return &refusedError{err}
		}
		return err
	}
	defer conn.Close()
	w := conn.Welcome()
	registerSensorTypes(w.SensorTypes)
	p.welcome(w)
	c := ipc.NewClient(conn)
	m, err := ipc.NewMirrorWith(c, ipc.MirrorOptions{FetchFiles: true})
	if err != nil {
		return err
	}
	defer m.Close()
	p.conn, p.client, p.mirror = conn, c, m
	for {
		p.waitFrame()
		t0 := time.Now()
		err := m.Sync()
		// The scan overlays draw the returns the host's sensors measured.
		for _, r := range conn.TakeReturns() {
			if m.Scene().WantsReturns(r.Sensor) {
				m.Scene().PublishReturns(&r)
			}
		}
		p.showImages()
		p.syncTime = time.Since(t0)
		switch {
		case err == nil:
		case errors.Is(err, ipc.ErrHostStopped):
			p.setStatus("the host stopped; waiting for it to come back...")
			p.render(m.Scene())
			continue
		case conn.Check() != nil && !errors.Is(conn.Check(), ipc.ErrHostReplaced) && !errors.Is(conn.Check(), ipc.ErrHostStopped):
			return conn.Check()
		default:
			// A change the replica could not apply yet (a file still on its
			// way): it is tried again next frame; say so.
			p.warn(err.Error())
		}
		p.render(m.Scene())
	}
}

// remoteSensor stands in for a sensor type this program does not carry
// (sensors render on the host): it has the sensor's frame, from the
// command, and describes its attributes, which is what the page needs to
// look through it.
type remoteSensor struct{ attrs map[string]any }

func (r remoteSensor) Describe() map[string]any { return r.attrs }

// HasReturns is true: elements check that the sensor they draw the returns
// of is a range sensor, and the host, which knows, already checked every
// command the page replays.
func (r remoteSensor) HasReturns() bool { return true }

// registerSensorTypes registers the host's sensor types as remote
// sensors.
func registerSensorTypes(types []string) {
	have := map[string]bool{}
	for _, t := range scene.SensorTypes() {
		have[t] = true
	}
	for _, t := range types {
		if have[t] {
			continue
		}
		scene.RegisterSensor(t, func(ctx *scene.Context) (scene.Sensor, error) {
			// The host checked the attributes; reading each through the
			// command marks it as known to this type.
			attrs := map[string]any{}
			for _, a := range ctx.Command.Elem.Attr {
				attrs[a.Key], _ = ctx.Command.Attr(a.Key)
			}
			return remoteSensor{attrs}, nil
		})
	}
}

func showError(text string) {
	js.Global().Call("simvisShowError", text)
}
