package layering

import (
	"slices"

	"github.com/g3n/engine/core"
	"github.com/g3n/engine/graphic"
	"github.com/g3n/engine/math32"
	"github.com/go-gl/mathgl/mgl64"
)

// Orderer draws opaque meshes front to back. g3n's renderer sorts opaque
// meshes back to front like transparent ones (by their origins), so every
// nearer surface shades its pixels again over the farther ones; on a CPU
// rasterizer (llvmpipe) shading is the cost of a frame. Nearest first, the
// depth test rejects hidden fragments before they are shaded. The order is
// g3n's render order (it sorts by it first), from each mesh's world bounds'
// distance to the eye, so that a floor under the eye counts as near. Only
// the order of drawing changes: the depth test decides what is seen.
type Orderer struct {
	boxes map[*graphic.Graphic]math32.Box3 // local bounds of static meshes
	list  []orderedGraphic
}

type orderedGraphic struct {
	gr   *graphic.Graphic
	dist float32
}

// Apply gives root's opaque meshes render orders by distance from eye,
// nearest first (the renderer must sort objects), and transparent ones
// order 0, for g3n's own back-to-front sort.
func (o *Orderer) Apply(root core.INode, eye mgl64.Vec3) {
	if o.boxes == nil {
		o.boxes = map[*graphic.Graphic]math32.Box3{}
	}
	e := math32.Vector3{X: float32(eye[0]), Y: float32(eye[1]), Z: float32(eye[2])}
	o.list = o.list[:0]
	walkVisible(root, func(n core.INode) {
		if ig, ok := n.(graphic.IGraphic); ok && ig.Renderable() {
			gr := ig.GetGraphic()
			if Opaque(gr) {
				o.list = append(o.list, orderedGraphic{gr, o.distance(gr, &e)})
			} else {
				gr.SetRenderOrder(0) // transparent: g3n's back-to-front sort
			}
		}
	})
	slices.SortFunc(o.list, func(a, b orderedGraphic) int {
		switch {
		case a.dist < b.dist:
			return -1
		case a.dist > b.dist:
			return 1
		}
		return 0
	})
	for i, g := range o.list {
		g.gr.SetRenderOrder(i)
	}
}

// Opaque reports whether none of a graphic's materials is transparent.
func Opaque(gr *graphic.Graphic) bool {
	for _, m := range gr.Materials() {
		if m.IMaterial().GetMaterial().Transparent() {
			return false
		}
	}
	return true
}

// distance is from the eye to the mesh's world bounding box (0 inside).
// Meshes whose geometry changes (overlays: not cullable) count from their
// origin.
func (o *Orderer) distance(gr *graphic.Graphic, eye *math32.Vector3) float32 {
	mw := gr.MatrixWorld()
	if !gr.Cullable() {
		var p math32.Vector3
		p.SetFromMatrixPosition(&mw)
		return p.DistanceTo(eye)
	}
	box, ok := o.boxes[gr]
	if !ok {
		box = gr.GetGeometry().BoundingBox()
		o.boxes[gr] = box
	}
	box.ApplyMatrix4(&mw)
	return box.DistanceToPoint(eye)
}

// walkVisible calls fn for n and every node under it, parents first,
// except under a node that is not visible (it hides its subtree).
func walkVisible(n core.INode, fn func(core.INode)) {
	node := n.GetNode()
	if !node.Visible() {
		return
	}
	fn(n)
	for _, c := range node.Children() {
		walkVisible(c, fn)
	}
}
