//go:build js && wasm

package main

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"syscall/js"
	"time"

	"github.com/g3n/engine/core"
	"github.com/g3n/engine/gls"
	"github.com/g3n/engine/math32"
	"github.com/g3n/engine/renderer"
	"github.com/g3n/engine/window"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/viewer/helpers"
	"github.com/simvis/simvis/viewer/orbit"
	"github.com/simvis/simvis/web/client"
)

// page is the program's state: the canvas and its renderer, the camera,
// the panel, and the connection of the current session.
type page struct {
	doc    js.Value
	canvas js.Value
	gs     *gls.GLS
	rend   *renderer.Renderer
	ui     bool

	view      client.View
	orb, home orbit.Orbit
	looking   int // 1-based sensor looked through; 0: the orbit
	following bool
	followAt  mgl64.Vec3

	conn   *client.Conn
	client *ipc.Client
	mirror *ipc.Mirror

	frames     chan struct{}
	onFrame    js.Func
	panel      *panel
	scene      *scene.Scene // what the panel was built for
	status     js.Value
	note       string // the last warning, shown in the status line
	noteAt     time.Time
	drawn      int
	total      int // frames drawn since the page opened
	syncTime   time.Duration
	drawTime   time.Duration // the last frame's, Go's part (the GL calls included)
	redrawAll  bool          // draw every animation frame, changed or not (#redraw=all: benchmarks)
	maxPixels  int           // the most pixels a picture has (0: the canvas's); software WebGL only
	renderer   string        // the WebGL renderer, as the browser names it
	last       drawn
	lastValues []float64
	lastAt     time.Time

	layers      layers // the cache of still meshes
	fovs        *fovs  // the sensors' field-of-view lines
	cacheWarned bool
	grid        bool                // the grid and the frames' axes (key g)
	helpers     *helpers.Helpers    // built for scene
	insets      map[string]js.Value // the cameras' <img>, by sensor
	imagesShown int
	fpsStart    time.Time
	fps         float64
	lastStates  uint64
	statesRate  float64
}

// softwarePixels is the most pixels a picture drawn by a software
// rasterizer has, unless the page's address says #scale=full; the browser
// scales the picture up to the canvas. Measured with MARVIN driving, the
// cache of still meshes on, in headless Chromium (SwiftShader, which took
// both cores) on a 2-core machine at 1280x720: 591x332 drawn (this bound)
// 30.9 frames a second, 739x415 (640x480 worth) 25.9, every pixel 13.8.
const softwarePixels = 512 * 384

func newPage(ui, redrawAll, fullScale, noCache bool) (*page, error) {
	doc := js.Global().Get("document")
	// The first request for the canvas's context sets its attributes:
	// single-sampled, so that the cache's pictures can be copied onto it
	// (see layers); opaque, so that a transparent mesh never lets the page show through
	// and the browser composites it without blending; g3n's window.Init
	// then gets this context.
	gl := doc.Call("getElementById", "view").Call("getContext", "webgl2", map[string]any{"antialias": false, "alpha": false})
	if err := window.Init("view"); err != nil {
		return nil, err
	}
	p := &page{doc: doc, canvas: doc.Call("getElementById", "view"), ui: ui, frames: make(chan struct{}, 1),
		status: doc.Call("getElementById", "status"), fpsStart: time.Now(), redrawAll: redrawAll,
		insets: map[string]js.Value{}, grid: ui, fovs: newFovs(), layers: layers{gl: gl, off: noCache}}
	p.gs = window.Get().(*window.WebGlCanvas).Gls()
	p.renderer = webglRenderer(p.canvas)
	if !fullScale && softwareRenderer(p.renderer) {
		p.maxPixels = softwarePixels
	}
	p.rend = renderer.NewRenderer(p.gs)
	if err := p.rend.AddDefaultShaders(); err != nil {
		return nil, fmt.Errorf("compiling shaders: %w", err)
	}
	p.rend.SetObjectSorting(true)
	p.onFrame = js.FuncOf(func(js.Value, []js.Value) any {
		select {
		case p.frames <- struct{}{}:
		default:
		}
		return nil
	})
	if ui {
		doc.Call("getElementById", "panel").Set("hidden", false)
	} else {
		for _, id := range []string{"status", "help"} {
			doc.Call("getElementById", id).Get("style").Set("display", "none")
		}
	}
	p.listen()
	js.Global().Set("simvisState", js.FuncOf(func(js.Value, []js.Value) any { return p.stateJSON() }))
	return p, nil
}

