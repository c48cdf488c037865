package viewer

import (
	"errors"
	"fmt"
	"image"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/g3n/engine/core"
	"github.com/g3n/engine/gls"
	"github.com/g3n/engine/gui"
	"github.com/g3n/engine/renderer"
	"github.com/g3n/engine/window"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/internal/gpu"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
	"github.com/simvis/simvis/viewer/helpers"
	"github.com/simvis/simvis/viewer/layering"
	"github.com/simvis/simvis/viewer/orbit"
)

// Options configure a viewer window.
type Options struct {
	Title         string
	Width, Height int        // window size in pixels (default 1280x720)
	From          scene.Pose // the start (and reset) viewpoint, world frame
	FOV           float64    // horizontal field of view, degrees (default 70)
	Grid          bool       // draw the ground grid and frame axes at the start
	Follow        string     // frame that f follows ("" the insertion point of the first element that moves a robot, scene.Mobile: a pose)
	Shots         string     // directory for screenshots (default ".")
	Panel         bool       // show the panel at the start
	// Set changes an element's parameter from the panel: in view on the
	// local scene, in a mirror through the client so that the host moves.
	// Nil makes the panel read-only.
	Set func(element, param string, v float64) error
	// Present is how frames reach the window: "gl" the GL swap, "x11"
	// put by the viewer itself (XShmPutImage), "" (auto) x11 where the GL
	// renderer is a software one (llvmpipe), else gl.
	Present string
	// NoCache draws every mesh every frame, without the cache of still
	// meshes (see layers; for comparisons).
	NoCache bool
	// EveryFrame draws every frame even when nothing changed
	// (benchmarks); by default an unchanged picture is not drawn again.
	EveryFrame bool
	// Log receives one line per event worth telling (screenshot written,
	// value refused); nil discards.
	Log io.Writer
	// ListControls tells Log each panel control's name, kind and place
	// when the panel opens, for scripts that drive it (xdotool).
	ListControls bool
}

// ErrNoDisplay is returned by Open where no X display is set.
var ErrNoDisplay = errors.New("no display: the DISPLAY environment variable is not set, so no window can open; " +
	"render into a file with -o FILE.png instead (or start an X server such as Xvfb and set DISPLAY)")

// Viewer is a window showing a scene. Its methods must be called from the
// goroutine that owns the scene; GL work runs on the window's own thread.
type Viewer struct {
	opts Options
	ctx  *gpu.Context
	win  *window.GlfwWindow
	rend *renderer.Renderer // the sensors' g3n renderer, drawing the window too (render thread only)
	sens *sensors.Renderer

	// Input, written by event callbacks on the render thread while the
	// scene's goroutine waits in ctx.Do, read after it returns.
	pending []func(s *scene.Scene)
	drag    int // 0 none, 1 orbit, 2 pan
	lastX   float64
	lastY   float64

	orb         orbit.Orbit
	home        orbit.Orbit
	looking     int // 1-based sensor index being looked through, 0 the orbit
	following   bool
	followLast  mgl64.Vec3
	overlays    bool
	grid        bool
	panelOn     bool
	fbw, fbh    int
	shotWanted  bool
	shots       int
	closed      bool
	frames      int
	fpsStart    time.Time
	fpsFrames   int
	fps         float64
	status      string
	view        sensors.View // the last frame's view
	helpers     *helpers.Helpers
	panel       *panel
	scene       *scene.Scene // the scene helpers and panel were built for
	shotImg     *image.RGBA
	lastWarning string
	samples     int // the window's multisampling
	input       bool
	drawn       drawnState // what the window shows
	drawnAt     time.Time
	redraws     int
	order       layering.Orderer
	layers      layers
	roots       []core.INode
	x11         *x11Present // nil: the GL swap presents
}

// openMu and opened keep Open to one window per process (g3n's limit).
var (
	openMu sync.Mutex
	opened bool
)

