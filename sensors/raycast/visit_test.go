package raycast

import (
	"math"
	"math/rand"
	"testing"
	"unsafe"
)

// TestRayLayout holds the offsets the vector node test (visit_amd64.s)
// reads to the Go structs.
func TestRayLayout(t *testing.T) {
	var r ray
	var nd node4
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"ray.o", unsafe.Offsetof(r.o), 0},
		{"ray.inv", unsafe.Offsetof(r.inv), 48},
		{"ray.near", unsafe.Offsetof(r.near), 80},
		{"ray.far", unsafe.Offsetof(r.far), 104},
		{"node4.lo", unsafe.Offsetof(nd.lo), nodeLoOffset},
		{"node4.hi", unsafe.Offsetof(nd.hi), nodeHiOffset},
		{"node4.n", unsafe.Offsetof(nd.n), 208},
	} {
		if c.got != c.want {
			t.Errorf("%s at byte %d, the assembly reads it at %d", c.name, c.got, c.want)
		}
	}
}

// TestVisitMatchesScalar compares the node test in use (vector where the
// CPU has it) with the scalar one, child for child and bit for bit, on
// random boxes and rays and on the cases that make NaN or infinities: rays
// parallel to a slab with their origin on its plane, flat boxes, and
// children not in use.
func TestVisitMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	grid := func() float64 { return float64(rng.Intn(5) - 2) } // coordinates that coincide often
	pick := func() float64 {
		if rng.Intn(2) == 0 {
			return grid()
		}
		return rng.NormFloat64() * 3
	}
	for i := 0; i < 200000; i++ {
		var nd node4
		nd.n = int32(rng.Intn(5))
		for k := 0; k < 4; k++ {
			var b box
			for a := 0; a < 3; a++ {
				lo, hi := pick(), pick()
				if rng.Intn(4) == 0 {
					hi = lo // flat
				}
				b.min[a], b.max[a] = min(lo, hi), max(lo, hi)
			}
			nd.setChild(k, b, int32(100+k))
		}
		var o, d [3]float64
		for a := 0; a < 3; a++ {
			o[a] = pick()
			switch rng.Intn(4) {
			case 0:
				d[a] = 0
			case 1:
				d[a] = math.Copysign(0, -1)
			default:
				d[a] = rng.NormFloat64()
			}
		}
		r := newRay(o, d)
		tmax := []float64{math.Inf(1), 1e300, rng.Float64() * 5, 0}[rng.Intn(4)]
		var refsA, refsB [4]int32
		var tsA, tsB [4]float64
		a := r.visit(&nd, tmax, &refsA, &tsA)
		b := r.visitScalar(&nd, tmax, &refsB, &tsB)
		if a != b {
			t.Fatalf("case %d: ray %v %v, tmax %g, node %+v: %d children entered, scalar %d", i, o, d, tmax, nd, a, b)
		}
		for k := 0; k < a; k++ {
			if refsA[k] != refsB[k] || math.Float64bits(tsA[k]) != math.Float64bits(tsB[k]) {
				t.Fatalf("case %d: ray %v %v, tmax %g, node %+v: entered %v at %v, scalar %v at %v",
					i, o, d, tmax, nd, refsA[:a], tsA[:a], refsB[:b], tsB[:b])
			}
		}
	}
}

// TestPackLayout holds the offsets the vector triangle test
// (hit_amd64.s) reads to the Go struct.
func TestPackLayout(t *testing.T) {
	var p triPack
	if unsafe.Offsetof(p.v0) != 0 || unsafe.Offsetof(p.e1) != 96 || unsafe.Offsetof(p.e2) != 192 || unsafe.Sizeof(p) != 288 {
		t.Errorf("triPack: v0, e1, e2 at bytes %d, %d, %d, size %d; the assembly reads them at 0, 96, 192, size 288",
			unsafe.Offsetof(p.v0), unsafe.Offsetof(p.e1), unsafe.Offsetof(p.e2), unsafe.Sizeof(p))
	}
	if unsafe.Offsetof(ray{}.d) != 24 {
		t.Errorf("ray.d at byte %d, the assembly reads it at 24", unsafe.Offsetof(ray{}.d))
	}
}

// TestHitLeafMatchesScalar compares the leaf test in use (vector where the
// CPU has it) with triangle.hit one lane after the other, for the lane hit
// and the distance to the bit: random triangles, triangles sharing edges
// and vertices with rays through them, degenerate ones, empty lanes, and
// distances at tmax.
func TestHitLeafMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	pick := func() float64 {
		if rng.Intn(3) == 0 {
			return float64(rng.Intn(3) - 1)
		}
		return rng.NormFloat64()
	}
	vec := func() [3]float64 { return [3]float64{pick(), pick(), pick()} }
	hits := 0
	for i := 0; i < 300000; i++ {
		g := &Geometry{packs: make([]triPack, 1)}
		count := int32(1 + rng.Intn(packLanes))
		shared := vec()
		for l := 0; l < int(count); l++ {
			v := [3][3]float64{vec(), vec(), vec()}
			switch rng.Intn(4) {
			case 0:
				v[0] = shared // lanes meeting at a vertex
			case 1:
				v[2] = v[1] // degenerate
			}
			g.packs[0].set(l, triangle{v0: v[0], e1: sub(v[1], v[0]), e2: sub(v[2], v[0])})
		}
		o := vec()
		var d [3]float64
		if rng.Intn(2) == 0 {
			// Aim at a vertex or an edge's midpoint of some lane.
			tr := g.tri(int32(rng.Intn(int(count))))
			target := tr.v0
			if rng.Intn(2) == 0 {
				target = add(tr.v0, [3]float64{tr.e1[0] / 2, tr.e1[1] / 2, tr.e1[2] / 2})
			}
			d = sub(target, o)
		} else {
			d = vec()
		}
		r := newRay(o, d)
		tmax := []float64{math.Inf(1), 1, rng.Float64() * 2}[rng.Intn(3)]
		tA, iA := g.hitLeaf(&r, 0, count, tmax)
		tB, iB := g.hitLeafScalar(&r, 0, count, tmax)
		if iA != iB || math.Float64bits(tA) != math.Float64bits(tB) {
			t.Fatalf("case %d: ray %v %v, tmax %g, packet %+v: lane %d at %v, scalar lane %d at %v", i, o, d, tmax, g.packs[0], iA, tA, iB, tB)
		}
		if iA >= 0 {
			hits++
		}
	}
	if hits < 10000 {
		t.Errorf("only %d of the cases hit a triangle: the test compares too few hits", hits)
	}
}
