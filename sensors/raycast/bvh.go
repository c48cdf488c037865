package raycast

import (
	"math"
	"runtime"
)

// box is an axis-aligned bounding box.
type box struct{ min, max [3]float64 }

func emptyBox() box {
	inf := math.Inf(1)
	return box{[3]float64{inf, inf, inf}, [3]float64{-inf, -inf, -inf}}
}

func (b *box) grow(p [3]float64) {
	// min and max compile to branch-free instructions: plain comparisons
	// mispredict on every other item of a build, math.Min's care for NaN
	// costs more still (vertices are finite: the scene checks them).
	b.min[0], b.max[0] = min(b.min[0], p[0]), max(b.max[0], p[0])
	b.min[1], b.max[1] = min(b.min[1], p[1]), max(b.max[1], p[1])
	b.min[2], b.max[2] = min(b.min[2], p[2]), max(b.max[2], p[2])
}

func (b *box) union(o box) {
	b.min[0], b.max[0] = min(b.min[0], o.min[0]), max(b.max[0], o.max[0])
	b.min[1], b.max[1] = min(b.min[1], o.min[1]), max(b.max[1], o.max[1])
	b.min[2], b.max[2] = min(b.min[2], o.min[2]), max(b.max[2], o.max[2])
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
	nodes []node4 // as traversed
	// nodes8 is the same hierarchy collapsed 8-wide in float32, where
	// buildBVH was asked for it.
	nodes8 []node8f
	items  []int32 // item indices in leaf order
	bounds box     // around every item
	build  []buildNode
}

const (
	sahBins = 12
	// maxLeafSize is the most triangles a geometry's leaf holds (one
	// packet, packLanes); the hierarchy over instances has one per leaf,
	// so that an instance's own box is tested before its ray is mapped
	// into it.
	maxLeafSize = 4
)

// wideMinTriangles is the least a geometry holds to get the 8-wide
// hierarchy for packets (node8f): below it a packet meets few levels, and
// the float32 test's preparation per geometry it enters costs more than
// the levels save (a scene of many small placed parts). A variable for
// the tests, which give small geometries the 8-wide one too.
var wideMinTriangles = 4096

// buildBVH builds a hierarchy with the binned surface area heuristic, with
// at most leafSize items per leaf where the items can be told apart; with
// wide, its nodes8 too.
func buildBVH(boxes []box, leafSize int, wide bool) *bvh {
	b := &bvh{items: make([]int32, len(boxes))}
	bl := builder{refs: make([]buildRef, len(boxes)), bins: make([]uint8, len(boxes)), leafSize: leafSize, b: b}
	if runtime.GOMAXPROCS(0) > 1 {
		bl.par = 1 // one split's halves on two goroutines; deeper ones share the cores
	}
	for i, bx := range boxes {
		bl.refs[i] = buildRef{bounds: bx, center: bx.center(), item: int32(i)}
	}
	// A binary hierarchy has fewer than twice as many nodes as items:
	// room for all at once, so that it never grows by copying.
	b.build = make([]buildNode, 1, max(2*len(boxes)-1, 1))
	if len(boxes) == 0 {
		b.build[0] = buildNode{bounds: emptyBox()}
	} else {
		bounds, cbounds := bl.boundsOf(0, len(boxes))
		bl.split(0, 0, len(boxes), bounds, cbounds)
	}
	for i, r := range bl.refs {
		b.items[i] = r.item
	}
	b.nodes = collapse(b.build)
	if wide {
		b.nodes8 = collapse8(b.build)
	}
	b.bounds = b.build[0].bounds
	b.build = nil
	return b
}

// buildRef is an item while building: the partitions move these records
// themselves, so that each level reads its items' boxes in order rather
// than at random places.
type buildRef struct {
	bounds box
	center [3]float64
	item   int32
}

// sahBin gathers the items whose centers fall into one bin.
type sahBin struct {
	bounds, cbounds box
	count           int
}

var emptyBins = func() (b [sahBins]sahBin) {
	for i := range b {
		b[i].bounds, b[i].cbounds = emptyBox(), emptyBox()
	}
	return b
}()

// parallelItems is the fewest items whose halves split builds on two
// goroutines: below it the goroutine costs more than it saves.
const parallelItems = 1 << 14

// builder holds what split needs besides the hierarchy it grows.
type builder struct {
	refs     []buildRef
	bins     []uint8 // the bin of refs[i], for the partition
	leafSize int
	b        *bvh
	par      int // levels of splits still to build on two goroutines
}

// boundsOf returns the box around refs[start:end] and the box around
// their centers.
func (bl *builder) boundsOf(start, end int) (bounds, cbounds box) {
	bounds, cbounds = emptyBox(), emptyBox()
	for i := range bl.refs[start:end] {
		r := &bl.refs[start+i]
		bounds.union(r.bounds)
		cbounds.grow(r.center)
	}
	return bounds, cbounds
}

