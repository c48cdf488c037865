package gpu

// All C code of the package lives in this one preamble: static symbols of a
// cgo preamble are private to the file that declares them.
//
// EGL is opened with dlopen at run time instead of being linked with -lEGL so
// that a binary built here still starts on a machine without libEGL and New
// can report a plain Go error. The EGL and GL types are declared here rather
// than taken from <EGL/egl.h> so building needs no EGL headers.
//
// Every function pointer is static and prefixed "sv_": g3n's glapi.c exports
// non-static C functions named exactly like the GL entry points (glReadPixels,
// glBindFramebuffer, ...), so our own copies must not use those names.

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int32_t sv_EGLint;
typedef unsigned int sv_EGLBoolean;
typedef unsigned int sv_EGLenum;

typedef unsigned int sv_GLenum;
typedef unsigned int sv_GLuint;
typedef int sv_GLint;
typedef int sv_GLsizei;

static void *sv_egl_lib;
static char sv_egl_err[512];

static void *(*sv_eglGetProcAddress)(const char *);
static sv_EGLint (*sv_eglGetError)(void);
static const char *(*sv_eglQueryString)(void *, sv_EGLint);
static sv_EGLBoolean (*sv_eglInitialize)(void *, sv_EGLint *, sv_EGLint *);
static sv_EGLBoolean (*sv_eglTerminate)(void *);
static sv_EGLBoolean (*sv_eglBindAPI)(sv_EGLenum);
static sv_EGLBoolean (*sv_eglChooseConfig)(void *, const sv_EGLint *, void **, sv_EGLint, sv_EGLint *);
static void *(*sv_eglCreateContext)(void *, void *, void *, const sv_EGLint *);
static sv_EGLBoolean (*sv_eglDestroyContext)(void *, void *);
static sv_EGLBoolean (*sv_eglMakeCurrent)(void *, void *, void *, void *);
static sv_EGLBoolean (*sv_eglReleaseThread)(void);

// Extension entry points; NULL when the implementation lacks them.
static void *(*sv_eglGetPlatformDisplayEXT)(sv_EGLenum, void *, const sv_EGLint *);
static sv_EGLBoolean (*sv_eglQueryDevicesEXT)(sv_EGLint, void **, sv_EGLint *);
static const char *(*sv_eglQueryDeviceStringEXT)(void *, sv_EGLint);

static void sv_set_err(const char *what, const char *detail) {
	snprintf(sv_egl_err, sizeof sv_egl_err, "%s%s", what, detail ? detail : "");
}

static void *sv_sym(const char *name) {
	void *p = dlsym(sv_egl_lib, name);
	if (!p) {
		sv_set_err("missing EGL entry point ", name);
	}
	return p;
}

// sv_egl_open loads the EGL library and its core entry points. It returns 0
// on success; otherwise sv_egl_err holds the reason (dlerror text).
static int sv_egl_open(const char *name) {
	if (sv_egl_lib) {
		return 0;
	}
	void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *e = dlerror();
		sv_set_err(e ? "" : "dlopen failed: ", e ? e : name);
		return -1;
	}
	sv_egl_lib = lib;
	if (!(*(void **)&sv_eglGetProcAddress = sv_sym("eglGetProcAddress")) ||
		!(*(void **)&sv_eglGetError = sv_sym("eglGetError")) ||
		!(*(void **)&sv_eglQueryString = sv_sym("eglQueryString")) ||
		!(*(void **)&sv_eglInitialize = sv_sym("eglInitialize")) ||
		!(*(void **)&sv_eglTerminate = sv_sym("eglTerminate")) ||
		!(*(void **)&sv_eglBindAPI = sv_sym("eglBindAPI")) ||
		!(*(void **)&sv_eglChooseConfig = sv_sym("eglChooseConfig")) ||
		!(*(void **)&sv_eglCreateContext = sv_sym("eglCreateContext")) ||
		!(*(void **)&sv_eglDestroyContext = sv_sym("eglDestroyContext")) ||
		!(*(void **)&sv_eglMakeCurrent = sv_sym("eglMakeCurrent")) ||
		!(*(void **)&sv_eglReleaseThread = sv_sym("eglReleaseThread"))) {
		// Keep the library mapped (never dlclose EGL) but report failure;
		// a later call retries the lookups.
		sv_egl_lib = NULL;
		return -1;
	}
	*(void **)&sv_eglGetPlatformDisplayEXT = sv_eglGetProcAddress("eglGetPlatformDisplayEXT");
	*(void **)&sv_eglQueryDevicesEXT = sv_eglGetProcAddress("eglQueryDevicesEXT");
	*(void **)&sv_eglQueryDeviceStringEXT = sv_eglGetProcAddress("eglQueryDeviceStringEXT");
	return 0;
}