// stateJSON describes what the page shows, for scripts and tests that
// drive it (simvisState() in the page's console): frames drawn, the host
// cycle, the commands replayed, every value of the replica and the world
// position of each element's insertion point.
func (p *page) stateJSON() string {
	st := map[string]any{"drawn": p.total, "ready": p.scene != nil && p.total > 0,
		"sync_ms": p.syncTime.Seconds() * 1000, "draw_ms": p.drawTime.Seconds() * 1000, "images": p.imagesShown,
		"eye": p.orb.Pose().Col(3).Vec3(), "target": p.orb.Target, "looking": p.looking,
		"renderer": p.renderer, "pixels": [2]int{p.last.w, p.last.h},
		"cache_builds": p.layers.Built(), "cached": p.layers.Cached(), "cache_off": p.layers.failed}
	if p.conn != nil {
		sights, _ := p.conn.Sights()
		st["sights"] = len(sights) // sensors whose field of view the page knows
	}
	if p.conn != nil {
		_, cycle, _ := p.conn.Stats()
		st["cycle"], st["role"] = cycle, p.conn.Welcome().Role
	}
	if s := p.scene; s != nil {
		values, at := map[string]float64{}, map[string][3]float64{}
		vals := s.Values()
		for _, e := range s.Elements() {
			for i, prm := range e.Params {
				if e.Start+i < len(vals) {
					values[e.Name+"."+prm.Name] = vals[e.Start+i]
				}
			}
			if n, err := s.Frame(e.At); err == nil {
				w := n.World().Col(3)
				at[e.At] = [3]float64{w[0], w[1], w[2]}
			}
		}
		st["commands"], st["values"], st["frames"], st["returns"] = len(s.Log()), values, at, s.ReturnsPublished()
	}
	data, _ := json.Marshal(st)
	return string(data)
}

// welcome starts a session's view where the server says.
func (p *page) welcome(w client.Welcome) {
	p.view = w.View
	p.orb = orbit.From(scene.Pose{X: w.View.X, Y: w.View.Y, Z: w.View.Z, Roll: w.View.Roll, Pitch: w.View.Pitch, Yaw: w.View.Yaw})
	p.home = p.orb
	p.looking, p.following = 0, false
	for name := range p.insets {
		p.setInsetLocal(name)
	}
	p.doc.Set("title", "simvis: "+w.Scene)
	p.doc.Call("getElementById", "scene-name").Set("textContent", w.Scene)
	p.doc.Call("getElementById", "role").Set("textContent", "("+string(w.Role)+")")
	p.scene = nil
}

// waitFrame waits for the browser's next animation frame.
func (p *page) waitFrame() {
	js.Global().Call("requestAnimationFrame", p.onFrame)
	<-p.frames
}

// sensorToGL turns the sensor convention (x forward, y left, z up) into the
// GL camera's (x right, y up, looking along -z), as the desktop viewer's
// views do.
var sensorToGL = mgl64.Mat4{0, -1, 0, 0, 0, 0, 1, 0, -1, 0, 0, 0, 0, 0, 0, 1}

// glCamera is g3n's camera.ICamera with matrices computed in float64.
type glCamera struct{ view, proj math32.Matrix4 }

func (c *glCamera) ViewMatrix(m *math32.Matrix4) { *m = c.view }
func (c *glCamera) ProjMatrix(m *math32.Matrix4) { *m = c.proj }

