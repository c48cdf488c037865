//go:build js && wasm

package main

import (
	"math"
	"syscall/js"

	"github.com/go-gl/mathgl/mgl64"
)

// pointer is one finger or mouse on the canvas.
type pointer struct {
	x, y  float64
	pan   bool // right or middle button, or shift
	order int
}

// listen routes the canvas's pointer events (mouse, touch, pen alike) and
// the keys to the camera: one pointer orbits (or pans with the right or
// middle button or shift), two pan and pinch-zoom, the wheel zooms; keys
// as in the desktop viewer.
func (p *page) listen() {
	down := map[int]*pointer{}
	next := 0
	pinch := 0.0
	add := func(target js.Value, name string, fn func(e js.Value)) {
		target.Call("addEventListener", name, js.FuncOf(func(_ js.Value, args []js.Value) any {
			fn(args[0])
			return nil
		}), map[string]any{"passive": false})
	}
	spread := func() (cx, cy, d float64) {
		var pts []*pointer
		for _, q := range down {
			pts = append(pts, q)
		}
		if len(pts) < 2 {
			return 0, 0, 0
		}
		a, b := pts[0], pts[1]
		return (a.x + b.x) / 2, (a.y + b.y) / 2, math.Hypot(a.x-b.x, a.y-b.y)
	}
	add(p.canvas, "pointerdown", func(e js.Value) {
		p.canvas.Call("setPointerCapture", e.Get("pointerId"))
		b := e.Get("button").Int()
		next++
		down[e.Get("pointerId").Int()] = &pointer{x: e.Get("clientX").Float(), y: e.Get("clientY").Float(),
			pan: b == 1 || b == 2 || e.Get("shiftKey").Bool(), order: next}
		_, _, pinch = spread()
		p.looking = 0 // moving the camera leaves the sensor's view
	})
	add(p.canvas, "pointermove", func(e js.Value) {
		q, ok := down[e.Get("pointerId").Int()]
		if !ok {
			return
		}
		x, y := e.Get("clientX").Float(), e.Get("clientY").Float()
		if len(down) >= 2 {
			cx0, cy0, d0 := spread()
			q.x, q.y = x, y
			cx, cy, d := spread()
			p.orb.Pan(cx-cx0, cy-cy0, p.pixelAngle())
			if d0 > 0 && pinch > 0 {
				p.orb.Zoom(math.Log(d/d0) / math.Log(1/0.85))
			}
			return
		}
		dx, dy := x-q.x, y-q.y
		q.x, q.y = x, y
		if q.pan || e.Get("shiftKey").Bool() {
			p.orb.Pan(dx, dy, p.pixelAngle())
		} else {
			p.orb.Turn(dx, dy)
		}
	})
	up := func(e js.Value) {
		delete(down, e.Get("pointerId").Int())
		_, _, pinch = spread()
	}
	add(p.canvas, "pointerup", up)
	add(p.canvas, "pointercancel", up)
	add(p.canvas, "wheel", func(e js.Value) {
		e.Call("preventDefault")
		dy := e.Get("deltaY").Float()
		if e.Get("deltaMode").Int() == 0 {
			dy /= 100 // pixels; lines and pages count as steps
		}
		p.orb.Zoom(-dy)
	})
	add(p.doc, "keydown", func(e js.Value) {
		if t := e.Get("target").Get("tagName").String(); t == "INPUT" || t == "TEXTAREA" {
			return // typing into the panel's fields
		}
		switch k := e.Get("key").String(); k {
		case "1", "2", "3", "4", "5", "6", "7", "8", "9":
			p.looking = int(k[0] - '0')
		case "0", "r":
			p.looking, p.following, p.orb = 0, false, p.home
		case "f":
			p.following = !p.following
			if p.scene == nil {
				break
			}
			if at, ok := followedAt(p.scene); ok && p.following {
				p.orb.Target, p.followAt = at, at // the followed frame comes to the center
			}
		case "g":
			p.grid = !p.grid
		case "Tab":
			e.Call("preventDefault")
			p.panel.toggle()
		case "ArrowLeft":
			p.orb.Turn(-20, 0)
		case "ArrowRight":
			p.orb.Turn(20, 0)
		case "ArrowUp":
			p.orb.Turn(0, -20)
		case "ArrowDown":
			p.orb.Turn(0, 20)
		case "+", "=":
			p.orb.Zoom(1)
		case "-":
			p.orb.Zoom(-1)
		}
	})
}

// pixelAngle is the angle one CSS pixel of the canvas subtends.
func (p *page) pixelAngle() float64 {
	w := p.canvas.Get("clientWidth").Float()
	if w <= 0 {
		return 0.001
	}
	return mgl64.DegToRad(p.view.FOV) / w
}
