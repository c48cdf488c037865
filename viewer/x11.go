package viewer

// Presenting a frame without the GL swap. g3n asks GLFW for a multisampled
// window, and on a software rasterizer (llvmpipe) that costs twice per
// frame: the single-sampled picture replicated into every sample, then
// resolved back at the swap, which then copies it to the X server with
// XPutImage anyway. With a software renderer the viewer puts the picture
// into the window itself: read back from its framebuffer (the rasterizer's
// own memory) straight into a shared-memory X image, and XShmPutImage.
// Over a connection without the shared-memory extension (a remote X
// server) it is a plain XPutImage, as Mesa's would be.

/*
#cgo LDFLAGS: -lX11 -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>

// The shared-memory extension's few entry points come from libXext with
// dlopen, declared here as its header (X11/extensions/XShm.h) does: building
// needs no libXext headers, and without the library frames go by plain
// XPutImage.
typedef struct {
	unsigned long shmseg;
	int shmid;
	char *shmaddr;
	Bool readOnly;
} svx_ShmSegmentInfo;
static Bool (*svx_XShmQueryExtension)(Display *);
static XImage *(*svx_XShmCreateImage)(Display *, Visual *, unsigned int, int, char *, svx_ShmSegmentInfo *, unsigned int, unsigned int);
static Bool (*svx_XShmAttach)(Display *, svx_ShmSegmentInfo *);
static Bool (*svx_XShmDetach)(Display *, svx_ShmSegmentInfo *);
static Bool (*svx_XShmPutImage)(Display *, Drawable, GC, XImage *, int, int, int, int, unsigned int, unsigned int, Bool);

static int svx_loadShm(void) {
	static int loaded = 0;
	if (loaded) return loaded > 0;
	loaded = -1;
	void *lib = dlopen("libXext.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (!lib) return 0;
	*(void **)&svx_XShmQueryExtension = dlsym(lib, "XShmQueryExtension");
	*(void **)&svx_XShmCreateImage = dlsym(lib, "XShmCreateImage");
	*(void **)&svx_XShmAttach = dlsym(lib, "XShmAttach");
	*(void **)&svx_XShmDetach = dlsym(lib, "XShmDetach");
	*(void **)&svx_XShmPutImage = dlsym(lib, "XShmPutImage");
	if (!svx_XShmQueryExtension || !svx_XShmCreateImage || !svx_XShmAttach || !svx_XShmDetach || !svx_XShmPutImage) return 0;
	loaded = 1;
	return 1;
}

typedef struct {
	Display *dpy;
	Window win;
	GC gc;
	Visual *visual;
	int depth;
	int shmOK;
	XImage *img;
	svx_ShmSegmentInfo shm;
	int useShm;
	int w, h;
} svx;

static int svx_failed;
static int svx_onError(Display *d, XErrorEvent *e) { svx_failed = 1; return 0; }

// svx_open connects to the display and checks that the window's visual
// takes BGRX bytes (24-bit TrueColor, red in the high byte).
static svx *svx_open(const char *display, unsigned long win, char **why) {
	Display *dpy = XOpenDisplay(display);
	if (!dpy) { *why = "cannot connect to the display"; return NULL; }
	XWindowAttributes wa;
	if (!XGetWindowAttributes(dpy, (Window)win, &wa)) { XCloseDisplay(dpy); *why = "no window attributes"; return NULL; }
	Visual *v = wa.visual;
	if ((wa.depth != 24 && wa.depth != 32) || v->red_mask != 0xff0000 || v->green_mask != 0xff00 || v->blue_mask != 0xff
		|| ImageByteOrder(dpy) != LSBFirst) {
		XCloseDisplay(dpy);
		*why = "the window's visual is not 24-bit BGRX";
		return NULL;
	}
	svx *p = calloc(1, sizeof(svx));
	p->dpy = dpy;
	p->win = (Window)win;
	p->gc = XCreateGC(dpy, p->win, 0, NULL);
	p->visual = v;
	p->depth = wa.depth;
	p->shmOK = svx_loadShm() && svx_XShmQueryExtension(dpy);
	return p;
}

static void svx_freeImage(svx *p) {
	if (!p->img) return;
	if (p->useShm) {
		svx_XShmDetach(p->dpy, &p->shm);
		XSync(p->dpy, False);
		shmdt(p->shm.shmaddr);
		p->img->data = NULL;
	}
	XDestroyImage(p->img); // frees a plain image's data
	p->img = NULL;
}

// svx_resize makes the image w x h; it returns its pixels (4*w bytes a
// row, no padding) or NULL.
static char *svx_resize(svx *p, int w, int h) {
	svx_freeImage(p);
	p->w = w; p->h = h;
	p->useShm = 0;
	if (p->shmOK) {
		p->img = svx_XShmCreateImage(p->dpy, p->visual, p->depth, ZPixmap, NULL, &p->shm, w, h);
		if (p->img && p->img->bytes_per_line == 4 * w) {
			p->shm.shmid = shmget(IPC_PRIVATE, (size_t)p->img->bytes_per_line * h, IPC_CREAT | 0600);
			if (p->shm.shmid >= 0) {
				p->shm.shmaddr = p->img->data = shmat(p->shm.shmid, NULL, 0);
				p->shm.readOnly = False;
				if (p->shm.shmaddr != (char *)-1) {
					// A server that cannot attach (another machine) answers
					// with an error, not a crash: caught, then plain images.
					svx_failed = 0;
					XErrorHandler old = XSetErrorHandler(svx_onError);
					svx_XShmAttach(p->dpy, &p->shm);
					XSync(p->dpy, False);
					XSetErrorHandler(old);
					shmctl(p->shm.shmid, IPC_RMID, NULL); // freed when both detach
					if (!svx_failed) {
						p->useShm = 1;
						return p->img->data;
					}
					shmdt(p->shm.shmaddr);
				} else {
					shmctl(p->shm.shmid, IPC_RMID, NULL);
				}
			}
			p->img->data = NULL;
		}
		if (p->img) { XDestroyImage(p->img); p->img = NULL; }
		p->shmOK = 0;
	}
	char *data = malloc((size_t)4 * w * h);
	if (!data) return NULL;
	p->img = XCreateImage(p->dpy, p->visual, p->depth, ZPixmap, 0, data, w, h, 32, 4 * w);
	if (!p->img || p->img->bytes_per_line != 4 * w) {
		if (p->img) XDestroyImage(p->img); else free(data);
		p->img = NULL;
		return NULL;
	}
	return data;
}

// svx_put shows the image and waits until the server has it (the next
// frame writes into the same memory).
static void svx_put(svx *p) {
	if (p->useShm) {
		svx_XShmPutImage(p->dpy, p->win, p->gc, p->img, 0, 0, 0, 0, p->w, p->h, False);
	} else {
		XPutImage(p->dpy, p->win, p->gc, p->img, 0, 0, 0, 0, p->w, p->h);
	}
	XSync(p->dpy, False);
}

static void svx_close(svx *p) {
	svx_freeImage(p);
	XFreeGC(p->dpy, p->gc);
	XCloseDisplay(p->dpy);
	free(p);
}
*/
import "C"

