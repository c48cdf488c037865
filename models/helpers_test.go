package models

import (
	"bytes"
	"math"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/qmuntal/gltf"
	"github.com/qmuntal/gltf/modeler"
)

// triDoc returns a y-up glTF document, built with qmuntal types only, with
// one triangle mesh in the x/y plane at glTF z = -1 and one node using it.
func triDoc() *gltf.Document {
	doc := gltf.NewDocument()
	pos := modeler.WritePosition(doc, [][3]float32{{0, 0, -1}, {1, 0, -1}, {0, 1, -1}})
	idx := modeler.WriteIndices(doc, []uint16{0, 1, 2})
	doc.Meshes = []*gltf.Mesh{{Name: "tri", Primitives: []*gltf.Primitive{{
		Attributes: gltf.PrimitiveAttributes{gltf.POSITION: pos},
		Indices:    gltf.Index(idx),
	}}}}
	doc.Nodes = []*gltf.Node{{Name: "n", Mesh: gltf.Index(0)}}
	doc.Scenes[0].Nodes = []int{0}
	return doc
}

// encode serializes doc with qmuntal's encoder (not our Write).
func encode(t *testing.T, doc *gltf.Document, binary bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := gltf.NewEncoder(&buf)
	enc.AsBinary = binary
	if err := enc.Encode(doc); err != nil {
		t.Fatalf("encoding test document: %v", err)
	}
	return buf.Bytes()
}

// decodeDoc runs doc through JSON and our decoder.
func decodeDoc(t *testing.T, doc *gltf.Document) (*Model, error) {
	t.Helper()
	return Decode(bytes.NewReader(encode(t, doc, false)), "test.gltf")
}

func mustDecode(t *testing.T, doc *gltf.Document) *Model {
	t.Helper()
	m, err := decodeDoc(t, doc)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func vec3Near(a, b mgl64.Vec3, eps float64) bool {
	return a.Sub(b).Len() <= eps
}

func v64(v mgl32.Vec3) mgl64.Vec3 { return mgl64.Vec3{float64(v[0]), float64(v[1]), float64(v[2])} }

// bounds returns the component-wise extent of all positions of a mesh.
func bounds(m *Mesh) (lo, hi mgl64.Vec3) {
	lo = mgl64.Vec3{math.Inf(1), math.Inf(1), math.Inf(1)}
	hi = lo.Mul(-1)
	for _, p := range m.Primitives {
		for _, v := range p.Positions {
			for k := range 3 {
				lo[k] = math.Min(lo[k], float64(v[k]))
				hi[k] = math.Max(hi[k], float64(v[k]))
			}
		}
	}
	return lo, hi
}

// readDoc opens a file with qmuntal alone, to inspect what Write stored.
func readDoc(t *testing.T, path string) *gltf.Document {
	t.Helper()
	doc, err := gltf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// readNormals returns the raw NORMAL data of the first primitive.
func readNormals(t *testing.T, doc *gltf.Document) [][3]float32 {
	t.Helper()
	acr := doc.Accessors[doc.Meshes[0].Primitives[0].Attributes[gltf.NORMAL]]
	nrm, err := modeler.ReadNormal(doc, acr, nil)
	if err != nil {
		t.Fatal(err)
	}
	return nrm
}
