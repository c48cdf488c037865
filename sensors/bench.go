package sensors

import (
	"fmt"
	"math"
	"syscall"
	"time"

	"github.com/simvis/simvis/scene"
)

// BenchResult is what Bench measured for one sensor, or for a set of them.
type BenchResult struct {
	Sensor string  `json:"sensor"`
	Type   string  `json:"type"`
	Frames int     `json:"frames"`
	FPS    float64 `json:"frames_per_s"`
	// Range sensors only.
	Beams       int     `json:"beams_per_frame,omitempty"`
	BeamsPerSec float64 `json:"beams_per_s,omitempty"`
	CPUFPS      float64 `json:"cpu_frames_per_s,omitempty"` // the exact ray caster on the same beams
	SpeedRatio  float64 `json:"speed_ratio,omitempty"`      // FPS / CPUFPS
	Within1mm   float64 `json:"within_1mm,omitempty"`       // share of beams within 1 mm of the ray caster (same kind of reading, see HitMiss)
	Within1cm   float64 `json:"within_1cm,omitempty"`
	MaxError    float64 `json:"max_error_m,omitempty"` // over beams where both saw a surface
	// HitMiss counts the beams (pixels) where the backend and the ray caster
	// disagree on the kind of reading: a range against no return (+Inf) or
	// too close (-Inf), or those two against each other. MaxError does not
	// see them; Within1mm counts them as misses. Set for range sensors.
	HitMiss *int `json:"hit_miss_disagreements,omitempty"`
	// ExactBeams is how many beams of the GPU backend's last frame the exact
	// caster overruled: a surface nearer than the GPU's candidate, or a
	// candidate it did not confirm (see surfaces.go).
	ExactBeams int `json:"exact_beams_per_frame,omitempty"`
	Drawn      int `json:"triangles_drawn,omitempty"`
	Triangles  int `json:"triangles_sensed,omitempty"`
	// Backend is what a range sensor measured with (for auto, what it
	// kept).
	Backend string `json:"backend,omitempty"`
	// Sets (BenchSet) only: how many sensors one cycle renders, its wall
	// time and the process's CPU time per cycle (both cores; on a machine
	// shared with other work, CPU time moves less than wall time).
	Sensors    int     `json:"sensors,omitempty"`
	CycleMS    float64 `json:"ms_per_cycle,omitempty"`
	CycleCPUMS float64 `json:"cpu_ms_per_cycle,omitempty"`
}

// rangeReader is a sensor whose frame is a set of ranges (or depths).
type rangeReader interface {
	scene.Sensor
	beams() *beamSet
	read(r *Renderer, s *scene.Scene) ([]float64, error)
}

func (l *Laser) read(r *Renderer, s *scene.Scene) ([]float64, error) {
	sc, err := l.Scan(r, s)
	if err != nil {
		return nil, err
	}
	return sc.Ranges, nil
}

func (l *Laser3D) read(r *Renderer, s *scene.Scene) ([]float64, error) {
	cl, err := l.Scan(r, s)
	if err != nil {
		return nil, err
	}
	return cl.Ranges, nil
}

func (p *PSD) read(r *Renderer, s *scene.Scene) ([]float64, error) {
	rd, err := p.Measure(r, s)
	if err != nil {
		return nil, err
	}
	return []float64{rd.Range}, nil
}

func (d *DepthCamera) read(r *Renderer, s *scene.Scene) ([]float64, error) {
	img, err := d.Depth(r, s)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(img.Depth))
	for i, z := range img.Depth {
		out[i] = float64(z)
	}
	return out, nil
}

// frame renders one frame of any sensor and returns its ranges (nil for
// cameras).
func frame(r *Renderer, s *scene.Scene, se scene.Sensor) ([]float64, error) {
	switch x := se.(type) {
	case rangeReader:
		return x.read(r, s)
	case *Camera:
		_, err := x.Image(r, s)
		return nil, err
	}
	return nil, fmt.Errorf("cannot benchmark %T", se)
}

// timeFrames renders frames of fn for at least d (and at least one frame).
func timeFrames(d time.Duration, fn func() error) (int, time.Duration, error) {
	if err := fn(); err != nil { // warm-up: shaders, buffers, hierarchies
		return 0, 0, err
	}
	start := time.Now()
	n := 0
	for n == 0 || time.Since(start) < d {
		if err := fn(); err != nil {
			return n, time.Since(start), err
		}
		n++
	}
	return n, time.Since(start), nil
}