import (
	"errors"
	"os"
	"unsafe"
)

// x11Present puts frames into an X window (see the file's comment). Use it
// on the render thread only.
type x11Present struct {
	p    *C.svx
	pix  []byte // the image's pixels, C memory
	w, h int
}

func newX11Present(win uint64) (*x11Present, error) {
	disp := C.CString(os.Getenv("DISPLAY"))
	defer C.free(unsafe.Pointer(disp))
	var why *C.char
	p := C.svx_open(disp, C.ulong(win), &why)
	if p == nil {
		return nil, errors.New(C.GoString(why))
	}
	return &x11Present{p: p}, nil
}

// pixels returns the w x h image's pixels (BGRX, top row first) to fill
// before put.
func (x *x11Present) pixels(w, h int) ([]byte, error) {
	if x.pix == nil || x.w != w || x.h != h {
		x.pix = nil
		data := C.svx_resize(x.p, C.int(w), C.int(h))
		if data == nil {
			return nil, errors.New("cannot make an X image")
		}
		x.pix = unsafe.Slice((*byte)(unsafe.Pointer(data)), 4*w*h)
		x.w, x.h = w, h
	}
	return x.pix, nil
}

func (x *x11Present) put() { C.svx_put(x.p) }

func (x *x11Present) close() {
	if x.p != nil {
		C.svx_close(x.p)
		x.p, x.pix = nil, nil
	}
}
