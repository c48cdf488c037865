package raycast

import (
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
)

// The build on two goroutines makes the very hierarchy one goroutine
// makes: the same wide nodes, boxes and item order.
func TestParallelBuildIsSerialBuild(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	rng := rand.New(rand.NewPCG(5, 6))
	boxes := make([]box, 3*parallelItems)
	for i := range boxes {
		b := emptyBox()
		p := [3]float64{rng.Float64() * 10, rng.Float64() * 10, rng.Float64()}
		b.grow(p)
		b.grow([3]float64{p[0] + rng.Float64()*0.1, p[1] + rng.Float64()*0.1, p[2] + rng.Float64()*0.1})
		boxes[i] = b
	}
	par := buildBVH(boxes, maxLeafSize, true)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ser := buildBVH(boxes, maxLeafSize, true)
	if len(par.nodes) < len(boxes)/8 || !reflect.DeepEqual(par, ser) {
		t.Fatalf("parallel build: %d nodes, serial: %d, equal %v", len(par.nodes), len(ser.nodes), reflect.DeepEqual(par, ser))
	}
}

// An empty box stays empty when merged with another empty one. (Merging
// by plain comparisons once grew it to infinity: a SAH sweep that met an
// empty bin then priced every split at +Inf and the build fell back to
// halving the item list, four times the triangle tests per ray.)
func TestEmptyBinsKeepTheSAHSplit(t *testing.T) {
	e := emptyBox()
	e.union(emptyBox())
	if e != emptyBox() || e.area() != 0 {
		t.Fatalf("empty box merged with an empty box: %v", e)
	}
	// Two clusters far apart on x with the items interleaved: halving
	// the list would mix them; the SAH split (across empty bins) does not.
	boxes := make([]box, 64)
	for i := range boxes {
		x := float64(i%2) * 10
		y := float64(i/2) * 0.1
		boxes[i] = box{[3]float64{x, y, 0}, [3]float64{x + 1, y + 0.05, 1}}
	}
	b := buildBVH(boxes, maxLeafSize, true)
	root := &b.nodes[0]
	if root.n < 2 {
		t.Fatalf("root has %d children", root.n)
	}
	for k := 0; k < int(root.n); k++ {
		if lo, hi := root.lo[0][k], root.hi[0][k]; hi-lo > 1 {
			t.Errorf("root child %d spans x %v..%v: both clusters", k, lo, hi)
		}
	}
}
