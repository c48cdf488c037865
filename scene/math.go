package scene

import (
	"github.com/g3n/engine/math32"
	"github.com/go-gl/mathgl/mgl64"
)

// toMath32 converts a float64 matrix to g3n's float32 matrix; both are
// column-major.
func toMath32(m mgl64.Mat4) *math32.Matrix4 {
	var r math32.Matrix4
	for i := range m {
		r[i] = float32(m[i])
	}
	return &r
}
