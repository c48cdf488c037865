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
	par := buildBVH(boxes, maxLeafSize)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ser := buildBVH(boxes, maxLeafSize)
	if len(par.nodes) < len(boxes)/8 || !reflect.DeepEqual(par, ser) {
		t.Fatalf("parallel build: %d nodes, serial: %d, equal %v", len(par.nodes), len(ser.nodes), reflect.DeepEqual(par, ser))
	}
}
