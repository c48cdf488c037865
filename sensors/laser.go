package sensors

import (
	"encoding/json"
	"io"
	"math"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

func init() {
	scene.RegisterSensor("laser", newLaser)
	scene.RegisterSensor("psd", newPSD)
}

// Laser is a planar laser scanner: beams in its frame's x-y plane from
// angle_min to angle_max (degrees from +x toward +y) every resolution
// degrees, like sensor_msgs/LaserScan.
//
// XML: angle_min (-90), angle_max (90), resolution (0.5), range_min (0.05 m),
// range_max (30 m), noise_mean, noise_stddev, noise_bias, noise_precision
// (m, 0), seed (1), backend ("auto", the default, which keeps the faster
// of the two after timing a few frames on each; "gpu" or "cpu").
type Laser struct {
	*beamSet
	angleMin, increment float64 // radians
}

func newLaser(ctx *scene.Context) (scene.Sensor, error) {
	c := ctx.Command
	b, err := readBeamSettings(ctx, 0.05, 30, BackendAuto)
	if err != nil {
		return nil, err
	}
	lo, res, n, err := readAzimuths(c, -90, 90, 0.5)
	if err != nil {
		return nil, err
	}
	if n > 1<<20 {
		return nil, c.Errorf("resolution", "%g° gives %d beams", res, n)
	}
	l := &Laser{beamSet: b, angleMin: lo * math.Pi / 180, increment: res * math.Pi / 180}
	for i := 0; i < n; i++ {
		a := l.angleMin + float64(i)*l.increment
		l.dirs = append(l.dirs, mgl64.Vec3{math.Cos(a), math.Sin(a), 0})
	}
	if err := l.planViews(l.increment, 0); err != nil {
		return nil, c.Errorf("", "%v", err)
	}
	return l, nil
}

// readAzimuths reads angle_min, angle_max and resolution (degrees) and
// returns the first angle, the increment and the number of beams. A span of
// a full circle leaves out the last beam, which would repeat the first.
func readAzimuths(c *scene.Command, defMin, defMax, defRes float64) (lo, res float64, n int, err error) {
	if lo, err = c.FloatIn("angle_min", defMin, -360, 360); err != nil {
		return
	}
	hi, err := c.FloatIn("angle_max", defMax, -360, 360)
	if err != nil {
		return
	}
	if res, err = c.FloatIn("resolution", defRes, 1e-3, 360); err != nil {
		return
	}
	if hi < lo || hi-lo > 360 {
		return 0, 0, 0, c.Errorf("angle_max", "%g° must be from angle_min (%g°) to angle_min + 360°", hi, lo)
	}
	n = int(math.Floor((hi-lo)/res+1e-9)) + 1
	if hi-lo > 360-res/2 && n > 1 {
		n--
	}
	return lo, res, n, nil
}

// Scan is one laser scan, laid out like sensor_msgs/LaserScan: angles in
// radians from +x toward +y, ranges in meters; +Inf where no surface is
// within range_max, -Inf where one is closer than range_min (REP-117).
type Scan struct {
	Sensor         string     `json:"sensor"`
	Stamp          *Stamp     `json:"stamp,omitempty"`
	AngleMin       float64    `json:"angle_min"`
	AngleMax       float64    `json:"angle_max"`
	AngleIncrement float64    `json:"angle_increment"`
	RangeMin       float64    `json:"range_min"`
	RangeMax       float64    `json:"range_max"`
	Ranges         []float64  `json:"-"`
	Pose           scene.Pose `json:"pose"` // the sensor's world pose
}

// MarshalJSON writes ranges with null for the non-finite values JSON cannot
// hold, and lists the beams that were too close (-Inf) separately so that
// nothing is lost; pose fields that are not finite are null too.
func (s *Scan) MarshalJSON() ([]byte, error) {
	type plain Scan
	out := struct {
		*plain
		Ranges   []*float64 `json:"ranges"`
		TooClose []int      `json:"too_close,omitempty"`
		Pose     jsonPose   `json:"pose"`
	}{plain: (*plain)(s), Pose: finitePose(s.Pose)}
	out.Ranges = make([]*float64, len(s.Ranges))
	for i := range s.Ranges {
		r := s.Ranges[i]
		switch {
		case math.IsInf(r, -1):
			out.TooClose = append(out.TooClose, i)
		case !math.IsInf(r, 0) && !math.IsNaN(r):
			out.Ranges[i] = &s.Ranges[i]
		}
	}
	return json.Marshal(out)
}

// Scan measures the scan at the scene's current state.
func (l *Laser) Scan(r *Renderer, s *scene.Scene) (*Scan, error) {
	sc := l.newScan()
	world, err := l.ranges(r, s, sc.Ranges)
	sc.Pose = scene.PoseFromMatrix(world)
	return sc, err
}

func (l *Laser) newScan() *Scan {
	return &Scan{
		Sensor: l.name, AngleMin: l.angleMin, AngleIncrement: l.increment,
		AngleMax: l.angleMin + float64(len(l.dirs)-1)*l.increment,
		RangeMin: l.rangeMin, RangeMax: l.rangeMax, Ranges: make([]float64, len(l.dirs)),
	}
}

// beginFrame is renderFrame in two halves (see RenderFrames).
func (l *Laser) beginFrame(r *Renderer, s *scene.Scene, st *Stamp) (pendingFrame, error) {
	sc := l.newScan()
	return l.pending(r, s, sc.Ranges, func(world mgl64.Mat4) *Frame {
		sc.Pose, sc.Stamp = scene.PoseFromMatrix(world), st
		return NewFrame(l.name, sc, st)
	})
}

// Beams returns the number of beams of a scan.
func (l *Laser) Beams() int { return len(l.dirs) }

// Describe implements scene.Sensor.
func (l *Laser) Describe() map[string]any {
	f := l.FieldOfView()
	m := map[string]any{
		"beams": len(l.dirs), "angle_min": f.AngleMin, "angle_max": f.AngleMax,
		"resolution": l.increment * 180 / math.Pi,
	}
	l.describe(m)
	return m
}

// Capture writes BASE.scan.json.
func (l *Laser) Capture(r *Renderer, s *scene.Scene, out Output) ([]string, error) {
	f, err := l.renderFrame(r, s, out.Stamp)
	if err != nil {
		return nil, err
	}
	return f.WriteFiles(out.Base)
}

func writeJSONFile(path string, v any) error {
	data, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return writeAtomic(path, func(w io.Writer) error {
		_, err := w.Write(append(data, '\n'))
		return err
	})
}

// PSD is a single-beam range sensor (an infrared position sensitive device)
// looking along its frame's +x. Its default backend is the exact ray
// caster: one beam is not worth a render.
//
// XML: range_min (0.04 m), range_max (0.8 m), the noise attributes and
// seed, backend ("cpu" or "gpu").
type PSD struct {
	*beamSet
}

func newPSD(ctx *scene.Context) (scene.Sensor, error) {
	b, err := readBeamSettings(ctx, 0.04, 0.8, BackendCPU)
	if err != nil {
		return nil, err
	}
	p := &PSD{beamSet: b}
	p.dirs = []mgl64.Vec3{{1, 0, 0}}
	if err := p.planViews(1e-3, 0); err != nil {
		return nil, ctx.Command.Errorf("", "%v", err)
	}
	return p, nil
}

// Reading is one PSD measurement.
type Reading struct {
	Sensor   string     `json:"sensor"`
	Stamp    *Stamp     `json:"stamp,omitempty"`
	Range    float64    `json:"-"`
	RangeMin float64    `json:"range_min"`
	RangeMax float64    `json:"range_max"`
	Pose     scene.Pose `json:"pose"`
}

// MarshalJSON writes range as null where it is not finite, with
// "too_close": true for -Inf, and pose fields that are not finite as null.
func (p *Reading) MarshalJSON() ([]byte, error) {
	type plain Reading
	out := struct {
		*plain
		Range    *float64 `json:"range"`
		TooClose bool     `json:"too_close,omitempty"`
		Pose     jsonPose `json:"pose"`
	}{plain: (*plain)(p), Pose: finitePose(p.Pose)}
	switch {
	case math.IsInf(p.Range, -1):
		out.TooClose = true
	case !math.IsInf(p.Range, 0) && !math.IsNaN(p.Range):
		out.Range = &p.Range
	}
	return json.Marshal(out)
}

// Measure returns the range at the scene's current state.
func (p *PSD) Measure(r *Renderer, s *scene.Scene) (*Reading, error) {
	out := []float64{0}
	world, err := p.ranges(r, s, out)
	return p.reading(out[0], world), err
}

func (p *PSD) reading(rg float64, world mgl64.Mat4) *Reading {
	return &Reading{Sensor: p.name, Range: rg, RangeMin: p.rangeMin, RangeMax: p.rangeMax, Pose: scene.PoseFromMatrix(world)}
}

// beginFrame is renderFrame in two halves (see RenderFrames).
func (p *PSD) beginFrame(r *Renderer, s *scene.Scene, st *Stamp) (pendingFrame, error) {
	out := []float64{0}
	return p.pending(r, s, out, func(world mgl64.Mat4) *Frame {
		rd := p.reading(out[0], world)
		rd.Stamp = st
		return NewFrame(p.name, rd, st)
	})
}

// Describe implements scene.Sensor.
func (p *PSD) Describe() map[string]any {
	m := map[string]any{}
	p.describe(m)
	return m
}

// Capture writes BASE.psd.json.
func (p *PSD) Capture(r *Renderer, s *scene.Scene, out Output) ([]string, error) {
	f, err := p.renderFrame(r, s, out.Stamp)
	if err != nil {
		return nil, err
	}
	return f.WriteFiles(out.Base)
}
