package viewer

import (
	"fmt"
	"image"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/g3n/engine/core"
	"github.com/g3n/engine/geometry"
	"github.com/g3n/engine/gls"
	"github.com/g3n/engine/graphic"
	"github.com/g3n/engine/gui"
	"github.com/g3n/engine/material"
	"github.com/g3n/engine/math32"
	"github.com/g3n/engine/texture"
	"github.com/g3n/engine/window"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
	"github.com/simvis/simvis/viewer/helpers"
)

// Panel layout, in window pixels: fixed rows so that the panel reads the
// same for every scene (and tests can find a control).
const (
	panelWidth = 340
	rowHeight  = 22
	labelX     = 10
	controlX   = 120
	sliderW    = 200
	insetW     = 256
	maxInsets  = 3
)

// ranger is an element that knows the limits of its parameters (joints).
type ranger interface {
	ParamRange(i int) (lo, hi float64, ok bool)
}

// Control describes one of the panel's controls, for people reading the log
// and for tests that click it.
type Control struct {
	Element, Param string  // a sensor's toggles: the sensor, no parameter
	Kind           string  // "slider", "field"; a sensor's "fov" or "inset" toggle
	X, Y, W, H     int     // window pixels
	Lo, Hi         float64 // a slider's range
}

// panel is the g3n gui side of the window: elements with their parameters,
// sensors with their toggles, insets and the status line.
type panel struct {
	root     *core.Node // the gui panels, drawn after the scene
	back     *gui.Panel
	status   *gui.Label
	params   []*paramRow
	sensors  []*sensorRow
	controls []Control
	fov      *core.Node // field-of-view and beam lines, world
	updating bool       // values are being copied in: not a user's change
	statusAt time.Time  // when the status line's text was last set
	contentH int        // the rows' height
	scroll   float32    // <= 0: rows scrolled up out of a short window
}

type paramRow struct {
	element, param string
	slider         *gui.Slider
	field          *gui.Edit
	lo, hi         float64
	shown          float64
}

type sensorRow struct {
	se    *scene.SensorEntry
	fov   *gui.CheckRadio
	inset *gui.CheckRadio
	lines *graphic.Lines
	image *gui.Image
	tex   *texture.Texture2D
	// What the inset was rendered from: it renders again only when the
	// scene changed (a value, a command), not every frame.
	values   []float64
	commands int
}

