package raycast

import (
	"fmt"
	"math"
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

	// Cut-outs (models.Cutout): InstCuts holds each instance's geometry's
	// cut-out, an index into the CutInts and CutDoubles records, or -1
	// where it stops every ray. A cut-out's CutInts are width, height
	// (0 0: every point is cut away), nearest (1) or linear (0), the
	// wrap modes S and T (glTF's numbers), where its alpha plane starts
	// in Alpha, the shift from a triangle's index over all packets
	// (packet*4 + lane) to its record in UVs, and whether the threshold
	// itself is kept (1); its CutDoubles are the base color factor and
	// the threshold: a point is kept where factor*alpha (float64) is
	// above the threshold, or equal to it where so marked, which is
	// exactly where float32(factor*alpha) >= float32(cut) (KeptFrom).
	// UVs holds the texture coordinates of the cut-outs' triangles, in
	// leaf order, six float32s each (u0 v0 u1 v1 u2 v2: what
	// Geometry.keeps interpolates), Alpha their alpha planes (w*h bytes
	// each, top row first).
	InstCuts   []int32
	CutInts    []int32
	CutDoubles []float64
	UVs        []float32
	Alpha      []uint8

	roots map[*Geometry]int32
	cuts  map[*Geometry]int32
	packs int32
}

// Sizes of Flat's records, in elements.
const (
	NodeDoubles   = 24
	NodeInts      = 4
	PackDoubles   = 36
	AffineDoubles = 12
	CutIntsLen    = 8
	CutDoublesLen = 2
	UVFloats      = 6
)

// Robust is the factor by which a traversal widens a box's exit distance
// (the smallest of its slabs' far distances) before comparing it with the
// entry distance, so that rounding never makes a ray miss the box of a
// triangle it hits.
const Robust = robust

// Export writes the hierarchy that the last Sync or Place built into f,
// reusing its arrays. Casting in f, the traversal Cast runs finds the
// distances CastSerial returns (see Flat), cut-outs included. It fails
// for more packets than a leaf reference holds.
func (c *Caster) Export(f *Flat) error {
	if f.roots == nil {
		f.roots = map[*Geometry]int32{}
		f.cuts = map[*Geometry]int32{}
	}
	for i := range c.instances {
		g := c.instances[i].geom
		if _, ok := f.roots[g]; ok {
			continue
		}
		if int64(f.packs)+int64(len(g.packs)) >= 1<<28 {
			return fmt.Errorf("raycast: %d triangle packets are more than a flat leaf reference holds", int64(f.packs)+int64(len(g.packs)))
		}
		base := int32(len(f.GeomRefs) / NodeInts)
		f.roots[g] = base
		f.GeomNodes, f.GeomRefs = appendNodes(f.GeomNodes, f.GeomRefs, g.nodes, base, f.packs)
		if g.cut != nil {
			f.cuts[g] = f.appendCut(g)
		}
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
	f.ToLocal, f.Roots, f.InstCuts = f.ToLocal[:0], f.Roots[:0], f.InstCuts[:0]
	for i := range c.instances {
		in := &c.instances[i]
		f.ToLocal = append(f.ToLocal, in.toLocal[:]...)
		f.Roots = append(f.Roots, f.roots[in.geom])
		cut, ok := f.cuts[in.geom]
		if !ok {
			cut = -1
		}
		f.InstCuts = append(f.InstCuts, cut)
	}
	return nil
}

// appendCut appends g's cut-out, whose packets start at f.packs, and
// returns its index.
func (f *Flat) appendCut(g *Geometry) int32 {
	tx := g.cut.Texture()
	idx := int32(len(f.CutInts) / CutIntsLen)
	shift := int32(len(f.UVs)/UVFloats) - f.packs*packLanes
	for _, t := range g.uvs {
		f.UVs = append(f.UVs, t[0][0], t[0][1], t[1][0], t[1][1], t[2][0], t[2][1])
	}
	// Triangles without a record (a geometry without triangles has
	// none) read zeros, as keeps does.
	for n := len(g.packs) * packLanes; len(g.uvs) < n; n-- {
		f.UVs = append(f.UVs, 0, 0, 0, 0, 0, 0)
	}
	w, h := tx.Width, tx.Height
	if tx.Alpha == nil {
		w, h = 0, 0
	}
	nearest := int32(0)
	if tx.Nearest {
		nearest = 1
	}
	mid, tie := KeptFrom(float32(tx.Cut))
	tieKept := int32(0)
	if tie {
		tieKept = 1
	}
	f.CutInts = append(f.CutInts, int32(w), int32(h), nearest, int32(tx.WrapS), int32(tx.WrapT),
		int32(len(f.Alpha)), shift, tieKept)
	f.CutDoubles = append(f.CutDoubles, tx.Factor, mid)
	f.Alpha = append(f.Alpha, tx.Alpha...)
	return idx
}

// KeptFrom returns the float64 threshold from which a value rounds to a
// float32 at least c, as Go's float32() rounds (to nearest, ties to
// even): float32(x) >= c exactly where x > mid, or x == mid and tie. A
// shader compares in float64 with it, and no double-to-float rounding
// of a GPU's enters the comparison.
func KeptFrom(c float32) (mid float64, tie bool) {
	below := math.Nextafter32(c, float32(math.Inf(-1)))
	switch {
	case math.IsInf(float64(c), -1):
		return math.Inf(-1), true
	case math.IsInf(float64(c), 1):
		// From one half ulp above MaxFloat32 on, the tie included.
		return math.MaxFloat32 + 0x1p103, true
	case math.IsInf(float64(below), -1):
		// c = -MaxFloat32: x rounds to -Inf from one half ulp below,
		// the tie included (MaxFloat32's last bit is odd).
		return float64(c) - 0x1p103, false
	}
	// The mean of two float32s is exact in float64; at it, x rounds to
	// the one with the even last bit.
	return (float64(below) + float64(c)) / 2, math.Float32bits(c)&1 == 0
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
