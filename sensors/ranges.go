package sensors

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors/raycast"
)

// Backends of the range sensors.
const (
	// BackendGPU renders which triangles are seen around each beam and
	// intersects the beam with them exactly (see surfaces.go).
	BackendGPU = "gpu"
	// BackendCPU casts every beam with the exact ray caster.
	BackendCPU = "cpu"
	// BackendAuto measures both and keeps the faster (see autoBackend): the
	// default of laser, laser3d and depth.
	BackendAuto = "auto"
)

// autoTrials is how many frames auto times on each backend, after one
// warm-up frame each (shaders, buffers, hierarchies), before it keeps the
// backend of the faster best frame (the least disturbed by other work on
// the machine, which only ever adds time); a backend more than twice as
// slow as the other in every timed frame is dropped as soon as that shows. Both backends are exact (see surfaces.go),
// so the frames measured on either are valid readings.
const autoTrials = 5

// autoBackend is the choice of a sensor with backend="auto": it alternates
// GPU and CPU frames while measuring, then keeps the faster for good (until
// SetBackend). A sensor whose beams are too fine for GPU views goes to the
// CPU at once.
type autoBackend struct {
	frames int                          // frames measured so far, warm-ups included
	cost   [2][autoTrials]time.Duration // GPU, CPU
	chosen string                       // "" while measuring
}

// backendNow returns the backend to render this frame with.
func (b *beamSet) backendNow() string {
	if b.backend != BackendAuto {
		return b.backend
	}
	a := &b.auto
	switch {
	case a.chosen != "":
		return a.chosen
	case b.views == nil:
		a.chosen = BackendCPU
		return a.chosen
	case a.frames%2 == 0:
		return BackendGPU
	}
	return BackendCPU
}

// took records how long a frame on backend took; auto decides after the
// last trial frame.
func (b *beamSet) took(backend string, d time.Duration) {
	a := &b.auto
	if b.backend != BackendAuto || a.chosen != "" {
		return
	}
	k := 0
	if backend == BackendCPU {
		k = 1
	}
	if trial := a.frames/2 - 1; trial >= 0 { // frames 0 and 1 warm up
		a.cost[k][trial] = d
	}
	a.frames++
	trials := a.frames/2 - 1 // complete GPU-CPU pairs timed
	if trials < 1 || a.frames%2 != 0 {
		return
	}
	// A backend more than twice as slow as the other in every frame so far
	// is left at once: on a large scene one GPU frame can cost seconds.
	worst := func(c []time.Duration) time.Duration { return slices.Max(c) }
	best := func(c []time.Duration) time.Duration { return slices.Min(c) }
	g, c := a.cost[0][:trials], a.cost[1][:trials]
	switch {
	case best(g) > 2*worst(c):
		a.chosen = BackendCPU
	case best(c) > 2*worst(g):
		a.chosen = BackendGPU
	case trials == autoTrials:
		a.chosen = BackendGPU
		if best(c) < best(g) {
			a.chosen = BackendCPU
		}
	}
}

// Backend returns the backend a range sensor measures with now: gpu or
// cpu, for auto the one it chose (or is trying while it measures); "" for
// other sensors.
func Backend(sensor scene.Sensor) string {
	if b, ok := sensor.(interface{ beams() *beamSet }); ok {
		return b.beams().backendNow()
	}
	return ""
}

// Noise is the measurement noise of a range sensor, applied to every range
// that hit something: r + bias + N(mean, stddev), then rounded to a
// multiple of precision (if > 0). The generator is seeded, so a run
// reproduces bit for bit.
type Noise struct {
	Mean, Stddev, Bias, Precision float64
	Seed                          int64
	rng                           *rand.Rand
}

