package raycast

import "math"

// box is an axis-aligned bounding box.
type box struct{ min, max [3]float64 }

func emptyBox() box {
	inf := math.Inf(1)
	return box{[3]float64{inf, inf, inf}, [3]float64{-inf, -inf, -inf}}
}

func (b *box) grow(p [3]float64) {
	for i := 0; i < 3; i++ {
		b.min[i] = math.Min(b.min[i], p[i])
		b.max[i] = math.Max(b.max[i], p[i])
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

// node is a BVH node: an inner node's children are nodes first and first+1;
// a leaf holds count items from items[first].
type node struct {
	bounds box
	first  int32
	count  int32 // 0 for inner nodes
}

// bvh is a bounding volume hierarchy over items given by their boxes.
type bvh struct {
	nodes []node
	items []int32 // item indices in leaf order
}

const (
	sahBins     = 12
	maxLeafSize = 4
)

// buildBVH builds a hierarchy with the binned surface area heuristic.
func buildBVH(boxes []box) *bvh {
	b := &bvh{items: make([]int32, len(boxes))}
	for i := range b.items {
		b.items[i] = int32(i)
	}
	centers := make([][3]float64, len(boxes))
	for i, bx := range boxes {
		centers[i] = bx.center()
	}
	b.nodes = make([]node, 1, 2*len(boxes)/maxLeafSize+1)
	if len(boxes) == 0 {
		b.nodes[0] = node{bounds: emptyBox()}
		return b
	}
	b.split(0, 0, len(boxes), boxes, centers)
	return b
}

func (b *bvh) split(ni, start, end int, boxes []box, centers [][3]float64) {
	bounds, cbounds := emptyBox(), emptyBox()
	for _, it := range b.items[start:end] {
		bounds.union(boxes[it])
		cbounds.grow(centers[it])
	}
	b.nodes[ni] = node{bounds: bounds, first: int32(start), count: int32(end - start)}
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
		if n <= maxLeafSize {
			return
		}
		b.childrenOf(ni, start, start+n/2, end, boxes, centers)
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
	if best < 0 || (n <= maxLeafSize && bestCost >= leafCost) {
		if n <= maxLeafSize {
			return
		}
		b.childrenOf(ni, start, start+n/2, end, boxes, centers)
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
	b.childrenOf(ni, start, i, end, boxes, centers)
}

func (b *bvh) childrenOf(ni, start, mid, end int, boxes []box, centers [][3]float64) {
	left := len(b.nodes)
	b.nodes = append(b.nodes, node{}, node{})
	b.nodes[ni].first = int32(left)
	b.nodes[ni].count = 0
	b.split(left, start, mid, boxes, centers)
	b.split(left+1, mid, end, boxes, centers)
}

// ray is a ray prepared for box tests.
type ray struct {
	o, d, inv [3]float64
}

func newRay(o, d [3]float64) ray {
	return ray{o: o, d: d, inv: [3]float64{1 / d[0], 1 / d[1], 1 / d[2]}}
}

// hitBox returns the entry distance into b if the ray meets it before tmax.
func (r *ray) hitBox(b *box, tmax float64) (float64, bool) {
	t0, t1 := 0.0, tmax
	for a := 0; a < 3; a++ {
		lo := (b.min[a] - r.o[a]) * r.inv[a]
		hi := (b.max[a] - r.o[a]) * r.inv[a]
		if lo > hi {
			lo, hi = hi, lo
		}
		// NaN (origin on a slab plane of a flat box, direction parallel)
		// compares false and leaves the interval as it is.
		if lo > t0 {
			t0 = lo
		}
		if hi < t1 {
			t1 = hi
		}
		if t0 > t1 {
			return 0, false
		}
	}
	return t0, true
}

// traverse visits the leaves whose boxes the ray meets before the current
// best distance, nearest child first; leaf returns the new best distance.
func (b *bvh) traverse(r *ray, tmax float64, leaf func(items []int32, tmax float64) float64) float64 {
	// A fixed array covers any sane depth without allocating; deeper trees
	// spill onto the heap rather than lose nodes.
	var fixed [64]int32
	stack := fixed[:0]
	if len(b.items) == 0 {
		return tmax // an empty tree's root is no leaf; its empty box need not stop every ray
	}
	if _, ok := r.hitBox(&b.nodes[0].bounds, tmax); !ok {
		return tmax
	}
	ni := int32(0)
	for {
		n := &b.nodes[ni]
		if n.count > 0 {
			tmax = leaf(b.items[n.first:n.first+n.count], tmax)
		} else {
			l, rr := n.first, n.first+1
			tl, okl := r.hitBox(&b.nodes[l].bounds, tmax)
			tr, okr := r.hitBox(&b.nodes[rr].bounds, tmax)
			switch {
			case okl && okr:
				if tr < tl {
					l, rr = rr, l
				}
				stack = append(stack, rr)
				ni = l
				continue
			case okl:
				ni = l
				continue
			case okr:
				ni = rr
				continue
			}
		}
		// Pop, skipping nodes now behind the best hit.
		for {
			if len(stack) == 0 {
				return tmax
			}
			ni = stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if _, ok := r.hitBox(&b.nodes[ni].bounds, tmax); ok {
				break
			}
		}
	}
}
