package live

import (
	"math"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors/raycast"
)

// Framed is the viewpoint a window, or `simvis view`, starts from when
// given none: the scene's content (its sensors and the insertion points of
// its elements: the robots and what moves; without any, all its geometry)
// fills the view, seen from above, behind and to the left (+x ahead, as
// robots face), and from inside whatever encloses it: where a sensed
// surface (a room's wall) stands between the content and that place, the
// viewpoint moves toward the content until none does, so that an enclosed
// room shows its inside, not a wall.
func Framed(s *scene.Scene, width, height int, fovDeg float64) Viewpoint {
	lo, hi, ok := contentBounds(s)
	if !ok {
		lo, hi = mgl64.Vec3{-1, -1, 0}, mgl64.Vec3{1, 1, 1}
	}
	center := lo.Add(hi).Mul(0.5)
	// A robot's pose element sits at its base: what stands on it reaches
	// up to a metre or so, and a single point needs room around it too.
	radius := math.Max(hi.Sub(lo).Len()/2, 1.2)
	center[2] += 0.3
	half := mgl64.DegToRad(fovDeg) / 2 // horizontal
	if height < width {                // the narrower field of view frames it
		half = math.Atan(math.Tan(half) * float64(height) / float64(width))
	}
	want := radius / math.Sin(half)
	// From the edge of the content outward, the first surface in the way
	// bounds the distance (the content's own meshes are not in the way).
	// Of a few directions, the first with the most room is taken: from
	// above, behind and to the left (+x ahead, as robots face) where
	// nothing is in the way.
	c := raycast.New()
	c.Sync(s)
	start := math.Min(radius, want/2)
	var dir mgl64.Vec3
	dist := -1.0
	for _, e := range []float64{30, 45, 18} {
		for _, a := range []float64{218, 180, 250, 140, 300, 38} {
			ar, er := mgl64.DegToRad(a), mgl64.DegToRad(e)
			d := mgl64.Vec3{math.Cos(er) * math.Cos(ar), math.Cos(er) * math.Sin(ar), math.Sin(er)}
			free := want
			if t, hit := c.Cast(center.Add(d.Mul(start)), d, want-start); hit {
				free = start + 0.9*t
			}
			if free > dist+1e-9 {
				dir, dist = d, free
			}
		}
	}
	eye := center.Add(dir.Mul(dist))
	look := center.Sub(eye)
	yaw := mgl64.RadToDeg(math.Atan2(look[1], look[0]))
	pitch := mgl64.RadToDeg(math.Asin(-look[2] / look.Len()))
	return Viewpoint{Pose: scene.Pose{X: eye[0], Y: eye[1], Z: eye[2], Pitch: pitch, Yaw: yaw},
		Frame: scene.WorldFrame, Width: width, Height: height, FOV: fovDeg}
}

// contentBounds bounds the world positions of the scene's sensors and of
// its elements' insertion points; a scene without either gives the bounds
// of its sensed geometry.
func contentBounds(s *scene.Scene) (lo, hi mgl64.Vec3, ok bool) {
	lo = mgl64.Vec3{math.Inf(1), math.Inf(1), math.Inf(1)}
	hi = lo.Mul(-1)
	add := func(p mgl64.Vec3) {
		for i := range 3 {
			lo[i], hi[i] = math.Min(lo[i], p[i]), math.Max(hi[i], p[i])
		}
		ok = true
	}
	at := func(frame string) {
		if m, err := s.Transform(frame, scene.WorldFrame); err == nil {
			add(m.Col(3).Vec3())
		}
	}
	for _, se := range s.Sensors() {
		at(se.Name)
	}
	for _, e := range s.Elements() {
		at(e.At)
	}
	if ok {
		return lo, hi, true
	}
	for _, m := range s.SensedMeshes(nil) {
		for _, p := range m.Mesh.Primitives {
			for _, v := range p.Positions {
				add(m.World.Mul4x1(mgl64.Vec4{float64(v[0]), float64(v[1]), float64(v[2]), 1}).Vec3())
			}
		}
	}
	return lo, hi, ok
}
