package layering

import (
	"testing"

	"github.com/g3n/engine/core"
	"github.com/g3n/engine/graphic"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/internal/testkit"
)

// Opaque meshes get render orders by their bounds' distance to the eye:
// nearest first, whichever way the eye looks; a wide floor under the eye is
// near though its center is far.
func TestOrderFrontToBack(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "box.gltf", 1, 1, 1, [4]float32{1, 0, 0, 1})
	testkit.WriteBox(t, dir, "floor.gltf", 40, 40, 0.1, [4]float32{0.5, 0.5, 0.5, 1})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="floor.gltf" name="FLOOR" pose_offset="15 0 -0.05 0 0 0"/>
  <part file="box.gltf" name="NEAR" pose_offset="3 0 0.5 0 0 0"/>
  <part file="box.gltf" name="FAR" pose_offset="12 0 0.5 0 0 0"/>
</scene>`)
	order := func(eye mgl64.Vec3) map[string]int {
		s.G3N().UpdateMatrixWorld()
		var o Orderer
		o.Apply(s.G3N(), eye)
		got := map[string]int{}
		for _, part := range s.Parts() {
			var find func(n core.INode)
			find = func(n core.INode) {
				if ig, ok := n.(graphic.IGraphic); ok {
					got[part.Name] = ig.GetGraphic().RenderOrder()
				}
				for _, c := range n.GetNode().Children() {
					find(c)
				}
			}
			find(part.Node.G3N())
		}
		return got
	}
	o := order(mgl64.Vec3{0, 0, 1.5})
	if !(o["FLOOR"] < o["NEAR"] && o["NEAR"] < o["FAR"]) {
		t.Errorf("eye at the origin: orders %v, want FLOOR < NEAR < FAR", o)
	}
	o = order(mgl64.Vec3{14, 0, 1.5})
	if !(o["FAR"] < o["NEAR"]) {
		t.Errorf("eye beyond FAR: orders %v, want FAR < NEAR", o)
	}
}
