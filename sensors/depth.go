package sensors

import (
	"image"
	"image/color"
	"math"
	"time"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors/raycast"
)

func init() { scene.RegisterSensor("depth", newDepthCamera) }

// DepthCamera measures, per pixel, the depth along its optical axis (its
// frame's +x, the optical frame's z) of the surface seen through the pixel
// center (REP-118); back-projecting pixel (u, v) with the published K (see
// Intrinsics) gives the surface point in the optical frame.
//
// XML: width, height (640x480), fov (60, horizontal) or vfov, range_min
// (0.1 m) and range_max (10 m) on the depth, the noise attributes and
// seed, backend ("auto", "gpu" or "cpu"), and a lens as a camera's
// (distortion_model, k1 k2 p1 p2 k3 or k1 k2 k3 k4): the GPU backend
// renders an undistorted view covering the field and resamples it
// (resampleDepth: planes exactly, never a depth mixed across an edge), the
// CPU backend casts each pixel's exact ray.
type DepthCamera struct {
	*beamSet
	view View // size and field of view; Pose set per frame
	gpu  surfaceFrame
	yTan []float64 // per column of the render: the pixel center ray's y over x
	zTan []float64 // per row: z over x
	dist Distortion
	umap *undistortMap  // nil for an ideal pinhole; then the render is the image
	gltf *models.Camera // what Export writes (ExportCamera)
	// Scratch of the CPU backend, kept between frames: the rays depend on
	// the pixel and the camera's pose only, so a camera that stays put
	// casts the same ones again.
	// The rays are cast in tile order (tileOrder): cpuPixel lists the
	// pixel of each ray, cpuSlot the ray of each pixel; cpuDirs,
	// cpuRanges, cpuTans and cpuNorms are in ray order.
	cpuPixel  []int32
	cpuSlot   []int32
	cpuDirs   []mgl64.Vec3 // the world ray for cpuWorld
	cpuRanges []float64
	cpuTans   [][2]float64 // the ray's y and z over x
	cpuNorms  []float64    // the length of (1, y/x, z/x)
	cpuWorld  mgl64.Mat4   // the pose cpuDirs are for
	cpuFresh  bool         // cpuDirs hold cpuWorld's rays
	// A distorted camera's depths resampled from the GPU's render (its
	// candidates and bounds, in ray order, are the beamSet's).
	resampled []float32
}

func newDepthCamera(ctx *scene.Context) (scene.Sensor, error) {
	b, err := readBeamSettings(ctx, 0.1, 10, BackendAuto)
	if err != nil {
		return nil, err
	}
	d := &DepthCamera{beamSet: b}
	if err := readPinhole(ctx.Command, &d.view); err != nil {
		return nil, err
	}
	v := &d.view
	v.Near, v.Far = b.rangeMin, b.rangeMax
	if d.dist, err = readDistortion(ctx.Command); err != nil {
		return nil, err
	}
	grid := v.intrinsics()
	if !d.dist.IsIdentity() {
		if d.umap, err = newUndistortMap(ctx.Command, grid, d.dist); err != nil {
			return nil, err
		}
		grid = d.umap.wideIntrinsics()
	}
	var tanX, tanY float64
	d.yTan, d.zTan, tanX, tanY = grid.pixelRays()
	near := math.Max(1e-3, b.rangeMin*0.5)
	far := b.rangeMax * math.Sqrt(1+tanX*tanX+tanY*tanY) * 1.01
	d.gltf = gltfCamera(ctx.Command, "range_min", "range_max", 0.1, 10)
	d.views = []surfaceView{{rot: mgl64.Ident4(), w: grid.Width, h: grid.Height, tanX: tanX, tanY: tanY, near: near, far: far}}
	return d, nil
}

// DepthImage is one depth frame: Width x Height depths in meters, top row
// first; +Inf where nothing is within range_max, -Inf where the surface is
// closer than range_min.
type DepthImage struct {
	Info  FrameInfo
	Depth []float32
}

// Intrinsics returns the depth camera's pinhole parameters and lens.
func (d *DepthCamera) Intrinsics() Intrinsics {
	in := d.view.intrinsics()
	in.Distortion = d.dist
	return in
}

// Depth measures a frame at the scene's current state.
func (d *DepthCamera) Depth(r *Renderer, s *scene.Scene) (*DepthImage, error) {
	out, m, err := d.beginDepth(r, s)
	if err != nil {
		return out, err
	}
	r.castOne(s, *m.cast, m.compute)
	d.endDepth(r, s, out, m)
	d.took(m.backend, time.Since(m.start))
	return out, nil
}

