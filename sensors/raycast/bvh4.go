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

// node8f is a node of the 8-wide hierarchy that packets traverse in
// large geometries (intersectPacket8AVX2): eight children's boxes rounded
// outward to float32, a plane of all eight in one 8-lane register, so a
// ray tests eight boxes in the operations a node4 takes for four, and
// meets about two thirds of the levels. Its test is conservative
// (traverse_amd64.s says how): it enters every box the float64 test would
// enter, so a packet still finds the nearest of all hits, to the bit.
// 256 bytes, four cache lines; the planes lie at node4's offsets.
type node8f struct {
	lo, hi [3][8]float32
	child  [8]int32
	n      int32
	_      [7]int32
}

// roundDown32 is the largest float32 at most x; roundUp32 the smallest at
// least x (a conversion rounds to nearest).
func roundDown32(x float64) float32 {
	f := float32(x)
	if float64(f) > x {
		f = math.Nextafter32(f, float32(math.Inf(-1)))
	}
	return f
}

func roundUp32(x float64) float32 {
	f := float32(x)
	if float64(f) < x {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

// leafRef encodes a leaf of count (at most 7) items from first.
func leafRef(first, count int32) int32 { return ^(first<<3 | count) }

// collapse turns the binary hierarchy b.build into 4-wide nodes: each wide
// node takes its binary node's children and keeps opening the inner child
// of largest surface area until it holds four (the usual collapse; the SAH
// build's splits are kept, only the levels in between go).
func collapse(build []buildNode) []node4 {
	out := make([]node4, 0, len(build)/3+1)
	collapseWide(build, 4, func() int32 {
		out = append(out, node4{})
		return int32(len(out) - 1)
	}, func(i, k int32, b box, ref int32) {
		out[i].setChild(int(k), b, ref)
		out[i].n = k + 1
	})
	return out
}

// collapse8 is collapse to 8-wide nodes with float32 boxes rounded
// outward, for the packet traversal of large geometries
// (intersectPacket8AVX2).
func collapse8(build []buildNode) []node8f {
	// A node of eight takes seven binary nodes (a tree of n leaves has
	// n - 1 inner ones, len(build) = 2n - 1): room for partly full ones.
	out := make([]node8f, 0, len(build)/7+1)
	collapseWide(build, 8, func() int32 {
		// Children not in use get empty boxes (+Inf to -Inf), which the
		// test never enters: the traversal reads no count.
		var nd node8f
		for a := 0; a < 3; a++ {
			for k := 0; k < 8; k++ {
				nd.lo[a][k], nd.hi[a][k] = float32(math.Inf(1)), float32(math.Inf(-1))
			}
		}
		out = append(out, nd)
		return int32(len(out) - 1)
	}, func(i, k int32, b box, ref int32) {
		nd := &out[i]
		for a := 0; a < 3; a++ {
			nd.lo[a][k], nd.hi[a][k] = roundDown32(b.min[a]), roundUp32(b.max[a])
		}
		nd.child[k], nd.n = ref, k+1
	})
	return out
}

// collapseWide collapses build into nodes of up to width children, made by
// add (which returns the new node's index) and filled child by child, in
// order, by set; the root is node 0, and the nodes come in depth-first
// order. A leaf root (or an empty hierarchy: count 0 and no children)
// becomes one node with that leaf as its only child (or none).
func collapseWide(build []buildNode, width int, add func() int32, set func(node, k int32, b box, ref int32)) {
	if len(build) == 0 {
		add()
		return
	}
	root := build[0]
	if root.count > 0 || root.first == 0 {
		i := add()
		if root.count > 0 {
			set(i, 0, root.bounds, leafRef(root.first, root.count))
		}
		return
	}
	var rec func(bi int32) int32
	rec = func(bi int32) int32 {
		idx := add()
		var room [8]int32
		kids := append(room[:0:width], build[bi].first, build[bi].first+1)
		for len(kids) < width {
			best, bestA := -1, -1.0
			for k, c := range kids {
				if build[c].count == 0 {
					if a := build[c].bounds.area(); a > bestA {
						best, bestA = k, a
					}
				}
			}
			if best < 0 {
				break
			}
			c := kids[best]
			kids[best] = build[c].first
			kids = append(kids, build[c].first+1)
		}
		for k, c := range kids {
			ref := leafRef(build[c].first, build[c].count)
			if build[c].count == 0 {
				ref = rec(c)
			}
			set(idx, int32(k), build[c].bounds, ref)
		}
		return idx
	}
	rec(0)
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
