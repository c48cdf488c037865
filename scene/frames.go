package scene

import (
	"fmt"
	"math"
	"strings"

	"github.com/go-gl/mathgl/mgl64"
)

// Frame returns the node of a named frame: an insertion point or a sensor.
func (s *Scene) Frame(name string) (*Node, error) {
	if ip, ok := s.points[name]; ok {
		return ip, nil
	}
	for _, se := range s.sensors {
		if se.Name == name {
			return se.Frame, nil
		}
	}
	if name == WorldFrame {
		return s.top, nil
	}
	return nil, fmt.Errorf("no frame %q (frames are insertion points and sensors: %s)", name, strings.Join(s.FrameNames(), ", "))
}

// FrameNames lists every named frame: insertion points, then sensors.
func (s *Scene) FrameNames() []string {
	names := s.InsertionPoints()
	for _, se := range s.sensors {
		names = append(names, se.Name)
	}
	return names
}

// Transform returns the pose of frame `of` relative to frame `rel` (the
// getTransformation(FOI, FOR) of a robot model server): it maps coordinates
// in `of` to coordinates in `rel`. rel "world" is the world frame.
func (s *Scene) Transform(of, rel string) (mgl64.Mat4, error) {
	if err := s.Update(); err != nil {
		return mgl64.Mat4{}, err
	}
	a, err := s.Frame(of)
	if err != nil {
		return mgl64.Mat4{}, err
	}
	b, err := s.Frame(rel)
	if err != nil {
		return mgl64.Mat4{}, err
	}
	m := a.World()
	ok := true
	if b != s.top { // the world frame's inverse is the identity
		var inv mgl64.Mat4
		inv, ok = InvertAffine(b.World())
		m = inv.Mul4(m)
	}
	if !ok || !inRange(&m) {
		// Frames are in range, but a frame scaled (nearly) to nothing has
		// an inverse that is not.
		return mgl64.Mat4{}, fmt.Errorf("the transform of %q relative to %q is out of range (is %q scaled nearly to zero?)", of, rel, rel)
	}
	return m, nil
}

// Transforms is Transform for many frames relative to one: every world
// transform comes from one top-down pass over the graph, so listing every
// frame of a chain of parts costs its length, not its length squared.
func (s *Scene) Transforms(of []string, rel string) ([]mgl64.Mat4, error) {
	if err := s.Update(); err != nil {
		return nil, err
	}
	sensors := make(map[string]*Node, len(s.sensors))
	for _, se := range s.sensors {
		if _, dup := sensors[se.Name]; !dup {
			sensors[se.Name] = se.Frame
		}
	}
	frame := func(name string) (*Node, error) {
		if ip, ok := s.points[name]; ok {
			return ip, nil
		}
		if f, ok := sensors[name]; ok {
			return f, nil
		}
		return s.Frame(name) // the world frame, or the error naming the frames
	}
	nodes := make([]*Node, 0, len(of)+1)
	for _, name := range append(of[:len(of):len(of)], rel) {
		n, err := frame(name)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
	}
	worlds := s.worlds(nodes)
	ref := nodes[len(of)]
	inv, ok := mgl64.Ident4(), true
	if ref != s.top { // the world frame's inverse is the identity
		inv, ok = InvertAffine(worlds[len(of)])
	}
	out := make([]mgl64.Mat4, len(of))
	for i, name := range of {
		m := worlds[i]
		if ref != s.top {
			m = inv.Mul4(m)
		}
		if !ok || !inRange(&m) {
			return nil, fmt.Errorf("the transform of %q relative to %q is out of range (is %q scaled nearly to zero?)", name, rel, rel)
		}
		out[i] = m
	}
	return out, nil
}

// InvertAffine inverts a transform whose last row is 0 0 0 1 (every
// transform of the graph): [A t]^-1 = [A^-1 -A^-1 t]. Unlike mgl64's Inv,
// which returns zero for determinants below 1e-10 (a frame scaled by 1e-4
// per axis), it reports false only for a singular matrix or a result that
// is not finite.
func InvertAffine(m mgl64.Mat4) (mgl64.Mat4, bool) {
	a := m.Mat3()
	det := a.Det()
	if det == 0 || math.IsNaN(det) || math.IsInf(det, 0) {
		return mgl64.Mat4{}, false
	}
	// The adjugate over the determinant (mgl64's Mat3.Inv has the same
	// epsilon test as Mat4.Inv).
	inv := mgl64.Mat3{
		a[4]*a[8] - a[5]*a[7], a[2]*a[7] - a[1]*a[8], a[1]*a[5] - a[2]*a[4],
		a[5]*a[6] - a[3]*a[8], a[0]*a[8] - a[2]*a[6], a[2]*a[3] - a[0]*a[5],
		a[3]*a[7] - a[4]*a[6], a[1]*a[6] - a[0]*a[7], a[0]*a[4] - a[1]*a[3],
	}.Mul(1 / det)
	t := inv.Mul3x1(mgl64.Vec3{m[12], m[13], m[14]}).Mul(-1)
	r := inv.Mat4()
	r.SetCol(3, mgl64.Vec4{t[0], t[1], t[2], 1})
	for _, v := range r {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return mgl64.Mat4{}, false
		}
	}
	return r, true
}
