//go:build js && wasm

package main

import (
	"math"
	"strconv"
	"syscall/js"
	"time"

	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/web/client"
)

// panel is the page's element panel: each element's parameters, as a
// slider where the element gives a range and a number field otherwise, and
// the sensors to look through. A driver's changes go to the host; the
// controls show the host's values as they come.
type panel struct {
	p      *page
	root   js.Value
	rows   []paramRow
	funcs  []js.Func
	driver bool
	wrote  time.Time // the controls were last changed
}

// panelEvery is how often the controls follow the values at most: a value
// that changes every frame (a driving robot's pose) would otherwise have
// the browser lay out and paint the panel every frame, which on a software
// rasterizer cost a fifth of the frame rate; nobody reads numbers faster.
const panelEvery = 100 * time.Millisecond

type paramRow struct {
	local  int // index in the replica's value table
	host   int // index in the host's (-1: unknown)
	input  js.Value
	number js.Value // the field beside a slider
	shown  float64
}

type ranger interface {
	ParamRange(i int) (lo, hi float64, ok bool)
}

func newPanel(p *page, s *scene.Scene) *panel {
	if p.panel != nil {
		p.panel.release()
	}
	pn := &panel{p: p, root: p.doc.Call("getElementById", "controls"), driver: p.conn.Welcome().Role == client.Driver}
	pn.root.Set("textContent", "")
	host := map[string]int{} // element name -> first value index on the host
	if descs, err := p.client.Elements(); err == nil {
		for _, d := range descs {
			host[d.Name] = d.Start
		}
	}
	el := func(tag, class, text string) js.Value {
		e := p.doc.Call("createElement", tag)
		if class != "" {
			e.Set("className", class)
		}
		if text != "" {
			e.Set("textContent", text)
		}
		return e
	}
	for _, e := range s.Elements() {
		if len(e.Params) == 0 {
			continue
		}
		head := el("div", "element", e.Name+" ")
		head.Call("appendChild", el("small", "", "("+e.Type+")"))
		pn.root.Call("appendChild", head)
		rg, _ := e.Element.(ranger)
		start, known := host[e.Name]
		for i, prm := range e.Params {
			row := paramRow{local: e.Start + i, host: -1, shown: math.NaN()}
			if known {
				row.host = start + i
			}
			line := el("div", "param", "")
			line.Call("appendChild", el("label", "", prm.Name))
			name := e.Name + "." + prm.Name
			lo, hi, ranged := 0.0, 0.0, false
			if rg != nil {
				lo, hi, ranged = rg.ParamRange(i)
				ranged = ranged && hi > lo
			}
			if ranged {
				row.input = el("input", "", "")
				row.input.Set("type", "range")
				row.input.Set("min", lo)
				row.input.Set("max", hi)
				row.input.Set("step", (hi-lo)/1000)
				row.number = el("input", "", "")
				row.number.Set("type", "number")
				row.number.Set("step", "any")
				line.Call("appendChild", row.input)
				line.Call("appendChild", row.number)
			} else {
				row.input = el("input", "", "")
				row.input.Set("type", "number")
				row.input.Set("step", "any")
				line.Call("appendChild", el("span", "", ""))
				line.Call("appendChild", row.input)
			}
			row.input.Call("setAttribute", "data-param", name)
			if !pn.driver || row.host < 0 {
				row.input.Set("disabled", true)
				if row.number.Truthy() {
					row.number.Set("disabled", true)
				}
			}
			idx := len(pn.rows)
			pn.rows = append(pn.rows, row)
			for _, in := range []js.Value{row.input, row.number} {
				if in.Truthy() {
					pn.on(in, "input", func(v js.Value) { pn.changed(idx, v) })
				}
			}
			pn.root.Call("appendChild", line)
		}
	}
	if list := s.Sensors(); len(list) > 0 {
		pn.root.Call("appendChild", el("div", "element", "Sensors"))
		for i, se := range list {
			if i >= 9 {
				break
			}
			row := el("div", "sensor-row", "")
			look := el("span", "sensor", strconv.Itoa(i+1)+": "+se.Name+" ("+se.Type+")")
			n := i + 1
			pn.on(look, "click", func(js.Value) { p.looking = n })
			row.Call("appendChild", look)
			// The sensor's field of view, drawn in the scene.
			fov := el("input", "", "")
			fov.Set("type", "checkbox")
			fov.Set("title", "field of view")
			fov.Set("checked", p.fovs.on[se.Name])
			fov.Call("setAttribute", "data-fov", se.Name)
			name := se.Name
			pn.on(fov, "change", func(v js.Value) { p.fovs.toggle(name, v.Get("checked").Bool()) })
			row.Call("appendChild", fov)
			if _, ok := attrFloat(se, "width"); ok && se.Type != "depth" {
				// A camera's pictures, as the host renders them.
				box := el("input", "", "")
				box.Set("type", "checkbox")
				box.Set("title", "inset: the camera's picture")
				box.Call("setAttribute", "data-inset", se.Name)
				pn.on(box, "change", func(v js.Value) { p.setInset(name, v.Get("checked").Bool()) })
				row.Call("appendChild", box)
			}
			pn.root.Call("appendChild", row)
		}
	}
	return pn
}

// on adds an event listener whose function the panel releases when it is
// rebuilt.
func (pn *panel) on(target js.Value, event string, fn func(v js.Value)) {
	f := js.FuncOf(func(this js.Value, _ []js.Value) any {
		fn(this)
		return nil
	})
	pn.funcs = append(pn.funcs, f)
	target.Call("addEventListener", event, f)
}

func (pn *panel) release() {
	for _, f := range pn.funcs {
		f.Release()
	}
	pn.funcs = nil
}

// changed sends a control's new value to the host.
func (pn *panel) changed(i int, input js.Value) {
	r := &pn.rows[i]
	v, err := strconv.ParseFloat(input.Get("value").String(), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	if err := pn.p.client.Set(r.host, v); err != nil {
		pn.p.warn("set: " + err.Error())
	}
}

// update shows the replica's values in the controls not being edited.
func (pn *panel) update(s *scene.Scene) {
	if time.Since(pn.wrote) < panelEvery {
		return // the newest values are written at the next chance
	}
	vals := s.Values()
	active := pn.p.doc.Get("activeElement")
	for i := range pn.rows {
		r := &pn.rows[i]
		if r.local >= len(vals) {
			continue
		}
		v := vals[r.local]
		if v == r.shown {
			continue
		}
		r.shown = v
		pn.wrote = time.Now()
		text := strconv.FormatFloat(v, 'g', 6, 64)
		for _, in := range []js.Value{r.input, r.number} {
			if in.Truthy() && !in.Equal(active) {
				in.Set("value", text)
			}
		}
	}
}

func (pn *panel) toggle() {
	box := pn.p.doc.Call("getElementById", "panel")
	box.Set("hidden", !box.Get("hidden").Bool())
}