func readNoise(c *scene.Command) (Noise, error) {
	var n Noise
	var err error
	if n.Mean, err = c.Float("noise_mean", 0); err != nil {
		return n, err
	}
	if n.Stddev, err = c.FloatIn("noise_stddev", 0, 0, 1e3); err != nil {
		return n, err
	}
	if n.Bias, err = c.Float("noise_bias", 0); err != nil {
		return n, err
	}
	if n.Precision, err = c.FloatIn("noise_precision", 0, 0, 1e3); err != nil {
		return n, err
	}
	n.Seed, n.rng, err = c.Rand("seed", 0x51a5)
	return n, err
}

func (n *Noise) active() bool {
	return n.Mean != 0 || n.Stddev != 0 || n.Bias != 0 || n.Precision != 0
}

func (n *Noise) apply(r float64) float64 {
	r += n.Bias + n.Mean
	if n.Stddev > 0 {
		r += n.Stddev * n.rng.NormFloat64()
	}
	if n.Precision > 0 {
		r = math.Round(r/n.Precision) * n.Precision
	}
	return r
}

func (n *Noise) describe(m map[string]any) {
	if n.active() {
		m["noise"] = map[string]any{"mean": n.Mean, "stddev": n.Stddev, "bias": n.Bias, "precision": n.Precision, "seed": n.Seed}
	}
}

// beamSet is what every range sensor shares: its beams (unit directions in
// the sensor frame), limits, noise and backend, and the views that the GPU
// backend renders them from.
type beamSet struct {
	name     string
	frame    *scene.Node
	dirs     []mgl64.Vec3
	rangeMin float64
	rangeMax float64
	noise    Noise
	backend  string
	auto     autoBackend // backend="auto"
	views    []surfaceView
	frame3d  surfaceFrame // the GPU backend's last render
	// The GPU backend's candidates, the bounds they give the caster, and
	// how many beams of the last frame the caster overruled.
	cand, bounds []float64
	overruled    int
	// The CPU backend's world beams, kept while the sensor's pose stays
	// (worldFor): most sensors of a cycle have not moved.
	worldDir   []mgl64.Vec3
	worldFor   mgl64.Mat4
	worldFresh bool
}

// readBeamSettings reads range_min, range_max, the noise attributes and
// backend; defBackend is the sensor type's default.
func readBeamSettings(ctx *scene.Context, defMin, defMax float64, defBackend string) (*beamSet, error) {
	c := ctx.Command
	b := &beamSet{name: ctx.Name, frame: ctx.Frame}
	var err error
	if b.rangeMin, err = c.FloatIn("range_min", defMin, 0, 1e6); err != nil {
		return nil, err
	}
	if b.rangeMax, err = c.FloatIn("range_max", defMax, 0, 1e6); err != nil {
		return nil, err
	}
	if b.rangeMax <= b.rangeMin {
		return nil, c.Errorf("range_max", "%g m must be greater than range_min (%g m)", b.rangeMax, b.rangeMin)
	}
	if b.noise, err = readNoise(c); err != nil {
		return nil, err
	}
	b.backend = defBackend
	if v, ok := c.Attr("backend"); ok {
		if v != BackendGPU && v != BackendCPU && v != BackendAuto {
			return nil, c.Errorf("backend", "%q is not a backend (want %s, %s or %s)", v, BackendAuto, BackendGPU, BackendCPU)
		}
		b.backend = v
	}
	return b, nil
}

// oversample is how many pixels the GPU views give each beam spacing: a
// beam's candidate comes from the 3x3 pixels around it, so pixels finer
// than the beams keep neighbouring beams in pixels of their own and the
// candidates tight (the caster decides every range whatever they are). A
// planar scan's views are one row high, so horizontal pixels are cheap.
const (
	oversample         = 4
	verticalOversample = 2
)