// Bench renders each sensor of s repeatedly for about d and reports its
// rate; range sensors are also run on the exact ray caster, for the speed
// ratio and the accuracy of their own backend against it. The scene is not
// changed between frames. Sensors keep their configured backends.
func Bench(r *Renderer, s *scene.Scene, d time.Duration) ([]BenchResult, error) {
	var out []BenchResult
	for _, se := range s.Sensors() {
		res := BenchResult{Sensor: se.Name, Type: se.Type}
		var ranges []float64
		n, el, err := timeFrames(d, func() error {
			var err error
			ranges, err = frame(r, s, se.Sensor)
			return err
		})
		if err != nil {
			return out, fmt.Errorf("sensor %q: %w", se.Name, err)
		}
		res.Frames, res.FPS = n, float64(n)/el.Seconds()
		if rr, ok := se.Sensor.(rangeReader); ok {
			b := rr.beams()
			res.Backend = b.backendNow()
			res.Beams = len(ranges)
			res.BeamsPerSec = res.FPS * float64(len(ranges))
			res.Drawn, res.Triangles = b.frame3d.drawn, b.frame3d.total
			res.ExactBeams = b.overruled
			if dc, ok := se.Sensor.(*DepthCamera); ok {
				res.Drawn, res.Triangles = dc.gpu.drawn, dc.gpu.total
			}
			// Accuracy is compared without noise, which would differ between
			// two runs of the generator.
			own, noise := b.backend, b.noise
			b.noise = Noise{}
			ranges, err = rr.read(r, s)
			b.backend = BackendCPU
			var exact []float64
			cn, cel, cerr := timeFrames(d/4, func() error {
				var err error
				exact, err = rr.read(r, s)
				return err
			})
			b.backend, b.noise = own, noise
			if err == nil {
				err = cerr
			}
			if err != nil {
				return out, fmt.Errorf("sensor %q on the ray caster: %w", se.Name, err)
			}
			res.CPUFPS = float64(cn) / cel.Seconds()
			res.SpeedRatio = res.FPS / res.CPUFPS
			var hitMiss int
			res.Within1mm, res.Within1cm, res.MaxError, hitMiss = compareRanges(ranges, exact)
			res.HitMiss = &hitMiss
		}
		out = append(out, res)
	}
	return out, nil
}

// BenchSet renders the named sensors as one cycle of a simulation does
// (RenderFrames: the CPU backend's beams of all of them cast together, on
// all cores) and reports the cycle rate, wall and CPU time per cycle.
func BenchSet(r *Renderer, s *scene.Scene, names []string, d time.Duration) (BenchResult, error) {
	res := BenchResult{Type: "set"}
	// A sensor renders once a cycle: RenderFrames takes each one once.
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return res, fmt.Errorf("sensor set %v: sensor %q named twice", names, n)
		}
		seen[n] = true
	}
	var set []*scene.SensorEntry
	for _, se := range s.Sensors() {
		for _, n := range names {
			if se.Name == n {
				set = append(set, se)
			}
		}
	}
	if len(set) != len(names) {
		return res, fmt.Errorf("sensor set %v: not all found in the scene", names)
	}
	stamps := make([]*Stamp, len(set))
	beams := 0
	cpu0 := cpuTime()
	n, el, err := timeFrames(d, func() error {
		beams = 0
		frames, errs := RenderFrames(r, s, set, stamps)
		for i, f := range frames {
			if errs[i] != nil {
				return errs[i]
			}
			beams += f.beams()
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	res.Frames, res.FPS, res.Beams = n, float64(n)/el.Seconds(), beams
	res.BeamsPerSec = res.FPS * float64(beams)
	res.Sensors = len(set)
	res.CycleMS = 1000 * el.Seconds() / float64(n)
	// The warm-up cycle of timeFrames is in the CPU time: n+1 cycles.
	res.CycleCPUMS = 1000 * (cpuTime() - cpu0).Seconds() / float64(n+1)
	return res, nil
}

// beams returns how many ranges (beams or depth pixels) a frame holds; 0
// for frames that are not ranges.
func (f *Frame) beams() int {
	switch p := f.payload.(type) {
	case *Scan:
		return len(p.Ranges)
	case *Reading:
		return 1
	case *Cloud:
		return len(p.Ranges)
	case *DepthImage:
		return len(p.Depth)
	}
	return 0
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// compareRanges returns the shares of readings within 1 mm and 1 cm of the
// reference (both non-finite and equal counts as agreeing), the largest
// difference where both are finite, and the number of readings of another
// kind than the reference's (a range, +Inf none, -Inf too close).
func compareRanges(got, ref []float64) (mm, cm, worst float64, hitMiss int) {
	if len(got) == 0 {
		return 0, 0, 0, 0
	}
	nmm, ncm := 0, 0
	for i := range got {
		a, b := got[i], ref[i]
		if math.IsInf(a, 0) || math.IsInf(b, 0) || math.IsNaN(a) || math.IsNaN(b) {
			if a == b {
				nmm++
				ncm++
			} else {
				hitMiss++
			}
			continue
		}
		e := math.Abs(a - b)
		worst = math.Max(worst, e)
		if e <= 1e-3 {
			nmm++
		}
		if e <= 1e-2 {
			ncm++
		}
	}
	return float64(nmm) / float64(len(got)), float64(ncm) / float64(len(got)), worst, hitMiss
}
