package helpers

import (
	"math"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

// A point straight ahead projects to the center; one to the left, left of
// it.
func TestProject(t *testing.T) {
	p := scene.Pose{X: 1, Yaw: 90}
	v := viewOf(p)
	x, y, ok := Project(v, mgl64.Vec3{1, 5, 0})
	if !ok || math.Abs(x-320) > 1e-9 || math.Abs(y-240) > 1e-9 {
		t.Errorf("ahead: %v %v %v", x, y, ok)
	}
	x, _, ok = Project(v, mgl64.Vec3{0, 5, 0}) // to the left of a view along +y
	if !ok || x >= 320 {
		t.Errorf("left: %v %v", x, ok)
	}
	if _, _, ok := Project(v, mgl64.Vec3{1, -5, 0}); ok {
		t.Error("a point behind the eye projected")
	}
}

func viewOf(p scene.Pose) View {
	return View{Pose: p.Matrix(), Width: 640, Height: 480, HFOV: 90, Near: 0.05}
}
