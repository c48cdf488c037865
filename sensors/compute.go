package sensors

import (
	"os"
	"time"

	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors/gpucast"
	"github.com/simvis/simvis/sensors/raycast"
)

// computeState is the GPU backend's compute caster (sensors/gpucast): the
// range sensors' beams cast on the GPU with the exact caster's own
// hierarchy, to the same bits. Made on first use; where the context has no
// compute shaders (OpenGL below 4.3, a window's 3.3 context) it is never
// tried again, and the GPU backend draws depth-buffer views as before.
type computeState struct {
	g      *gpucast.Caster
	failed bool
	err    error // why it failed, nil where it was turned off
}

// newComputeCaster makes the compute caster (tests make it fail).
var newComputeCaster = gpucast.New

// noComputeEnv, set to 1, keeps the GPU backend of range sensors on
// depth-buffer views (to compare the two, or where a driver's compute
// shaders misbehave).
const noComputeEnv = "SIMVIS_NO_COMPUTE_RANGES"

// useCompute reports whether the GPU backend casts s's beams with the
// compute caster: the context runs compute shaders (cut-outs included: the
// shader applies models.Cutout's rule as the CPU caster does) and the
// hierarchy could be sent. It syncs both casters to s.
func (r *Renderer) useCompute(s *scene.Scene) bool {
	r.caster.Lock()
	defer r.caster.Unlock()
	if r.compute.failed {
		return false
	}
	if r.compute.g == nil {
		if os.Getenv(noComputeEnv) == "1" {
			r.compute.failed = true
			return false
		}
		g, err := newComputeCaster(r.ctx)
		if err != nil {
			r.compute.failed, r.compute.err = true, err
			return false
		}
		r.compute.g = g
	}
	if r.caster.c == nil {
		r.caster.c = raycast.New()
	}
	r.caster.c.Sync(s)
	return r.compute.g.Sync(r.caster.c) == nil
}

// castOnGPU casts the sets marked in onGPU with the compute caster (the
// caster's lock held, synced to the scene) and returns the others' indices.
// A failed dispatch leaves its sets to the CPU caster, which writes the
// same bits. Each set's Work is its share of the dispatch, by rays.
func (r *Renderer) castOnGPU(sets []raycast.Rays, onGPU []bool) (cpu []int) {
	var gsets []raycast.Rays
	var at []int
	for i := range sets {
		if i < len(onGPU) && onGPU[i] && r.compute.g != nil {
			gsets, at = append(gsets, sets[i]), append(at, i)
		} else {
			cpu = append(cpu, i)
		}
	}
	if len(gsets) == 0 {
		return cpu
	}
	start := time.Now()
	// Sync again: a no-op while the hierarchy is the one useCompute sent,
	// and what keeps a cast from reading a stale one otherwise.
	if err := r.compute.g.Sync(r.caster.c); err != nil {
		return append(cpu, at...)
	}
	if err := r.compute.g.CastBatch(gsets); err != nil {
		return append(cpu, at...)
	}
	wall := time.Since(start)
	rays := 0
	for _, rs := range gsets {
		rays += len(rs.Dirs)
	}
	for k, i := range at {
		sets[i].Err = gsets[k].Err
		if rays > 0 {
			sets[i].Work = time.Duration(float64(wall) * float64(len(gsets[k].Dirs)) / float64(rays))
		}
	}
	return cpu
}

// GPURanges says how the GPU backend casts range sensors' beams on this
// renderer, once a sensor on it has: on the compute caster, and with which
// float64 division (sensors/gpucast), or by depth-buffer views, and why.
// It is empty before any range sensor ran on the GPU backend.
func (r *Renderer) GPURanges() string {
	r.caster.Lock()
	defer r.caster.Unlock()
	switch {
	case r.compute.g != nil:
		return "compute caster, " + r.compute.g.Division() + " float64 division"
	case r.compute.err != nil:
		return "depth-buffer views (" + r.compute.err.Error() + ")"
	case r.compute.failed:
		return "depth-buffer views (" + noComputeEnv + "=1)"
	}
	return ""
}

// ComputeErr is why the compute caster could not be made on this
// renderer's context (nil where it was, where it was turned off, or before
// a range sensor ran on the GPU backend): such sensors then draw
// depth-buffer views, exact through the CPU caster but slower.
func (r *Renderer) ComputeErr() error {
	r.caster.Lock()
	defer r.caster.Unlock()
	return r.compute.err
}