// drawnState is what a frame was drawn from: a frame whose state equals the
// last one's is not drawn again (the window keeps showing it), which leaves
// the CPU to the sensors and the host on a machine without a GPU.
type drawnState struct {
	scene                   *scene.Scene
	view                    sensors.View
	values                  []float64
	commands                int
	returns                 uint64
	status                  string
	grid, overlays, panelOn bool
}

func (d *drawnState) same(o *drawnState) bool {
	return d.scene == o.scene && d.view == o.view && slices.Equal(d.values, o.values) && d.commands == o.commands &&
		d.returns == o.returns && d.status == o.status && d.grid == o.grid && d.overlays == o.overlays && d.panelOn == o.panelOn
}

// redrawEvery bounds how long an unchanged picture stays without a redraw
// (a window uncovered by another is repainted then).
const redrawEvery = 500 * time.Millisecond

// Open opens the window. g3n keeps one window per process, so a second Open
// fails.
func Open(o Options) (*Viewer, error) {
	if o.Present != "" && o.Present != "gl" && o.Present != "x11" {
		return nil, fmt.Errorf("viewer: present %q: want gl or x11 (or empty: automatic)", o.Present)
	}
	if os.Getenv("DISPLAY") == "" {
		return nil, ErrNoDisplay
	}
	if err := checkDisplay(os.Getenv("DISPLAY")); err != nil {
		return nil, err
	}
	openMu.Lock()
	defer openMu.Unlock()
	if opened {
		return nil, errors.New("viewer: a window is already open in this process")
	}
	if o.Width <= 0 || o.Height <= 0 {
		o.Width, o.Height = 1280, 720
	}
	if !(o.FOV > 0 && o.FOV < 180) {
		o.FOV = 70
	}
	if o.Title == "" {
		o.Title = "simvis"
	}
	if o.Shots == "" {
		o.Shots = "."
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	v := &Viewer{opts: o, overlays: true, grid: o.Grid, panelOn: o.Panel, orb: orbit.From(o.From), fpsStart: time.Now()}
	v.home = v.orb
	ctx, err := gpu.NewExternal(func() (gs *gls.GLS, err error) {
		defer func() {
			// g3n's window.Init panics where GLFW fails half way (a display
			// that went away, no GLX): an error, not a crash.
			if r := recover(); r != nil {
				gs, err = nil, fmt.Errorf("viewer: cannot open a window on DISPLAY=%q: %v (render into a file with -o FILE.png instead)", os.Getenv("DISPLAY"), r)
			}
		}()
		if err := window.Init(o.Width, o.Height, o.Title); err != nil {
			return nil, fmt.Errorf("viewer: cannot open a window on DISPLAY=%q: %w (render into a file with -o FILE.png instead)", os.Getenv("DISPLAY"), err)
		}
		v.win = window.Get().(*window.GlfwWindow)
		// Frames are paced by the caller (a host's cycle, a mirror's
		// rate); waiting for vertical blank on top would halve them.
		v.win.SetSwapInterval(0)
		return v.win.Gls(), nil
	}, func() {
		if v.win != nil {
			v.win.Destroy()
		}
	})
	if err != nil {
		return nil, err
	}
	opened = true
	v.ctx = ctx
	if v.sens, err = sensors.NewRendererOn(ctx); err != nil {
		ctx.Close()
		return nil, err
	}
	err = ctx.Do(func(gs *gls.GLS) error {
		// The sensors' g3n renderer draws the window too: one per context
		// (see sensors.Renderer.G3N).
		v.rend = v.sens.G3N()
		v.subscribe()
		v.fbw, v.fbh = v.win.GetFramebufferSize()
		gpu.Unbind(gs)
		v.samples = gpu.Samples(gs)
		if o.Present == "x11" || (o.Present == "" && softwareGL(gs.GetString(gls.RENDERER))) {
			x, err := newX11Present(uint64(v.win.GetX11Window()))
			if err != nil {
				if o.Present == "x11" {
					return fmt.Errorf("viewer: --present x11: %v", err)
				}
				fmt.Fprintf(o.Log, "viewer: presenting with the GL swap: %v\n", err)
			}
			v.x11 = x
		}
		return nil
	})
	if err != nil {
		v.sens.Close()
		return nil, err
	}
	return v, nil
}

// Sensors returns the renderer for the sensors: it draws offscreen in the
// window's context (see the package doc). Do not close it; Close does.
func (v *Viewer) Sensors() *sensors.Renderer { return v.sens }

// Samples returns the window's samples per pixel (0: no multisampling).
func (v *Viewer) Samples() int { return v.samples }

// Info describes the window's GL context.
func (v *Viewer) Info() gpu.Info { return v.sens.Info() }

// Close closes the window and its GL context, telling Log how the frames
// were drawn.
func (v *Viewer) Close() error {
	if v.x11 != nil {
		v.ctx.Do(func(*gls.GLS) error { v.x11.close(); return nil })
	}
	fmt.Fprintf(v.opts.Log, "viewer: %d frames shown, %d drawn, %d of them over the still meshes' cache (drawn %d times)\n",
		v.frames, v.redraws, v.layers.plan.Cached, v.layers.plan.Builds)
	return v.sens.Close()
}

// Cached counts the frames drawn over the cache of still meshes (the rest
// of the frames drawn were drawn in full).
func (v *Viewer) Cached() int { return v.layers.plan.Cached }

// Closed reports whether the window was closed (its close button, q or Esc).
func (v *Viewer) Closed() bool { return v.closed }

// SetStatus sets the status line's text from the caller (host cycle and
// rate, mirror lag, warnings); the viewer adds frames per second.
func (v *Viewer) SetStatus(s string) { v.status = s }

// FPS returns the frames per second over the last second or so.
func (v *Viewer) FPS() float64 { return v.fps }

// View returns the view the last frame was drawn from.
func (v *Viewer) View() sensors.View { return v.view }

// Frame handles the window's events and draws s once. It returns false
// once the window was closed.
func (v *Viewer) Frame(s *scene.Scene) (bool, error) {
	if v.closed {
		return false, nil
	}
	err := v.ctx.Do(func(gs *gls.GLS) error {
		v.win.PollEvents()
		if v.win.ShouldClose() {
			v.closed = true
		}
		v.fbw, v.fbh = v.win.GetFramebufferSize()
		return nil
	})
	if err != nil || v.closed {
		return false, err
	}
	if s != v.scene {
		// A new scene (a mirror's rebuild): what was built for the old one
		// goes.
		v.scene = s
		v.looking = 0
		v.helpers = nil
		v.panel = nil
		v.order = layering.Orderer{}
	}
	for _, f := range v.pending {
		f(s)
	}
	v.pending = v.pending[:0]
	if v.closed {
		return false, nil
	}
	if v.fbw <= 0 || v.fbh <= 0 {
		return true, nil // minimized
	}
	v.follow(s)
	view := v.currentView(s)
	v.view = view
	if v.helpers == nil {
		v.helpers = helpers.New(s)
	}
	if v.grid {
		v.helpers.Update(helpers.View{Pose: view.Pose, HFOV: view.HFOV, Near: view.Near, Width: view.Width, Height: view.Height})
	}
	if v.panel == nil {
		v.panel = newPanel(v, s)
		gui.Manager().Set(v.panel.root)
		for _, c := range v.panel.controls {
			if !v.opts.ListControls {
				break
			}
			name := c.Element
			if c.Param != "" {
				name += "." + c.Param
			}
			fmt.Fprintf(v.opts.Log, "viewer: control %s %s at x=%d y=%d w=%d h=%d", name, c.Kind, c.X, c.Y, c.W, c.H)
			if c.Kind == "slider" {
				fmt.Fprintf(v.opts.Log, " range=[%g,%g]", c.Lo, c.Hi)
			}
			fmt.Fprintln(v.opts.Log)
		}
	}
	v.panel.update(s, v)
	if err := s.PrepareRender(v.overlays); err != nil {
		v.warn(err.Error()) // a value the scene refused
	}
	shot := v.shotWanted
	v.shotWanted = false
	now := drawnState{scene: s, view: view, values: s.Values(), commands: len(s.Log()), returns: s.ReturnsPublished(),
		status: v.panel.status.Text(), grid: v.grid, overlays: v.overlays, panelOn: v.panelOn}
	redraw := v.opts.EveryFrame || shot || v.input || !now.same(&v.drawn) || time.Since(v.drawnAt) > redrawEvery
	v.input = false
	if !redraw {
		v.count()
		return true, nil
	}
	v.drawn = now
	v.drawn.values = append([]float64(nil), now.values...)
	v.drawnAt = time.Now()
	v.redraws++
	// Front to back (orderer): measured 15-20% more frames on llvmpipe.
	s.G3N().UpdateMatrixWorld()
	v.order.Apply(s.G3N(), view.Pose.Col(3).Vec3())
	if shot && (v.shotImg == nil || v.shotImg.Rect.Dx() != v.fbw || v.shotImg.Rect.Dy() != v.fbh) {
		v.shotImg = image.NewRGBA(image.Rect(0, 0, v.fbw, v.fbh))
	}
	err = v.ctx.Do(func(gs *gls.GLS) error {
		gs.Disable(gls.MULTISAMPLE)
		cam := view.Camera()
		roots := v.roots[:0]
		roots = append(roots, s.G3N())
		if v.grid {
			roots = append(roots, v.helpers.Node)
		}
		v.roots = roots
		key := layerKey{scene: s, view: view, commands: now.commands, grid: v.grid, overlays: v.overlays}
		v.layers.off = v.opts.NoCache
		work, err := v.layers.draw(gs, v.rend, s, key, cam, view.Background, roots)
		if err != nil {
			return err
		}
		work.Bind(gs)
		if v.grid {
			if err := v.rend.Render(v.helpers.Labels, cam); err != nil {
				return err
			}
		}
		if err := v.rend.Render(v.panel.fov, cam); err != nil {
			return err
		}
		if err := v.rend.Render(v.panel.root, cam); err != nil {
			return err
		}
		if shot {
			// What the window shows, panel included.
			if err := work.ReadRGBA(gs, v.shotImg); err != nil {
				return err
			}
		}
		if v.x11 != nil {
			pix, err := v.x11.pixels(work.Width, work.Height)
			if err != nil {
				return err
			}
			if err := work.ReadBGRA(gs, pix); err != nil {
				return err
			}
			v.x11.put()
			return nil
		}
		// The window's own framebuffer is multisampled (g3n asks GLFW for
		// it): drawing there costs every sample; a copy replicates the
		// single-sampled picture into them once.
		if err := gpu.Blit(gs, work, nil, false); err != nil {
			return err
		}
		v.win.SwapBuffers()
		return nil
	})
	if err != nil {
		return false, err
	}
	if shot {
		v.writeShot()
	}
	v.count()
	return true, nil
}

// softwareGL reports whether a GL renderer string names a rasterizer that
// runs on the CPU (Mesa's).
func softwareGL(renderer string) bool {
	r := strings.ToLower(renderer)
	return strings.Contains(r, "llvmpipe") || strings.Contains(r, "softpipe") || strings.Contains(r, "swrast")
}

// count counts a frame for the frames-per-second figure.
func (v *Viewer) count() {
	v.frames++
	v.fpsFrames++
	if d := time.Since(v.fpsStart); d >= time.Second {
		v.fps = float64(v.fpsFrames) / d.Seconds()
		v.fpsFrames, v.fpsStart = 0, time.Now()
	}
}

// Redraws counts the frames drawn (the others showed an unchanged
// picture).
func (v *Viewer) Redraws() int { return v.redraws }

// Screenshot asks for the next frame's picture to be written as a PNG into
// the screenshot directory (the p key does the same).
func (v *Viewer) Screenshot() { v.shotWanted = true }

func (v *Viewer) writeShot() {
	for i := 0; i < 100000; i++ {
		v.shots++
		path := filepath.Join(v.opts.Shots, fmt.Sprintf("simvis-view-%04d.png", v.shots))
		if _, err := os.Stat(path); err == nil {
			continue // never overwrite a screenshot of an earlier run
		}
		// Opaque like a camera picture: blending leaves alpha below 1.
		for i := 3; i < len(v.shotImg.Pix); i += 4 {
			v.shotImg.Pix[i] = 255
		}
		if err := sensors.WritePNG(path, v.shotImg); err != nil {
			fmt.Fprintf(v.opts.Log, "viewer: screenshot: %v\n", err)
		} else {
			fmt.Fprintf(v.opts.Log, "viewer: screenshot %s\n", path)
		}
		return
	}
}

// currentView is the orbit's view, or the sensor's being looked through.
func (v *Viewer) currentView(s *scene.Scene) sensors.View {
	view := sensors.View{
		Pose: v.orb.Pose(), Width: v.fbw, Height: v.fbh, HFOV: v.opts.FOV,
		Near: 0.05, Far: 500, Background: sensors.DefaultBackground, Viewer: v.overlays,
	}
	list := s.Sensors()
	if v.looking > 0 && v.looking <= len(list) {
		se := list[v.looking-1]
		if sv, ok := sensorView(se); ok {
			view.Pose, view.HFOV, view.Near, view.Far = sv.Pose, sv.HFOV, sv.Near, sv.Far
			// The window's aspect ratio stays; the sensor's horizontal
			// field of view is kept.
		} else {
			view.Pose, view.HFOV = se.Frame.World(), 100
		}
	} else {
		v.looking = 0
	}
	return view
}

// followFrame is the frame f follows.
func (v *Viewer) followFrame(s *scene.Scene) (*scene.Node, bool) {
	name := v.opts.Follow
	if name == "" {
		for _, e := range s.Elements() {
			if m, ok := e.Element.(scene.Mobile); ok && m.Mobile() {
				name = e.At
				break
			}
		}
	}
	if name == "" {
		return nil, false
	}
	n, err := s.Frame(name)
	return n, err == nil
}

func (v *Viewer) follow(s *scene.Scene) {
	if !v.following {
		return
	}
	n, ok := v.followFrame(s)
	if !ok {
		v.following = false
		return
	}
	p := n.World().Col(3).Vec3()
	v.orb.Target = v.orb.Target.Add(p.Sub(v.followLast))
	v.followLast = p
}

// subscribe routes the window's input (through g3n's gui manager, so that
// the panel gets its clicks first) to the viewer. Runs on the render thread.
func (v *Viewer) subscribe() {
	// g3n's GLFW window stamps a button event with where the pointer is
	// when the event is processed, not where it was pressed: with motion
	// already queued behind the press (a fast drag, a slow frame) a drag
	// would start at its end. These come first among the window's
	// subscribers and put the press back where the last motion event left
	// the pointer, for the panel and the orbit alike.
	win := window.Get()
	var px, py float32
	known := false
	win.Subscribe(window.OnCursor, func(_ string, ev any) {
		e := ev.(*window.CursorEvent)
		px, py, known = e.Xpos, e.Ypos, true
	})
	fix := func(_ string, ev any) {
		if e := ev.(*window.MouseEvent); known {
			e.Xpos, e.Ypos = px, py
		}
	}
	win.Subscribe(window.OnMouseDown, fix)
	win.Subscribe(window.OnMouseUp, fix)
	// A click on a slider or a check box gives it the keyboard (g3n's
	// controls take arrows and space); only a number field keeps it, so
	// that the viewer's keys work after using the panel.
	win.Subscribe(window.OnMouseUp, func(string, any) {
		if focusedEdit == nil {
			gui.Manager().SetKeyFocus(nil)
		}
	})
	// Any input may change what the window shows (the panel's controls
	// included): the next frame is drawn.
	for _, ev := range []string{window.OnCursor, window.OnMouseDown, window.OnMouseUp, window.OnScroll,
		window.OnKeyDown, window.OnKeyUp, window.OnKeyRepeat, window.OnChar, window.OnWindowSize} {
		win.Subscribe(ev, func(string, any) { v.input = true })
	}
	m := gui.Manager()
	m.Subscribe(window.OnKeyDown, func(_ string, ev any) { v.onKey(ev.(*window.KeyEvent)) })
	m.Subscribe(window.OnKeyRepeat, func(_ string, ev any) {
		if k := ev.(*window.KeyEvent); k.Key != window.KeyP {
			v.onKey(k)
		}
	})
	m.Subscribe(window.OnMouseDown, func(_ string, ev any) {
		e := ev.(*window.MouseEvent)
		v.lastX, v.lastY = float64(e.Xpos), float64(e.Ypos)
		switch {
		case e.Button == window.MouseButtonLeft && e.Mods&window.ModShift == 0:
			v.drag = 1
		default:
			v.drag = 2
		}
	})
	m.Subscribe(window.OnMouseUp, func(string, any) { v.drag = 0 })
	m.Subscribe(window.OnCursor, func(_ string, ev any) {
		e := ev.(*window.CursorEvent)
		x, y := float64(e.Xpos), float64(e.Ypos)
		dx, dy := x-v.lastX, y-v.lastY
		v.lastX, v.lastY = x, y
		if v.drag == 0 || (dx == 0 && dy == 0) {
			return
		}
		v.looking = 0 // moving the view leaves a sensor's
		if v.drag == 1 {
			v.orb.Turn(dx, dy)
		} else {
			v.orb.Pan(dx, dy, v.pixelAngle())
		}
	})
	m.Subscribe(window.OnScroll, func(_ string, ev any) {
		v.looking = 0
		v.orb.Zoom(float64(ev.(*window.ScrollEvent).Yoffset))
	})
}

// pixelAngle is the angle one pixel subtends at the center of the view.
func (v *Viewer) pixelAngle() float64 {
	w := math.Max(1, float64(v.fbw))
	return 2 * math.Tan(mgl64.DegToRad(v.opts.FOV)/2) / w
}

// Keys (docs/viewer.md): 1-9 look through sensor N (again: back), 0 back to
// the orbit, f follow, r reset, o overlays, g grid and axes, p screenshot,
// Tab panel, arrows and +/- move the view, q and Esc close.
func (v *Viewer) onKey(e *window.KeyEvent) {
	switch k := e.Key; {
	case k >= window.Key1 && k <= window.Key9:
		n := int(k-window.Key1) + 1
		v.pending = append(v.pending, func(s *scene.Scene) {
			if v.looking == n || n > len(s.Sensors()) {
				v.looking = 0
				return
			}
			v.looking = n
		})
	case k == window.Key0:
		v.looking = 0
	case k == window.KeyF:
		v.pending = append(v.pending, func(s *scene.Scene) {
			n, ok := v.followFrame(s)
			if v.following || !ok {
				v.following = false
				return
			}
			v.following = true
			v.followLast = n.World().Col(3).Vec3()
			v.orb.Target = v.followLast // the followed frame comes to the center
		})
	case k == window.KeyR:
		v.orb, v.looking, v.following = v.home, 0, false
	case k == window.KeyO:
		v.overlays = !v.overlays
	case k == window.KeyG:
		v.grid = !v.grid
	case k == window.KeyP:
		v.shotWanted = true
	case k == window.KeyTab:
		v.panelOn = !v.panelOn
	case k == window.KeyLeft:
		v.orb.Turn(-20, 0)
	case k == window.KeyRight:
		v.orb.Turn(20, 0)
	case k == window.KeyUp:
		v.orb.Turn(0, -20)
	case k == window.KeyDown:
		v.orb.Turn(0, 20)
	case k == window.KeyEqual || k == window.KeyKPAdd:
		v.orb.Zoom(1)
	case k == window.KeyMinus || k == window.KeyKPSubtract:
		v.orb.Zoom(-1)
	case k == window.KeyQ || k == window.KeyEscape:
		v.closed = true
	}
}