// render draws the replica as the desktop viewer does: its own lights, the
// viewer's geometry (sensed="false") shown, the same projection.
func (p *page) render(s *scene.Scene) {
	if s != p.scene {
		p.scene = s
		p.panel = newPanel(p, s)
		p.helpers = helpers.New(s)
	}
	dpr := js.Global().Get("devicePixelRatio").Float()
	if dpr <= 0 {
		dpr = 1
	}
	w := int(math.Round(p.canvas.Get("clientWidth").Float() * dpr))
	h := int(math.Round(p.canvas.Get("clientHeight").Float() * dpr))
	if w <= 0 || h <= 0 {
		return
	}
	if n := w * h; p.maxPixels > 0 && n > p.maxPixels {
		// A software rasterizer draws fewer pixels; the browser scales
		// the picture up to the canvas.
		k := math.Sqrt(float64(p.maxPixels) / float64(n))
		w, h = max(int(float64(w)*k), 1), max(int(float64(h)*k), 1)
	}
	if p.canvas.Get("width").Int() != w || p.canvas.Get("height").Int() != h {
		p.canvas.Set("width", w)
		p.canvas.Set("height", h)
	}
	p.panel.update(s)
	p.follow(s)
	pose, hfov, near, far := p.orb.Pose(), p.view.FOV, p.view.Near, p.view.Far
	if se, ok := p.lookedThrough(s); ok {
		pose, hfov = se.Frame.World(), 90
		if f, ok := attrFloat(se, "fov"); ok && f > 0 && f < 180 {
			hfov = f
		}
	}
	// Nothing changed (the values, the commands, the view, the size):
	// the canvas keeps the last picture, and a laptop's battery its charge.
	sights, sightGen := p.conn.Sights()
	fovShown := p.fovs.update(s, sights, sightGen)
	now := drawn{scene: s, commands: len(s.Log()), returns: s.ReturnsPublished(), pose: pose, hfov: hfov, w: w, h: h, grid: p.grid,
		fovs: p.fovs.version}
	if !p.redrawAll && now == p.last && slices.Equal(s.Values(), p.lastValues) && time.Since(p.lastAt) < time.Second {
		p.count(false)
		return
	}
	p.last, p.lastValues, p.lastAt = now, append(p.lastValues[:0], s.Values()...), time.Now()
	t0 := time.Now()
	defer func() { p.drawTime = time.Since(t0) }()
	if err := s.PrepareRender(true); err != nil {
		p.warn(err.Error())
	}
	t := math.Tan(mgl64.DegToRad(hfov)/2) * float64(h) / float64(w)
	viewM := pose.Mul4(sensorToGL).Inv()
	proj := mgl64.Perspective(2*math.Atan(t), float64(w)/float64(h), near, far)
	cam := &glCamera{}
	for i := range viewM {
		cam.view[i], cam.proj[i] = float32(viewM[i]), float32(proj[i])
	}
	roots, over := []core.INode{s.G3N()}, []core.INode(nil)
	if p.grid {
		// The grid and the frames' axes and names, as the desktop viewer
		// draws them (key g).
		p.helpers.Update(helpers.View{Pose: pose, HFOV: hfov, Near: near, Width: w, Height: h})
		roots, over = append(roots, p.helpers.Node), append(over, p.helpers.Labels)
	}
	if fovShown {
		over = append(over, p.fovs.node) // they move with their sensors: never cached
	}
	key := layerKey{scene: s, commands: len(s.Log()), pose: pose, hfov: hfov, w: w, h: h, grid: p.grid}
	if err := p.layers.draw(p.gs, p.rend, s, key, cam, p.view.Background, roots, over, pose.Col(3).Vec3()); err != nil {
		p.warn("render: " + err.Error())
	}
	if p.layers.failed != "" && !p.cacheWarned {
		p.cacheWarned = true
		p.warn("drawing every frame in full: " + p.layers.failed)
	}
	p.count(true)
}

// drawn is what a picture was drawn from.
type drawn struct {
	scene    *scene.Scene
	commands int
	returns  uint64 // scan overlays' returns published
	grid     bool
	fovs     int // fovs.version
	pose     mgl64.Mat4
	hfov     float64
	w, h     int
}

// lookedThrough is the sensor looked through, if any.
func (p *page) lookedThrough(s *scene.Scene) (*scene.SensorEntry, bool) {
	list := s.Sensors()
	if p.looking < 1 || p.looking > len(list) {
		p.looking = 0
		return nil, false
	}
	return list[p.looking-1], true
}

func attrFloat(se *scene.SensorEntry, name string) (float64, bool) {
	v, ok := se.Sensor.Describe()[name]
	if !ok {
		return 0, false
	}
	var f float64
	_, err := fmt.Sscan(fmt.Sprint(v), &f)
	return f, err == nil
}

// follow keeps the followed frame where it was on the screen.
func (p *page) follow(s *scene.Scene) {
	if !p.following {
		return
	}
	at, ok := followedAt(s)
	if !ok {
		p.following = false
		return
	}
	p.orb.Target = p.orb.Target.Add(at.Sub(p.followAt))
	p.followAt = at
}

