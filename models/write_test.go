package models

import (
	"image"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/go-gl/mathgl/mgl64"
)

// testModel builds a model exercising everything Write stores.
func testModel() *Model {
	m := NewModel("robot")
	tex := image.NewNRGBA(image.Rect(0, 0, 3, 2))
	for i := range tex.Pix {
		tex.Pix[i] = uint8(i * 11)
	}
	box := Box("body", 0.6, 0.4, 0.3, [4]float32{0.2, 0.4, 0.6, 1})
	mat := box.Primitives[0].Material
	mat.BaseColorTexture, mat.AlphaMode, mat.AlphaCutoff, mat.DoubleSided = tex, AlphaMask, 0.3, true
	mat.Metallic, mat.Roughness = 0.25, 0.75

	local := mgl64.Translate3D(1, -2, 0.5).
		Mul4(mgl64.AnglesToQuat(0.3, -0.7, 1.1, mgl64.XYZ).Mat4()).
		Mul4(mgl64.Scale3D(1, 2, 3))
	base := m.AddNode(nil, "base", local, box)
	mast := m.AddNode(base, "mast", mgl64.Translate3D(0.2, 0, 0.8), nil)
	mast.InsertionPoint = "MAST_TOP"
	m.AddNode(mast, "wheel", mgl64.HomogRotate3DX(math.Pi/2), Cylinder("wheel", 0.1, 0.05, 12, [4]float32{0, 0, 0, 0.5}))
	m.AddNode(nil, "other_box", mgl64.Ident4(), box) // shared mesh
	m.Commands = []Command{
		{XML: `<sensor type="camera" name="CAM" insert_at="MAST_TOP" pose_offset="0 0 0 0 0 0"/>`},
		{XML: "<element type=\"pose\" name=\"T\">\n  <x>1</x>\n</element>"},
	}
	return m
}

type flatNode struct {
	name, ip, mesh string
	local          mgl64.Mat4
	depth          int
}

func flatten(m *Model) []flatNode {
	var out []flatNode
	var walk func(n *Node, depth int)
	walk = func(n *Node, depth int) {
		f := flatNode{name: n.Name, ip: n.InsertionPoint, local: n.Local, depth: depth}
		if n.Mesh != nil {
			f.mesh = n.Mesh.Name
		}
		out = append(out, f)
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	for _, r := range m.Roots {
		walk(r, 0)
	}
	return out
}

func TestWriteLoadRoundTrip(t *testing.T) {
	for _, file := range []string{"robot.glb", "robot.gltf"} {
		t.Run(file, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, file)
			in := testModel()
			if err := Write(path, in); err != nil {
				t.Fatal(err)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("Write left %d files, want 1 self-contained file", len(entries))
			}
			raw, _ := os.ReadFile(path)
			if isGLB := strings.HasPrefix(string(raw), "glTF"); isGLB != strings.HasSuffix(file, ".glb") {
				t.Errorf("binary header %v for %s", isGLB, file)
			}
			out, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}

			a, b := flatten(in), flatten(out)
			if len(a) != len(b) {
				t.Fatalf("%d nodes, want %d", len(b), len(a))
			}
			for i := range a {
				if a[i].name != b[i].name || a[i].ip != b[i].ip || a[i].mesh != b[i].mesh || a[i].depth != b[i].depth {
					t.Errorf("node %d = %+v, want %+v", i, b[i], a[i])
				}
				if !a[i].local.ApproxEqualThreshold(b[i].local, 1e-9) {
					t.Errorf("node %s local\n%v\nwant\n%v", a[i].name, b[i].local, a[i].local)
				}
			}
			// The shared box stays one mesh.
			if len(out.Meshes) != 2 || out.Roots[0].Mesh != out.Roots[1].Mesh {
				t.Errorf("%d meshes, shared box split: %v", len(out.Meshes), out.Roots[0].Mesh != out.Roots[1].Mesh)
			}
			for mi, mesh := range in.Meshes {
				pin, pout := mesh.Primitives[0], out.Meshes[mi].Primitives[0]
				if !eqSlice(pin.Positions, pout.Positions) || !eqSlice(pin.Normals, pout.Normals) ||
					!eqSlice(pin.TexCoords, pout.TexCoords) || !eqSlice(pin.Indices, pout.Indices) {
					t.Errorf("mesh %s: geometry changed", mesh.Name)
				}
				if pin.Key != pout.Key {
					t.Errorf("mesh %s: key changed", mesh.Name)
				}
				checkMaterial(t, pin.Material, pout.Material)
			}
			if len(out.Commands) != len(in.Commands) {
				t.Fatalf("%d commands, want %d", len(out.Commands), len(in.Commands))
			}
			for i, c := range in.Commands {
				if out.Commands[i].XML != c.XML || !strings.HasPrefix(out.Commands[i].Source, path+": scene 0") {
					t.Errorf("command %d = %+v, want XML %q", i, out.Commands[i], c.XML)
				}
			}
			if out.TriangleCount() != in.TriangleCount() {
				t.Errorf("%d triangles, want %d", out.TriangleCount(), in.TriangleCount())
			}
		})
	}
}