// split makes node ni of refs[start:end], given their box and the box
// around their centers; the children's boxes come from the bins, so each
// level passes over its items twice (binning, then partitioning).
func (bl *builder) split(ni, start, end int, bounds, cbounds box) {
	b := bl.b
	b.build[ni] = buildNode{bounds: bounds, first: int32(start), count: int32(end - start)}
	n := end - start
	// Every node of up to leafSize items is a leaf: a geometry's leaf is
	// one packet of four triangles, tested together (pack.go), so
	// splitting it saves no test.
	if n <= bl.leafSize {
		return
	}
	axis, ext := 0, 0.0
	for a := 0; a < 3; a++ {
		if e := cbounds.max[a] - cbounds.min[a]; e > ext {
			axis, ext = a, e
		}
	}
	if ext == 0 {
		bl.halves(ni, start, end)
		return
	}
	bins := emptyBins // one copy: most nodes are small, and this is per node
	// Small nodes get fewer bins: a few items need no twelve candidate
	// planes, and the sweeps over bins are most of a small node's cost.
	nb := min(sahBins, n+1)
	scale := float64(nb) / ext
	lo := cbounds.min[axis]
	refs, binOf := bl.refs[start:end], bl.bins[start:end]
	binOf = binOf[:len(refs)]
	for p := range refs {
		r := &refs[p]
		k := min(int((r.center[axis]-lo)*scale), nb-1)
		binOf[p] = uint8(k)
		bn := &bins[k]
		bn.count++
		// union and grow, written out: union is too big to inline.
		bb, rb := &bn.bounds, &r.bounds
		bb.min[0], bb.max[0] = min(bb.min[0], rb.min[0]), max(bb.max[0], rb.max[0])
		bb.min[1], bb.max[1] = min(bb.min[1], rb.min[1]), max(bb.max[1], rb.max[1])
		bb.min[2], bb.max[2] = min(bb.min[2], rb.min[2]), max(bb.max[2], rb.max[2])
		bn.cbounds.grow(r.center)
	}
	// Sweep from the right, then from the left, for the cost of each split.
	var rightArea [sahBins]float64
	var rightCount [sahBins]int
	acc, cnt := emptyBox(), 0
	for k := nb - 1; k > 0; k-- {
		acc.union(bins[k].bounds)
		cnt += bins[k].count
		rightArea[k], rightCount[k] = acc.area(), cnt
	}
	best, bestCost := -1, math.Inf(1)
	acc, cnt = emptyBox(), 0
	for k := 0; k < nb-1; k++ {
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
	if best < 0 {
		bl.halves(ni, start, end)
		return
	}
	// Partition: bins 0..best go left.
	i, j := 0, n-1
	for i <= j {
		if int(binOf[i]) <= best {
			i++
		} else {
			refs[i], refs[j] = refs[j], refs[i]
			binOf[i], binOf[j] = binOf[j], binOf[i]
			j--
		}
	}
	lb, lc, rb, rc := emptyBox(), emptyBox(), emptyBox(), emptyBox()
	for k := range bins[:nb] {
		if k <= best {
			lb.union(bins[k].bounds)
			lc.union(bins[k].cbounds)
		} else {
			rb.union(bins[k].bounds)
			rc.union(bins[k].cbounds)
		}
	}
	left := bl.children(ni)
	if bl.par > 0 && n >= parallelItems {
		bl.splitTwo(left, start, start+i, end, lb, lc, rb, rc)
		return
	}
	bl.split(left, start, start+i, lb, lc)
	bl.split(left+1, start+i, end, rb, rc)
}

// splitTwo builds the right child's subtree on another goroutine, into a
// node list of its own (its items are refs[mid:end], which the left one
// leaves alone), and appends that list after the left subtree's nodes: the
// very order, and so the very nodes, one goroutine would have made.
func (bl *builder) splitTwo(left, start, mid, end int, lb, lc, rb, rc box) {
	sub := &builder{refs: bl.refs, bins: bl.bins, leafSize: bl.leafSize, par: bl.par - 1,
		b: &bvh{build: make([]buildNode, 1, max(2*(end-mid)-1, 1))}}
	done := make(chan struct{})
	go func() {
		sub.split(0, mid, end, rb, rc)
		close(done)
	}()
	bl.par--
	bl.split(left, start, mid, lb, lc)
	bl.par++
	<-done
	b := bl.b
	off := int32(len(b.build) - 1) // sub's node k >= 1 lands at off+k
	for k, nd := range sub.b.build {
		if nd.count == 0 {
			nd.first += off
		}
		if k == 0 {
			b.build[left+1] = nd
		} else {
			b.build = append(b.build, nd)
		}
	}
}

// halves splits node ni's items in two halves as they lie, where no split
// by centers separates them.
func (bl *builder) halves(ni, start, end int) {
	mid := start + (end-start)/2
	left := bl.children(ni)
	lb, lc := bl.boundsOf(start, mid)
	rb, rc := bl.boundsOf(mid, end)
	bl.split(left, start, mid, lb, lc)
	bl.split(left+1, mid, end, rb, rc)
}

// children appends two nodes as ni's children and returns the first.
func (bl *builder) children(ni int) int {
	b := bl.b
	left := len(b.build)
	b.build = append(b.build, buildNode{}, buildNode{})
	b.build[ni].first = int32(left)
	b.build[ni].count = 0
	return left
}

// ray is a ray prepared for box tests. The vector tests (traverse_amd64.s)
// read it by offset: TestAssemblyLayout holds the two to the same layout.
type ray struct {
	o, d, inv [3]float64
	neg       [3]bool // the inverse's sign bits: which planes are near
	// near and far are, per axis, the byte offsets in a node4 of the
	// children's planes the ray enters and leaves through.
	near, far [3]int64
}

func newRay(o, d [3]float64) ray {
	var r ray
	r.set(o, d)
	return r
}

// set prepares r for o and d in place (a ray is 128 bytes: casts that map
// one ray into many instances fill it rather than copy it), without a
// branch on the signs.
func (r *ray) set(o, d [3]float64) {
	r.o, r.d = o, d
	r.inv = [3]float64{1 / d[0], 1 / d[1], 1 / d[2]}
	for a := range 3 {
		neg := int64(math.Float64bits(r.inv[a]) >> 63)
		r.neg[a] = neg != 0
		r.near[a] = nodeLoOffset + 32*int64(a) + neg*(nodeHiOffset-nodeLoOffset)
		r.far[a] = nodeHiOffset + 32*int64(a) - neg*(nodeHiOffset-nodeLoOffset)
	}
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
