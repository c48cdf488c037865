package sensors

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

func init() { scene.RegisterSensor("laser3d", newLaser3D) }

// Laser3D is a multi-layer laser scanner: for each vertical angle (a layer,
// degrees up from the x-y plane) a planar sweep from angle_min to
// angle_max every resolution degrees.
//
// XML: layers ("-15 -13 ... 15", explicit vertical angles) or
// vertical_min, vertical_max, vertical_resolution (a regular grid; default
// 16 layers from -15° to 15°), angle_min (-180), angle_max (180),
// resolution (0.4), range_min (0.3 m), range_max (100 m), the noise
// attributes and seed, backend ("auto", the default; "gpu" or "cpu").
type Laser3D struct {
	*beamSet
	layers  []float64 // vertical angles, radians, ascending
	columns int       // beams per layer
}

func newLaser3D(ctx *scene.Context) (scene.Sensor, error) {
	c := ctx.Command
	b, err := readBeamSettings(ctx, 0.3, 100, BackendAuto)
	if err != nil {
		return nil, err
	}
	l := &Laser3D{beamSet: b}
	if c.Has("layers") {
		for _, a := range []string{"vertical_min", "vertical_max", "vertical_resolution"} {
			if c.Has(a) {
				return nil, c.Errorf(a, "give layers or a vertical_min/max/resolution grid, not both")
			}
		}
		deg, _, err := c.FloatList("layers")
		if err != nil {
			return nil, err
		}
		if len(deg) == 0 {
			return nil, c.Errorf("layers", "no vertical angles")
		}
		for _, d := range deg {
			l.layers = append(l.layers, d*math.Pi/180)
		}
	} else {
		lo, err := c.FloatIn("vertical_min", -15, -80, 80)
		if err != nil {
			return nil, err
		}
		hi, err := c.FloatIn("vertical_max", 15, -80, 80)
		if err != nil {
			return nil, err
		}
		res, err := c.FloatIn("vertical_resolution", 2, 1e-3, 160)
		if err != nil {
			return nil, err
		}
		if hi < lo {
			return nil, c.Errorf("vertical_max", "%g° is below vertical_min (%g°)", hi, lo)
		}
		for k := 0; k <= int(math.Floor((hi-lo)/res+1e-9)); k++ {
			l.layers = append(l.layers, (lo+float64(k)*res)*math.Pi/180)
		}
	}
	sort.Float64s(l.layers)
	vres := 0.0
	for i, a := range l.layers {
		if math.Abs(a) > 80*math.Pi/180 {
			return nil, c.Errorf("layers", "vertical angle %g° is beyond ±80°", a*180/math.Pi)
		}
		if i > 0 {
			gap := a - l.layers[i-1]
			if gap == 0 {
				return nil, c.Errorf("layers", "vertical angle %g° is listed twice", a*180/math.Pi)
			}
			if vres == 0 || gap < vres {
				vres = gap
			}
		}
	}
	lo, res, columns, err := readAzimuths(c, -180, 180, 0.4)
	if err != nil {
		return nil, err
	}
	l.columns = columns
	if l.columns*len(l.layers) > 1<<22 {
		return nil, c.Errorf("resolution", "%d x %d beams is too many", l.columns, len(l.layers))
	}
	for _, el := range l.layers {
		for k := 0; k < l.columns; k++ {
			az := (lo + float64(k)*res) * math.Pi / 180
			l.dirs = append(l.dirs, mgl64.Vec3{math.Cos(el) * math.Cos(az), math.Cos(el) * math.Sin(az), math.Sin(el)})
		}
	}
	if err := l.planViews(res*math.Pi/180, vres); err != nil {
		return nil, c.Errorf("", "%v", err)
	}
	return l, nil
}