// followedAt is where the followed frame is: the insertion point of the
// first mobile element (a robot's pose), as in the desktop viewer.
func followedAt(s *scene.Scene) (mgl64.Vec3, bool) {
	for _, e := range s.Elements() {
		if m, ok := e.Element.(scene.Mobile); ok && m.Mobile() {
			if n, err := s.Frame(e.At); err == nil {
				return n.World().Col(3).Vec3(), true
			}
		}
	}
	return mgl64.Vec3{}, false
}

// count counts a frame (drew: a picture was drawn, not kept) and updates
// the rates in the status line once a second.
func (p *page) count(drew bool) {
	if drew {
		p.drawn++
		p.total++
	}
	d := time.Since(p.fpsStart)
	if d < time.Second {
		return
	}
	states, cycle, age := p.conn.Stats()
	p.fps = float64(p.drawn) / d.Seconds()
	p.statesRate = float64(states-p.lastStates) / d.Seconds()
	p.drawn, p.fpsStart, p.lastStates = 0, time.Now(), states
	text := fmt.Sprintf("host cycle %d · lag %d ms · %.0f frames/s drawn · %.0f states/s", cycle, age.Milliseconds(), p.fps, p.statesRate)
	if p.note != "" && time.Since(p.noteAt) < 10*time.Second {
		text += " · " + p.note
	}
	p.setStatus(text)
}

func (p *page) setStatus(text string) { p.status.Set("textContent", text) }

func (p *page) warn(text string) {
	if text != p.note {
		js.Global().Get("console").Call("warn", "simvis: "+text)
	}
	p.note, p.noteAt = text, time.Now()
}

// setInset shows or hides a camera's picture in the page's corner.
func (p *page) setInset(sensor string, on bool) {
	if err := p.conn.SetInset(sensor, on); err != nil {
		p.warn("inset: " + err.Error())
	}
	img, ok := p.insets[sensor]
	switch {
	case on && !ok:
		img = p.doc.Call("createElement", "img")
		img.Set("className", "inset")
		img.Set("title", sensor)
		img.Call("setAttribute", "data-inset", sensor)
		p.doc.Call("getElementById", "insets").Call("appendChild", img)
		p.insets[sensor] = img
	case !on && ok:
		if u := img.Get("src").String(); u != "" {
			js.Global().Get("URL").Call("revokeObjectURL", u)
		}
		img.Call("remove")
		delete(p.insets, sensor)
	}
}

// showImages puts the cameras' newest pictures into their insets.
func (p *page) showImages() {
	for sensor, jpeg := range p.conn.TakeImages() {
		img, ok := p.insets[sensor]
		if !ok {
			continue
		}
		data := js.Global().Get("Uint8Array").New(len(jpeg))
		js.CopyBytesToJS(data, jpeg)
		blob := js.Global().Get("Blob").New([]any{data}, map[string]any{"type": "image/jpeg"})
		old := img.Get("src").String()
		img.Set("src", js.Global().Get("URL").Call("createObjectURL", blob))
		if old != "" {
			js.Global().Get("URL").Call("revokeObjectURL", old)
		}
		p.imagesShown++
	}
}

// setInsetLocal removes an inset without telling the server (a new
// session's server never heard of it).
func (p *page) setInsetLocal(sensor string) {
	if img, ok := p.insets[sensor]; ok {
		if u := img.Get("src").String(); u != "" {
			js.Global().Get("URL").Call("revokeObjectURL", u)
		}
		img.Call("remove")
		delete(p.insets, sensor)
	}
}

// webglRenderer is the name of the GPU (or rasterizer) the canvas's WebGL
// draws with, where the browser tells.
func webglRenderer(canvas js.Value) string {
	gl := canvas.Call("getContext", "webgl2")
	if !gl.Truthy() {
		return ""
	}
	if ext := gl.Call("getExtension", "WEBGL_debug_renderer_info"); ext.Truthy() {
		return gl.Call("getParameter", ext.Get("UNMASKED_RENDERER_WEBGL")).String()
	}
	return gl.Call("getParameter", gl.Get("RENDERER")).String()
}

// softwareRenderer reports whether a WebGL renderer name is a CPU
// rasterizer's.
func softwareRenderer(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "swiftshader") || strings.Contains(n, "llvmpipe") || strings.Contains(n, "software")
}
