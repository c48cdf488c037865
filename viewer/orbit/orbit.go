package viewer

import (
	"math"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

// orbit is a camera turning around a target point, z up: what people expect
// from a 3D viewer's mouse. Yaw turns about world z, pitch > 0 looks down
// (the sensor convention of scene.Pose: x forward, z up).
type orbit struct {
	target     mgl64.Vec3
	dist       float64 // meters from the eye to the target
	yaw, pitch float64 // radians
}

const (
	minDist  = 0.05
	maxDist  = 2000
	maxPitch = 89 * math.Pi / 180
)

// orbitFrom makes an orbit whose eye is the pose's position looking as the
// pose does (its roll is dropped: an orbit keeps z up). The target is where
// the line of sight meets the ground when that is within 100 m, else 5 m
// ahead.
func orbitFrom(p scene.Pose) orbit {
	o := orbit{yaw: mgl64.DegToRad(p.Yaw), pitch: mgl64.DegToRad(p.Pitch), dist: 5}
	o.pitch = math.Max(-maxPitch, math.Min(maxPitch, o.pitch))
	eye := mgl64.Vec3{p.X, p.Y, p.Z}
	f := o.forward()
	if f[2] < -1e-3 && eye[2] > 0 {
		if d := eye[2] / -f[2]; d < 100 {
			o.dist = math.Max(d, minDist)
		}
	}
	o.target = eye.Add(f.Mul(o.dist))
	return o
}

func (o orbit) forward() mgl64.Vec3 {
	cp := math.Cos(o.pitch)
	return mgl64.Vec3{cp * math.Cos(o.yaw), cp * math.Sin(o.yaw), -math.Sin(o.pitch)}
}

// rotation is the eye's orientation: Rz(yaw) Ry(pitch), as scene.Pose.
func (o orbit) rotation() mgl64.Mat4 {
	return mgl64.HomogRotate3DZ(o.yaw).Mul4(mgl64.HomogRotate3DY(o.pitch))
}

// pose is the eye's world pose in the sensor convention.
func (o orbit) pose() mgl64.Mat4 {
	m := o.rotation()
	eye := o.target.Sub(o.forward().Mul(o.dist))
	m.SetCol(3, eye.Vec4(1))
	return m
}

// turn orbits by pixel offsets: dx turns left/right, dy up/down.
func (o *orbit) turn(dx, dy float64) {
	const perPixel = 0.006 // radians
	o.yaw -= dx * perPixel
	o.pitch = math.Max(-maxPitch, math.Min(maxPitch, o.pitch+dy*perPixel))
}

// pan moves the target in the view plane so that the scene follows the
// mouse: by dist times the angle a pixel subtends.
func (o *orbit) pan(dx, dy, pixelAngle float64) {
	r := o.rotation()
	left := r.Col(1).Vec3()
	up := r.Col(2).Vec3()
	k := o.dist * pixelAngle
	o.target = o.target.Add(left.Mul(dx * k)).Add(up.Mul(dy * k))
}

// zoom moves the eye toward the target (steps > 0) or away from it.
func (o *orbit) zoom(steps float64) {
	o.dist = math.Max(minDist, math.Min(maxDist, o.dist*math.Pow(0.85, steps)))
}