// planViews splits the beams into views of at most 90° around the sensor's
// z axis (a perspective view cannot see 180°), each fine enough that
// adjacent beams (res radians apart horizontally, vres vertically; vres 0
// for a single plane) fall in different pixels.
func (b *beamSet) planViews(res, vres float64) error {
	azimuth := func(d mgl64.Vec3) float64 { return math.Atan2(d[1], d[0]) }
	// Azimuths relative to the first beam, unwrapped into [0, 2π).
	a0 := azimuth(b.dirs[0])
	span := 0.0
	for _, d := range b.dirs {
		if math.Abs(d[2]) > math.Sin(80*math.Pi/180) {
			return fmt.Errorf("beam elevation %.1f° is beyond ±80°", math.Asin(d[2])*180/math.Pi)
		}
		span = math.Max(span, math.Mod(azimuth(d)-a0+4*math.Pi, 2*math.Pi))
	}
	k := max(1, int(math.Ceil(span/(math.Pi/2)-1e-9)))
	width := span / float64(k)
	if width == 0 {
		width = math.Max(res, 1e-3)
	}
	near := math.Max(1e-3, b.rangeMin*0.5*math.Cos(math.Pi/4))
	b.views = b.views[:0]
	for i := 0; i < k; i++ {
		mid := a0 + width*(float64(i)+0.5)
		if span == 0 {
			mid = a0
		}
		rot := mgl64.HomogRotate3DZ(mid)
		// Half a beam spacing of margin so beams on a sector border fall
		// inside both views.
		half := width/2 + res/2
		tanX := math.Tan(half)
		tanY := 0.0
		for _, d := range b.dirs {
			rel := math.Mod(azimuth(d)-mid+5*math.Pi, 2*math.Pi) - math.Pi
			if math.Abs(rel) <= half+1e-9 {
				horiz := math.Hypot(d[0], d[1])
				tanY = math.Max(tanY, math.Abs(d[2])/(horiz*math.Cos(rel)))
			}
		}
		w := max(1, int(math.Ceil(2*tanX*oversample/math.Max(res, 1e-6))))
		h := 1
		if tanY == 0 || vres == 0 {
			// One row through the scan plane, square pixels.
			tanY = math.Max(tanY, tanX/float64(w))
		} else {
			tanY += math.Tan(vres / 2)
			h = max(1, int(math.Ceil(2*tanY*verticalOversample/vres)))
		}
		if w > 16384 || h > 16384 {
			if b.backend == BackendGPU {
				return fmt.Errorf("the beams are too fine for GPU views (%dx%d pixels); use backend=\"cpu\"", w, h)
			}
			b.views = nil // SetBackend to gpu then fails with a clear error
			return nil
		}
		far := b.rangeMax * math.Sqrt(1+tanX*tanX+tanY*tanY) * 1.01
		b.views = append(b.views, surfaceView{rot: rot, w: w, h: h, tanX: tanX, tanY: tanY, near: near, far: far})
	}
	return nil
}

// ranges measures every beam into out: +Inf where no surface is within
// range_max, -Inf where the surface is closer than range_min (REP-117),
// noise applied to the rest. It returns the sensor's world pose.
func (b *beamSet) ranges(r *Renderer, s *scene.Scene, out []float64) (mgl64.Mat4, error) {
	m, err := b.beginRanges(r, s, out)
	if err != nil {
		return m.world, err
	}
	r.castOne(s, *m.cast, m.compute)
	b.endRanges(r, s, m, time.Since(m.start), out)
	return m.world, nil
}

// measurement is a frame of a range sensor under way: between
// beginRanges and endRanges its beams are cast by the exact caster, alone
// (ranges) or with other sensors' (RenderFrames).
type measurement struct {
	world   mgl64.Mat4 // the sensor's world pose
	backend string
	start   time.Time
	// cast is the beams in world coordinates, their distances to go into
	// the frame's out.
	cast *raycast.Rays
	// fills: cast.Prepare turns the beams into the world for this pose.
	fills bool
	// cand is the GPU backend's candidate per beam, in world meters (+Inf
	// where it saw none); cast looks only nearer than each (cast.Bounds).
	cand []float64
	// compute: the GPU backend casts the beams with the compute caster
	// (every beam exactly, no candidates).
	compute bool
}