static const char *sv_egl_error_text(void) { return sv_egl_err; }

static sv_EGLint sv_GetError(void) { return sv_eglGetError(); }

static const char *sv_QueryString(uintptr_t dpy, sv_EGLint name) {
	return sv_eglQueryString((void *)dpy, name);
}

static int sv_HasPlatformDisplay(void) { return sv_eglGetPlatformDisplayEXT != NULL; }
static int sv_HasDeviceQuery(void) {
	return sv_eglQueryDevicesEXT != NULL && sv_eglQueryDeviceStringEXT != NULL;
}

static uintptr_t sv_GetPlatformDisplay(sv_EGLenum platform, uintptr_t native) {
	return (uintptr_t)sv_eglGetPlatformDisplayEXT(platform, (void *)native, NULL);
}

// sv_QueryDevices fills out with up to max device handles and returns how
// many there are, or -1 on failure.
static int sv_QueryDevices(uintptr_t *out, int max) {
	void *devs[64];
	sv_EGLint n = 0;
	if (max > 64) {
		max = 64;
	}
	if (!sv_eglQueryDevicesEXT(max, devs, &n)) {
		return -1;
	}
	for (int i = 0; i < n; i++) {
		out[i] = (uintptr_t)devs[i];
	}
	return n;
}

static const char *sv_QueryDeviceString(uintptr_t dev, sv_EGLint name) {
	return sv_eglQueryDeviceStringEXT((void *)dev, name);
}

static sv_EGLBoolean sv_Initialize(uintptr_t dpy, sv_EGLint *major, sv_EGLint *minor) {
	return sv_eglInitialize((void *)dpy, major, minor);
}

static sv_EGLBoolean sv_Terminate(uintptr_t dpy) { return sv_eglTerminate((void *)dpy); }

static sv_EGLBoolean sv_BindAPI(sv_EGLenum api) { return sv_eglBindAPI(api); }

// sv_ChooseConfig returns the first config matching attrs in *cfg and the
// number of matches, or -1 on failure.
static int sv_ChooseConfig(uintptr_t dpy, const sv_EGLint *attrs, uintptr_t *cfg) {
	void *c = NULL;
	sv_EGLint n = 0;
	if (!sv_eglChooseConfig((void *)dpy, attrs, &c, 1, &n)) {
		return -1;
	}
	*cfg = (uintptr_t)c;
	return n;
}

static uintptr_t sv_CreateContext(uintptr_t dpy, uintptr_t cfg, const sv_EGLint *attrs) {
	return (uintptr_t)sv_eglCreateContext((void *)dpy, (void *)cfg, NULL, attrs);
}

static sv_EGLBoolean sv_DestroyContext(uintptr_t dpy, uintptr_t ctx) {
	return sv_eglDestroyContext((void *)dpy, (void *)ctx);
}

static sv_EGLBoolean sv_MakeCurrent(uintptr_t dpy, uintptr_t ctx) {
	return sv_eglMakeCurrent((void *)dpy, NULL, NULL, (void *)ctx);
}

static sv_EGLBoolean sv_ReleaseThread(void) { return sv_eglReleaseThread(); }