// beginDepth starts a frame: the GPU backend measures it all, the CPU
// backend returns the pixels' rays to cast (into cpuRanges) before
// endDepth.
func (d *DepthCamera) beginDepth(r *Renderer, s *scene.Scene) (*DepthImage, measurement, error) {
	if err := s.Update(); err != nil {
		return nil, measurement{}, err
	}
	world := d.frame.World()
	if err := checkWorld(d.name, world); err != nil {
		return nil, measurement{}, err
	}
	v := d.view
	out := &DepthImage{
		Info:  FrameInfo{Sensor: d.name, Intrinsics: d.Intrinsics(), Pose: scene.PoseFromMatrix(world), Near: d.rangeMin, Far: d.rangeMax},
		Depth: make([]float32, v.Width*v.Height),
	}
	m := measurement{world: world, backend: d.backendNow(), start: time.Now()}
	if len(d.cpuDirs) != len(out.Depth) {
		d.cpuDirs, d.cpuRanges = make([]mgl64.Vec3, len(out.Depth)), make([]float64, len(out.Depth))
		d.cpuTans, d.cpuNorms = make([][2]float64, len(out.Depth)), make([]float64, len(out.Depth))
		d.cpuPixel = tileOrder(v.Width, v.Height)
		d.cpuSlot = make([]int32, len(out.Depth))
		// Per ray, its pixel's y and z over x (body frame).
		for j, k32 := range d.cpuPixel {
			k := int(k32)
			d.cpuSlot[k] = int32(j)
			t := [2]float64{d.yTan[k%v.Width], d.zTan[k/v.Width]}
			if d.umap != nil {
				x, y := d.umap.ray(k) // optical x right, y down
				t = [2]float64{-x, -y}
			}
			d.cpuTans[j], d.cpuNorms[j] = t, math.Sqrt(1+t[0]*t[0]+t[1]*t[1])
		}
		d.cpuFresh = false
	}
	dirs, tans := d.cpuDirs, d.cpuTans
	m.cast = &raycast.Rays{Origin: world.Col(3).Vec3(), Dirs: dirs, TMax: math.Inf(1), Out: d.cpuRanges}
	if !d.cpuFresh || world != d.cpuWorld {
		// The pixels' rays are made by the cores that cast them; they
		// count as fresh once the frame is measured (endDepth), not if its
		// cast failed half way.
		d.cpuFresh, m.fills = false, true
		m.cast.Prepare = func(lo, hi int) {
			for k := lo; k < hi; k++ {
				dirs[k] = world.Mul4x1(mgl64.Vec4{1, tans[k][0], tans[k][1], 0}).Vec3().Normalize()
			}
		}
	}
	if m.backend == BackendGPU && r.useCompute(s) {
		m.compute = true // every pixel cast on the GPU, exactly
	} else if m.backend == BackendGPU {
		if err := d.candidates(r, s, &m); err != nil {
			return nil, m, err
		}
	}
	return out, m, nil
}

// candidates renders the GPU backend's view and proposes, for every
// pixel, the range its depth gives along the pixel's ray, a bound for the
// exact caster (see surfaces.go). A distorted camera's pixels fall between
// the render's: their depths are resampled from it, candidates like any
// other (a wrong one costs a second cast, never a wrong range).
func (d *DepthCamera) candidates(r *Renderer, s *scene.Scene, m *measurement) error {
	if err := r.renderSurfaces(s, m.world, d.views, &d.gpu, modeDepth); err != nil {
		return err
	}
	if len(d.cand) != len(d.cpuPixel) {
		d.cand, d.bounds = make([]float64, len(d.cpuPixel)), make([]float64, len(d.cpuPixel))
	}
	z := d.gpu.images[0].pixels
	if d.umap != nil {
		if len(d.resampled) != len(d.cpuPixel) {
			d.resampled = make([]float32, len(d.cpuPixel))
		}
		d.umap.resampleDepth(z, d.resampled)
		z = d.resampled
	}
	scaled := !rigid(m.world) // depths are in sensor-frame units, ranges in world meters
	for j, k := range d.cpuPixel {
		c := math.Inf(1)
		if z[k] > 0 && !math.IsInf(float64(z[k]), 1) {
			c = float64(z[k]) * d.cpuNorms[j]
			if scaled {
				t := d.cpuTans[j]
				c *= m.world.Mul4x1(mgl64.Vec4{1, t[0], t[1], 0}).Vec3().Len() / d.cpuNorms[j]
			}
		}
		d.cand[j], d.bounds[j] = c, candidateBound(c)
	}
	m.cand, m.cast.Bounds = d.cand, d.bounds
	return nil
}

