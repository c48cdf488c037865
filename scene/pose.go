package scene

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/go-gl/mathgl/mgl64"
)

// Pose is a rigid transform written the way scene files write it: a translation
// in meters and roll, pitch, yaw in degrees, composed as R = Rz(yaw)·Ry(pitch)·Rx(roll)
// and applied as p_parent = R·p_child + t.
type Pose struct {
	X     float64 `json:"x"` // meters
	Y     float64 `json:"y"`
	Z     float64 `json:"z"`
	Roll  float64 `json:"roll"` // degrees
	Pitch float64 `json:"pitch"`
	Yaw   float64 `json:"yaw"`
}

// Matrix returns the homogeneous transform child -> parent.
func (p Pose) Matrix() mgl64.Mat4 {
	r := mgl64.HomogRotate3DZ(mgl64.DegToRad(p.Yaw)).
		Mul4(mgl64.HomogRotate3DY(mgl64.DegToRad(p.Pitch))).
		Mul4(mgl64.HomogRotate3DX(mgl64.DegToRad(p.Roll)))
	r.SetCol(3, mgl64.Vec4{p.X, p.Y, p.Z, 1})
	return r
}

// PoseFromMatrix decomposes a rigid transform into a Pose. At pitch = ±90° (gimbal
// lock) roll is reported as 0 and the whole rotation about z goes into yaw.
func PoseFromMatrix(m mgl64.Mat4) Pose {
	p := Pose{X: m.At(0, 3), Y: m.At(1, 3), Z: m.At(2, 3)}
	sinPitch := -m.At(2, 0)
	switch {
	case sinPitch >= 1-1e-12:
		p.Pitch = 90
		p.Yaw = mgl64.RadToDeg(math.Atan2(-m.At(0, 1), m.At(1, 1)))
	case sinPitch <= -1+1e-12:
		p.Pitch = -90
		p.Yaw = mgl64.RadToDeg(math.Atan2(-m.At(0, 1), m.At(1, 1)))
	default:
		p.Pitch = mgl64.RadToDeg(math.Asin(sinPitch))
		p.Roll = mgl64.RadToDeg(math.Atan2(m.At(2, 1), m.At(2, 2)))
		p.Yaw = mgl64.RadToDeg(math.Atan2(m.At(1, 0), m.At(0, 0)))
	}
	return p
}

// String formats the pose as a pose_offset attribute value.
func (p Pose) String() string {
	v := [6]float64{p.X, p.Y, p.Z, p.Roll, p.Pitch, p.Yaw}
	parts := make([]string, len(v))
	for i, f := range v {
		if math.Abs(f) < 5e-13 {
			f = 0 // no "-0" or 1e-17 noise in printed poses
		}
		parts[i] = strconv.FormatFloat(f, 'g', 12, 64)
	}
	return strings.Join(parts, " ")
}

// ParsePose reads "x y z roll pitch yaw" (meters, degrees), separated by
// spaces, tabs or commas.
func ParsePose(s string) (Pose, error) {
	fields := splitNumbers(s)
	if len(fields) != 6 {
		return Pose{}, fmt.Errorf("want 6 numbers \"x y z roll pitch yaw\", got %d", len(fields))
	}
	var v [6]float64
	for i, f := range fields {
		x, err := parseFinite(f)
		if err != nil {
			return Pose{}, fmt.Errorf("value %d: %v", i+1, err)
		}
		v[i] = x
	}
	return Pose{v[0], v[1], v[2], v[3], v[4], v[5]}, nil
}

// parseFinite parses a float and refuses NaN and infinities, which would
// poison every transform below them.
func parseFinite(s string) (float64, error) {
	x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%q is not finite", s)
	}
	return x, nil
}

// splitNumbers splits a list of numbers separated by spaces, tabs or commas.
func splitNumbers(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == ','
	})
}
