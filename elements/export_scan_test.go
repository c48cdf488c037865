package elements

import (
	"github.com/go-gl/mathgl/mgl64"

	"github.com/simvis/simvis/scene"
)

// ScanPointsWorld exposes a scan element's drawn point centers, in world
// coordinates, to tests.
func ScanPointsWorld(e scene.Element) []mgl64.Vec3 {
	sc := e.(*scan)
	w := sc.sep.World()
	out := sc.centers()
	for i, p := range out {
		out[i] = w.Mul4x1(p.Vec4(1)).Vec3()
	}
	return out
}
