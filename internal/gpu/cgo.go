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

// Compute shaders and storage buffers (GL 4.3): loaded apart, since a
// context below 4.3 need not have them (sv_compute_load).
typedef intptr_t sv_GLsizeiptr;
typedef intptr_t sv_GLintptr;
static sv_GLuint (*sv_glCreateShader)(sv_GLenum);
static void (*sv_glShaderSource)(sv_GLuint, sv_GLsizei, const char *const *, const sv_GLint *);
static void (*sv_glCompileShader)(sv_GLuint);
static void (*sv_glGetShaderiv)(sv_GLuint, sv_GLenum, sv_GLint *);
static void (*sv_glGetShaderInfoLog)(sv_GLuint, sv_GLsizei, sv_GLsizei *, char *);
static void (*sv_glDeleteShader)(sv_GLuint);
static sv_GLuint (*sv_glCreateProgram)(void);
static void (*sv_glAttachShader)(sv_GLuint, sv_GLuint);
static void (*sv_glLinkProgram)(sv_GLuint);
static void (*sv_glGetProgramiv)(sv_GLuint, sv_GLenum, sv_GLint *);
static void (*sv_glGetProgramInfoLog)(sv_GLuint, sv_GLsizei, sv_GLsizei *, char *);
static void (*sv_glDeleteProgram)(sv_GLuint);
static void (*sv_glUseProgram)(sv_GLuint);
static sv_GLint (*sv_glGetUniformLocation)(sv_GLuint, const char *);
static void (*sv_glUniform1i)(sv_GLint, sv_GLint);
static void (*sv_glGenBuffers)(sv_GLsizei, sv_GLuint *);
static void (*sv_glDeleteBuffers)(sv_GLsizei, const sv_GLuint *);
static void (*sv_glBufferData)(sv_GLenum, sv_GLsizeiptr, const void *, sv_GLenum);
static void (*sv_glBufferSubData)(sv_GLenum, sv_GLintptr, sv_GLsizeiptr, const void *);
static void (*sv_glGetBufferSubData)(sv_GLenum, sv_GLintptr, sv_GLsizeiptr, void *);
static void (*sv_glBindBufferBase)(sv_GLenum, sv_GLuint, sv_GLuint);
static void (*sv_glDispatchCompute)(sv_GLuint, sv_GLuint, sv_GLuint);
static void (*sv_glMemoryBarrier)(unsigned int);
static void (*sv_glActiveTexture)(sv_GLenum);
static void (*sv_glTexBuffer)(sv_GLenum, sv_GLenum, sv_GLuint);
static void *(*sv_glFenceSync)(sv_GLenum, unsigned int);
static sv_GLenum (*sv_glClientWaitSync)(void *, unsigned int, uint64_t);
static void (*sv_glDeleteSync)(void *);
static void *(*sv_glMapBufferRange)(sv_GLenum, sv_GLintptr, sv_GLsizeiptr, unsigned int);
static unsigned char (*sv_glUnmapBuffer)(sv_GLenum);

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

// sv_compute_load resolves the compute entry points; 0 on success.
static int sv_compute_load(void) {
	SV_LOAD(glCreateShader)
	SV_LOAD(glShaderSource)
	SV_LOAD(glCompileShader)
	SV_LOAD(glGetShaderiv)
	SV_LOAD(glGetShaderInfoLog)
	SV_LOAD(glDeleteShader)
	SV_LOAD(glCreateProgram)
	SV_LOAD(glAttachShader)
	SV_LOAD(glLinkProgram)
	SV_LOAD(glGetProgramiv)
	SV_LOAD(glGetProgramInfoLog)
	SV_LOAD(glDeleteProgram)
	SV_LOAD(glUseProgram)
	SV_LOAD(glGetUniformLocation)
	SV_LOAD(glUniform1i)
	SV_LOAD(glGenBuffers)
	SV_LOAD(glDeleteBuffers)
	SV_LOAD(glBufferData)
	SV_LOAD(glBufferSubData)
	SV_LOAD(glGetBufferSubData)
	SV_LOAD(glBindBufferBase)
	SV_LOAD(glDispatchCompute)
	SV_LOAD(glMemoryBarrier)
	SV_LOAD(glActiveTexture)
	SV_LOAD(glTexBuffer)
	return 0;
}

