package gpu

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
)

// EGL constants (values from the Khronos registry; declared here so the
// build needs no EGL headers).
const (
	eglSuccess                     = 0x3000
	eglNone                        = 0x3038
	eglSurfaceType                 = 0x3033
	eglRenderableType              = 0x3040
	eglOpenGLBit                   = 0x0008
	eglOpenGLAPI                   = 0x30A2
	eglExtensions                  = 0x3055
	eglContextMajorVersion         = 0x3098
	eglContextMinorVersion         = 0x30FB
	eglContextOpenGLProfileMask    = 0x30FD
	eglContextOpenGLCoreProfileBit = 0x0001
	eglPlatformDeviceEXT           = 0x313F
	eglPlatformSurfacelessMESA     = 0x31DD
	eglDRMDeviceFileEXT            = 0x3233
	eglDRMRenderNodeFileEXT        = 0x3377
)

var eglErrorNames = map[int]string{
	0x3000: "EGL_SUCCESS",
	0x3001: "EGL_NOT_INITIALIZED",
	0x3002: "EGL_BAD_ACCESS",
	0x3003: "EGL_BAD_ALLOC",
	0x3004: "EGL_BAD_ATTRIBUTE",
	0x3005: "EGL_BAD_CONFIG",
	0x3006: "EGL_BAD_CONTEXT",
	0x3007: "EGL_BAD_CURRENT_SURFACE",
	0x3008: "EGL_BAD_DISPLAY",
	0x3009: "EGL_BAD_MATCH",
	0x300A: "EGL_BAD_NATIVE_PIXMAP",
	0x300B: "EGL_BAD_NATIVE_WINDOW",
	0x300C: "EGL_BAD_PARAMETER",
	0x300D: "EGL_BAD_SURFACE",
	0x300E: "EGL_CONTEXT_LOST",
	0x322B: "EGL_BAD_DEVICE_EXT",
}

// eglErr reports a failed EGL call with the thread's EGL error code.
func eglErr(call string) error {
	code := eglGetError()
	name, ok := eglErrorNames[code]
	if !ok {
		name = fmt.Sprintf("0x%04X", code)
	}
	return fmt.Errorf("%s failed: %s", call, name)
}

// Platform names reported in Info.Platform and accepted by PlatformEnv.
const (
	PlatformDevice      = "device"
	PlatformSurfaceless = "surfaceless"
)

// PlatformEnv names the environment variable that forces the EGL platform:
// "device" (EGL_EXT_platform_device, software devices allowed as a last
// resort) or "surfaceless" (EGL_MESA_platform_surfaceless). Empty or "auto"
// tries hardware devices first and then surfaceless Mesa.
const PlatformEnv = "SIMVIS_EGL_PLATFORM"

func hasExt(list, name string) bool {
	for _, e := range strings.Fields(list) {
		if e == name {
			return true
		}
	}
	return false
}

// Displays are reference counted per process: EGL hands out the same
// EGLDisplay for the same platform and native handle, and eglTerminate on it
// would pull the display out from under every other Context using it.
var (
	dispMu   sync.Mutex
	dispRefs = map[uintptr]int{}
)

func acquireDisplay(dpy uintptr) error {
	dispMu.Lock()
	defer dispMu.Unlock()
	if _, _, ok := eglInitialize(dpy); !ok {
		return eglErr("eglInitialize")
	}
	dispRefs[dpy]++
	return nil
}

func releaseDisplay(dpy uintptr) error {
	dispMu.Lock()
	defer dispMu.Unlock()
	dispRefs[dpy]--
	if dispRefs[dpy] > 0 {
		return nil
	}
	delete(dispRefs, dpy)
	if !eglTerminate(dpy) {
		return eglErr("eglTerminate")
	}
	return nil
}

// eglTarget is an opened display with a context current on this thread.
type eglTarget struct {
	dpy, ctx uintptr
	platform string
	device   string // DRM node of the device platform, if known
}

// createContext makes an OpenGL 3.3 core context current on dpy without
// any surface. On failure nothing is left current or allocated.
func createContext(dpy uintptr) (uintptr, error) {
	if !eglBindAPI(eglOpenGLAPI) {
		return 0, eglErr("eglBindAPI(EGL_OPENGL_API)")
	}
	// SURFACE_TYPE 0 means "no surface capability required": we only render
	// into framebuffer objects, and surfaceless configs may advertise none.
	cfgAttrs := []int32{eglSurfaceType, 0, eglRenderableType, eglOpenGLBit, eglNone}
	cfg, n := eglChooseConfig(dpy, cfgAttrs)
	if n <= 0 {
		exts, _ := eglQueryString(dpy, eglExtensions)
		if !hasExt(exts, "EGL_KHR_no_config_context") {
			if n < 0 {
				return 0, eglErr("eglChooseConfig")
			}
			return 0, errors.New("no EGL config supports OpenGL")
		}
		cfg = 0 // EGL_NO_CONFIG_KHR
	}
	// Ask for 4.5 first: drivers return exactly the version asked for
	// (NVIDIA gives 3.3 for 3.3), and range sensors use 4.5's glClipControl
	// for reversed-Z depth. g3n needs 3.3, the fallback.
	var ctx uintptr
	for _, version := range [][2]int32{{4, 5}, {3, 3}} {
		ctxAttrs := []int32{
			eglContextMajorVersion, version[0],
			eglContextMinorVersion, version[1],
			eglContextOpenGLProfileMask, eglContextOpenGLCoreProfileBit,
			eglNone,
		}
		if ctx = eglCreateContext(dpy, cfg, ctxAttrs); ctx != 0 {
			break
		}
	}
	if ctx == 0 {
		return 0, eglErr("eglCreateContext(OpenGL 3.3 core)")
	}
	if !eglMakeCurrent(dpy, ctx) {
		err := eglErr("eglMakeCurrent without surface (EGL_KHR_surfaceless_context)")
		eglDestroyContext(dpy, ctx)
		return 0, err
	}
	return ctx, nil
}

