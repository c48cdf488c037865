// Package viewer is simvis's live window: a scene drawn for people in a
// GLFW window (g3n's window package, X11), turned with the mouse, with keys
// to look through each sensor, follow a frame, toggle overlays, grid and
// axes, and save screenshots, and a panel (g3n's gui) that lists elements
// with their parameters and sensors with their live output.
//
// It is the one package besides internal/gpu that touches a windowing
// system or a GL context. The window's GL context is also the sensors'
// (gpu.NewExternal, sensors.NewRendererOn): GLFW makes a GLX context and
// GLX cannot share objects with the EGL context sensors use headless, so
// in a process with a window every sensor renders offscreen in the window's
// context, on its thread. Callers drive it a frame at a time (Viewer.Frame),
// from the goroutine that owns the scene, between their own work (a host's
// cycle, a mirror's sync); nothing of the scene is touched elsewhere.
//
// A frame is drawn offscreen, the meshes that stand still from a cache and
// only the rest over them (layers.go; which meshes is viewer/layering's
// decision, shared with the page in a browser), and with a software GL put into the
// window with XShmPutImage rather than swapped (x11.go): on llvmpipe both
// decide whether a mirrored robot can be watched at 60 frames a second.
//
// g3n's app package is not used: it links OpenAL for sound.
package viewer
