package raycast

import "math"

// box is an axis-aligned bounding box.
type box struct{ min, max [3]float64 }

func emptyBox() box {
	inf := math.Inf(1)
	return box{[3]float64{inf, inf, inf}, [3]float64{-inf, -inf, -inf}}
}

func (b *box) grow(p [3]float64) {
	// Plain comparisons: math.Min's care for NaN and -0 costs a third of
	// building a million triangles' hierarchy, and neither occurs here
	// (vertices are finite: the scene checks them).
	for i := 0; i < 3; i++ {
		if p[i] < b.min[i] {
			b.min[i] = p[i]
		}
		if p[i] > b.max[i] {
			b.max[i] = p[i]
		}
	}
}

func (b *box) union(o box) {
	b.grow(o.min)
	b.grow(o.max)
}

func (b box) area() float64 {
	d := [3]float64{b.max[0] - b.min[0], b.max[1] - b.min[1], b.max[2] - b.min[2]}
	if d[0] < 0 {
		return 0
	}
	return 2 * (d[0]*d[1] + d[1]*d[2] + d[2]*d[0])
}

func (b box) center() [3]float64 {
	return [3]float64{(b.min[0] + b.max[0]) / 2, (b.min[1] + b.max[1]) / 2, (b.min[2] + b.max[2]) / 2}
}

// buildNode is a BVH node while building: an inner node's children are
// nodes first and first+1; a leaf holds count items from items[first].
type buildNode struct {
	bounds box
	first  int32
	count  int32 // 0 for inner nodes
}

// bvh is a bounding volume hierarchy over items given by their boxes.
type bvh struct {
	nodes  []node4 // as traversed
	items  []int32 // item indices in leaf order
	bounds box     // around every item
	build  []buildNode
}

const (
	sahBins = 12
	// maxLeafSize is the most triangles a geometry's leaf holds; the
	// hierarchy over instances has one per leaf, so that an instance's own
	// box is tested before its ray is mapped into it.
	maxLeafSize = 4
)

// buildBVH builds a hierarchy with the binned surface area heuristic, with
// at most leafSize items per leaf where the items can be told apart.
func buildBVH(boxes []box, leafSize int) *bvh {
	b := &bvh{items: make([]int32, len(boxes))}
	for i := range b.items {
		b.items[i] = int32(i)
	}
	centers := make([][3]float64, len(boxes))
	for i, bx := range boxes {
		centers[i] = bx.center()
	}
	b.build = make([]buildNode, 1, 2*len(boxes)/leafSize+1)
	if len(boxes) == 0 {
		b.build[0] = buildNode{bounds: emptyBox()}
	} else {
		b.split(0, 0, len(boxes), boxes, centers, leafSize)
	}
	b.nodes = collapse(b.build)
	b.bounds = b.build[0].bounds
	b.build = nil
	return b
}

func (b *bvh) split(ni, start, end int, boxes []box, centers [][3]float64, leafSize int) {
	bounds, cbounds := emptyBox(), emptyBox()
	for _, it := range b.items[start:end] {
		bounds.union(boxes[it])
		cbounds.grow(centers[it])
	}
	b.build[ni] = buildNode{bounds: bounds, first: int32(start), count: int32(end - start)}
	n := end - start
	if n <= 1 {
		return
	}
	axis, ext := 0, 0.0
	for a := 0; a < 3; a++ {
		if e := cbounds.max[a] - cbounds.min[a]; e > ext {
			axis, ext = a, e
		}
	}
	if ext == 0 {
		if n <= leafSize {
			return
		}
		b.childrenOf(ni, start, start+n/2, end, boxes, centers, leafSize)
		return
	}
	var bins [sahBins]struct {
		bounds box
		count  int
	}
	for i := range bins {
		bins[i].bounds = emptyBox()
	}
	scale := sahBins / ext
	binOf := func(it int32) int {
		k := int((centers[it][axis] - cbounds.min[axis]) * scale)
		return min(k, sahBins-1)
	}
	for _, it := range b.items[start:end] {
		k := binOf(it)
		bins[k].count++
		bins[k].bounds.union(boxes[it])
	}
	// Sweep from the right, then from the left, for the cost of each split.
	var rightArea [sahBins]float64
	var rightCount [sahBins]int
	acc, cnt := emptyBox(), 0
	for k := sahBins - 1; k > 0; k-- {
		acc.union(bins[k].bounds)
		cnt += bins[k].count
		rightArea[k], rightCount[k] = acc.area(), cnt
	}
	best, bestCost := -1, math.Inf(1)
	acc, cnt = emptyBox(), 0
	for k := 0; k < sahBins-1; k++ {
		acc.union(bins[k].bounds)
		cnt += bins[k].count
		if cnt == 0 || rightCount[k+1] == 0 {
			continue
		}
		cost := acc.area()*float64(cnt) + rightArea[k+1]*float64(rightCount[k+1])
		if cost < bestCost {
			best, bestCost = k, cost
		}
	}
	leafCost := bounds.area() * float64(n)
	if best < 0 || (n <= leafSize && bestCost >= leafCost) {
		if n <= leafSize {
			return
		}
		b.childrenOf(ni, start, start+n/2, end, boxes, centers, leafSize)
		return
	}
	// Partition the items: bins 0..best go left.
	i, j := start, end-1
	for i <= j {
		if binOf(b.items[i]) <= best {
			i++
		} else {
			b.items[i], b.items[j] = b.items[j], b.items[i]
			j--
		}
	}
	b.childrenOf(ni, start, i, end, boxes, centers, leafSize)
}

func (b *bvh) childrenOf(ni, start, mid, end int, boxes []box, centers [][3]float64, leafSize int) {
	left := len(b.build)
	b.build = append(b.build, buildNode{}, buildNode{})
	b.build[ni].first = int32(left)
	b.build[ni].count = 0
	b.split(left, start, mid, boxes, centers, leafSize)
	b.split(left+1, mid, end, boxes, centers, leafSize)
}

// ray is a ray prepared for box tests.
type ray struct {
	o, d, inv [3]float64
	neg       [3]bool // the inverse's sign bits: which planes are near
}

func newRay(o, d [3]float64) ray {
	inv := [3]float64{1 / d[0], 1 / d[1], 1 / d[2]}
	return ray{o: o, d: d, inv: inv, neg: [3]bool{math.Signbit(inv[0]), math.Signbit(inv[1]), math.Signbit(inv[2])}}
}

// robust widens a box's exit distance so that rounding in the slab test
// cannot make a ray miss the box of a triangle it hits (Ize, "Robust BVH
// ray traversal", 2013: 1 + 2 gamma(3)).
const robust = 1 + 2*(3*0x1p-53)/(1-3*0x1p-53)

// stackEntry is a node left for later with the distance at which the ray
// enters it: popped once the best hit is nearer, it is skipped untested.
type stackEntry struct {
	node int32
	t    float64
}

// fixedStack is deep enough for any sane hierarchy; deeper ones spill onto
// the heap rather than lose nodes.
const fixedStack = 64
