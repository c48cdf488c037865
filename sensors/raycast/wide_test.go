package raycast

import (
	"math"
	"math/rand"
	"testing"
)

// TestVisitPacket8Conservative checks the 8-wide float32 node test
// (visitPacket8AVX2) against visitScalar's float64 one, lane by lane and
// child by child, on random boxes and packets and on the cases that make
// NaN, infinities and subnormals: flat boxes, boxes not float32 exact,
// origins on or just off a plane, zero, tiny and huge direction
// components, lanes that differ in sign, tmax 0, subnormal and right at a
// child's entry, children not in use (empty boxes, never to be entered).
// Every child the float64 test enters for a lane must be entered for it,
// at an entry no later; and the float32 test may not enter many more
// (that would cost time, not hits). Each lane tested alone (the one-lane
// test) must give what it gives among the four, to the bit.
func TestVisitPacket8Conservative(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2: packets are not traversed")
	}
	rng := rand.New(rand.NewSource(11))
	pick := func() float64 {
		switch rng.Intn(8) {
		case 0, 1, 2:
			return float64(rng.Intn(5) - 2) // coordinates that coincide often
		case 3:
			return float64(float32(rng.NormFloat64() * 1e4))
		default:
			return float64(float32(rng.NormFloat64() * 3))
		}
	}
	component := func(edge bool) float64 {
		if !edge {
			return rng.NormFloat64()
		}
		switch rng.Intn(6) {
		case 0:
			return 0
		case 1:
			return math.Copysign(0, -1)
		case 2:
			return math.Copysign(math.Ldexp(1, -60-rng.Intn(100)), rng.NormFloat64())
		case 3:
			return math.Copysign(math.Ldexp(1, 40+rng.Intn(100)), rng.NormFloat64())
		default:
			return rng.NormFloat64()
		}
	}
	entered, extra := 0, 0
	plainEntered, plainExtra := 0, 0
	for i := 0; i < 100000; i++ {
		edge := i%2 == 1
		var halves [2]node4
		var nd node8f
		unused := uint32(0)
		nd.n = int32(rng.Intn(9))
		for k := 0; k < 8; k++ {
			var b box
			for a := 0; a < 3; a++ {
				lo, hi := pick(), pick()
				if edge && rng.Intn(4) == 0 {
					hi = lo // flat
				}
				b.min[a], b.max[a] = min(lo, hi), max(lo, hi)
			}
			if rng.Intn(8) == 0 { // not float32 exact: rounded outward
				for a := 0; a < 3; a++ {
					b.min[a] = rng.NormFloat64()
					b.max[a] = b.min[a] + rng.Float64()
				}
			}
			halves[k/4].setChild(k%4, b, int32(k))
			for a := 0; a < 3; a++ {
				nd.lo[a][k], nd.hi[a][k] = roundDown32(b.min[a]), roundUp32(b.max[a])
			}
			if rng.Intn(6) == 0 { // a child not in use, as collapse8 leaves it
				unused |= 1 << k
				for a := 0; a < 3; a++ {
					nd.lo[a][k], nd.hi[a][k] = float32(math.Inf(1)), float32(math.Inf(-1))
				}
			}
		}
		halves[0].n, halves[1].n = 4, 4
		var p packet
		for a := range p.o {
			p.o[a] = pick()
			if edge && rng.Intn(3) == 0 { // on or just off a plane
				k := rng.Intn(8)
				p.o[a] = math.Nextafter(halves[k/4].lo[a][k%4], math.Inf(rng.Intn(3)-1))
			}
		}
		base := [3]float64{component(edge), component(edge), component(edge)}
		var tmax [packLanes]float64
		for l := 0; l < packLanes; l++ {
			d := base
			if rng.Intn(3) == 0 {
				d = [3]float64{component(edge), component(edge), component(edge)}
			} else {
				for a := range d {
					d[a] += rng.NormFloat64() * 0.05
				}
			}
			for a := 0; a < 3; a++ {
				p.d[a][l], p.inv[a][l] = d[a], 1/d[a]
			}
			tmax[l] = rng.Float64() * 8
			if edge {
				tmax[l] = []float64{math.Inf(1), 1e300, 3.5e38, rng.Float64() * 5, 0, 1e-40}[rng.Intn(6)]
			}
		}
		for l := 0; l < packLanes; l++ {
			// A tmax right at a child's entry: the float64 test enters it
			// (t0 <= tmax), so the float32 one must, its tmax rounded up.
			if rng.Intn(3) != 0 {
				continue
			}
			r := newRay(p.o, [3]float64{p.d[0][l], p.d[1][l], p.d[2][l]})
			var refs [4]int32
			var ts [4]float64
			if m := r.visitScalar(&halves[rng.Intn(2)], math.Inf(1), &refs, &ts); m > 0 {
				tmax[l] = ts[rng.Intn(m)]
			}
		}
		p.tmax = tmax
		p.setSigns()
		var lanes [8]uint32
		var entry [8]float32
		visitPacket8AVX2(&nd, &p, 15, &lanes, &entry)
		// Each lane alone (the one-lane test a packet split among the
		// nodes takes) must enter what it enters among the four, and keep
		// the entries whose least the four keep, to the bit.
		var least [8]float32
		for k := range least {
			least[k] = float32(math.Inf(1))
		}
		for l := 0; l < packLanes; l++ {
			var lanes1 [8]uint32
			var entry1 [8]float32
			visitPacket8AVX2(&nd, &p, 1<<l, &lanes1, &entry1)
			for k := 0; k < 8; k++ {
				if lanes1[k] != lanes[k]&(1<<l) {
					t.Fatalf("case %d: lane %d alone enters child %d as lanes %b, among the four as %b", i, l, k, lanes1[k], lanes[k])
				}
				if lanes1[k] != 0 {
					least[k] = min(least[k], entry1[k])
				}
			}
		}
		for k := 0; k < 8; k++ {
			if lanes[k] != 0 && math.Float32bits(least[k]) != math.Float32bits(entry[k]) {
				t.Fatalf("case %d: child %d: the lanes alone keep entries down to %g, the four %g", i, k, least[k], entry[k])
			}
		}
		for l := 0; l < packLanes; l++ {
			r := newRay(p.o, [3]float64{p.d[0][l], p.d[1][l], p.d[2][l]})
			want := uint32(0)
			for h := range halves {
				var refs [4]int32
				var ts [4]float64
				m := r.visitScalar(&halves[h], tmax[l], &refs, &ts)
				for j := 0; j < m; j++ {
					k := refs[j]
					if unused&(1<<k) != 0 {
						continue
					}
					want |= 1 << k
					if lanes[k]&(1<<l) == 0 {
						t.Fatalf("case %d: lane %d (origin %v, direction %v, inverse %v, tmax %g) enters child %d %v at %g in float64, not in float32",
							i, l, p.o, r.d, r.inv, tmax[l], k, halves[h].box(int(k%4)), ts[j])
					}
					if !(float64(entry[k]) <= ts[j]) {
						t.Fatalf("case %d: lane %d enters child %d at %g in float64, the float32 entry kept is %g", i, l, k, ts[j], entry[k])
					}
				}
			}
			for k := 0; k < 8; k++ {
				if unused&(1<<k) != 0 && lanes[k] != 0 {
					t.Fatalf("case %d: lanes %b enter child %d, an empty box", i, lanes[k], k)
				}
				more := lanes[k]&(1<<l) != 0 && want&(1<<k) == 0
				if more {
					extra++
				}
				if !edge {
					if want&(1<<k) != 0 {
						plainEntered++
					}
					if more {
						plainExtra++
					}
				}
			}
			entered += popcount8(want)
		}
	}
	t.Logf("%d children entered in float64, %d more in float32; without the edge cases %d and %d more", entered, extra, plainEntered, plainExtra)
	if entered < 120000 {
		t.Errorf("only %d children entered: the test compares too little", entered)
	}
	if plainExtra > plainEntered/1000 {
		t.Errorf("on plain boxes and rays the float32 test entered %d children more than the float64 one's %d", plainExtra, plainEntered)
	}
}

func popcount8(x uint32) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}
