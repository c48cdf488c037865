package gpu

import (
	"fmt"
	"strings"

	"github.com/g3n/engine/gls"
)

var glErrorNames = map[uint32]string{
	gls.INVALID_ENUM:                  "GL_INVALID_ENUM",
	gls.INVALID_VALUE:                 "GL_INVALID_VALUE",
	gls.INVALID_OPERATION:             "GL_INVALID_OPERATION",
	gls.STACK_OVERFLOW:                "GL_STACK_OVERFLOW",
	gls.STACK_UNDERFLOW:               "GL_STACK_UNDERFLOW",
	gls.OUT_OF_MEMORY:                 "GL_OUT_OF_MEMORY",
	gls.INVALID_FRAMEBUFFER_OPERATION: "GL_INVALID_FRAMEBUFFER_OPERATION",
	0x0507:                            "GL_CONTEXT_LOST",
}

func glErrorName(code uint32) string {
	if s, ok := glErrorNames[code]; ok {
		return s
	}
	return fmt.Sprintf("GL error 0x%04X", code)
}

// maxGLErrors bounds the glGetError loop: a lost context may keep
// reporting errors forever.
const maxGLErrors = 32

// drainGLErrors discards pending GL errors so that a following check only
// sees errors of the calls it guards.
func drainGLErrors() {
	for i := 0; i < maxGLErrors && glGetError() != gls.NO_ERROR; i++ {
	}
}

// glErrors collects the pending GL errors into one error, or nil.
func glErrors() error {
	var names []string
	for i := 0; i < maxGLErrors; i++ {
		code := glGetError()
		if code == gls.NO_ERROR {
			break
		}
		names = append(names, glErrorName(code))
	}
	if len(names) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(names, ", "))
}

// CheckGLError returns the pending OpenGL errors (and clears them), or nil.
// New turns off g3n's own checking, which would exit the process on the
// first error, so callers that care must check themselves. Must be called
// inside Do.
func CheckGLError(gs *gls.GLS) error {
	if err := glErrors(); err != nil {
		return fmt.Errorf("gpu: %w", err)
	}
	return nil
}