func newPanel(v *Viewer, s *scene.Scene) *panel {
	p := &panel{root: core.NewNode(), fov: core.NewNode()}
	p.back = gui.NewPanel(panelWidth, float32(v.fbh))
	p.back.SetColor4(&math32.Color4{R: 0.12, G: 0.13, B: 0.15, A: 0.85})
	p.root.Add(p.back)
	y := 8
	label := func(text string, x, y int, bold bool) *gui.Label {
		l := gui.NewLabel(text)
		l.SetFontSize(13)
		if bold {
			l.SetColor(&math32.Color{R: 1, G: 0.85, B: 0.4})
		} else {
			l.SetColor(&math32.Color{R: 0.9, G: 0.9, B: 0.9})
		}
		l.SetPosition(float32(x), float32(y))
		p.back.Add(l)
		return l
	}
	label("Elements", labelX, y, true)
	y += rowHeight
	for _, e := range s.Elements() {
		if len(e.Params) == 0 {
			continue
		}
		label(e.Name+" ("+e.Type+")", labelX, y, false)
		y += rowHeight
		rg, _ := e.Element.(ranger)
		for i, prm := range e.Params {
			row := &paramRow{element: e.Name, param: prm.Name, shown: math.NaN()}
			label("  "+prm.Name, labelX, y, false)
			c := Control{Element: e.Name, Param: prm.Name, X: controlX, Y: y, H: 18}
			if lo, hi, ok := rangeOf(rg, i); ok {
				row.lo, row.hi = lo, hi
				row.slider = gui.NewHSlider(sliderW, 18)
				row.slider.SetPosition(controlX, float32(y))
				p.back.Add(row.slider)
				// The slider takes the keyboard on a click; give it back so
				// that the viewer's keys keep working.
				row.slider.Subscribe(gui.OnMouseUp, func(string, any) { gui.Manager().SetKeyFocus(nil) })
				row.slider.Subscribe(gui.OnChange, func(string, any) {
					if p.updating {
						return
					}
					// float32 slider steps, rounded to 1/10000 of the range.
					step := (row.hi - row.lo) / 10000
					val := row.lo + math.Round(float64(row.slider.Value())*10000)*step
					v.queueSet(row.element, row.param, val)
				})
				c.Kind, c.W, c.Lo, c.Hi = "slider", sliderW, lo, hi
			} else {
				row.field = gui.NewEdit(120, "")
				row.field.SetPosition(controlX, float32(y))
				p.back.Add(row.field)
				row.field.Subscribe(gui.OnFocus, func(string, any) { focusedEdit = row.field })
				row.field.Subscribe(gui.OnFocusLost, func(string, any) {
					if focusedEdit == row.field {
						focusedEdit = nil
					}
				})
				row.field.Subscribe(gui.OnKeyDown, func(_ string, ev any) {
					if ev.(*window.KeyEvent).Key != window.KeyEnter && ev.(*window.KeyEvent).Key != window.KeyKPEnter {
						return
					}
					x, err := strconv.ParseFloat(strings.TrimSpace(row.field.Text()), 64)
					if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
						v.warn(fmt.Sprintf("%s.%s: %q is not a number", row.element, row.param, row.field.Text()))
						row.shown = math.NaN() // show the value again
						return
					}
					v.queueSet(row.element, row.param, x)
					gui.Manager().SetKeyFocus(nil)
				})
				c.Kind, c.W = "field", 120
			}
			p.params = append(p.params, row)
			p.controls = append(p.controls, c)
			y += rowHeight
		}
	}
	y += rowHeight / 2
	label("Sensors (key: look through)", labelX, y, true)
	y += rowHeight
	for i, se := range s.Sensors() {
		row := &sensorRow{se: se}
		key := " "
		if i < 9 {
			key = strconv.Itoa(i + 1)
		}
		label(key+" "+se.Name+" ("+se.Type+")", labelX, y, false)
		row.fov = gui.NewCheckBox("fov")
		row.fov.SetPosition(210, float32(y))
		p.back.Add(row.fov)
		p.controls = append(p.controls, Control{Element: se.Name, Kind: "fov", X: 210, Y: y, W: 16, H: 16})
		if _, ok := se.Sensor.(interface{ View() sensors.View }); ok {
			row.inset = gui.NewCheckBox("inset")
			row.inset.SetPosition(270, float32(y))
			p.back.Add(row.inset)
			p.controls = append(p.controls, Control{Element: se.Name, Kind: "inset", X: 270, Y: y, W: 16, H: 16})
		}
		row.lines = fovLines(se)
		row.lines.SetVisible(false)
		p.fov.Add(row.lines)
		p.sensors = append(p.sensors, row)
		y += rowHeight
	}
	p.contentH = y + rowHeight/2
	// A panel taller than the window scrolls with the wheel.
	p.back.Subscribe(gui.OnScroll, func(_ string, ev any) {
		p.scroll += float32(ev.(*window.ScrollEvent).Yoffset) * 3 * rowHeight
		v.input = true
	})
	// The status line stays at the bottom of the window however the panel
	// is scrolled.
	p.status = gui.NewLabel("")
	p.status.SetFontSize(13)
	p.status.SetColor(&math32.Color{R: 0.6, G: 1, B: 0.6})
	p.status.SetBgColor4(&math32.Color4{R: 0.12, G: 0.13, B: 0.15, A: 0.85})
	p.root.Add(p.status)
	return p
}

func rangeOf(rg ranger, i int) (lo, hi float64, ok bool) {
	if rg == nil {
		return 0, 0, false
	}
	lo, hi, ok = rg.ParamRange(i)
	return lo, hi, ok && hi > lo
}

// fovLines draws a sensor's field of view in its own frame, as the sensor
// tells it (scene.Sighted; nothing where it does not).
func fovLines(se *scene.SensorEntry) *graphic.Lines {
	if sg, ok := se.Sensor.(scene.Sighted); ok {
		return helpers.FieldOfViewLines(sg.FieldOfView())
	}
	geom := geometry.NewGeometry() // no lines
	geom.AddVBO(gls.NewVBO(math32.ArrayF32{}).AddAttrib(gls.VertexPosition))
	return graphic.NewLines(geom, material.NewBasic())
}

// Controls lists the panel's parameter controls with their places.
func (v *Viewer) Controls() []Control {
	if v.panel == nil {
		return nil
	}
	return append([]Control(nil), v.panel.controls...)
}

// queueSet sets a value on the scene's goroutine, through Options.Set.
func (v *Viewer) queueSet(element, param string, x float64) {
	v.pending = append(v.pending, func(*scene.Scene) {
		if v.opts.Set == nil {
			v.warn("values are read-only here")
			return
		}
		if err := v.opts.Set(element, param, x); err != nil {
			v.warn(fmt.Sprintf("%s.%s = %g refused: %v", element, param, x, err))
			return
		}
		fmt.Fprintf(v.opts.Log, "viewer: set %s.%s = %g\n", element, param, x)
	})
}

func (v *Viewer) warn(msg string) {
	v.lastWarning = msg
	fmt.Fprintf(v.opts.Log, "viewer: %s\n", msg)
}

