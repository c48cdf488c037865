package models

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/qmuntal/gltf"
	"github.com/qmuntal/gltf/modeler"
)

// TestBadInputs breaks a valid document in one way each and checks the
// error names the file and the fault.
func TestBadInputs(t *testing.T) {
	prim := func(d *gltf.Document) *gltf.Primitive { return d.Meshes[0].Primitives[0] }
	for _, tc := range []struct {
		name   string
		mutate func(d *gltf.Document)
		want   string
	}{
		{"no position", func(d *gltf.Document) { prim(d).Attributes = gltf.PrimitiveAttributes{"NORMAL": 0} },
			`mesh 0 "tri" primitive 0: POSITION accessor missing`},
		{"position accessor range", func(d *gltf.Document) { prim(d).Attributes[gltf.POSITION] = 9 },
			"POSITION: accessor 9 out of range (2 accessors)"},
		{"bufferView range", func(d *gltf.Document) { d.Accessors[0].BufferView = gltf.Index(7) },
			"accessor 0: bufferView 7 out of range"},
		{"accessor exceeds bufferView", func(d *gltf.Document) { d.Accessors[0].Count = 4 },
			"exceed bufferView 0"},
		{"huge count", func(d *gltf.Document) { d.Accessors[0].Count = 1 << 62 },
			"exceed bufferView 0"},
		{"index too big", func(d *gltf.Document) {
			d.Accessors[1].BufferView = gltf.Index(modeler.WriteBufferView(d, gltf.TargetElementArrayBuffer, []uint16{0, 1, 3}))
		}, "index 2 is 3, not below vertex count 3"},
		{"points", func(d *gltf.Document) { prim(d).Mode = gltf.PrimitivePoints }, "mode POINTS not supported"},
		{"lines", func(d *gltf.Document) { prim(d).Mode = gltf.PrimitiveLines }, "mode LINES not supported"},
		{"partial triangle", func(d *gltf.Document) { d.Accessors[1].Count = 2 }, "2 indices do not make whole triangles"},
		{"required extension", func(d *gltf.Document) { d.ExtensionsRequired = []string{"KHR_draco_mesh_compression"} },
			`unsupported required extension "KHR_draco_mesh_compression"`},
		{"bad image", func(d *gltf.Document) {
			modeler.WriteImage(d, "junk", "image/png", bytes.NewReader([]byte("not a png at all")))
			d.Textures = []*gltf.Texture{{Source: gltf.Index(0)}}
			d.Materials = []*gltf.Material{{Name: "m", PBRMetallicRoughness: &gltf.PBRMetallicRoughness{BaseColorTexture: &gltf.TextureInfo{Index: 0}}}}
		}, `material 0 "m": texture 0: image 0 "junk": image: unknown format`},
		{"texture range", func(d *gltf.Document) {
			d.Materials = []*gltf.Material{{PBRMetallicRoughness: &gltf.PBRMetallicRoughness{BaseColorTexture: &gltf.TextureInfo{Index: 3}}}}
		}, "texture 3 out of range"},
		{"material range", func(d *gltf.Document) { prim(d).Material = gltf.Index(2) }, "material 2 out of range (0 materials)"},
		{"node mesh range", func(d *gltf.Document) { d.Nodes[0].Mesh = gltf.Index(5) }, `node 0 "n": mesh 5 out of range`},
		{"child range", func(d *gltf.Document) { d.Nodes[0].Children = []int{8} }, "child 8 out of range"},
		{"two parents", func(d *gltf.Document) {
			d.Nodes = append(d.Nodes, &gltf.Node{Name: "a", Children: []int{0}}, &gltf.Node{Name: "b", Children: []int{0}})
			d.Scenes[0].Nodes = []int{1, 2}
		}, "child 0 has more than one parent"},
		{"cycle", func(d *gltf.Document) { d.Nodes[0].Children = []int{0} }, "scene 0: root node 0 has a parent"},
		{"scene range", func(d *gltf.Document) { d.Scene = gltf.Index(3) }, "default scene 3 out of range"},
		{"scene node range", func(d *gltf.Document) { d.Scenes[0].Nodes = []int{4} }, "scene 0: node 4 out of range"},
		{"bad insertion point", func(d *gltf.Document) { d.Nodes[0].Extras = json.RawMessage(`{"simvis":{"insertion_point":"9lives"}}`) },
			`node 0 "n": extras.simvis.insertion_point "9lives" is not a valid name`},
		{"insertion point not string", func(d *gltf.Document) { d.Nodes[0].Extras = json.RawMessage(`{"simvis":{"insertion_point":3}}`) },
			`node 0 "n": extras.simvis: json: cannot unmarshal number`},
		{"unknown simvis key", func(d *gltf.Document) { d.Nodes[0].Extras = json.RawMessage(`{"simvis":{"insertion-point":"A"}}`) },
			`unknown field "insertion-point"`},
		{"commands on node", func(d *gltf.Document) { d.Nodes[0].Extras = json.RawMessage(`{"simvis":{"commands":"<a/>"}}`) },
			"commands belong in the scene's or asset's extras"},
		{"commands number", func(d *gltf.Document) { d.Scenes[0].Extras = json.RawMessage(`{"simvis":{"commands":5}}`) },
			"scene 0: extras.simvis.commands must be a string or a list of strings"},
		{"commands bad xml", func(d *gltf.Document) { d.Scenes[0].Extras = json.RawMessage(`{"simvis":{"commands":"<a><b></a>"}}`) },
			"scene 0: extras.simvis.commands: XML syntax error"},
		{"commands stray text", func(d *gltf.Document) { d.Scenes[0].Extras = json.RawMessage(`{"simvis":{"commands":"<a/>\noops"}}`) },
			`line 2: text "oops" outside a command element`},
		{"command list item with two", func(d *gltf.Document) {
			d.Asset.Extras = json.RawMessage(`{"simvis":{"commands":["<a/>","<b/><c/>"]}}`)
		},
			"asset: extras.simvis.commands[1]: want one XML command element, have 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := triDoc()
			tc.mutate(doc)
			_, err := decodeDoc(t, doc)
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if !strings.HasPrefix(err.Error(), "models: test.gltf: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q\nwant it to contain %q", err, tc.want)
			}
		})
	}
}
