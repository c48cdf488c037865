package sensors

import (
	"fmt"
	"time"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors/raycast"
)

// pendingFrame is a frame under way, between its two halves: cast holds
// the beams the CPU backend is to cast (nil where the frame needs no
// cast), finish completes the frame once they are, given what its beams
// cost (auto compares the backends by it).
type pendingFrame struct {
	cast    *raycast.Rays
	start   time.Time
	compute bool // cast on the GPU by the compute caster
	// later: the frame's picture is being read back from the GPU; it is
	// finished once the batch's other frames are begun and cast, so that
	// no sensor waits for the GPU on its own.
	later  bool
	finish func(cost time.Duration) (*Frame, error)
}

// beginner is a sensor whose frames can be rendered in two halves, so
// that the CPU backend's beams of many sensors are cast together.
type beginner interface {
	beginFrame(r *Renderer, s *scene.Scene, st *Stamp) (pendingFrame, error)
}

// pictureBeginner is a sensor whose frame is a picture drawn on the GPU: it
// begins with its drawing queued on q, which RenderFrames flushes once every
// frame is begun, so that all pictures are drawn, and their reads started,
// in one trip to the GL thread.
type pictureBeginner interface {
	beginPicture(r *Renderer, s *scene.Scene, st *Stamp, q *drawQueue) (pendingFrame, error)
}

// pending begins a range sensor's frame measured into out; frame makes
// the frame from the sensor's world pose once out holds the ranges.
func (b *beamSet) pending(r *Renderer, s *scene.Scene, out []float64, frame func(world mgl64.Mat4) *Frame) (pendingFrame, error) {
	m, err := b.beginRanges(r, s, out)
	if err != nil {
		return pendingFrame{}, err
	}
	return pendingFrame{cast: m.cast, start: m.start, compute: m.compute, finish: func(cost time.Duration) (*Frame, error) {
		b.endRanges(r, s, m, cost, out)
		return frame(m.world), nil
	}}, nil
}