// update copies the scene's values into the controls (unless one is being
// edited), places the field-of-view lines, renders the insets that are on
// and writes the status line.
func (p *panel) update(s *scene.Scene, v *Viewer) {
	p.back.SetVisible(v.panelOn)
	p.status.SetVisible(v.panelOn)
	// Room for the status line below the panel's rows.
	room := float32(v.fbh - rowHeight)
	p.scroll = max(min(p.scroll, 0), min(room-float32(p.contentH), 0))
	p.back.SetPosition(0, p.scroll)
	p.back.SetHeight(max(float32(p.contentH), float32(v.fbh)-p.scroll))
	p.updating = true
	for _, row := range p.params {
		x, err := s.Value(row.element, row.param)
		if err != nil || x == row.shown {
			continue
		}
		if row.slider != nil {
			row.slider.SetValue(float32((x - row.lo) / (row.hi - row.lo)))
			row.slider.SetText(strconv.FormatFloat(x, 'f', 2, 64))
		} else if gui.Manager() != nil && !row.focused() {
			row.field.SetText(strconv.FormatFloat(x, 'g', 6, 64))
		} else {
			continue
		}
		row.shown = x
	}
	p.updating = false
	insets := 0
	for _, row := range p.sensors {
		on := row.fov.Value()
		row.lines.SetVisible(on)
		if on {
			helpers.SetMatrix(&row.lines.Node, row.se.Frame.World())
		}
		if row.inset == nil {
			continue
		}
		if !row.inset.Value() || insets >= maxInsets {
			if row.image != nil {
				row.image.SetVisible(false)
			}
			continue
		}
		if row.image != nil && row.image.Visible() && row.commands == len(s.Log()) && slices.Equal(row.values, s.Values()) {
			// Unchanged: the picture it shows stands; its place may not
			// (an inset above turned off, the window resized).
			w, h := row.image.Width(), row.image.Height()
			row.image.SetPosition(float32(v.fbw)-w-8, 8+float32(insets)*(h+8))
			insets++
			continue
		}
		img, err := v.inset(s, row.se)
		if err != nil {
			v.warn(fmt.Sprintf("inset %s: %v", row.se.Name, err))
			row.inset.SetValue(false)
			continue
		}
		row.values = append(row.values[:0], s.Values()...)
		row.commands = len(s.Log())
		if row.image == nil {
			row.tex = texture.NewTexture2DFromRGBA(img)
			// Level 0 only, as g3n's labels do: the panel shader's
			// coordinates would pick the smallest mipmap level, one color.
			row.tex.SetMagFilter(gls.LINEAR)
			row.tex.SetMinFilter(gls.LINEAR)
			row.image = gui.NewImageFromTex(row.tex)
			p.root.Add(row.image)
		} else {
			row.tex.SetFromRGBA(img)
		}
		b := img.Bounds()
		row.image.SetSize(float32(b.Dx()), float32(b.Dy()))
		row.image.SetPosition(float32(v.fbw-b.Dx()-8), float32(8+insets*(b.Dy()+8)))
		row.image.SetVisible(true)
		insets++
	}
	// The status line changes every frame (lag, cycle); rasterizing its
	// text costs, and every change is a redraw: four times a second.
	if time.Since(p.statusAt) >= 250*time.Millisecond {
		text := fmt.Sprintf("%.0f frames/s", v.fps)
		if v.status != "" {
			text = v.status + " | " + text
		}
		if v.lastWarning != "" {
			text += " | " + v.lastWarning
		}
		if text != p.status.Text() {
			p.status.SetText(text)
		}
		p.statusAt = time.Now()
	}
	p.status.SetPosition(0, float32(v.fbh-rowHeight))
}

func (r *paramRow) focused() bool { return r.field != nil && focusedEdit == r.field }

// focusedEdit is the field being typed in (g3n's manager does not tell).
var focusedEdit *gui.Edit

// inset renders a camera-like sensor's view at inset size.
func (v *Viewer) inset(s *scene.Scene, se *scene.SensorEntry) (*image.RGBA, error) {
	vw := se.Sensor.(interface{ View() sensors.View }).View()
	h := int(math.Round(float64(insetW) * float64(vw.Height) / float64(vw.Width)))
	if h < 1 || h > 4*insetW {
		h = insetW * 3 / 4
	}
	vw.Width, vw.Height = insetW, h
	return v.sens.RenderRGBA(s, vw)
}

// sensorView is the pinhole view of a camera-like sensor: a camera's own,
// or one made from the width, height and fov a sensor describes (a depth
// camera's), at the sensor's current pose.
func sensorView(se *scene.SensorEntry) (sensors.View, bool) {
	if c, ok := se.Sensor.(interface{ View() sensors.View }); ok {
		return c.View(), true
	}
	d := se.Sensor.Describe()
	w, okW := d["width"].(int)
	h, okH := d["height"].(int)
	fov, okF := d["fov"].(float64)
	if !okW || !okH || !okF || w <= 0 || h <= 0 || !(fov > 0 && fov < 180) {
		return sensors.View{}, false
	}
	return sensors.View{Pose: se.Frame.World(), Width: w, Height: h, HFOV: fov, Near: 0.05, Far: 100,
		Background: sensors.DefaultBackground}, true
}
