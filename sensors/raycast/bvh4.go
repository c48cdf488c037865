package raycast

import "math"

// node4 is a node of the 4-wide hierarchy that rays traverse: the boxes of
// up to four children side by side, axis by axis (structure of arrays), so
// that one node visit loads the four boxes in one load per plane. Boxes
// stay float64: they are the binary build's boxes as they were, so the
// widened slab test is as conservative as before. (Float32 boxes, rounded
// outward, halve a node's bytes but were 10 % slower on the 1M-triangle
// scene: the widening lies on the path from one node to the next.)
type node4 struct {
	lo, hi [3][4]float64
	// child holds an inner child's node index (>= 0), or for a leaf
	// ^(first<<3 | count): count items from items[first].
	child [4]int32
	n     int32 // children in use
}

// leafRef encodes a leaf of count (at most 7) items from first.
func leafRef(first, count int32) int32 { return ^(first<<3 | count) }

// collapse turns the binary hierarchy b.build into 4-wide nodes: each wide
// node takes its binary node's children and keeps opening the inner child
// of largest surface area until it holds four (the usual collapse; the SAH
// build's splits are kept, only the levels in between go).
func collapse(build []buildNode) []node4 {
	out := make([]node4, 0, len(build)/3+1)
	if len(build) == 0 {
		return append(out, node4{})
	}
	root := build[0]
	if root.count > 0 || root.first == 0 {
		// A leaf root (or an empty hierarchy, count 0 and no children):
		// one wide node with that leaf as its only child.
		var nd node4
		if root.count > 0 {
			nd.setChild(0, root.bounds, leafRef(root.first, root.count))
			nd.n = 1
		}
		return append(out, nd)
	}
	var rec func(bi int32) int32
	rec = func(bi int32) int32 {
		idx := int32(len(out))
		out = append(out, node4{})
		kids := [4]int32{build[bi].first, build[bi].first + 1}
		nk := 2
		for nk < 4 {
			best, bestA := -1, -1.0
			for k := 0; k < nk; k++ {
				if c := &build[kids[k]]; c.count == 0 {
					if a := c.bounds.area(); a > bestA {
						best, bestA = k, a
					}
				}
			}
			if best < 0 {
				break
			}
			c := kids[best]
			kids[best], kids[nk] = build[c].first, build[c].first+1
			nk++
		}
		var nd node4
		nd.n = int32(nk)
		for k := 0; k < nk; k++ {
			c := &build[kids[k]]
			ref := leafRef(c.first, c.count)
			if c.count == 0 {
				ref = rec(kids[k])
			}
			nd.setChild(k, c.bounds, ref)
		}
		out[idx] = nd
		return idx
	}
	rec(0)
	return out
}

func (nd *node4) setChild(k int, b box, ref int32) {
	for a := 0; a < 3; a++ {
		nd.lo[a][k], nd.hi[a][k] = b.min[a], b.max[a]
	}
	nd.child[k] = ref
}

// box returns child k's box.
func (nd *node4) box(k int) box {
	return box{
		[3]float64{nd.lo[0][k], nd.lo[1][k], nd.lo[2][k]},
		[3]float64{nd.hi[0][k], nd.hi[1][k], nd.hi[2][k]},
	}
}

// node4's planes lie at these byte offsets (the ray's near and far
// offsets point into them).
const (
	nodeLoOffset = 0
	nodeHiOffset = 96
)

// visitScalar tests the ray against the children of nd and returns those it
// enters before tmax, nearest first, with their entry distances. Each
// slab's exit distance is widened by robust; NaN (origin on a slab plane
// of a flat box, direction parallel) compares false and leaves the
// interval as it is.
func (r *ray) visitScalar(nd *node4, tmax float64, refs *[4]int32, ts *[4]float64) int {
	m := 0
	ox, oy, oz := r.o[0], r.o[1], r.o[2]
	ix, iy, iz := r.inv[0], r.inv[1], r.inv[2]
	// The near and far planes by the direction's signs, chosen once per
	// node rather than swapped per box.
	nx, fx := &nd.lo[0], &nd.hi[0]
	if r.neg[0] {
		nx, fx = fx, nx
	}
	ny, fy := &nd.lo[1], &nd.hi[1]
	if r.neg[1] {
		ny, fy = fy, ny
	}
	nz, fz := &nd.lo[2], &nd.hi[2]
	if r.neg[2] {
		nz, fz = fz, nz
	}
	n := min(int(nd.n), 4)
	for k := 0; k < n; k++ {
		// Plain comparisons, not min and max: NaN compares false and is
		// passed over, as -0 and 0 may be.
		t0 := 0.0
		if a := (nx[k] - ox) * ix; a > t0 {
			t0 = a
		}
		if a := (ny[k] - oy) * iy; a > t0 {
			t0 = a
		}
		if a := (nz[k] - oz) * iz; a > t0 {
			t0 = a
		}
		t1 := inf
		if a := (fx[k] - ox) * ix; a < t1 {
			t1 = a
		}
		if a := (fy[k] - oy) * iy; a < t1 {
			t1 = a
		}
		if a := (fz[k] - oz) * iz; a < t1 {
			t1 = a
		}
		// Widening the smallest exit is widening each: rounding is
		// monotonic.
		if t1 = t1 * robust; t1 > tmax {
			t1 = tmax
		}
		if t0 > t1 {
			continue
		}
		// Insertion into the sorted list of entered children.
		j := m & 3
		for j > 0 && ts[(j-1)&3] > t0 {
			ts[j&3], refs[j&3] = ts[(j-1)&3], refs[(j-1)&3]
			j--
		}
		ts[j&3], refs[j&3] = t0, nd.child[k]
		m++
	}
	return m
}

// sortEntered lists the children whose bits are set, nearest first (the
// earlier child first among equals, as visitScalar does), given every
// child's entry distance in t.
func sortEntered(set uint64, t *[4]float64, nd *node4, refs *[4]int32, ts *[4]float64) int {
	m := 0
	for k := 0; k < 4; k++ {
		if set&(1<<k) == 0 {
			continue
		}
		tk := t[k]
		j := m
		for j > 0 && ts[j-1] > tk {
			ts[j], refs[j] = ts[j-1], refs[j-1]
			j--
		}
		ts[j], refs[j] = tk, nd.child[k]
		m++
	}
	return m
}

// inf is +Inf.
var inf = math.Inf(1)