// Cloud is one 3D scan as an organized point cloud: Width beams per layer,
// Height layers (lowest first), points in the sensor frame; NaN where a
// beam returned nothing in range (PCL's convention for organized clouds).
type Cloud struct {
	Sensor        string
	Stamp         *Stamp // nil outside sequences and hosts
	Width, Height int
	Points        []mgl64.Vec3
	Ranges        []float64 // per beam, as in Scan (+Inf none, -Inf too close)
	Pose          scene.Pose
}

// Scan measures a 3D scan at the scene's current state.
func (l *Laser3D) Scan(r *Renderer, s *scene.Scene) (*Cloud, error) {
	cl := l.newCloud()
	world, err := l.ranges(r, s, cl.Ranges)
	l.points(cl, world)
	return cl, err
}

func (l *Laser3D) newCloud() *Cloud {
	return &Cloud{Width: l.columns, Height: len(l.layers), Ranges: make([]float64, len(l.dirs)), Points: make([]mgl64.Vec3, len(l.dirs))}
}

// points completes a cloud whose ranges are measured.
func (l *Laser3D) points(cl *Cloud, world mgl64.Mat4) {
	cl.Pose = scene.PoseFromMatrix(world)
	for i, rg := range cl.Ranges {
		if math.IsInf(rg, 0) {
			cl.Points[i] = mgl64.Vec3{math.NaN(), math.NaN(), math.NaN()}
		} else {
			cl.Points[i] = l.dirs[i].Mul(rg)
		}
	}
}

// beginFrame is renderFrame in two halves (see RenderFrames).
func (l *Laser3D) beginFrame(r *Renderer, s *scene.Scene, st *Stamp) (pendingFrame, error) {
	cl := l.newCloud()
	return l.pending(r, s, cl.Ranges, func(world mgl64.Mat4) *Frame {
		l.points(cl, world)
		cl.Sensor, cl.Stamp = l.name, st
		return NewFrame(l.name, cl, st)
	})
}

// Describe implements scene.Sensor.
func (l *Laser3D) Describe() map[string]any {
	deg := make([]float64, len(l.layers))
	for i, a := range l.layers {
		deg[i] = a * 180 / math.Pi
	}
	m := map[string]any{"layers": deg, "beams_per_layer": l.columns}
	l.describe(m)
	return m
}

// Capture writes BASE.pcd (PCD v0.7, binary, organized: x y z float32 in
// the sensor frame, NaN for no return; the sensor's world pose as
// VIEWPOINT).
func (l *Laser3D) Capture(r *Renderer, s *scene.Scene, out Output) ([]string, error) {
	f, err := l.renderFrame(r, s, out.Stamp)
	if err != nil {
		return nil, err
	}
	return f.WriteFiles(out.Base)
}

// WritePCD writes the cloud as binary PCD v0.7. VIEWPOINT is the sensor's
// world pose (translation and quaternion w x y z).
func (cl *Cloud) WritePCD(path string) error {
	return writeAtomic(path, cl.writePCD)
}

func (cl *Cloud) writePCD(out io.Writer) error {
	w := bufio.NewWriter(out)
	q := poseQuat(cl.Pose)
	fmt.Fprintf(w, "# .PCD v0.7 - Point Cloud Data file format\nVERSION 0.7\nFIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\n")
	fmt.Fprintf(w, "WIDTH %d\nHEIGHT %d\nVIEWPOINT %g %g %g %g %g %g %g\nPOINTS %d\nDATA binary\n",
		cl.Width, cl.Height, cl.Pose.X, cl.Pose.Y, cl.Pose.Z, q.W, q.V[0], q.V[1], q.V[2], len(cl.Points))
	var buf [12]byte
	for _, p := range cl.Points {
		for k := 0; k < 3; k++ {
			binary.LittleEndian.PutUint32(buf[4*k:], math.Float32bits(float32(p[k])))
		}
		w.Write(buf[:])
	}
	return w.Flush()
}

func poseQuat(p scene.Pose) mgl64.Quat {
	m := p.Matrix()
	return mgl64.Mat4ToQuat(m).Normalize()
}