// beginRanges starts measuring every beam into out: it returns the beams
// to cast, bounded by the GPU's candidates on the GPU backend.
func (b *beamSet) beginRanges(r *Renderer, s *scene.Scene, out []float64) (measurement, error) {
	if err := s.Update(); err != nil {
		return measurement{}, err
	}
	m := measurement{world: b.frame.World()}
	if err := checkWorld(b.name, m.world); err != nil {
		return m, err
	}
	m.backend, m.start = b.backendNow(), time.Now()
	if len(b.worldDir) != len(b.dirs) {
		b.worldDir, b.worldFresh = make([]mgl64.Vec3, len(b.dirs)), false
	}
	wd, world := b.worldDir, m.world
	m.cast = &raycast.Rays{Origin: world.Col(3).Vec3(), Dirs: wd, TMax: math.Inf(1), Out: out}
	if !b.worldFresh || world != b.worldFor {
		// The beams are turned into the world by the cores that cast
		// them; they count as fresh once the frame is measured
		// (endRanges), not if its cast failed half way.
		b.worldFresh, m.fills = false, true
		m.cast.Prepare = func(lo, hi int) {
			for i := lo; i < hi; i++ {
				wd[i] = world.Mul4x1(b.dirs[i].Vec4(0)).Vec3().Normalize()
			}
		}
	}
	if m.backend != BackendGPU {
		return m, nil
	}
	if r.useCompute(s) {
		m.compute = true
		return m, nil
	}
	if err := r.renderSurfaces(s, m.world, b.views, &b.frame3d, modeIDs); err != nil {
		return m, err
	}
	if len(b.cand) != len(b.dirs) {
		b.cand, b.bounds = make([]float64, len(b.dirs)), make([]float64, len(b.dirs))
	}
	if i := b.frame3d.rangesAlong(b.dirs, b.cand); i >= 0 {
		return m, fmt.Errorf("sensor %q: beam %d is outside every view", b.name, i)
	}
	scaled := !rigid(world)
	for i, c := range b.cand {
		if scaled { // candidates are in sensor-frame units, ranges in world meters
			c *= world.Mul4x1(b.dirs[i].Vec4(0)).Vec3().Len()
			b.cand[i] = c
		}
		b.bounds[i] = candidateBound(c)
	}
	m.cand, m.cast.Bounds = b.cand, b.bounds
	return m, nil
}

// candidateBound is how far the exact caster looks for a beam whose GPU
// candidate is c: a little beyond it, so that the candidate's own triangle
// is found again (its distance, computed in the world's coordinates, may
// differ from the candidate's in the last bits, or, for a depth camera's
// float32 depth, in the seventh digit).
func candidateBound(c float64) float64 {
	return c*(1+candidateMargin) + candidateMargin
}

// candidateMargin is candidateBound's margin, relative and in meters.
const candidateMargin = 1e-5

// settle completes a cast bounded by GPU candidates: where the caster
// found nothing within a beam's bound though the GPU saw a surface (the
// candidate was no hit: a rounding apart, or a cut-out the render did not
// know), the beam is cast again unbounded. It returns how many beams'
// ranges are not their candidates (overruled by a nearer surface, or
// unconfirmed).
func (r *Renderer) settle(s *scene.Scene, rays *raycast.Rays, cand []float64) int {
	var again []int
	overruled := 0
	for i, c := range cand {
		got := rays.Out[i]
		switch {
		case math.IsInf(got, 1) && !math.IsInf(c, 1):
			again = append(again, i)
			overruled++
		case got < c-candidateMargin*(1+c):
			overruled++
		}
	}
	if len(again) == 0 {
		return overruled
	}
	dirs, out := make([]mgl64.Vec3, len(again)), make([]float64, len(again))
	for k, i := range again {
		dirs[k] = rays.Dirs[i]
	}
	r.castOne(s, raycast.Rays{Origin: rays.Origin, Dirs: dirs, TMax: math.Inf(1), Out: out}, false)
	for k, i := range again {
		rays.Out[i] = out[k]
	}
	return overruled
}