// sv_readback_load resolves what reads into pixel-pack buffers need
// (OpenGL 3.2: buffers, fences, mapping); 0 on success.
static int sv_readback_load(void) {
	SV_LOAD(glGenBuffers)
	SV_LOAD(glDeleteBuffers)
	SV_LOAD(glBufferData)
	SV_LOAD(glFenceSync)
	SV_LOAD(glClientWaitSync)
	SV_LOAD(glDeleteSync)
	SV_LOAD(glMapBufferRange)
	SV_LOAD(glUnmapBuffer)
	return 0;
}

// sv_StartRead reads the bound read framebuffer's w x h pixels into
// pixel-pack buffer pbo (first given size bytes of storage when alloc is
// set), which returns at once, and fences it. The pack-buffer binding is
// put back as it was.
static uintptr_t sv_StartRead(sv_GLuint pbo, sv_GLsizeiptr size, int alloc, sv_GLsizei w, sv_GLsizei h, sv_GLenum fmt, sv_GLenum type) {
	sv_GLint prev = 0;
	sv_glGetIntegerv(0x88ED, &prev); // GL_PIXEL_PACK_BUFFER_BINDING
	sv_glBindBuffer(0x88EB, pbo);    // GL_PIXEL_PACK_BUFFER
	if (alloc) {
		sv_glBufferData(0x88EB, size, NULL, 0x88E9); // GL_STREAM_READ
	}
	sv_glReadPixels(0, 0, w, h, fmt, type, (void *)0);
	sv_glBindBuffer(0x88EB, (sv_GLuint)prev);
	return (uintptr_t)sv_glFenceSync(0x9117, 0); // GL_SYNC_GPU_COMMANDS_COMPLETE
}

// sv_CopyOpaque copies n 4-byte RGBA pixels with alpha set to 255 (a loop
// the compiler vectorizes: one pass instead of a copy and a byte loop).
static void sv_CopyOpaque(uint32_t *dst, const uint32_t *src, int n) {
	for (int i = 0; i < n; i++) {
		dst[i] = src[i] | 0xFF000000u; // alpha is the high byte on little-endian machines
	}
}

// sv_FinishRead waits for fence, deletes it, and copies pbo's rows of
// rowBytes into dst in reverse order (GL's bottom row first becomes the
// top row first), with alpha 255 where opaque is set (RGBA8 pixels). 0 on
// success, 1 if the wait failed, 2 if mapping did.
static int sv_FinishRead(uintptr_t fence, sv_GLuint pbo, char *dst, int rowBytes, int rows, int opaque) {
	sv_GLenum st = sv_glClientWaitSync((void *)fence, 0x1, UINT64_MAX); // GL_SYNC_FLUSH_COMMANDS_BIT
	sv_glDeleteSync((void *)fence);
	if (st == 0x911D) { // GL_WAIT_FAILED
		return 1;
	}
	sv_GLint prev = 0;
	sv_glGetIntegerv(0x88ED, &prev);
	sv_glBindBuffer(0x88EB, pbo);
	const char *src = sv_glMapBufferRange(0x88EB, 0, (sv_GLsizeiptr)rowBytes * rows, 0x0001); // GL_MAP_READ_BIT
	int ret = 2;
	if (src) {
		for (int y = 0; y < rows; y++) {
			char *to = dst + (size_t)y * rowBytes;
			const char *from = src + (size_t)(rows - 1 - y) * rowBytes;
			if (opaque) {
				sv_CopyOpaque((uint32_t *)to, (const uint32_t *)from, rowBytes / 4);
			} else {
				memcpy(to, from, rowBytes);
			}
		}
		sv_glUnmapBuffer(0x88EB);
		ret = 0;
	}
	sv_glBindBuffer(0x88EB, (sv_GLuint)prev);
	return ret;
}
static void sv_DropRead(uintptr_t fence) { sv_glDeleteSync((void *)fence); }

