package scene

import (
	"slices"

	"github.com/go-gl/mathgl/mgl64"
)

// Returns is what a range sensor measured in one render, in world
// coordinates: the sensor's position and every beam that hit something.
// Beams without a return (nothing in range, too close) are left out.
type Returns struct {
	Sensor string
	Origin mgl64.Vec3   // the sensor's world position when it rendered
	Points []mgl64.Vec3 // world positions of the returns, in beam order
}

// The scene carries range returns from the sensors package to the elements
// that draw them (the scan overlay) because dependencies point from sensors
// and elements to scene, never between the two: sensors publish after each
// render, elements subscribe by sensor name. Both sides run on the one
// goroutine that owns the scene, so delivery is a plain call.
type returnsHub struct {
	subs map[string][]*returnsSub
	gen  uint64              // returns published that differed from the sensor's last ones
	last map[string]*Returns // each sensor's last returns, to tell a change
}

type returnsSub struct{ f func(*Returns) }

// SubscribeReturns calls f with every Returns the sensor named sensor
// publishes from now on. f runs on the goroutine that renders; r and its
// slices are valid only during the call (copy what must be kept). The
// subscription is undone if the element's command fails.
func (c *Context) SubscribeReturns(sensor string, f func(r *Returns)) {
	s := c.Scene
	if s.returns.subs == nil {
		s.returns.subs = map[string][]*returnsSub{}
	}
	sub := &returnsSub{f: f}
	// The next returns reach the new subscriber even if nothing moved.
	delete(s.returns.last, sensor)
	s.returns.subs[sensor] = append(s.returns.subs[sensor], sub)
	s.undo = append(s.undo, func() {
		list := s.returns.subs[sensor]
		if i := slices.Index(list, sub); i >= 0 {
			s.returns.subs[sensor] = slices.Delete(list, i, i+1)
		}
		if len(s.returns.subs[sensor]) == 0 {
			delete(s.returns.subs, sensor)
		}
	})
}

// WantsReturns reports whether anything subscribed to the sensor's returns:
// a sensor skips computing world points nobody draws.
func (s *Scene) WantsReturns(sensor string) bool { return len(s.returns.subs[sensor]) > 0 }

// ReturnsWanted lists, sorted, the sensors whose returns something draws:
// a render for people renders them first so that their overlays are current.
func (s *Scene) ReturnsWanted() []string {
	out := make([]string, 0, len(s.returns.subs))
	for name := range s.returns.subs {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// PublishReturns hands a sensor's latest returns to its subscribers.
// Returns equal to the sensor's last ones (nothing moved) change nothing
// and are not handed on.
func (s *Scene) PublishReturns(r *Returns) {
	h := &s.returns
	if h.last == nil {
		h.last = map[string]*Returns{}
	}
	last := h.last[r.Sensor]
	if last != nil && last.Origin == r.Origin && slices.Equal(last.Points, r.Points) {
		return
	}
	if last == nil {
		last = &Returns{Sensor: r.Sensor}
		h.last[r.Sensor] = last
	}
	last.Origin, last.Points = r.Origin, append(last.Points[:0], r.Points...)
	h.gen++
	for _, sub := range h.subs[r.Sensor] {
		sub.f(r)
	}
}

// ReturnsPublished counts the returns published so far that differed from
// their sensor's last ones: a viewer redraws when it changed, since overlays
// drawing them changed.
func (s *Scene) ReturnsPublished() uint64 { return s.returns.gen }