// GL entry points that g3n's gls does not wrap (or wraps unsuitably).
static void (*sv_glGenFramebuffers)(sv_GLsizei, sv_GLuint *);
static void (*sv_glDeleteFramebuffers)(sv_GLsizei, const sv_GLuint *);
static void (*sv_glBindFramebuffer)(sv_GLenum, sv_GLuint);
static sv_GLenum (*sv_glCheckFramebufferStatus)(sv_GLenum);
static void (*sv_glFramebufferTexture2D)(sv_GLenum, sv_GLenum, sv_GLenum, sv_GLuint, sv_GLint);
static void (*sv_glFramebufferRenderbuffer)(sv_GLenum, sv_GLenum, sv_GLenum, sv_GLuint);
static void (*sv_glGenRenderbuffers)(sv_GLsizei, sv_GLuint *);
static void (*sv_glDeleteRenderbuffers)(sv_GLsizei, const sv_GLuint *);
static void (*sv_glBindRenderbuffer)(sv_GLenum, sv_GLuint);
static void (*sv_glRenderbufferStorage)(sv_GLenum, sv_GLenum, sv_GLsizei, sv_GLsizei);
static void (*sv_glGenTextures)(sv_GLsizei, sv_GLuint *);
static void (*sv_glDeleteTextures)(sv_GLsizei, const sv_GLuint *);
static void (*sv_glBindTexture)(sv_GLenum, sv_GLuint);
static void (*sv_glTexImage2D)(sv_GLenum, sv_GLint, sv_GLint, sv_GLsizei, sv_GLsizei, sv_GLint, sv_GLenum, sv_GLenum, const void *);
static void (*sv_glTexParameteri)(sv_GLenum, sv_GLenum, sv_GLint);
static void (*sv_glBindBuffer)(sv_GLenum, sv_GLuint);
static void (*sv_glReadPixels)(sv_GLint, sv_GLint, sv_GLsizei, sv_GLsizei, sv_GLenum, sv_GLenum, void *);
static void (*sv_glReadBuffer)(sv_GLenum);
static void (*sv_glDrawBuffers)(sv_GLsizei, const sv_GLenum *);
static void (*sv_glPixelStorei)(sv_GLenum, sv_GLint);
static sv_GLenum (*sv_glGetError)(void);
static void (*sv_glGetIntegerv)(sv_GLenum, sv_GLint *);
static void (*sv_glClipControl)(sv_GLenum, sv_GLenum); // GL 4.5; may be NULL

