package sensors

import (
	"fmt"
	"image"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/g3n/engine/core"
	"github.com/g3n/engine/gls"
	"github.com/simvis/simvis/internal/gpu"
	"github.com/simvis/simvis/scene"
)

// pendingPicture is a picture whose drawing is queued (drawQueue) or whose
// read-back is under way (gpu.Framebuffer.StartRead): a cycle's cameras are
// all drawn before the first is waited for, so that no sensor stalls the
// GPU on its own, and their reads are then finished in one trip to the GL
// thread (collectPictures) instead of one each.
type pendingPicture struct {
	r      *Renderer
	queue  *drawQueue // where it waits to be drawn; nil once drawn
	read   *gpu.PendingRead
	dst    []byte // where the pixels go
	opaque bool   // an RGBA8 picture: alpha set to 255 on the way
	err    error  // written before done is set
	done   atomic.Bool
}

// drawQueue holds the drawing of a batch's pictures until flush, which
// draws them all and starts their reads in one trip to the GL thread.
// Only the goroutine that made it uses it, and the GL thread while that
// goroutine waits in Do, so it needs no lock.
type drawQueue struct {
	r    *Renderer
	jobs []func(gs *gls.GLS)
}

// flush draws the pictures queued (on the GL thread) and starts their reads.
func (q *drawQueue) flush() {
	if q == nil || len(q.jobs) == 0 {
		return
	}
	// An error here (the context closed) is each picture's own wait's.
	_ = q.r.ctx.Do(func(gs *gls.GLS) error { q.runOn(gs); return nil })
}

// runOn runs the queued drawing, on the GL thread.
func (q *drawQueue) runOn(gs *gls.GLS) {
	jobs := q.jobs
	q.jobs = nil
	q.r.worlds = placedWorlds{batch: true}
	defer func() { q.r.worlds = placedWorlds{} }()
	for _, job := range jobs {
		job(gs)
	}
}

// placedWorlds says, on the GL thread, whose g3n world matrices are up to
// date, as of which version of the scene.
type placedWorlds struct {
	s       *scene.Scene
	version uint64
	// batch is true while a drawQueue's pictures are drawn, back to back:
	// between two of them only their own drawing runs, and it moves no
	// node without changing the scene's version (scene.Scene.Version).
	batch bool
	// The shadow-casting lights found since the last walk, for pictures
	// for people or for sensors (which see different lights: Viewer).
	lights       []shadowLight
	lightSlots   [2][]int // the directional and the spot lights' slots
	lightsViewer bool
	lightsFound  bool
}

// updateWorlds brings the world matrices of s's g3n graph up to date for a
// picture. g3n's Render walks the whole graph for every camera it draws
// (twice with shadows); in a batch the pictures after the first skip the
// walk while the scene's version says nothing moved: one walk for a
// cycle's cameras instead of one or two each.
func (r *Renderer) updateWorlds(s *scene.Scene) {
	w := &r.worlds
	if w.batch && w.s == s && w.version == s.Version() {
		return
	}
	s.G3N().UpdateMatrixWorld()
	w.s, w.version, w.lightsFound = s, s.Version(), false
}

// shadowLights returns the lights of s that cast shadows (findShadowLights)
// in a picture for people (viewer) or for sensors, found again only after
// updateWorlds walked the graph. Must follow updateWorlds and the scene's
// PrepareRender(viewer).
func (r *Renderer) shadowLights(s *scene.Scene, viewer bool) (lights []shadowLight, dirSlots, spotSlots []int) {
	w := &r.worlds
	if !w.lightsFound || w.lightsViewer != viewer {
		w.lights, w.lightSlots[0], w.lightSlots[1] = findShadowLights(s.G3N())
		w.lightsViewer, w.lightsFound = viewer, true
	}
	return w.lights, w.lightSlots[0], w.lightSlots[1]
}

// placedRoot is a scene's g3n root whose world matrices updateWorlds keeps,
// in place of g3n's Render.
type placedRoot struct{ *core.Node }

// UpdateMatrixWorld does nothing: updateWorlds did it where it was needed.
func (placedRoot) UpdateMatrixWorld() {}

// pictureList is a renderer's reads started and not yet finished.
type pictureList struct {
	sync.Mutex
	list []*pendingPicture
}

// startRGBA draws v into an 8-bit target and starts reading it into the
// image returned, whose pixels are there once wait returns.
func (r *Renderer) startRGBA(s *scene.Scene, v View, q *drawQueue) (*pendingPicture, *image.RGBA, error) {
	if v.Width <= 0 || v.Height <= 0 {
		return nil, nil, fmt.Errorf("sensors: image size %dx%d", v.Width, v.Height)
	}
	img := image.NewRGBA(image.Rect(0, 0, v.Width, v.Height))
	// Blended drawing (transparent materials, label text) leaves alpha
	// below 1 where it blends; a camera picture is opaque. Setting it in
	// the copy out of the read costs next to nothing; a color-masked clear
	// on llvmpipe cost more than a loop of its own.
	p, err := r.startRender(s, v, gpu.ColorRGBA8, img.Pix, true, q)
	return p, img, err
}