// sv_BuildCompute compiles and links a compute program from src; it
// returns the program, or 0 with the info log in log (size n).
static sv_GLuint sv_BuildCompute(const char *src, char *log, int n) {
	sv_GLint ok = 0;
	sv_GLuint sh = sv_glCreateShader(0x91B9); // GL_COMPUTE_SHADER
	if (!sh) {
		snprintf(log, n, "glCreateShader(GL_COMPUTE_SHADER) failed");
		return 0;
	}
	sv_glShaderSource(sh, 1, &src, NULL);
	sv_glCompileShader(sh);
	sv_glGetShaderiv(sh, 0x8B81, &ok); // GL_COMPILE_STATUS
	if (!ok) {
		sv_glGetShaderInfoLog(sh, n, NULL, log);
		sv_glDeleteShader(sh);
		return 0;
	}
	sv_GLuint prog = sv_glCreateProgram();
	sv_glAttachShader(prog, sh);
	sv_glLinkProgram(prog);
	sv_glDeleteShader(sh); // freed with the program
	sv_glGetProgramiv(prog, 0x8B82, &ok); // GL_LINK_STATUS
	if (!ok) {
		sv_glGetProgramInfoLog(prog, n, NULL, log);
		sv_glDeleteProgram(prog);
		return 0;
	}
	return prog;
}
static void sv_DeleteProgram(sv_GLuint p) { sv_glDeleteProgram(p); }
static sv_GLint sv_UniformLocation(sv_GLuint p, const char *name) { return sv_glGetUniformLocation(p, name); }
static sv_GLuint sv_GenBuffer(void) { sv_GLuint id = 0; sv_glGenBuffers(1, &id); return id; }
static void sv_DeleteBuffer(sv_GLuint id) { sv_glDeleteBuffers(1, &id); }
// The storage-buffer target (GL_SHADER_STORAGE_BUFFER) is the one bound
// for uploads and reads; its binding is put back to none after each.
static void sv_BufferData(sv_GLuint id, sv_GLsizeiptr size, const void *data) {
	sv_glBindBuffer(0x90D2, id);
	sv_glBufferData(0x90D2, size, data, 0x88E8); // GL_DYNAMIC_DRAW
	sv_glBindBuffer(0x90D2, 0);
}
static void sv_BufferSubData(sv_GLuint id, sv_GLintptr off, sv_GLsizeiptr size, const void *data) {
	sv_glBindBuffer(0x90D2, id);
	sv_glBufferSubData(0x90D2, off, size, data);
	sv_glBindBuffer(0x90D2, 0);
}
static void sv_GetBufferSubData(sv_GLuint id, sv_GLintptr off, sv_GLsizeiptr size, void *data) {
	sv_glBindBuffer(0x90D2, id);
	sv_glGetBufferSubData(0x90D2, off, size, data);
	sv_glBindBuffer(0x90D2, 0);
}
// sv_BufferTexture makes a buffer texture of buffer id, its texels of
// format fmt; 0 on failure. The texture unit in use is left as it was.
static sv_GLuint sv_BufferTexture(sv_GLuint id, sv_GLenum fmt) {
	sv_GLuint tex = 0;
	sv_glGenTextures(1, &tex);
	if (!tex) {
		return 0;
	}
	sv_glBindTexture(0x8C2A, tex); // GL_TEXTURE_BUFFER
	sv_glTexBuffer(0x8C2A, fmt, id);
	sv_glBindTexture(0x8C2A, 0);
	return tex;
}
// sv_Dispatch runs prog over groups work groups with the storage buffers
// bufs[i] at binding i, the buffer textures texs[i] on texture unit
// units[i] and the int uniforms given, then puts the program and the
// active texture unit in use before back (g3n keeps its own idea of them).
static void sv_Dispatch(sv_GLuint prog, const sv_GLuint *bufs, int nbufs, const sv_GLuint *texs, const sv_GLint *units, int ntex,
	const sv_GLint *locs, const sv_GLint *vals, int nuni, sv_GLuint groups) {
	sv_GLint prev = 0, active = 0;
	sv_glGetIntegerv(0x8B8D, &prev);   // GL_CURRENT_PROGRAM
	sv_glGetIntegerv(0x84E0, &active); // GL_ACTIVE_TEXTURE
	sv_glUseProgram(prog);
	for (int i = 0; i < nbufs; i++) {
		sv_glBindBufferBase(0x90D2, (sv_GLuint)i, bufs[i]);
	}
	for (int i = 0; i < ntex; i++) {
		sv_glActiveTexture(0x84C0 + (sv_GLenum)units[i]); // GL_TEXTURE0 + unit
		sv_glBindTexture(0x8C2A, texs[i]);
	}
	sv_glActiveTexture((sv_GLenum)active);
	for (int i = 0; i < nuni; i++) {
		sv_glUniform1i(locs[i], vals[i]);
	}
	sv_glDispatchCompute(groups, 1, 1);
	sv_glMemoryBarrier(0x2000 | 0x1000); // GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT
	sv_glUseProgram((sv_GLuint)prev);
}
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

var readbackLoaded, readbackTried bool