// rigid reports whether m's linear part is a rotation (to 1e-12), so that
// distances in its frame and in the world agree.
func rigid(m mgl64.Mat4) bool {
	a := m.Mat3()
	d := a.Transpose().Mul3(a).Sub(mgl64.Ident3())
	for _, x := range d {
		if math.Abs(x) > 1e-12 {
			return false
		}
	}
	return true
}

// endRanges completes a measurement whose beams took cost (auto compares
// the backends by it): the GPU's unconfirmed candidates, range limits and
// noise.
func (b *beamSet) endRanges(r *Renderer, s *scene.Scene, m measurement, cost time.Duration, out []float64) {
	if m.cand != nil {
		start := time.Now()
		b.overruled = r.settle(s, m.cast, m.cand)
		cost += time.Since(start)
	} else if m.compute {
		b.overruled = 0 // no candidates: every beam cast exactly
	}
	if m.fills {
		b.worldFor, b.worldFresh = m.world, true
	}
	b.took(m.backend, cost)
	for i, rg := range out {
		switch {
		case math.IsInf(rg, 1):
		case rg < b.rangeMin:
			out[i] = math.Inf(-1)
		default:
			if b.noise.active() {
				rg = b.noise.apply(rg)
			}
			if rg > b.rangeMax {
				rg = math.Inf(1)
			}
			out[i] = rg
		}
	}
}

func (b *beamSet) describe(m map[string]any) {
	m["range_min"], m["range_max"], m["backend"] = b.rangeMin, b.rangeMax, b.backend
	if b.backend == BackendAuto && b.auto.chosen != "" {
		m["backend_chosen"] = b.auto.chosen
	}
	b.noise.describe(m)
}

// casterState is the renderer's exact ray caster, shared by CPU-backend
// sensors, and the hierarchies and edge sets of GPU-backend beams; all are
// kept between scans.
type casterState struct {
	sync.Mutex
	c     *raycast.Caster
	geoms map[raycast.Key]beamGeom
}

type beamGeom struct {
	geom  *raycast.Geometry
	edges *edgeSet
}

// beamGeometry returns the hierarchy over a primitive's triangles and the
// edges the ID render draws.
func (r *Renderer) beamGeometry(p *models.Primitive) (*raycast.Geometry, *edgeSet) {
	r.caster.Lock()
	defer r.caster.Unlock()
	key := raycast.KeyOf(p)
	if g, ok := r.caster.geoms[key]; ok {
		return g.geom, g.edges
	}
	if r.caster.geoms == nil {
		r.caster.geoms = map[raycast.Key]beamGeom{}
	}
	g := beamGeom{raycast.NewGeometry(p), newEdgeSet(p)}
	r.caster.geoms[key] = g
	return g.geom, g.edges
}

// SetBackend switches a range sensor (laser, laser3d, psd, depth) to
// BackendGPU, BackendCPU or BackendAuto (which measures anew); other
// sensors are left alone.
func SetBackend(sensor scene.Sensor, backend string) error {
	if backend != BackendGPU && backend != BackendCPU && backend != BackendAuto {
		return fmt.Errorf("%q is not a backend (want %s, %s or %s)", backend, BackendAuto, BackendGPU, BackendCPU)
	}
	if b, ok := sensor.(interface{ beams() *beamSet }); ok {
		if backend == BackendGPU && b.beams().views == nil {
			return fmt.Errorf("the beams are too fine for GPU views; use %s", BackendCPU)
		}
		b.beams().backend = backend
		b.beams().auto = autoBackend{}
	}
	return nil
}

func (b *beamSet) beams() *beamSet { return b }
