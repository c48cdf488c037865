package orbit

import (
	"math"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

// An orbit made from a pose without roll reproduces the pose exactly (the
// window's first picture is view -o's from --from); its Target is where
// the line of sight meets the ground.
func TestOrbitFromPose(t *testing.T) {
	p := scene.Pose{X: -4.7, Y: -3.7, Z: 2.4, Pitch: 25, Yaw: 38}
	o := From(p)
	got, want := o.Pose(), p.Matrix()
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("orbit pose\n%v\nwant\n%v", got, want)
		}
	}
	if math.Abs(o.Target[2]) > 1e-12 {
		t.Errorf("Target %v is not on the ground", o.Target)
	}
	if d := 2.4 / math.Sin(mgl64.DegToRad(25)); math.Abs(o.Dist-d) > 1e-9 {
		t.Errorf("distance %v, want %v", o.Dist, d)
	}
}

// Turning keeps the Target and the distance; panning moves the Target
// across the view, not along it; zooming changes only the distance; pitch
// stops short of the poles.
func TestOrbitMoves(t *testing.T) {
	o := From(scene.Pose{Z: 3, Pitch: 30})
	Target, Dist := o.Target, o.Dist
	o.Turn(100, -40)
	if o.Target != Target || o.Dist != Dist {
		t.Errorf("turn moved the Target or distance")
	}
	if eye := o.Pose().Col(3).Vec3(); math.Abs(eye.Sub(Target).Len()-Dist) > 1e-9 {
		t.Errorf("eye %v is not %v from the Target", eye, Dist)
	}
	f := o.Forward()
	o.Pan(10, 5, 0.001)
	if d := o.Target.Sub(Target); d.Len() < 1e-6 || math.Abs(d.Dot(f)) > 1e-9 {
		t.Errorf("pan moved the Target by %v (forward %v)", d, f)
	}
	o.Zoom(2)
	if math.Abs(o.Dist-Dist*0.85*0.85) > 1e-9 {
		t.Errorf("zoom: distance %v, want %v", o.Dist, Dist*0.85*0.85)
	}
	o.Turn(0, 1e6)
	if o.Pitch > maxPitch+1e-12 {
		t.Errorf("pitch %v beyond %v", o.Pitch, maxPitch)
	}
}
