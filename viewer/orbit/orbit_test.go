package viewer

import (
	"math"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// An orbit made from a pose without roll reproduces the pose exactly (the
// window's first picture is view -o's from --from); its target is where
// the line of sight meets the ground.
func TestOrbitFromPose(t *testing.T) {
	p := scene.Pose{X: -4.7, Y: -3.7, Z: 2.4, Pitch: 25, Yaw: 38}
	o := orbitFrom(p)
	got, want := o.pose(), p.Matrix()
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("orbit pose\n%v\nwant\n%v", got, want)
		}
	}
	if math.Abs(o.target[2]) > 1e-12 {
		t.Errorf("target %v is not on the ground", o.target)
	}
	if d := 2.4 / math.Sin(mgl64.DegToRad(25)); math.Abs(o.dist-d) > 1e-9 {
		t.Errorf("distance %v, want %v", o.dist, d)
	}
}

// Turning keeps the target and the distance; panning moves the target
// across the view, not along it; zooming changes only the distance; pitch
// stops short of the poles.
func TestOrbitMoves(t *testing.T) {
	o := orbitFrom(scene.Pose{Z: 3, Pitch: 30})
	target, dist := o.target, o.dist
	o.turn(100, -40)
	if o.target != target || o.dist != dist {
		t.Errorf("turn moved the target or distance")
	}
	if eye := o.pose().Col(3).Vec3(); math.Abs(eye.Sub(target).Len()-dist) > 1e-9 {
		t.Errorf("eye %v is not %v from the target", eye, dist)
	}
	f := o.forward()
	o.pan(10, 5, 0.001)
	if d := o.target.Sub(target); d.Len() < 1e-6 || math.Abs(d.Dot(f)) > 1e-9 {
		t.Errorf("pan moved the target by %v (forward %v)", d, f)
	}
	o.zoom(2)
	if math.Abs(o.dist-dist*0.85*0.85) > 1e-9 {
		t.Errorf("zoom: distance %v, want %v", o.dist, dist*0.85*0.85)
	}
	o.turn(0, 1e6)
	if o.pitch > maxPitch+1e-12 {
		t.Errorf("pitch %v beyond %v", o.pitch, maxPitch)
	}
}

// A point straight ahead projects to the center; one to the left, left of
// it.
func TestProject(t *testing.T) {
	p := scene.Pose{X: 1, Yaw: 90}
	v := viewOf(p)
	x, y, ok := project(v, mgl64.Vec3{1, 5, 0})
	if !ok || math.Abs(x-320) > 1e-9 || math.Abs(y-240) > 1e-9 {
		t.Errorf("ahead: %v %v %v", x, y, ok)
	}
	x, _, ok = project(v, mgl64.Vec3{0, 5, 0}) // to the left of a view along +y
	if !ok || x >= 320 {
		t.Errorf("left: %v %v", x, ok)
	}
	if _, _, ok := project(v, mgl64.Vec3{1, -5, 0}); ok {
		t.Error("a point behind the eye projected")
	}
}

func viewOf(p scene.Pose) sensors.View {
	return sensors.View{Pose: p.Matrix(), Width: 640, Height: 480, HFOV: 90, Near: 0.05, Far: 100}
}