#define SV_LOAD(name) \
	if (!(*(void **)&sv_##name = sv_eglGetProcAddress(#name))) { \
		sv_set_err("missing GL entry point ", #name); \
		return -1; \
	}

// sv_gl_load resolves the GL entry points through eglGetProcAddress. With
// glvnd these are dispatch stubs valid for every context, so loading once
// per process is enough.
static int sv_gl_load(void) {
	SV_LOAD(glGenFramebuffers)
	SV_LOAD(glDeleteFramebuffers)
	SV_LOAD(glBindFramebuffer)
	SV_LOAD(glCheckFramebufferStatus)
	SV_LOAD(glFramebufferTexture2D)
	SV_LOAD(glFramebufferRenderbuffer)
	SV_LOAD(glGenRenderbuffers)
	SV_LOAD(glDeleteRenderbuffers)
	SV_LOAD(glBindRenderbuffer)
	SV_LOAD(glRenderbufferStorage)
	SV_LOAD(glGenTextures)
	SV_LOAD(glDeleteTextures)
	SV_LOAD(glBindTexture)
	SV_LOAD(glTexImage2D)
	SV_LOAD(glTexParameteri)
	SV_LOAD(glBindBuffer)
	SV_LOAD(glReadPixels)
	SV_LOAD(glReadBuffer)
	SV_LOAD(glDrawBuffers)
	SV_LOAD(glPixelStorei)
	SV_LOAD(glGetError)
	SV_LOAD(glGetIntegerv)
	*(void **)&sv_glClipControl = sv_eglGetProcAddress("glClipControl");
	return 0;
}

static sv_GLuint sv_GenFramebuffer(void) { sv_GLuint id = 0; sv_glGenFramebuffers(1, &id); return id; }
static void sv_DeleteFramebuffer(sv_GLuint id) { sv_glDeleteFramebuffers(1, &id); }
static void sv_BindFramebuffer(sv_GLenum target, sv_GLuint id) { sv_glBindFramebuffer(target, id); }
static sv_GLenum sv_CheckFramebufferStatus(sv_GLenum target) { return sv_glCheckFramebufferStatus(target); }
static void sv_FramebufferTexture2D(sv_GLenum target, sv_GLenum att, sv_GLenum textarget, sv_GLuint tex) {
	sv_glFramebufferTexture2D(target, att, textarget, tex, 0);
}
static void sv_FramebufferRenderbuffer(sv_GLenum target, sv_GLenum att, sv_GLenum rbtarget, sv_GLuint rb) {
	sv_glFramebufferRenderbuffer(target, att, rbtarget, rb);
}
static sv_GLuint sv_GenRenderbuffer(void) { sv_GLuint id = 0; sv_glGenRenderbuffers(1, &id); return id; }
static void sv_DeleteRenderbuffer(sv_GLuint id) { sv_glDeleteRenderbuffers(1, &id); }
static void sv_BindRenderbuffer(sv_GLenum target, sv_GLuint id) { sv_glBindRenderbuffer(target, id); }
static void sv_RenderbufferStorage(sv_GLenum target, sv_GLenum ifmt, sv_GLsizei w, sv_GLsizei h) {
	sv_glRenderbufferStorage(target, ifmt, w, h);
}
static sv_GLuint sv_GenTexture(void) { sv_GLuint id = 0; sv_glGenTextures(1, &id); return id; }
static void sv_DeleteTexture(sv_GLuint id) { sv_glDeleteTextures(1, &id); }
static void sv_BindTexture(sv_GLenum target, sv_GLuint id) { sv_glBindTexture(target, id); }
static void sv_TexImage2DEmpty(sv_GLenum target, sv_GLint ifmt, sv_GLsizei w, sv_GLsizei h, sv_GLenum fmt, sv_GLenum type) {
	sv_glTexImage2D(target, 0, ifmt, w, h, 0, fmt, type, NULL);
}
static void sv_TexParameteri(sv_GLenum target, sv_GLenum pname, sv_GLint v) { sv_glTexParameteri(target, pname, v); }
static void sv_BindBuffer(sv_GLenum target, sv_GLuint id) { sv_glBindBuffer(target, id); }
static void sv_ReadPixels(sv_GLsizei w, sv_GLsizei h, sv_GLenum fmt, sv_GLenum type, void *dst) {
	sv_glReadPixels(0, 0, w, h, fmt, type, dst);
}
static void sv_ReadBuffer(sv_GLenum mode) { sv_glReadBuffer(mode); }
static void sv_DrawBuffer1(sv_GLenum buf) { sv_glDrawBuffers(1, &buf); }
static void sv_PixelStorei(sv_GLenum pname, sv_GLint v) { sv_glPixelStorei(pname, v); }
static sv_GLenum sv_GetGLError(void) { return sv_glGetError(); }
static int sv_HasClipControl(void) { return sv_glClipControl != NULL; }
static void sv_ClipControl(sv_GLenum origin, sv_GLenum depth) { sv_glClipControl(origin, depth); }
static sv_GLint sv_GetInteger(sv_GLenum pname) { sv_GLint v[4] = {0, 0, 0, 0}; sv_glGetIntegerv(pname, v); return v[0]; }
*/
import "C"

import (
	"errors"
	"sync"
	"unsafe"
)

// eglMu serializes loading of the process-wide C function pointers.
var (
	eglMu    sync.Mutex
	glLoaded bool
)

// eglLibName is the EGL library New loads (a variable so tests can
// simulate a machine without EGL).
var eglLibName = "libEGL.so.1"

// loadEGL opens the EGL library once per process.
func loadEGL() error {
	eglMu.Lock()
	defer eglMu.Unlock()
	name := C.CString(eglLibName)
	defer C.free(unsafe.Pointer(name))
	if C.sv_egl_open(name) != 0 {
		return errors.New(C.GoString(C.sv_egl_error_text()))
	}
	return nil
}

// loadGL resolves our private GL entry points; it needs a current context on
// some implementations, so it runs after eglMakeCurrent.
func loadGL() error {
	eglMu.Lock()
	defer eglMu.Unlock()
	if glLoaded {
		return nil
	}
	if C.sv_gl_load() != 0 {
		return errors.New(C.GoString(C.sv_egl_error_text()))
	}
	glLoaded = true
	return nil
}

// EGL wrappers. Handles travel as uintptr: they are C pointers (or opaque
// values) that the Go GC must never inspect.

func eglGetError() int { return int(C.sv_GetError()) }

func eglQueryString(dpy uintptr, name int) (string, bool) {
	s := C.sv_QueryString(C.uintptr_t(dpy), C.sv_EGLint(name))
	if s == nil {
		return "", false
	}
	return C.GoString(s), true
}

func eglHasPlatformDisplay() bool { return C.sv_HasPlatformDisplay() != 0 }
func eglHasDeviceQuery() bool     { return C.sv_HasDeviceQuery() != 0 }

func eglGetPlatformDisplay(platform int, native uintptr) uintptr {
	return uintptr(C.sv_GetPlatformDisplay(C.sv_EGLenum(platform), C.uintptr_t(native)))
}

func eglQueryDevices() ([]uintptr, bool) {
	var buf [64]C.uintptr_t
	n := int(C.sv_QueryDevices(&buf[0], C.int(len(buf))))
	if n < 0 {
		return nil, false
	}
	out := make([]uintptr, n)
	for i := range out {
		out[i] = uintptr(buf[i])
	}
	return out, true
}

func eglQueryDeviceString(dev uintptr, name int) (string, bool) {
	s := C.sv_QueryDeviceString(C.uintptr_t(dev), C.sv_EGLint(name))
	if s == nil {
		return "", false
	}
	return C.GoString(s), true
}

func eglInitialize(dpy uintptr) (major, minor int, ok bool) {
	var ma, mi C.sv_EGLint
	ok = C.sv_Initialize(C.uintptr_t(dpy), &ma, &mi) != 0
	return int(ma), int(mi), ok
}

func eglTerminate(dpy uintptr) bool { return C.sv_Terminate(C.uintptr_t(dpy)) != 0 }

func eglBindAPI(api int) bool { return C.sv_BindAPI(C.sv_EGLenum(api)) != 0 }

// eglChooseConfig returns the first matching config and the match count
// (-1 on failure). attrs must end with eglNone.
func eglChooseConfig(dpy uintptr, attrs []int32) (uintptr, int) {
	var cfg C.uintptr_t
	n := int(C.sv_ChooseConfig(C.uintptr_t(dpy), (*C.sv_EGLint)(unsafe.Pointer(&attrs[0])), &cfg))
	return uintptr(cfg), n
}

func eglCreateContext(dpy, cfg uintptr, attrs []int32) uintptr {
	return uintptr(C.sv_CreateContext(C.uintptr_t(dpy), C.uintptr_t(cfg), (*C.sv_EGLint)(unsafe.Pointer(&attrs[0]))))
}

func eglDestroyContext(dpy, ctx uintptr) bool {
	return C.sv_DestroyContext(C.uintptr_t(dpy), C.uintptr_t(ctx)) != 0
}

// eglMakeCurrent binds ctx without surfaces (EGL_KHR_surfaceless_context);
// ctx 0 releases the current context.
func eglMakeCurrent(dpy, ctx uintptr) bool {
	return C.sv_MakeCurrent(C.uintptr_t(dpy), C.uintptr_t(ctx)) != 0
}

func eglReleaseThread() bool { return C.sv_ReleaseThread() != 0 }

// GL wrappers; only valid after loadGL and with a current context.

func glGenFramebuffer() uint32       { return uint32(C.sv_GenFramebuffer()) }
func glDeleteFramebuffer(id uint32)  { C.sv_DeleteFramebuffer(C.sv_GLuint(id)) }
func glBindFramebuffer(t, id uint32) { C.sv_BindFramebuffer(C.sv_GLenum(t), C.sv_GLuint(id)) }
func glCheckFramebufferStatus(t uint32) uint32 {
	return uint32(C.sv_CheckFramebufferStatus(C.sv_GLenum(t)))
}
func glFramebufferTexture2D(target, att, textarget, tex uint32) {
	C.sv_FramebufferTexture2D(C.sv_GLenum(target), C.sv_GLenum(att), C.sv_GLenum(textarget), C.sv_GLuint(tex))
}
func glFramebufferRenderbuffer(target, att, rbtarget, rb uint32) {
	C.sv_FramebufferRenderbuffer(C.sv_GLenum(target), C.sv_GLenum(att), C.sv_GLenum(rbtarget), C.sv_GLuint(rb))
}
func glGenRenderbuffer() uint32       { return uint32(C.sv_GenRenderbuffer()) }
func glDeleteRenderbuffer(id uint32)  { C.sv_DeleteRenderbuffer(C.sv_GLuint(id)) }
func glBindRenderbuffer(t, id uint32) { C.sv_BindRenderbuffer(C.sv_GLenum(t), C.sv_GLuint(id)) }
func glRenderbufferStorage(t, ifmt uint32, w, h int) {
	C.sv_RenderbufferStorage(C.sv_GLenum(t), C.sv_GLenum(ifmt), C.sv_GLsizei(w), C.sv_GLsizei(h))
}
func glGenTexture() uint32       { return uint32(C.sv_GenTexture()) }
func glDeleteTexture(id uint32)  { C.sv_DeleteTexture(C.sv_GLuint(id)) }
func glBindTexture(t, id uint32) { C.sv_BindTexture(C.sv_GLenum(t), C.sv_GLuint(id)) }
func glTexParameteri(t, p uint32, v int32) {
	C.sv_TexParameteri(C.sv_GLenum(t), C.sv_GLenum(p), C.sv_GLint(v))
}

// glTexImage2DEmpty allocates level 0 of the bound texture without data.
func glTexImage2DEmpty(t, ifmt uint32, w, h int, fmt, typ uint32) {
	C.sv_TexImage2DEmpty(C.sv_GLenum(t), C.sv_GLint(ifmt), C.sv_GLsizei(w), C.sv_GLsizei(h), C.sv_GLenum(fmt), C.sv_GLenum(typ))
}
func glBindBuffer(t, id uint32) { C.sv_BindBuffer(C.sv_GLenum(t), C.sv_GLuint(id)) }

// glReadPixels reads the whole w x h area starting at (0,0) into dst, which
// must hold at least the bytes the format needs. dst is Go memory without
// pointers, which cgo allows passing for the duration of the call; GL writes
// synchronously when no pixel-pack buffer is bound.
func glReadPixels(w, h int, fmt, typ uint32, dst []byte) {
	C.sv_ReadPixels(C.sv_GLsizei(w), C.sv_GLsizei(h), C.sv_GLenum(fmt), C.sv_GLenum(typ),
		unsafe.Pointer(&dst[0]))
}
func glReadBuffer(mode uint32)        { C.sv_ReadBuffer(C.sv_GLenum(mode)) }
func glDrawBuffer1(buf uint32)        { C.sv_DrawBuffer1(C.sv_GLenum(buf)) }
func glPixelStorei(p uint32, v int32) { C.sv_PixelStorei(C.sv_GLenum(p), C.sv_GLint(v)) }
func glGetError() uint32              { return uint32(C.sv_GetGLError()) }
func glGetInteger(pname uint32) int   { return int(C.sv_GetInteger(C.sv_GLenum(pname))) }
func glHasClipControl() bool          { return C.sv_HasClipControl() != 0 }
func glClipControl(origin, depth uint32) {
	C.sv_ClipControl(C.sv_GLenum(origin), C.sv_GLenum(depth))
}
