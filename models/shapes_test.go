package models

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
)

func TestShapes(t *testing.T) {
	red := [4]float32{1, 0, 0, 1}
	for _, tc := range []struct {
		mesh      *Mesh
		lo, hi    mgl64.Vec3
		triangles int
	}{
		{Box("box", 2, 3, 4, red), mgl64.Vec3{-1, -1.5, -2}, mgl64.Vec3{1, 1.5, 2}, 12},
		{Plane("plane", 5, 0.5, red), mgl64.Vec3{-2.5, -0.25, 0}, mgl64.Vec3{2.5, 0.25, 0}, 2},
		{Cylinder("cyl", 0.5, 2, 16, red), mgl64.Vec3{-0.5, -0.5, -1}, mgl64.Vec3{0.5, 0.5, 1}, 64},
	} {
		name := tc.mesh.Name
		lo, hi := bounds(tc.mesh)
		if !vec3Near(lo, tc.lo, 1e-7) || !vec3Near(hi, tc.hi, 1e-7) {
			t.Errorf("%s: bounds %v..%v, want %v..%v", name, lo, hi, tc.lo, tc.hi)
		}
		p := tc.mesh.Primitives[0]
		if len(p.Normals) != len(p.Positions) || len(p.TexCoords) != len(p.Positions) {
			t.Fatalf("%s: %d positions, %d normals, %d texcoords", name, len(p.Positions), len(p.Normals), len(p.TexCoords))
		}
		for i, n := range p.Normals {
			if math.Abs(float64(n.Len())-1) > 1e-6 {
				t.Errorf("%s: normal %d has length %v", name, i, n.Len())
			}
		}
		for tri := 0; tri < len(p.Indices); tri += 3 {
			a, b, c := v64(p.Positions[p.Indices[tri]]), v64(p.Positions[p.Indices[tri+1]]), v64(p.Positions[p.Indices[tri+2]])
			centroid := a.Add(b).Add(c).Mul(1.0 / 3)
			face := b.Sub(a).Cross(c.Sub(a)) // CCW seen from outside => points outward
			for k := range 3 {
				n := v64(p.Normals[p.Indices[tri+k]])
				// The plane has no inside; its "outside" is +z.
				out := centroid
				if name == "plane" {
					out = mgl64.Vec3{0, 0, 1}
				}
				if n.Dot(out) <= 0 || face.Dot(n) <= 0 {
					t.Errorf("%s: triangle %d vertex %d: normal %v, face %v, centroid %v", name, tri/3, k, n, face, centroid)
				}
			}
		}
		m := NewModel(name)
		m.AddNode(nil, "a", mgl64.Ident4(), tc.mesh)
		if got := m.TriangleCount(); got != tc.triangles {
			t.Errorf("%s: %d triangles, want %d", name, got, tc.triangles)
		}
		mat := p.Material
		if mat.BaseColor != red || mat.AlphaMode != AlphaOpaque || mat.DoubleSided {
			t.Errorf("%s: material %+v", name, mat)
		}
	}
	if Box("glass", 1, 1, 1, [4]float32{1, 1, 1, 0.5}).Primitives[0].Material.AlphaMode != AlphaBlend {
		t.Error("translucent color not blended")
	}
}

func TestKeys(t *testing.T) {
	a := Box("a", 1, 2, 3, [4]float32{1, 0, 0, 1}).Primitives[0]
	b := Box("b", 1, 2, 3, [4]float32{0, 1, 0, 1}).Primitives[0]
	c := Box("c", 1, 2, 3.5, [4]float32{1, 0, 0, 1}).Primitives[0]
	if a.Key != b.Key {
		t.Error("identical geometry, different keys")
	}
	if a.Key == c.Key {
		t.Error("different geometry, same key")
	}
	d := *a
	d.Indices = append([]uint32{}, a.Indices...)
	d.Indices[0], d.Indices[1] = d.Indices[1], d.Indices[0]
	d.UpdateKey()
	if d.Key == a.Key {
		t.Error("different indices, same key")
	}
	// Keys survive loading: two identical meshes in a file share a key.
	doc := triDoc()
	doc.Meshes = append(doc.Meshes, doc.Meshes[0])
	m := mustDecode(t, doc)
	if m.Meshes[0].Primitives[0].Key != m.Meshes[1].Primitives[0].Key {
		t.Error("identical loaded meshes, different keys")
	}
}

func TestAddNodeAndWalk(t *testing.T) {
	m := NewModel("m")
	box := Box("box", 1, 1, 1, [4]float32{1, 1, 1, 1})
	root := m.AddNode(nil, "root", mgl64.Translate3D(1, 0, 0), box)
	child := m.AddNode(root, "child", mgl64.HomogRotate3DZ(math.Pi/2), nil)
	m.AddNode(child, "leaf", mgl64.Translate3D(1, 0, 0), box)
	m.AddNode(nil, "root2", mgl64.Ident4(), box)
	if len(m.Meshes) != 1 || len(m.Materials) != 1 || len(m.Roots) != 2 {
		t.Errorf("%d meshes, %d materials, %d roots; want 1, 1, 2", len(m.Meshes), len(m.Materials), len(m.Roots))
	}
	var order []string
	var leaf mgl64.Mat4
	m.Walk(func(n *Node, w mgl64.Mat4) error {
		order = append(order, n.Name)
		if n.Name == "leaf" {
			leaf = w
		}
		return nil
	})
	if want := "root child leaf root2"; strings.Join(order, " ") != want {
		t.Errorf("walk order %q, want %q", strings.Join(order, " "), want)
	}
	if got := leaf.Col(3).Vec3(); !vec3Near(got, mgl64.Vec3{1, 1, 0}, 1e-12) {
		t.Errorf("leaf at %v, want (1,1,0)", got)
	}
	stop := errors.New("stop")
	n := 0
	if err := m.Walk(func(*Node, mgl64.Mat4) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("walk did not stop at the first error: %v after %d nodes", err, n)
	}
	if got := m.TriangleCount(); got != 36 {
		t.Errorf("%d triangles, want 36 (three instances of a box)", got)
	}
}
