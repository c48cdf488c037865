package models

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/qmuntal/gltf"
	"github.com/qmuntal/gltf/modeler"
)

func TestYUpToZUp(t *testing.T) {
	doc := triDoc()
	s2 := math.Sqrt2 / 2
	doc.Nodes = []*gltf.Node{
		{Name: "up", Mesh: gltf.Index(0), Translation: [3]float64{0, 1, 0}},
		// 90° about glTF y (up): must become 90° about simvis z.
		{Name: "yaw", Mesh: gltf.Index(0), Rotation: [4]float64{0, s2, 0, s2}},
		// Column-major matrix: scale 2, translate glTF (2, 3, 4).
		{Name: "matrix", Mesh: gltf.Index(0), Matrix: [16]float64{2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 2, 3, 4, 1}},
		{Name: "ident", Children: []int{4}},
		{Name: "child", Mesh: gltf.Index(0), Translation: [3]float64{1, 0, 0}},
	}
	doc.Scenes[0].Nodes = []int{0, 1, 2, 3}
	m := mustDecode(t, doc)

	byName := map[string]*Node{}
	world := map[string]mgl64.Mat4{}
	if err := m.Walk(func(n *Node, w mgl64.Mat4) error {
		byName[n.Name], world[n.Name] = n, w
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := byName["up"].Local.Col(3).Vec3(); got != (mgl64.Vec3{0, 0, 1}) {
		t.Errorf("node translated glTF (0,1,0): translation %v, want (0,0,1)", got)
	}
	if byName["ident"].Local != mgl64.Ident4() {
		t.Errorf("identity node became %v", byName["ident"].Local)
	}
	if got := m.Meshes[0].Primitives[0].Positions[0]; got != (mgl32.Vec3{0, 1, 0}) {
		t.Errorf("vertex glTF (0,0,-1) became %v, want (0,1,0)", got)
	}
	// Each glTF vertex v through each node, computed by hand in glTF and
	// mapped with (x,y,z) -> (x,-z,y), must match the z-up world position.
	gltfVerts := []mgl64.Vec3{{0, 0, -1}, {1, 0, -1}, {0, 1, -1}}
	yup := map[string]func(v mgl64.Vec3) mgl64.Vec3{
		"up":     func(v mgl64.Vec3) mgl64.Vec3 { return v.Add(mgl64.Vec3{0, 1, 0}) },
		"yaw":    func(v mgl64.Vec3) mgl64.Vec3 { return mgl64.Vec3{v[2], v[1], -v[0]} }, // +90° about y
		"matrix": func(v mgl64.Vec3) mgl64.Vec3 { return v.Mul(2).Add(mgl64.Vec3{2, 3, 4}) },
		"child":  func(v mgl64.Vec3) mgl64.Vec3 { return v.Add(mgl64.Vec3{1, 0, 0}) },
	}
	for name, f := range yup {
		for i, gv := range gltfVerts {
			y := f(gv)
			want := mgl64.Vec3{y[0], -y[2], y[1]}
			got := mgl64.TransformCoordinate(v64(m.Meshes[0].Primitives[0].Positions[i]), world[name])
			if !vec3Near(got, want, 1e-9) {
				t.Errorf("node %s vertex %d: world %v, want %v", name, i, got, want)
			}
		}
	}
	// The yaw node turns simvis x into simvis y.
	if got := mgl64.TransformCoordinate(mgl64.Vec3{1, 0, 0}, byName["yaw"].Local); !vec3Near(got, mgl64.Vec3{0, 1, 0}, 1e-12) {
		t.Errorf("yaw node maps x to %v, want y", got)
	}
}

func TestComputedFlatNormals(t *testing.T) {
	// glTF triangle at y=0 wound counter-clockwise seen from +y (glTF up).
	doc := gltf.NewDocument()
	pos := modeler.WritePosition(doc, [][3]float32{{0, 0, 0}, {1, 0, 0}, {0, 0, -1}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}})
	doc.Meshes = []*gltf.Mesh{{Primitives: []*gltf.Primitive{{Attributes: gltf.PrimitiveAttributes{gltf.POSITION: pos}}}}}
	doc.Nodes = []*gltf.Node{{Mesh: gltf.Index(0)}}
	doc.Scenes[0].Nodes = []int{0}
	p := mustDecode(t, doc).Meshes[0].Primitives[0]
	if len(p.Indices) != 6 || len(p.Normals) != 6 {
		t.Fatalf("%d indices, %d normals, want 6 each", len(p.Indices), len(p.Normals))
	}
	for i, want := range []mgl32.Vec3{{0, 0, 1}, {0, 0, 1}, {0, 0, 1}, {0, -1, 0}, {0, -1, 0}, {0, -1, 0}} {
		if !p.Normals[i].ApproxEqual(want) {
			t.Errorf("normal %d = %v, want %v", i, p.Normals[i], want)
		}
	}
	if p.Material == nil || p.Material.BaseColor != [4]float32{1, 1, 1, 1} || p.Material.AlphaMode != AlphaOpaque || p.Material.DoubleSided {
		t.Errorf("default material = %+v", p.Material)
	}
}

func TestStripsAndFans(t *testing.T) {
	for _, tc := range []struct {
		mode gltf.PrimitiveMode
		want []uint32
	}{
		{gltf.PrimitiveTriangleStrip, []uint32{0, 1, 2, 1, 3, 2}},
		{gltf.PrimitiveTriangleFan, []uint32{0, 1, 2, 0, 2, 3}},
	} {
		doc := gltf.NewDocument()
		// A unit square in glTF x/z, facing glTF +y in both orders.
		verts := [][3]float32{{0, 0, 0}, {0, 0, 1}, {1, 0, 0}, {1, 0, 1}}
		if tc.mode == gltf.PrimitiveTriangleFan {
			verts = [][3]float32{{0, 0, 0}, {0, 0, 1}, {1, 0, 1}, {1, 0, 0}}
		}
		pos := modeler.WritePosition(doc, verts)
		doc.Meshes = []*gltf.Mesh{{Primitives: []*gltf.Primitive{{Attributes: gltf.PrimitiveAttributes{gltf.POSITION: pos}, Mode: tc.mode}}}}
		p := mustDecode(t, doc).Meshes[0].Primitives[0]
		if len(p.Indices) != 6 {
			t.Fatalf("%s: %d indices, want 6", tc.mode, len(p.Indices))
		}
		// Flat normals de-index, so compare positions, not indices.
		for k, vi := range tc.want {
			if got, want := p.Positions[p.Indices[k]], vecToZUp(verts[vi]); got != want {
				t.Errorf("%s corner %d: %v, want %v", tc.mode, k, got, want)
			}
		}
		for k, n := range p.Normals {
			if !n.ApproxEqual(mgl32.Vec3{0, 0, 1}) {
				t.Errorf("%s normal %d = %v, want +z (winding kept)", tc.mode, k, n)
			}
		}
	}
}

func TestNoSceneUsesParentlessNodes(t *testing.T) {
	doc := triDoc()
	doc.Scene, doc.Scenes = nil, nil
	doc.Nodes = append(doc.Nodes, &gltf.Node{Name: "parent", Children: []int{0}}, &gltf.Node{Name: "other"})
	m := mustDecode(t, doc)
	if len(m.Roots) != 2 || m.Roots[0].Name != "parent" || m.Roots[1].Name != "other" || m.Roots[0].Children[0].Name != "n" {
		t.Errorf("roots %v", m.Roots)
	}
}

// TestLoadExternalFiles writes a .gltf as JSON text with an external buffer
// and an external texture and loads it from disk.
func TestLoadExternalFiles(t *testing.T) {
	dir := t.TempDir()
	var bin bytes.Buffer
	for _, f := range []float32{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0} { // 3 positions, 3 uvs
		binary.Write(&bin, binary.LittleEndian, f)
	}
	tex := image.NewNRGBA(image.Rect(0, 0, 2, 1))
	tex.Set(0, 0, color.NRGBA{255, 0, 0, 255})
	tex.Set(1, 0, color.NRGBA{0, 0, 255, 128})
	var pngData bytes.Buffer
	if err := png.Encode(&pngData, tex); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "geo metry.bin"), bin.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "tex.png"), pngData.Bytes(), 0o644)
	js := `{"asset":{"version":"2.0"},"scene":0,
 "scenes":[{"nodes":[0],"extras":{"simvis":{"commands":"<a x=\"1\"/>\n<b>\n  <c/>\n</b>"}}}],
 "nodes":[{"name":"root","mesh":0,"extras":{"simvis":{"insertion_point":"MOUNT_1"}}}],
 "meshes":[{"name":"m","primitives":[{"attributes":{"POSITION":0,"TEXCOORD_0":1},"material":0}]}],
 "materials":[{"name":"tx","alphaMode":"MASK","alphaCutoff":0.25,"doubleSided":true,
   "pbrMetallicRoughness":{"baseColorFactor":[0.5,0.25,1,0.75],"baseColorTexture":{"index":0},"metallicFactor":0,"roughnessFactor":0.5}}],
 "textures":[{"source":0}],
 "images":[{"uri":"tex.png"}],
 "buffers":[{"uri":"geo%20metry.bin","byteLength":60}],
 "bufferViews":[{"buffer":0,"byteLength":36},{"buffer":0,"byteOffset":36,"byteLength":24}],
 "accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3"},{"bufferView":1,"componentType":5126,"count":3,"type":"VEC2"}]}`
	path := filepath.Join(dir, "ext.gltf")
	os.WriteFile(path, []byte(js), 0o644)
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Path != path || m.Name != "ext" {
		t.Errorf("Path %q Name %q", m.Path, m.Name)
	}
	p := m.Meshes[0].Primitives[0]
	if p.Positions[1] != (mgl32.Vec3{1, 0, 0}) || p.Positions[2] != (mgl32.Vec3{0, 0, 1}) || p.TexCoords[2] != (mgl32.Vec2{1, 0}) {
		t.Errorf("positions %v texcoords %v", p.Positions, p.TexCoords)
	}
	mat := p.Material
	if mat.Name != "tx" || mat.BaseColor != [4]float32{0.5, 0.25, 1, 0.75} || mat.AlphaMode != AlphaMask ||
		mat.AlphaCutoff != 0.25 || !mat.DoubleSided || mat.Metallic != 0 || mat.Roughness != 0.5 {
		t.Errorf("material %+v", mat)
	}
	if mat.BaseColorTexture == nil || color.NRGBAModel.Convert(mat.BaseColorTexture.At(1, 0)) != (color.NRGBA{0, 0, 255, 128}) {
		t.Errorf("texture not loaded right")
	}
	if m.Roots[0].InsertionPoint != "MOUNT_1" {
		t.Errorf("insertion point %q", m.Roots[0].InsertionPoint)
	}
	want := []Command{
		{`<a x="1"/>`, path + ": scene 0 extras.simvis.commands line 1"},
		{"<b>\n  <c/>\n</b>", path + ": scene 0 extras.simvis.commands line 2"},
	}
	if len(m.Commands) != 2 || m.Commands[0] != want[0] || m.Commands[1] != want[1] {
		t.Errorf("commands %q, want %q", m.Commands, want)
	}

	// Decode has no directory to resolve the external files from.
	f, _ := os.ReadFile(path)
	if _, err := Decode(bytes.NewReader(f), "ext.gltf"); err == nil {
		t.Error("Decode resolved external files")
	}
}