// endDepth turns the CPU backend's ranges along the pixels' rays into the
// frame's depths.
func (d *DepthCamera) endDepth(r *Renderer, s *scene.Scene, out *DepthImage, m measurement) {
	if m.cand != nil {
		d.overruled = r.settle(s, m.cast, m.cand)
	} else if m.compute {
		d.overruled = 0 // no candidates: every pixel cast exactly
	}
	if m.fills {
		d.cpuWorld, d.cpuFresh = m.world, true
	}
	// Pixel by pixel, so that noise is drawn in the pixels' order.
	for k, j := range d.cpuSlot {
		z := d.cpuRanges[j] / d.cpuNorms[j] // range along the ray -> depth along x
		if math.IsInf(d.cpuRanges[j], 1) {
			z = 0
		}
		out.Depth[k] = d.limit(z)
	}
}

// tileOrder lists the pixels of a w x h image two by two, tiles of 2x2
// row by row: the four rays of a tile take nearly the same way down the
// hierarchies, so a packet of them (raycast casts neighbouring rays four
// at a time) shares more of it than four pixels of one row do (6 % less
// time on the 1M-triangle cave's 640x480 image).
func tileOrder(w, h int) []int32 {
	order := make([]int32, 0, w*h)
	for r := 0; r < h; r += 2 {
		for c := 0; c < w; c += 2 {
			for _, p := range [4][2]int{{r, c}, {r, c + 1}, {r + 1, c}, {r + 1, c + 1}} {
				if p[0] < h && p[1] < w {
					order = append(order, int32(p[0]*w+p[1]))
				}
			}
		}
	}
	return order
}

// beginFrame is renderFrame in two halves (see RenderFrames).
func (d *DepthCamera) beginFrame(r *Renderer, s *scene.Scene, st *Stamp) (pendingFrame, error) {
	img, m, err := d.beginDepth(r, s)
	if err != nil {
		return pendingFrame{}, err
	}
	frame := func() *Frame {
		img.Info.Stamp = st
		return NewFrame(img.Info.Sensor, img, st)
	}
	return pendingFrame{cast: m.cast, start: m.start, compute: m.compute, finish: func(cost time.Duration) (*Frame, error) {
		start := time.Now()
		d.endDepth(r, s, img, m)
		d.took(m.backend, cost+time.Since(start))
		return frame(), nil
	}}, nil
}

// limit turns a raw depth (0: nothing seen) into the sensor's reading.
func (d *DepthCamera) limit(z float64) float32 {
	switch {
	case z <= 0:
		return float32(math.Inf(1))
	case z < d.rangeMin:
		return float32(math.Inf(-1))
	}
	if d.noise.active() {
		z = d.noise.apply(z)
	}
	if z > d.rangeMax {
		return float32(math.Inf(1))
	}
	return float32(z)
}

// Describe implements scene.Sensor.
func (d *DepthCamera) Describe() map[string]any {
	m := map[string]any{"width": d.view.Width, "height": d.view.Height, "fov": d.view.HFOV}
	if !d.dist.IsIdentity() {
		m["distortion_model"], m["D"] = d.dist.ModelName(), d.dist.D()
	}
	d.describe(m)
	return m
}

// Capture writes BASE.depth.png (16-bit millimeters, 0 where there is no
// valid depth), BASE.depth.f32 (float32 meters, little-endian, row by row
// from the top, ±Inf as in DepthImage) and BASE.json (the FrameInfo:
// calibration, body and optical poses, range limits).
func (d *DepthCamera) Capture(r *Renderer, s *scene.Scene, out Output) ([]string, error) {
	f, err := d.renderFrame(r, s, out.Stamp)
	if err != nil {
		return nil, err
	}
	return f.WriteFiles(out.Base)
}

// Millimeters returns the depth as a 16-bit image in millimeters, 0 where
// the depth is not valid or does not fit (beyond 65.535 m).
func (im *DepthImage) Millimeters() *image.Gray16 {
	w, h := im.Info.Intrinsics.Width, im.Info.Intrinsics.Height
	g := image.NewGray16(image.Rect(0, 0, w, h))
	for j := 0; j < h; j++ {
		for i := 0; i < w; i++ {
			z := float64(im.Depth[j*w+i])
			mm := math.Round(z * 1000)
			if math.IsInf(z, 0) || math.IsNaN(z) || mm > 65535 {
				mm = 0
			}
			g.SetGray16(i, j, color.Gray16{Y: uint16(mm)})
		}
	}
	return g
}
