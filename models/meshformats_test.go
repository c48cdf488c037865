package models

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
)

// binarySTLBytes writes triangles as binary STL (normals zero).
func binarySTLBytes(tris [][3]mgl32.Vec3) []byte {
	var b bytes.Buffer
	b.Write(make([]byte, 80))
	binary.Write(&b, binary.LittleEndian, uint32(len(tris)))
	for _, t := range tris {
		binary.Write(&b, binary.LittleEndian, [3]float32{})
		for _, v := range t {
			binary.Write(&b, binary.LittleEndian, v)
		}
		b.Write([]byte{0, 0})
	}
	return b.Bytes()
}

func putFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func onlyPrimitive(t *testing.T, m *Model) *Primitive {
	t.Helper()
	if len(m.Meshes) != 1 || len(m.Meshes[0].Primitives) != 1 {
		t.Fatalf("want one mesh of one primitive, got %d meshes", len(m.Meshes))
	}
	return m.Meshes[0].Primitives[0]
}

func TestSTLBinaryAndASCII(t *testing.T) {
	dir := t.TempDir()
	tris := [][3]mgl32.Vec3{{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, {{0, 0, 1}, {0, 1, 1}, {1, 0, 1}}}
	// A binary file whose header starts with "solid", as some exporters write.
	data := binarySTLBytes(tris)
	copy(data, "solid but binary")
	bin := putFile(t, dir, "b.STL", data)
	ascii := putFile(t, dir, "a.stl", []byte(`solid x
  facet normal 0 0 1
    outer loop
      vertex 0 0 0
      vertex 1 0 0
      vertex 0 1 0
    endloop
  endfacet
  facet normal 0 0 -1
    outer loop
      vertex 0 0 1
      vertex 0 1 1
      vertex 1 0 1
    endloop
  endfacet
endsolid x
`))
	for _, p := range []string{bin, ascii} {
		m, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		checkModel(t, m, DefaultLimits)
		prim := onlyPrimitive(t, m)
		if len(prim.Indices) != 6 || len(prim.Positions) != 6 {
			t.Fatalf("%s: %d indices, %d positions", p, len(prim.Indices), len(prim.Positions))
		}
		if prim.Normals[0] != (mgl32.Vec3{0, 0, 1}) || prim.Normals[3] != (mgl32.Vec3{0, 0, -1}) {
			t.Fatalf("%s: normals %v %v", p, prim.Normals[0], prim.Normals[3])
		}
		if prim.Positions[4] != (mgl32.Vec3{0, 1, 1}) || prim.Material.Name != "default" {
			t.Fatalf("%s: position %v, material %q", p, prim.Positions[4], prim.Material.Name)
		}
		if got := m.Files(); len(got) != 1 {
			t.Fatalf("%s: files %v", p, got)
		}
	}
}

func TestSTLRefusals(t *testing.T) {
	dir := t.TempDir()
	nan := binarySTLBytes([][3]mgl32.Vec3{{{0, 0, 0}, {float32(math.NaN()), 0, 0}, {0, 1, 0}}})
	cases := []struct{ name, data, want string }{
		{"nan.stl", string(nan), "STL: triangle 1: vertex 2 [NaN 0 0] is not finite"},
		{"short.stl", "abc", `STL: not ASCII (no "solid") and not binary: 3 bytes, shorter than a binary header (84)`},
		{"inf.stl", "solid\nfacet normal 0 0 1\nouter loop\nvertex 0 0 inf\n", `STL: line 4: vertex: "inf" is not a finite number`},
		{"open.stl", "solid\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\n", "STL: line 5: unexpected end of file"},
		{"two.stl", "solid\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 0 0 0\nendloop\nendfacet\nendsolid\n", "STL: line 6: a facet with 2 vertices (want at least 3)"},
	}
	for _, tc := range cases {
		p := putFile(t, dir, tc.name, []byte(tc.data))
		_, err := Load(p)
		if want := "models: " + p + ": " + tc.want; err == nil || err.Error() != want {
			t.Errorf("%s: got %v\nwant %s", tc.name, err, want)
		}
	}
	// Budgets refuse before allocating: the count comes from the header.
	big := putFile(t, dir, "big.stl", binarySTLBytes(make([][3]mgl32.Vec3, 5)))
	_, err := LoadWith(big, LoadOptions{Limits: Limits{Triangles: 4}})
	var le *LimitError
	if !errors.As(err, &le) || le.Field != "Triangles" || le.Have != 5 {
		t.Fatalf("got %v", err)
	}
}

func TestOBJWithMTL(t *testing.T) {
	dir := t.TempDir()
	putFile(t, dir, "c.mtl", []byte("newmtl red\nKd 1 0 0\nnewmtl glass\nKd 0 0 1\nd 0.5\n"))
	p := putFile(t, dir, "c.obj", []byte(`# a quad, a triangle and an uncoloured triangle
mtllib c.mtl
v 0 0 0
v 1 0 0
v 1 1 0
v 0 1 0
vn 0 0 2
f 5 6 7
usemtl red
f 1//1 2//1 3//1 4//1
usemtl glass
f -4 -3 -2
`))
	_, err := Load(p)
	if err == nil || !strings.Contains(err.Error(), "line 8: vertex index 5 out of range (4 defined so far)") {
		t.Fatalf("got %v", err)
	}
	data, _ := os.ReadFile(p)
	p = putFile(t, dir, "c.obj", bytes.Replace(data, []byte("f 5 6 7"), []byte("f 1 2 4"), 1))
	m, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	checkModel(t, m, DefaultLimits)
	prims := m.Meshes[0].Primitives
	if len(prims) != 3 {
		t.Fatalf("%d primitives", len(prims))
	}
	if prims[0].Material.Name != "default" || len(prims[0].Indices) != 3 {
		t.Fatalf("uncoloured: %q %d", prims[0].Material.Name, len(prims[0].Indices))
	}
	if red := prims[1]; red.Material.BaseColor != [4]float32{1, 0, 0, 1} || len(red.Indices) != 6 || red.Normals[0] != (mgl32.Vec3{0, 0, 1}) {
		t.Fatalf("red: %v %d %v", red.Material.BaseColor, len(red.Indices), red.Normals[0])
	}
	if glass := prims[2]; glass.Material.BaseColor != [4]float32{0, 0, 1, 0.5} || glass.Material.AlphaMode != AlphaBlend || glass.Positions[0] != (mgl32.Vec3{0, 0, 0}) {
		t.Fatalf("glass: %v %v %v", glass.Material.BaseColor, glass.Material.AlphaMode, glass.Positions[0])
	}
	if len(m.Files()) != 2 {
		t.Fatalf("files %v", m.Files())
	}
	// Refusals.
	for _, tc := range []struct{ data, want string }{
		{"v 0 0 nan\n", `OBJ: line 1: vertex: "nan" is not a finite number`},
		{"v 0 0 0\nf 1 1\n", "OBJ: line 2: a face with 2 vertices (want at least 3)"},
		{"usemtl x\n", `OBJ: line 1: usemtl "x": no such material in the mtllib files`},
		{"mtllib none.mtl\n", `OBJ: mtllib uri "none.mtl": no such file or directory`},
	} {
		p := putFile(t, dir, "bad.obj", []byte(tc.data))
		if _, err := Load(p); err == nil || err.Error() != "models: "+p+": "+tc.want {
			t.Errorf("got %v\nwant %s", err, tc.want)
		}
	}
}

func TestSphere(t *testing.T) {
	m := Sphere("s", 2, 16, 8, [4]float32{1, 1, 1, 1})
	p := m.Primitives[0]
	if got := len(p.Indices) / 3; got != 16*8*2-2*16 {
		t.Fatalf("%d triangles", got)
	}
	for i, v := range p.Positions {
		if math.Abs(float64(v.Len())-2) > 1e-5 || p.Normals[i].Sub(v.Mul(0.5)).Len() > 1e-5 {
			t.Fatalf("vertex %d: %v normal %v", i, v, p.Normals[i])
		}
	}
	// Every triangle faces outward.
	for k := 0; k < len(p.Indices); k += 3 {
		a, b, c := p.Positions[p.Indices[k]], p.Positions[p.Indices[k+1]], p.Positions[p.Indices[k+2]]
		if b.Sub(a).Cross(c.Sub(a)).Dot(a.Add(b).Add(c)) <= 0 {
			t.Fatalf("triangle %d faces inward", k/3)
		}
	}
}

// fuzzReader is a Reader under fuzzLimits, reading nothing from disk but
// what a fuzzed OBJ's mtllib names in an empty directory.
func fuzzReader(t *testing.T) *Reader {
	r, err := newReader(LoadOptions{Limits: fuzzLimits})
	if err != nil {
		t.Fatal(err)
	}
	r.fa.dir = t.TempDir()
	t.Cleanup(r.fa.close)
	return r
}

func FuzzSTL(f *testing.F) {
	f.Add(binarySTLBytes([][3]mgl32.Vec3{{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}}))
	f.Add([]byte("solid s\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nvertex 1 1 0\nendloop\nendfacet\nendsolid s\nsolid t\nendsolid\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := fuzzReader(t)
		p, err := decodeSTL(data, r)
		if err != nil {
			return
		}
		checkModel(t, singleMeshModel("f.stl", &Mesh{Primitives: []*Primitive{p}}), fuzzLimits)
	})
}

func FuzzOBJ(f *testing.F) {
	f.Add([]byte("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvn 0 0 1\nf 1//1 2//1 3//1 -1//-1\nf 1/2/3 2 3\n"))
	f.Add([]byte("o x\nv 0 0 0 \\\n 1 1\nv 1 0 0\nv 0 1 0\ns off\nf -3 -2 -1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := fuzzReader(t)
		m, err := decodeOBJ(data, "f.obj", r)
		if err != nil {
			return
		}
		checkModel(t, m, fuzzLimits)
	})
}