// startRadiance draws v into a float target and starts reading it into the
// pixels returned (4 floats each, rows top-down: the linear radiance, not
// clamped at 1), which are there once wait returns.
func (r *Renderer) startRadiance(s *scene.Scene, v View, q *drawQueue) (*pendingPicture, []float32, error) {
	if v.Width <= 0 || v.Height <= 0 {
		return nil, nil, fmt.Errorf("sensors: image size %dx%d", v.Width, v.Height)
	}
	pix := make([]float32, 4*v.Width*v.Height)
	p, err := r.startRender(s, v, gpu.ColorRGBA32F, gpu.FloatBytes(pix), false, q)
	return p, pix, err
}

// startRender draws the scene as seen from v into a cached target of the
// format and starts reading it back into dst, on the GL thread: at once, or
// when q is flushed where q is not nil.
func (r *Renderer) startRender(s *scene.Scene, v View, format gpu.ColorFormat, dst []byte, opaque bool, q *drawQueue) (*pendingPicture, error) {
	cam := v.camera()
	camView := v.Pose.Mul4(sensorToGL).Inv()
	return r.startPicture(dst, opaque, q, func(gs *gls.GLS) (*gpu.Framebuffer, error) {
		// Scene state a picture depends on is set here, just before it is
		// drawn: a queued picture is drawn after the next one is begun, and
		// pictures for viewers show what sensors do not (Viewer).
		if err := s.PrepareRender(v.Viewer); err != nil {
			return nil, err
		}
		r.updateWorlds(s)
		s.SetAnisotropy(r.anisotropy)
		if err := r.prepareShadows(gs, s, v.Shadows, v.Viewer, camView); err != nil {
			return nil, err
		}
		fb, err := r.framebuffer(gs, v.Width, v.Height, format)
		if err != nil {
			return nil, err
		}
		fb.Bind(gs)
		fb.Clear(gs, v.Background[0], v.Background[1], v.Background[2], 1)
		if err := r.g3n.Render(placedRoot{s.G3N()}, cam); err != nil {
			return nil, fmt.Errorf("sensors: render: %w", err)
		}
		return fb, nil
	})
}

// startPicture runs draw on the GL thread, at once or when q is flushed,
// and starts reading the target it drew into dst.
func (r *Renderer) startPicture(dst []byte, opaque bool, q *drawQueue, draw func(gs *gls.GLS) (*gpu.Framebuffer, error)) (*pendingPicture, error) {
	p := &pendingPicture{r: r, dst: dst, opaque: opaque}
	job := func(gs *gls.GLS) error {
		fb, err := draw(gs)
		if err != nil {
			return err
		}
		if p.read, err = fb.StartRead(gs); err != nil {
			return err
		}
		if n := p.read.Size(); n != len(dst) {
			p.read.Drop(gs)
			p.read = nil
			return fmt.Errorf("sensors: a read of %d bytes into %d", n, len(dst))
		}
		return nil
	}
	if q != nil {
		p.queue = q
		q.jobs = append(q.jobs, func(gs *gls.GLS) {
			p.queue = nil
			defer func() {
				if x := recover(); x != nil {
					p.err = fmt.Errorf("drawing failed: %v (a bug: please report it with the scene)", x)
					p.done.Store(true)
				}
			}()
			if err := job(gs); err != nil {
				p.err = err
				p.done.Store(true)
			}
		})
	} else if err := r.ctx.Do(job); err != nil {
		return nil, err
	}
	r.pictures.Lock()
	// Pictures waited for one by one leave the list here.
	r.pictures.list = slices.DeleteFunc(r.pictures.list, func(q *pendingPicture) bool { return q.done.Load() })
	r.pictures.list = append(r.pictures.list, p)
	r.pictures.Unlock()
	return p, nil
}

// wait returns once p's pixels are in its destination (or its read
// failed): at once where collectPictures finished it.
func (p *pendingPicture) wait() error {
	if !p.done.Load() {
		err := p.r.ctx.Do(func(gs *gls.GLS) error {
			if p.queue != nil { // not drawn yet: its queue is this goroutine's
				p.queue.runOn(gs)
			}
			p.finishOn(gs)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return p.err
}

// finishOn finishes the read, on the GL thread (which serializes it); it
// leaves a picture not yet drawn as it is.
func (p *pendingPicture) finishOn(gs *gls.GLS) {
	if p.done.Load() || p.read == nil {
		return
	}
	if p.opaque {
		p.err = p.read.FinishOpaque(gs, p.dst)
	} else {
		p.err = p.read.Finish(gs, p.dst)
	}
	p.done.Store(true)
}

// collectPictures finishes every read started and not yet finished, in one
// trip to the GL thread.
func (r *Renderer) collectPictures() {
	r.pictures.Lock()
	list := r.pictures.list
	r.pictures.list = nil
	r.pictures.Unlock()
	if len(list) == 0 {
		return
	}
	// An error here (the context closed) is each picture's own wait's.
	_ = r.ctx.Do(func(gs *gls.GLS) error {
		var undrawn []*pendingPicture // in another goroutine's queue
		for _, p := range list {
			p.finishOn(gs)
			if !p.done.Load() {
				undrawn = append(undrawn, p)
			}
		}
		if len(undrawn) > 0 {
			r.pictures.Lock()
			r.pictures.list = append(r.pictures.list, undrawn...)
			r.pictures.Unlock()
		}
		return nil
	})
}