func TestQuantizedAttributes(t *testing.T) {
	doc := gltf.NewDocument()
	doc.ExtensionsUsed = []string{"KHR_mesh_quantization"}
	doc.ExtensionsRequired = doc.ExtensionsUsed
	pos := modeler.WriteAccessor(doc, gltf.TargetArrayBuffer, [][3]int16{{0, 0, 0}, {2, 0, 0}, {0, 2, 0}})
	nrm := modeler.WriteAccessor(doc, gltf.TargetArrayBuffer, [][3]int8{{0, 0, 127}, {0, 0, 127}, {0, 0, 127}})
	doc.Accessors[nrm].Normalized = true
	doc.Meshes = []*gltf.Mesh{{Primitives: []*gltf.Primitive{{Attributes: gltf.PrimitiveAttributes{gltf.POSITION: pos, gltf.NORMAL: nrm}}}}}
	p := mustDecode(t, doc).Meshes[0].Primitives[0]
	if p.Positions[1] != (mgl32.Vec3{2, 0, 0}) || p.Positions[2] != (mgl32.Vec3{0, 0, 2}) || p.Normals[0] != (mgl32.Vec3{0, -1, 0}) {
		t.Errorf("positions %v normals %v", p.Positions, p.Normals)
	}
}

func TestEmbeddedImageDataURI(t *testing.T) {
	img := image.NewGray(image.Rect(0, 0, 1, 1))
	img.Pix[0] = 77
	var buf bytes.Buffer
	png.Encode(&buf, img)
	doc := triDoc()
	doc.Images = []*gltf.Image{{URI: "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())}}
	doc.Textures = []*gltf.Texture{{Source: gltf.Index(0)}}
	doc.Materials = []*gltf.Material{{PBRMetallicRoughness: &gltf.PBRMetallicRoughness{BaseColorTexture: &gltf.TextureInfo{Index: 0}}}}
	doc.Meshes[0].Primitives[0].Material = gltf.Index(0)
	m := mustDecode(t, doc)
	got := m.Meshes[0].Primitives[0].Material.BaseColorTexture
	if got == nil || color.GrayModel.Convert(got.At(0, 0)).(color.Gray).Y != 77 {
		t.Errorf("data URI texture not decoded")
	}
}

func TestErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "missing.glb")); err == nil || !strings.Contains(err.Error(), "missing.glb") || !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("missing file: %v", err)
	}
	junk := filepath.Join(dir, "junk.glb")
	os.WriteFile(junk, []byte("this is not glTF"), 0o644)
	if _, err := Load(junk); err == nil || !strings.Contains(err.Error(), "junk.glb: cannot read glTF") {
		t.Errorf("junk file: %v", err)
	}
	// qmuntal/gltf's decoder crashes on a null buffer; we must not.
	if _, err := Decode(strings.NewReader(`{"asset":{"version":"2.0"},"buffers":[null]}`), "null.gltf"); err == nil ||
		!strings.Contains(err.Error(), "null.gltf: malformed glTF") {
		t.Errorf("null buffer: %v", err)
	}
	// A GLB cut short after its header.
	glb := encode(t, triDoc(), true)
	short := filepath.Join(dir, "short.glb")
	os.WriteFile(short, glb[:len(glb)-10], 0o644)
	if _, err := Load(short); err == nil || !strings.Contains(err.Error(), "short.glb") {
		t.Errorf("truncated glb: %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return err
		}
		err = u.Unwrap()
	}
}
