package gpu

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/g3n/engine/gls"
)

// ErrClosed is returned by Do once Close has been called.
var ErrClosed = errors.New("gpu: context closed")

// Info describes the OpenGL implementation behind a Context.
type Info struct {
	Platform string // PlatformDevice or PlatformSurfaceless
	Device   string // DRM node of the EGL device ("software" for Mesa's swrast device), "" if unknown
	Vendor   string // GL_VENDOR
	Renderer string // GL_RENDERER
	Version  string // GL_VERSION
}

// Context owns one headless EGL/OpenGL context. GL contexts are bound to an
// OS thread, so a Context runs a goroutine locked to its own thread and
// executes every piece of GL work there (see Do).
type Context struct {
	jobs      chan *job
	quit      chan struct{} // closed by Close
	stopped   chan struct{} // closed when the render goroutine has exited
	closeOnce sync.Once
	closeErr  error // set by the render goroutine before stopped is closed
	info      Info

	// Owned by the render thread.
	egl *eglTarget
	gs  *gls.GLS
}

type job struct {
	f     func(gs *gls.GLS) error
	err   error
	panic any // recovered panic value, re-raised in the caller
	stack []byte
	done  chan struct{}
}

// Jobs are pooled so that a Do per frame does not allocate a channel each time.
var jobPool = sync.Pool{New: func() any { return &job{done: make(chan struct{}, 1)} }}

// glsMu serializes gls.New: g3n loads its GL function pointers into process
// globals.
var glsMu sync.Mutex

// New creates a headless OpenGL 3.3 core context on a dedicated OS thread.
// It prefers a hardware EGL device and falls back to Mesa's surfaceless
// platform (see PlatformEnv). libEGL.so.1 is loaded at run time, so a
// machine without EGL gets an error here rather than a failed program start.
func New() (*Context, error) {
	c := &Context{
		jobs:    make(chan *job),
		quit:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	ready := make(chan error, 1)
	go c.loop(ready)
	if err := <-ready; err != nil {
		<-c.stopped
		return nil, err
	}
	return c, nil
}

func (c *Context) loop(ready chan<- error) {
	// The goroutine never unlocks: when it returns, the runtime discards the
	// thread together with whatever EGL/GL thread state it still carries.
	runtime.LockOSThread()
	defer close(c.stopped)

	if err := c.setup(); err != nil {
		if c.egl != nil {
			closeEGL(c.egl)
			c.egl = nil
		}
		ready <- err
		return
	}
	ready <- nil

	for {
		select {
		case j := <-c.jobs:
			c.run(j)
			j.done <- struct{}{}
		case <-c.quit:
			c.gs = nil
			c.closeErr = closeEGL(c.egl)
			c.egl = nil
			return
		}
	}
}

// setup runs on the render thread.
func (c *Context) setup() error {
	if err := loadEGL(); err != nil {
		return fmt.Errorf("gpu: EGL not available: %w", err)
	}
	t, err := openEGL()
	if err != nil {
		return err
	}
	c.egl = t

	glsMu.Lock()
	// g3n's C wrappers call exit(1) on any GL error while their (process
	// wide) check flag is set, and gls.New itself issues GL calls. Clearing
	// the flag through a throwaway GLS before New keeps an unusual driver
	// from killing the process during setup.
	(&gls.GLS{}).SetCheckErrors(false)
	gs, err := gls.New()
	if err == nil {
		gs.SetCheckErrors(false)
	}
	glsMu.Unlock()
	if err != nil {
		return fmt.Errorf("gpu: loading OpenGL through g3n (libGL.so.1): %w", err)
	}
	if err := loadGL(); err != nil {
		return fmt.Errorf("gpu: %w", err)
	}
	// Errors raised by g3n's default-state setup are of no interest to users.
	drainGLErrors()
	c.gs = gs
	c.info = Info{
		Platform: t.platform,
		Device:   t.device,
		Vendor:   gs.GetString(gls.VENDOR),
		Renderer: gs.GetString(gls.RENDERER),
		Version:  gs.GetString(gls.VERSION),
	}
	return nil
}

func (c *Context) run(j *job) {
	returned := false
	defer func() {
		if r := recover(); r != nil {
			j.panic = r
			j.stack = debug.Stack()
			return
		}
		if !returned {
			// f called runtime.Goexit (t.Fatal in a test's f): the render
			// thread ends with it. The caller gets an error instead of
			// waiting for ever, and later calls get ErrClosed.
			j.err = errGoexit
			c.closeOnce.Do(func() { close(c.quit) })
			j.done <- struct{}{}
		}
	}()
	j.err = j.f(c.gs)
	returned = true
}

// errGoexit is Do's error where its function called runtime.Goexit.
var errGoexit = errors.New("gpu: the function given to Do called runtime.Goexit (t.Fatal in it?); the context is closed")

// Do runs f on the render thread with the context current and waits for it.
// It is safe to call from any goroutine; calls are executed one at a time.
// f must not call Do or Close of the same Context (it would deadlock), and
// must not keep gs beyond its return. A panic in f is re-raised in the
// caller of Do. After Close, Do returns ErrClosed without running f.
func (c *Context) Do(f func(gs *gls.GLS) error) error {
	if f == nil {
		return errors.New("gpu: Do: nil function")
	}
	select {
	case <-c.quit:
		return ErrClosed
	default:
	}
	j := jobPool.Get().(*job)
	j.f = f
	select {
	case c.jobs <- j:
	case <-c.quit:
		j.f = nil
		jobPool.Put(j)
		return ErrClosed
	}
	<-j.done
	err, p, stack := j.err, j.panic, j.stack
	*j = job{done: j.done}
	jobPool.Put(j)
	if p != nil {
		panic(fmt.Sprintf("gpu: panic on render thread: %v\n\nrender thread stack:\n%s", p, stack))
	}
	return err
}

// Info describes the platform and the OpenGL implementation in use.
func (c *Context) Info() Info { return c.info }

// Close destroys the GL context, releases the EGL display and stops the
// render thread. Pending Do calls either complete or return ErrClosed. It is
// idempotent and safe from any goroutine except from inside Do.
func (c *Context) Close() error {
	c.closeOnce.Do(func() { close(c.quit) })
	<-c.stopped
	return c.closeErr
}
