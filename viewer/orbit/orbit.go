// Package orbit is the camera of simvis's viewers (the desktop window and
// the page in a browser): an eye turning around a target point with z up,
// moved by pixel offsets of a mouse or a finger.
package orbit

import (
	"math"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

// Orbit is a camera turning around a target point, z up: what people expect
// from a 3D viewer's mouse. Yaw turns about world z, pitch > 0 looks down
// (the sensor convention of scene.Pose: x forward, z up).
type Orbit struct {
	Target     mgl64.Vec3
	Dist       float64 // meters from the eye to the target
	Yaw, Pitch float64 // radians
}

const (
	minDist  = 0.05
	maxDist  = 2000
	maxPitch = 89 * math.Pi / 180
)

// From makes an orbit whose eye is the pose's position looking as the
// pose does (its roll is dropped: an orbit keeps z up). The target is where
// the line of sight meets the ground when that is within 100 m, else 5 m
// ahead.
func From(p scene.Pose) Orbit {
	o := Orbit{Yaw: mgl64.DegToRad(p.Yaw), Pitch: mgl64.DegToRad(p.Pitch), Dist: 5}
	o.Pitch = math.Max(-maxPitch, math.Min(maxPitch, o.Pitch))
	eye := mgl64.Vec3{p.X, p.Y, p.Z}
	f := o.Forward()
	if f[2] < -1e-3 && eye[2] > 0 {
		if d := eye[2] / -f[2]; d < 100 {
			o.Dist = math.Max(d, minDist)
		}
	}
	o.Target = eye.Add(f.Mul(o.Dist))
	return o
}

// Forward is the direction the eye looks in.
func (o Orbit) Forward() mgl64.Vec3 {
	cp := math.Cos(o.Pitch)
	return mgl64.Vec3{cp * math.Cos(o.Yaw), cp * math.Sin(o.Yaw), -math.Sin(o.Pitch)}
}

// Rotation is the eye's orientation: Rz(yaw) Ry(pitch), as scene.Pose.
func (o Orbit) Rotation() mgl64.Mat4 {
	return mgl64.HomogRotate3DZ(o.Yaw).Mul4(mgl64.HomogRotate3DY(o.Pitch))
}

// Pose is the eye's world pose in the sensor convention.
func (o Orbit) Pose() mgl64.Mat4 {
	m := o.Rotation()
	eye := o.Target.Sub(o.Forward().Mul(o.Dist))
	m.SetCol(3, eye.Vec4(1))
	return m
}

// Turn orbits by pixel offsets: dx turns left/right, dy up/down.
func (o *Orbit) Turn(dx, dy float64) {
	const perPixel = 0.006 // radians
	o.Yaw -= dx * perPixel
	o.Pitch = math.Max(-maxPitch, math.Min(maxPitch, o.Pitch+dy*perPixel))
}

// Pan moves the Target in the view plane so that the scene follows the
// mouse: by Dist times the angle a pixel subtends.
func (o *Orbit) Pan(dx, dy, pixelAngle float64) {
	r := o.Rotation()
	left := r.Col(1).Vec3()
	up := r.Col(2).Vec3()
	k := o.Dist * pixelAngle
	o.Target = o.Target.Add(left.Mul(dx * k)).Add(up.Mul(dy * k))
}

// Zoom moves the eye toward the Target (steps > 0) or away from it.
func (o *Orbit) Zoom(steps float64) {
	o.Dist = math.Max(minDist, math.Min(maxDist, o.Dist*math.Pow(0.85, steps)))
}
