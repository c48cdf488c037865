package raycast

import (
	"errors"
	"fmt"
)

// Flat is what a caster casts against, in flat arrays that a GPU can take
// as they are (sensors/gpucast traverses them in a compute shader): the
// very nodes, boxes, triangles and transforms that the Go traversal reads,
// so that a traversal with the same float64 operations in the same order
// finds the same distances, bit for bit.
//
// A node of either hierarchy is NodeDoubles float64s of boxes, child k's
// box being lo[axis] at [axis*4+k] and hi[axis] at [12+axis*4+k] (its
// binary build's box as it was; the traversal widens the exit distance by
// Robust), and NodeInts int32s of references, one per child. A child
// reference c > 0 is an inner node; c < 0 is a leaf of count = ^c & 7
// items from first = ^c >> 3; c == 0 is no child (no node has the root for
// a child). The children in use come first, as the traversal visits them. The instance hierarchy's
// leaves name instances (in Instances order); a geometry's leaves name
// packets of four triangles (in Packs order, over all geometries).
//
// A packet is PackDoubles float64s: a triangle's first vertex v0 and edges
// e1 = v1 - v0, e2 = v2 - v0, each [axis*4+lane], v0 first, then e1, then
// e2; lanes past a leaf's count are zero.
//
// Geometries only ever grow in number: an Export into the same Flat
// appends the ones it has not seen and leaves GeomNodes, GeomRefs and
// Packs otherwise as they were, so that a caller re-sends them only when
// their lengths changed.
type Flat struct {
	// TopNodes and TopRefs are the hierarchy over the instances; its root
	// is node 0.
	TopNodes []float64
	TopRefs  []int32
	// ToLocal holds each instance's map from the casting frame into its
	// geometry's frame, AffineDoubles float64s: the rows (A | b) of
	// p -> A p + b, which maps a point as a[0]*p[0] + a[1]*p[1] +
	// a[2]*p[2] + a[3] (in that order) and a direction without the last
	// term.
	ToLocal []float64
	// Roots is each instance's geometry's root node in GeomNodes.
	Roots []int32
	// GeomNodes and GeomRefs are every geometry's hierarchy, one after
	// the other, references rebased onto these arrays and Packs.
	GeomNodes []float64
	GeomRefs  []int32
	Packs     []float64

	roots map[*Geometry]int32
	packs int32
}

// Sizes of Flat's records, in elements.
const (
	NodeDoubles   = 24
	NodeInts      = 4
	PackDoubles   = 36
	AffineDoubles = 12
)

// Robust is the factor by which a traversal widens a box's exit distance
// (the smallest of its slabs' far distances) before comparing it with the
// entry distance, so that rounding never makes a ray miss the box of a
// triangle it hits.
const Robust = robust

// ErrCutouts is returned by Export for a caster holding a geometry whose
// material cuts rays through (models.Cutout): its hits test a texel, which
// Flat does not carry.
var ErrCutouts = errors.New("raycast: a sensed geometry has cut-outs (alpha-masked material)")

// Export writes the hierarchy that the last Sync or Place built into f,
// reusing its arrays. Casting in f, the traversal Cast runs finds the
// distances CastSerial returns (see Flat). It fails for geometries with
// cut-outs (ErrCutouts) and for more packets than a leaf reference holds.
func (c *Caster) Export(f *Flat) error {
	if f.roots == nil {
		f.roots = map[*Geometry]int32{}
	}
	for i := range c.instances {
		g := c.instances[i].geom
		if g.cut != nil {
			return ErrCutouts
		}
		if _, ok := f.roots[g]; ok {
			continue
		}
		if int64(f.packs)+int64(len(g.packs)) >= 1<<28 {
			return fmt.Errorf("raycast: %d triangle packets are more than a flat leaf reference holds", int64(f.packs)+int64(len(g.packs)))
		}
		base := int32(len(f.GeomRefs) / NodeInts)
		f.roots[g] = base
		f.GeomNodes, f.GeomRefs = appendNodes(f.GeomNodes, f.GeomRefs, g.nodes, base, f.packs)
		for p := range g.packs {
			pk := &g.packs[p]
			for _, plane := range [3]*[3][packLanes]float64{&pk.v0, &pk.e1, &pk.e2} {
				for a := 0; a < 3; a++ {
					f.Packs = append(f.Packs, plane[a][:]...)
				}
			}
		}
		f.packs += int32(len(g.packs))
	}
	f.TopNodes, f.TopRefs = appendNodes(f.TopNodes[:0], f.TopRefs[:0], c.top, 0, 0)
	f.ToLocal, f.Roots = f.ToLocal[:0], f.Roots[:0]
	for i := range c.instances {
		in := &c.instances[i]
		f.ToLocal = append(f.ToLocal, in.toLocal[:]...)
		f.Roots = append(f.Roots, f.roots[in.geom])
	}
	return nil
}

// appendNodes appends nodes in Flat's layout, inner references moved by
// node and leaf references by leaf (their first item).
func appendNodes(boxes []float64, refs []int32, nodes []node4, node, leaf int32) ([]float64, []int32) {
	for i := range nodes {
		nd := &nodes[i]
		for a := 0; a < 3; a++ {
			boxes = append(boxes, nd.lo[a][:]...)
		}
		for a := 0; a < 3; a++ {
			boxes = append(boxes, nd.hi[a][:]...)
		}
		for k := 0; k < 4; k++ {
			ref := nd.child[k]
			switch {
			case k >= int(nd.n):
				ref = 0
			case ref > 0:
				ref += node
			default:
				l := ^ref
				ref = leafRef(l>>3+leaf, l&7)
			}
			refs = append(refs, ref)
		}
	}
	return boxes, refs
}