// RenderFrames renders one frame of each of entries at the scene's
// current state, as RenderFrame would one after the other: the same
// frames, stamped with stamps[i] (nil entries allowed), the same errors
// (a panic in one sensor is that sensor's error), returns published in
// the same order. What differs is how: the beams of every range sensor on
// the CPU backend are cast together, in one job over all cores
// (raycast.Caster.CastBatch), instead of one sensor after the other each
// with a job of its own; the other sensors render as before, in order, on
// the GL thread. Returns are published once every frame is rendered
// (sensors never see the overlays that draw them).
//
// frames[i] and errs[i] are entries[i]'s: one of the two is nil. Each
// sensor may appear once in entries: a sensor's frame state (its cached
// beams, a depth camera's ranges) is written while the batch is cast.
func RenderFrames(r *Renderer, s *scene.Scene, entries []*scene.SensorEntry, stamps []*Stamp) (frames []*Frame, errs []error) {
	frames, errs = make([]*Frame, len(entries)), make([]error, len(entries))
	var (
		waiting []pendingFrame
		at      []int           // entry of each waiting frame
		sets    []raycast.Rays  // the waiting frames' beams
		prep    []time.Duration // what each took to begin
		onGPU   []bool          // cast by the compute caster
		reading []pendingFrame  // frames whose pictures are read back
		readAt  []int           // entry of each
	)
	queue := &drawQueue{r: r}
	for i, se := range entries {
		var begin func() (pendingFrame, error)
		switch b := se.Sensor.(type) {
		case pictureBeginner:
			begin = func() (pendingFrame, error) { return b.beginPicture(r, s, stamps[i], queue) }
		case beginner:
			begin = func() (pendingFrame, error) { return b.beginFrame(r, s, stamps[i]) }
		default:
			frames[i], errs[i] = renderFrame(r, s, se, stamps[i])
			continue
		}
		func() {
			defer recovered(se.Name, &errs[i])
			p, err := begin()
			if err == nil && p.later {
				reading, readAt = append(reading, p), append(readAt, i)
				return
			}
			if err == nil && p.cast == nil {
				frames[i], err = p.finish(time.Since(p.start))
			}
			if err != nil {
				errs[i] = fmt.Errorf("sensor %q: %w", se.Name, err)
				return
			}
			if p.cast != nil {
				waiting, at = append(waiting, p), append(at, i)
				sets, prep = append(sets, *p.cast), append(prep, time.Since(p.start))
				onGPU = append(onGPU, p.compute)
			}
		}()
	}
	// The GPU draws the pictures while the CPU casts.
	queue.flush()
	if len(waiting) > 0 {
		wall, err := r.castBatch(s, sets, onGPU)
		work := time.Duration(0)
		for _, rs := range sets {
			work += rs.Work
		}
		for k, p := range waiting {
			i, se := at[k], entries[at[k]]
			func() {
				defer recovered(se.Name, &errs[i])
				switch {
				case err != nil:
					panic(err)
				case sets[k].Err != nil:
					panic(sets[k].Err)
				}
				// A frame's beams cost its share of the batch's time, by
				// the time the cores spent on them.
				share := wall / time.Duration(len(sets))
				if work > 0 {
					share = time.Duration(float64(wall) * float64(sets[k].Work) / float64(work))
				}
				var ferr error
				if frames[i], ferr = p.finish(prep[k] + share); ferr != nil {
					errs[i] = fmt.Errorf("sensor %q: %w", se.Name, ferr)
				}
			}()
		}
	}
	if len(reading) > 0 {
		r.collectPictures()
	}
	for k, p := range reading {
		i, se := readAt[k], entries[readAt[k]]
		func() {
			defer recovered(se.Name, &errs[i])
			var ferr error
			if frames[i], ferr = p.finish(time.Since(p.start)); ferr != nil {
				errs[i] = fmt.Errorf("sensor %q: %w", se.Name, ferr)
			}
		}()
	}
	for i, se := range entries {
		if errs[i] == nil {
			func() {
				defer recovered(se.Name, &errs[i])
				publishReturns(s, se, frames[i])
			}()
			if errs[i] != nil {
				frames[i] = nil
			}
		}
	}
	return frames, errs
}

// castBatch syncs the renderer's ray caster to s and casts the sets in one
// batch; it returns the time that took. A panic there (not in one set's
// beams, which CastBatch gives that set) is returned.
func (r *Renderer) castBatch(s *scene.Scene, sets []raycast.Rays, onGPU []bool) (wall time.Duration, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the ray caster failed: %v", p)
		}
	}()
	r.caster.Lock()
	defer r.caster.Unlock()
	start := time.Now()
	if r.caster.c == nil {
		r.caster.c = raycast.New()
	}
	r.caster.c.Sync(s)
	if cpu := r.castOnGPU(sets, onGPU); len(cpu) < len(sets) {
		// The others in a batch of their own; Err and Work copied back.
		rest := make([]raycast.Rays, len(cpu))
		for k, i := range cpu {
			rest[k] = sets[i]
		}
		r.caster.c.CastBatch(rest)
		for k, i := range cpu {
			sets[i].Err, sets[i].Work = rest[k].Err, rest[k].Work
		}
		return time.Since(start), nil
	}
	r.caster.c.CastBatch(sets)
	return time.Since(start), nil
}

// castOne casts one sensor's rays as castBatch does a cycle's; what would
// be the set's error in a batch panics, for the sensor's recovery to
// report as it reports any other panic (RenderFrames does the same).
func (r *Renderer) castOne(s *scene.Scene, rays raycast.Rays, onGPU bool) {
	sets := [1]raycast.Rays{rays}
	if _, err := r.castBatch(s, sets[:], []bool{onGPU}); err != nil {
		panic(err)
	}
	if sets[0].Err != nil {
		panic(sets[0].Err)
	}
}