func checkMaterial(t *testing.T, want, got *Material) {
	t.Helper()
	if got.Name != want.Name || got.BaseColor != want.BaseColor || got.AlphaMode != want.AlphaMode ||
		got.DoubleSided != want.DoubleSided || got.Metallic != want.Metallic || got.Roughness != want.Roughness ||
		(want.AlphaMode == AlphaMask && got.AlphaCutoff != want.AlphaCutoff) {
		t.Errorf("material\n%+v\nwant\n%+v", got, want)
	}
	if (want.BaseColorTexture == nil) != (got.BaseColorTexture == nil) {
		t.Fatalf("material %s: texture presence changed", want.Name)
	}
	if want.BaseColorTexture == nil {
		return
	}
	wb, gb := want.BaseColorTexture.Bounds(), got.BaseColorTexture.Bounds()
	if wb.Size() != gb.Size() {
		t.Fatalf("texture size %v, want %v", gb.Size(), wb.Size())
	}
	for y := 0; y < wb.Dy(); y++ {
		for x := 0; x < wb.Dx(); x++ {
			w := color.NRGBAModel.Convert(want.BaseColorTexture.At(wb.Min.X+x, wb.Min.Y+y))
			g := color.NRGBAModel.Convert(got.BaseColorTexture.At(gb.Min.X+x, gb.Min.Y+y))
			if w != g {
				t.Errorf("texel (%d,%d) = %v, want %v", x, y, g, w)
			}
		}
	}
}

func eqSlice[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestWriteIsYUp checks the file itself is y-up by reading it back with
// qmuntal directly, not with Load.
func TestWriteIsYUp(t *testing.T) {
	m := NewModel("m")
	m.AddNode(nil, "up", mgl64.Translate3D(0, 0, 1), Plane("p", 2, 2, [4]float32{1, 1, 1, 1}))
	path := filepath.Join(t.TempDir(), "m.gltf")
	if err := Write(path, m); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if !strings.Contains(string(raw), `"matrix": [`) || !strings.Contains(string(raw), "data:application/octet-stream;base64,") {
		t.Fatalf("unexpected file:\n%s", raw)
	}
	out, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Meshes[0].Primitives[0].Normals[0]; got != (mgl32.Vec3{0, 0, 1}) {
		t.Errorf("normal %v", got)
	}
	// In the file: node translation along glTF y, plane normal along glTF +y.
	doc := readDoc(t, path)
	if tr := doc.Nodes[0].Matrix; tr[12] != 0 || tr[13] != 1 || tr[14] != 0 {
		t.Errorf("glTF translation %v, want (0,1,0)", tr[12:15])
	}
	nrm := readNormals(t, doc)
	if nrm[0] != [3]float32{0, 1, 0} {
		t.Errorf("glTF normal %v, want (0,1,0)", nrm[0])
	}
}

func TestWriteErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		mutate func(m *Model)
		want   string
	}{
		{"bad insertion point", func(m *Model) { m.Roots[0].InsertionPoint = "has space" }, `insertion point "has space" is not a valid name`},
		{"two commands in one", func(m *Model) { m.Commands[0].XML = "<a/><b/>" }, "command 1: want one XML command element, have 2"},
		{"node twice", func(m *Model) { m.Roots = append(m.Roots, m.Roots[0]) }, `node "base" appears twice`},
		{"index range", func(m *Model) { m.Meshes[0].Primitives[0].Indices[0] = 999 }, `mesh "body" primitive 0: index 0 is 999`},
		{"NaN transform", func(m *Model) { m.Roots[0].Local[12] = math.NaN() }, "non-finite"},
	} {
		err := Write(filepath.Join(dir, "x.glb"), func() *Model { m := testModel(); tc.mutate(m); return m }())
		if err == nil || !strings.Contains(err.Error(), "x.glb") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}
