package gpu

import "github.com/g3n/engine/gls"

// SetSolidState sets, through gs (which caches it), the state of a pass
// that draws opaque surfaces seen from both sides: no blending, no face
// culling, filled polygons, depth tested and written, nearer kept. With
// reversed, nearer is greater (reversed-Z: clear to 0, ClearTo).
func SetSolidState(gs *gls.GLS, reversed bool) {
	gs.Disable(gls.BLEND)
	gs.Disable(gls.CULL_FACE)
	gs.Enable(gls.DEPTH_TEST)
	gs.DepthMask(true)
	gs.PolygonMode(gls.FRONT_AND_BACK, gls.FILL)
	if reversed {
		gs.DepthFunc(gls.GREATER)
	} else {
		gs.DepthFunc(gls.LESS)
	}
}
