package gpu

import "github.com/g3n/engine/gls"

const (
	glLowerLeft        = 0x8CA1
	glNegativeOneToOne = 0x935E
	glZeroToOne        = 0x935F
	glMajorVersion     = 0x821B
	glMinorVersion     = 0x821C
)

// HasZeroToOneDepth reports whether the context can map clip-space depth to
// [0, 1] (glClipControl, GL 4.5), which reversed-Z float depth needs to keep
// its precision.
func HasZeroToOneDepth(gs *gls.GLS) bool {
	major, minor := glGetInteger(glMajorVersion), glGetInteger(glMinorVersion)
	return glHasClipControl() && (major > 4 || major == 4 && minor >= 5)
}

// SetZeroToOneDepth switches clip-space depth to [0, 1] (on) or back to
// GL's default [-1, 1]; g3n's own projections assume the default, so a
// pass that turns it on must turn it off again. Call it only where
// HasZeroToOneDepth is true.
func SetZeroToOneDepth(gs *gls.GLS, on bool) {
	if on {
		glClipControl(glLowerLeft, glZeroToOne)
	} else {
		glClipControl(glLowerLeft, glNegativeOneToOne)
	}
}
