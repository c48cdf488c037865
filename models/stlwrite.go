package models

import (
	"bufio"
	"encoding/binary"
	"io"
	"math"

	"github.com/go-gl/mathgl/mgl64"
)

// WriteSTL writes every triangle m draws, in model space (each node's
// transform applied), as binary STL with face normals: STL keeps no
// hierarchy, colours or sharing. A header names the model.
func WriteSTL(w io.Writer, m *Model) error {
	var tris [][3]mgl64.Vec3
	err := m.Walk(func(n *Node, world mgl64.Mat4) error {
		if n.Mesh == nil {
			return nil
		}
		for _, p := range n.Mesh.Primitives {
			for k := 0; k+2 < len(p.Indices); k += 3 {
				var t [3]mgl64.Vec3
				for j := range t {
					v := p.Positions[p.Indices[k+j]]
					t[j] = world.Mul4x1(mgl64.Vec4{float64(v[0]), float64(v[1]), float64(v[2]), 1}).Vec3()
				}
				tris = append(tris, t)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	var header [80]byte
	copy(header[:], "simvis "+m.Name)
	bw.Write(header[:])
	binary.Write(bw, binary.LittleEndian, uint32(len(tris)))
	var rec [50]byte
	put := func(off int, v mgl64.Vec3) {
		for i := range 3 {
			binary.LittleEndian.PutUint32(rec[off+4*i:], math.Float32bits(float32(v[i])))
		}
	}
	for _, t := range tris {
		n := t[1].Sub(t[0]).Cross(t[2].Sub(t[0]))
		if l := n.Len(); l > 0 {
			n = n.Mul(1 / l)
		}
		put(0, n)
		for j := range t {
			put(12+12*j, t[j])
		}
		bw.Write(rec[:])
	}
	return bw.Flush()
}