// tryDisplay initializes dpy and creates a current context on it.
func tryDisplay(dpy uintptr) (uintptr, error) {
	if dpy == 0 {
		return 0, eglErr("eglGetPlatformDisplayEXT")
	}
	if err := acquireDisplay(dpy); err != nil {
		return 0, err
	}
	ctx, err := createContext(dpy)
	if err != nil {
		releaseDisplay(dpy)
		return 0, err
	}
	return ctx, nil
}

// openDevice tries the EGL devices in order; software devices (Mesa's
// swrast) are skipped unless allowSoftware, and then only tried after all
// hardware devices.
func openDevice(allowSoftware bool) (*eglTarget, error) {
	if !eglHasDeviceQuery() {
		return nil, errors.New("eglQueryDevicesEXT not available")
	}
	devs, ok := eglQueryDevices()
	if !ok {
		return nil, eglErr("eglQueryDevicesEXT")
	}
	var hw, sw []uintptr
	for _, d := range devs {
		exts, _ := eglQueryDeviceString(d, eglExtensions)
		if hasExt(exts, "EGL_MESA_device_software") {
			sw = append(sw, d)
		} else {
			hw = append(hw, d)
		}
	}
	order := hw
	if allowSoftware {
		order = append(order, sw...)
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("no hardware EGL device (%d software device(s) skipped)", len(sw))
	}
	var errs []string
	for i, d := range order {
		name := deviceName(d)
		dpy := eglGetPlatformDisplay(eglPlatformDeviceEXT, d)
		ctx, err := tryDisplay(dpy)
		if err != nil {
			errs = append(errs, fmt.Sprintf("device %d (%s): %v", i, name, err))
			continue
		}
		return &eglTarget{dpy: dpy, ctx: ctx, platform: PlatformDevice, device: name}, nil
	}
	return nil, errors.New(strings.Join(errs, "; "))
}

// deviceName returns the DRM node of an EGL device, or "" when unknown.
func deviceName(d uintptr) string {
	exts, _ := eglQueryDeviceString(d, eglExtensions)
	if hasExt(exts, "EGL_EXT_device_drm_render_node") {
		if s, ok := eglQueryDeviceString(d, eglDRMRenderNodeFileEXT); ok && s != "" {
			return s
		}
	}
	if hasExt(exts, "EGL_EXT_device_drm") {
		if s, ok := eglQueryDeviceString(d, eglDRMDeviceFileEXT); ok {
			return s
		}
	}
	if hasExt(exts, "EGL_MESA_device_software") {
		return "software"
	}
	return ""
}

func openSurfaceless() (*eglTarget, error) {
	dpy := eglGetPlatformDisplay(eglPlatformSurfacelessMESA, 0)
	ctx, err := tryDisplay(dpy)
	if err != nil {
		return nil, err
	}
	return &eglTarget{dpy: dpy, ctx: ctx, platform: PlatformSurfaceless}, nil
}

// openEGL picks the platform (see PlatformEnv), opens a display and makes a
// fresh OpenGL 3.3 core context current on the calling thread.
func openEGL() (*eglTarget, error) {
	mode := strings.ToLower(strings.TrimSpace(os.Getenv(PlatformEnv)))
	switch mode {
	case "", "auto", PlatformDevice, PlatformSurfaceless:
	default:
		return nil, fmt.Errorf("gpu: %s=%q: want %q, %q or empty", PlatformEnv, mode, PlatformDevice, PlatformSurfaceless)
	}
	client, ok := eglQueryString(0, eglExtensions)
	if !ok {
		return nil, errors.New("gpu: EGL client extensions unavailable (need EGL 1.5 or EGL_EXT_client_extensions)")
	}
	if !eglHasPlatformDisplay() || !hasExt(client, "EGL_EXT_platform_base") {
		return nil, errors.New("gpu: EGL lacks EGL_EXT_platform_base (eglGetPlatformDisplayEXT)")
	}
	var errs []string
	if mode != PlatformSurfaceless {
		if hasExt(client, "EGL_EXT_platform_device") {
			t, err := openDevice(mode == PlatformDevice)
			if err == nil {
				return t, nil
			}
			errs = append(errs, "device platform: "+err.Error())
		} else {
			errs = append(errs, "device platform: EGL_EXT_platform_device not supported")
		}
	}
	if mode != PlatformDevice {
		if hasExt(client, "EGL_MESA_platform_surfaceless") {
			t, err := openSurfaceless()
			if err == nil {
				return t, nil
			}
			errs = append(errs, "surfaceless platform: "+err.Error())
		} else {
			errs = append(errs, "surfaceless platform: EGL_MESA_platform_surfaceless not supported")
		}
	}
	return nil, errors.New("gpu: no usable EGL display: " + strings.Join(errs, "; "))
}

// closeEGL releases the context of t and its display reference.
func closeEGL(t *eglTarget) error {
	var errs []error
	if !eglMakeCurrent(t.dpy, 0) {
		errs = append(errs, eglErr("eglMakeCurrent(EGL_NO_CONTEXT)"))
	}
	if !eglDestroyContext(t.dpy, t.ctx) {
		errs = append(errs, eglErr("eglDestroyContext"))
	}
	if err := releaseDisplay(t.dpy); err != nil {
		errs = append(errs, err)
	}
	eglReleaseThread()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("gpu: close: %w", err)
	}
	return nil
}
