package elements

import (
	"github.com/go-gl/mathgl/mgl64"

	"github.com/simvis/simvis/scene"
)

// DrawnPoints exposes a pointcloud element's drawn point centers to tests.
func DrawnPoints(e scene.Element) []mgl64.Vec3 { return e.(*pointCloud).centers() }
