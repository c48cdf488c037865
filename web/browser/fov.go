//go:build js && wasm

package main

import (
	"github.com/g3n/engine/core"
	"github.com/g3n/engine/graphic"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/viewer/helpers"
)

// fovs are the sensors' field-of-view lines, as the desktop viewer draws
// them: toggled per sensor in the panel, built from what the host's
// sensors say they see (client.Conn.Sights; the page's sensors are
// stand-ins that know only their attributes).
type fovs struct {
	on      map[string]bool
	node    *core.Node
	lines   map[string]*graphic.Lines
	gen     uint64 // the sights the lines were built from
	version int    // changes with what is drawn: a toggle, new sights
}

func newFovs() *fovs {
	return &fovs{on: map[string]bool{}, node: core.NewNode(), lines: map[string]*graphic.Lines{}}
}

// toggle shows or hides a sensor's lines.
func (f *fovs) toggle(sensor string, on bool) {
	if f.on[sensor] != on {
		f.on[sensor] = on
		f.version++
	}
}

// update places the lines of the sensors toggled on at their sensors'
// poses in s and reports whether any is shown.
func (f *fovs) update(s *scene.Scene, sights map[string]scene.FieldOfView, gen uint64) bool {
	if gen != f.gen {
		for name, l := range f.lines {
			f.node.Remove(l)
			l.Dispose()
			delete(f.lines, name)
		}
		f.gen = gen
		f.version++
	}
	for _, l := range f.lines {
		l.SetVisible(false)
	}
	shown := false
	for _, se := range s.Sensors() {
		sight, ok := sights[se.Name]
		if !f.on[se.Name] || !ok {
			continue
		}
		l := f.lines[se.Name]
		if l == nil {
			l = helpers.FieldOfViewLines(sight)
			f.lines[se.Name] = l
			f.node.Add(l)
		}
		helpers.SetMatrix(&l.Node, se.Frame.World())
		l.SetVisible(true)
		shown = true
	}
	return shown
}