// loadReadback resolves the entry points of reads into pixel-pack buffers
// once per process; false where they are missing.
func loadReadback() bool {
	eglMu.Lock()
	defer eglMu.Unlock()
	if !readbackTried {
		readbackTried = true
		readbackLoaded = C.sv_readback_load() == 0
	}
	return readbackLoaded
}

// glStartRead: see sv_StartRead; 0 if no fence was made.
func glStartRead(pbo uint32, size int, alloc bool, w, h int, fmt, typ uint32) uintptr {
	a := C.int(0)
	if alloc {
		a = 1
	}
	return uintptr(C.sv_StartRead(C.sv_GLuint(pbo), C.sv_GLsizeiptr(size), a, C.sv_GLsizei(w), C.sv_GLsizei(h), C.sv_GLenum(fmt), C.sv_GLenum(typ)))
}

// glFinishRead: see sv_FinishRead. dst is Go memory without pointers,
// written during the call, of at least rowBytes*rows bytes.
func glFinishRead(fence uintptr, pbo uint32, dst []byte, rowBytes, rows int, opaque bool) int {
	o := C.int(0)
	if opaque {
		o = 1
	}
	return int(C.sv_FinishRead(C.uintptr_t(fence), C.sv_GLuint(pbo), (*C.char)(unsafe.Pointer(&dst[0])), C.int(rowBytes), C.int(rows), o))
}
func glDropRead(fence uintptr) { C.sv_DropRead(C.uintptr_t(fence)) }

var computeLoaded bool

// loadCompute resolves the compute entry points once per process.
func loadCompute() error {
	eglMu.Lock()
	defer eglMu.Unlock()
	if computeLoaded {
		return nil
	}
	if C.sv_compute_load() != 0 {
		return errors.New(C.GoString(C.sv_egl_error_text()))
	}
	computeLoaded = true
	return nil
}

// glBuildCompute compiles and links a compute program; 0 and the log on
// failure.
func glBuildCompute(src string) (uint32, string) {
	cs := C.CString(src)
	defer C.free(unsafe.Pointer(cs))
	var log [4096]C.char
	id := C.sv_BuildCompute(cs, &log[0], C.int(len(log)))
	if id == 0 {
		return 0, C.GoString(&log[0])
	}
	return uint32(id), ""
}
func glDeleteProgram(id uint32) { C.sv_DeleteProgram(C.sv_GLuint(id)) }
func glUniformLocation(prog uint32, name string) int32 {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return int32(C.sv_UniformLocation(C.sv_GLuint(prog), cs))
}
func glGenBuffer() uint32      { return uint32(C.sv_GenBuffer()) }
func glDeleteBuffer(id uint32) { C.sv_DeleteBuffer(C.sv_GLuint(id)) }

// glBufferData (re)allocates buffer id with size bytes, from data where
// it is not nil (Go memory without pointers, read during the call).
func glBufferData(id uint32, size int, data unsafe.Pointer) {
	C.sv_BufferData(C.sv_GLuint(id), C.sv_GLsizeiptr(size), data)
}
func glBufferSubData(id uint32, off, size int, data unsafe.Pointer) {
	C.sv_BufferSubData(C.sv_GLuint(id), C.sv_GLintptr(off), C.sv_GLsizeiptr(size), data)
}
func glGetBufferSubData(id uint32, off, size int, data unsafe.Pointer) {
	C.sv_GetBufferSubData(C.sv_GLuint(id), C.sv_GLintptr(off), C.sv_GLsizeiptr(size), data)
}
func glBufferTexture(id, format uint32) uint32 {
	return uint32(C.sv_BufferTexture(C.sv_GLuint(id), C.sv_GLenum(format)))
}
func glDispatch(prog uint32, bufs, texs []uint32, units, locs, vals []int32, groups int) {
	var b, t *C.sv_GLuint
	if len(bufs) > 0 {
		b = (*C.sv_GLuint)(unsafe.Pointer(&bufs[0]))
	}
	var u, l, v *C.sv_GLint
	if len(texs) > 0 {
		t, u = (*C.sv_GLuint)(unsafe.Pointer(&texs[0])), (*C.sv_GLint)(unsafe.Pointer(&units[0]))
	}
	if len(locs) > 0 {
		l, v = (*C.sv_GLint)(unsafe.Pointer(&locs[0])), (*C.sv_GLint)(unsafe.Pointer(&vals[0]))
	}
	C.sv_Dispatch(C.sv_GLuint(prog), b, C.int(len(bufs)), t, u, C.int(len(texs)), l, v, C.int(len(locs)), C.sv_GLuint(groups))
}
