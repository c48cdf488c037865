package helpers

import (
	"math"

	"github.com/g3n/engine/geometry"
	"github.com/g3n/engine/gls"
	"github.com/g3n/engine/graphic"
	"github.com/g3n/engine/material"
	"github.com/g3n/engine/math32"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

// MaxElevations bounds the sweeps drawn of a 3D scanner: its lowest and
// highest layers and evenly chosen ones between (scene.FieldOfView.Thin).
const MaxElevations = 8

// FieldOfViewLines draws what a sensor sees (scene.Sighted) in its own
// frame, yellow lines 1 m long: a camera's frustum edges, or a scanner's
// beams every 10 degrees at most (36 at least across its sweep) in each
// drawn layer, with the sweep's last beam. Place it at the sensor's world
// pose (SetMatrix).
func FieldOfViewLines(f scene.FieldOfView) *graphic.Lines {
	var pts []float32
	seg := func(a, b mgl64.Vec3) {
		pts = append(pts, float32(a[0]), float32(a[1]), float32(a[2]), float32(b[0]), float32(b[1]), float32(b[2]))
	}
	if f.HFOV > 0 && f.HFOV < 180 && f.VFOV > 0 && f.VFOV < 180 {
		th := math.Tan(mgl64.DegToRad(f.HFOV) / 2)
		tv := math.Tan(mgl64.DegToRad(f.VFOV) / 2)
		var corners [4]mgl64.Vec3
		for k, sgn := range [4][2]float64{{1, 1}, {-1, 1}, {-1, -1}, {1, -1}} {
			corners[k] = mgl64.Vec3{1, sgn[0] * th, sgn[1] * tv}
			seg(mgl64.Vec3{}, corners[k])
		}
		for k := range corners {
			seg(corners[k], corners[(k+1)%4])
		}
	} else {
		lo, hi := f.AngleMin, f.AngleMax
		if !(hi >= lo && hi-lo <= 360) {
			lo, hi = 0, 0 // nothing sensible: a single beam
		}
		els := f.Thin(MaxElevations).Elevations
		if len(els) == 0 {
			els = []float64{0}
		}
		beam := func(az, el float64) mgl64.Vec3 {
			a, e := mgl64.DegToRad(az), mgl64.DegToRad(el)
			return mgl64.Vec3{math.Cos(e) * math.Cos(a), math.Cos(e) * math.Sin(a), math.Sin(e)}
		}
		step := math.Max(10, (hi-lo)/36)
		for _, el := range els {
			if math.IsNaN(el) || math.Abs(el) > 90 {
				continue
			}
			for a := lo; a <= hi+1e-9; a += step {
				seg(mgl64.Vec3{}, beam(a, el))
			}
			seg(mgl64.Vec3{}, beam(hi, el))
		}
	}
	cols := make(math32.ArrayF32, len(pts))
	for i := 0; i < len(cols); i += 3 {
		cols[i], cols[i+1], cols[i+2] = 1, 0.9, 0.1
	}
	geom := geometry.NewGeometry()
	geom.AddVBO(gls.NewVBO(math32.ArrayF32(pts)).AddAttrib(gls.VertexPosition))
	geom.AddVBO(gls.NewVBO(cols).AddAttrib(gls.VertexColor))
	return graphic.NewLines(geom, material.NewBasic())
}
