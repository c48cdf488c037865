package models

import (
	"fmt"
	"runtime"
	"strings"
)

// recovered is the error for a panic r recovered while decoding name. It
// must be called by the deferred function that recovered it, while the
// panicking frames are still on the stack. A panic raised in qmuntal/gltf
// is a malformed file it trusted; one raised elsewhere is a bug of this
// package, which fuzzing must report rather than take for a file error.
func recovered(name string, r any) error {
	if panicSite() == "github.com/qmuntal/gltf" {
		return fmt.Errorf("models: %s: malformed glTF (%v)", name, r)
	}
	return fmt.Errorf("models: %s: %s (%v)", name, internalError, r)
}

// internalError marks errors from panics of this package's own code.
const internalError = "internal error of the loader, please report"

// panicSite returns the package path of the function that raised the
// panic being recovered: the first frame below runtime.gopanic that is
// not the runtime's (a nil dereference or a bounds check passes through
// runtime.sigpanic or runtime.panicIndex). It returns "" if none is found.
func panicSite() string {
	pc := make([]uintptr, 64)
	frames := runtime.CallersFrames(pc[:runtime.Callers(1, pc)])
	panicking := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			panicking = true
		case panicking && !strings.HasPrefix(f.Function, "runtime."):
			return funcPackage(f.Function)
		}
		if !more {
			return ""
		}
	}
}

// funcPackage returns the package path of a function name as the runtime
// gives it ("github.com/qmuntal/gltf.(*Decoder).Decode").
func funcPackage(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	if dot := strings.IndexByte(fn[slash+1:], '.'); dot >= 0 {
		return fn[:slash+1+dot]
	}
	return fn
}
