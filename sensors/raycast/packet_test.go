package raycast

import (
	"math"
	"math/rand"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
)

// randomPrimitive is n random triangles, some sharing an edge with the one
// before, some of no area, coordinates often on a grid so that rays meet
// vertices, edges and box planes.
func randomPrimitive(rng *rand.Rand, n int) *models.Primitive {
	grid := []float32{-1, 0, 0.5, 1}
	pick := func() float32 {
		if rng.Intn(3) == 0 {
			return grid[rng.Intn(len(grid))]
		}
		return float32(rng.NormFloat64())
	}
	prim := &models.Primitive{}
	for k := 0; k < n; k++ {
		v := [3]mgl32.Vec3{{pick(), pick(), pick()}, {pick(), pick(), pick()}, {pick(), pick(), pick()}}
		switch rng.Intn(4) {
		case 0:
			if k > 0 {
				last := prim.Positions[len(prim.Positions)-3:]
				v[0], v[1] = last[0], last[1]
			}
		case 1:
			v[2] = v[1]
		}
		for _, q := range v {
			prim.Indices = append(prim.Indices, uint32(len(prim.Positions)))
			prim.Positions = append(prim.Positions, q)
		}
	}
	prim.UpdateKey()
	return prim
}

// TestCastPacketMatchesCast casts packets of one to four rays from one
// origin into random scenes of several placed geometries and compares each
// lane with Cast: the same hit or miss, and the same distance to float64
// rounding (where triangles meet a ray at one point, the one found first
// may differ in the last bits). Directions include zero components, so
// that rays run along box planes. Half the scenes traverse their
// geometries' 8-wide float32 hierarchies.
func TestCastPacketMatchesCast(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2: casts go ray by ray")
	}
	rng := rand.New(rand.NewSource(5))
	var st traversal
	hits, rays := 0, 0
	defer func(m int) { wideMinTriangles = m }(wideMinTriangles)
	for s := 0; s < 300; s++ {
		c := New()
		var ps []Placement
		// Every other scene's geometries take the 8-wide hierarchy
		// (intersectPacket8AVX2), whatever their size; every tenth has
		// one of 5,000 triangles, which takes it anyway.
		wideMinTriangles = []int{4096, 0}[s%2]
		for i := 0; i < 1+rng.Intn(6); i++ {
			ntri := 1 + rng.Intn(60)
			if s%10 == 9 && i == 0 {
				ntri = 5000
			}
			g := NewGeometry(randomPrimitive(rng, ntri))
			if (g.nodes8 != nil) != (s%2 == 1 || ntri >= 4096) {
				t.Fatalf("scene %d: %d triangles, the 8-wide hierarchy %v", s, ntri, g.nodes8 != nil)
			}
			m := mgl64.Translate3D(rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()).
				Mul4(mgl64.HomogRotate3D(rng.Float64()*6, mgl64.Vec3{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}.Normalize())).
				Mul4(mgl64.Scale3D(0.5+rng.Float64(), 0.5+rng.Float64(), 0.5+rng.Float64()))
			if rng.Intn(3) == 0 {
				m = mgl64.Ident4()
			}
			ps = append(ps, Placement{Geom: g, FromLocal: m, ToLocal: m.Inv()})
		}
		c.Place(ps)
		for j := 0; j < 100; j++ {
			origin := mgl64.Vec3{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
			if rng.Intn(4) == 0 {
				origin = mgl64.Vec3{0.5, 0, -1}
			}
			n := 1 + rng.Intn(packLanes)
			base := mgl64.Vec3{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
			dirs := make([]mgl64.Vec3, n)
			for l := range dirs {
				d := base.Add(mgl64.Vec3{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}.Mul(0.1 * rng.Float64()))
				if rng.Intn(5) == 0 {
					d[rng.Intn(3)] = 0
				}
				dirs[l] = d.Normalize()
			}
			tmax := []float64{math.Inf(1), 2, rng.Float64() * 4}[rng.Intn(3)]
			out := make([]float64, n)
			c.castPacket(origin, dirs, [packLanes]float64{tmax, tmax, tmax, tmax}, out, &st)
			// On a stack too small for the hierarchy over instances
			// (walkTopAVX2 hands such nodes to Go, which grows it): the
			// same bits.
			small := make([]float64, n)
			c.castPacketOn(make([]packetEntry, 1+rng.Intn(2)), origin, dirs, [packLanes]float64{tmax, tmax, tmax, tmax}, small, &st)
			for l := range dirs {
				if math.Float64bits(small[l]) != math.Float64bits(out[l]) {
					t.Fatalf("scene %d, packet %d, lane %d: %v on a small stack, %v", s, j, l, small[l], out[l])
				}
			}
			for l, d := range dirs {
				want := c.cast(origin, d, tmax)
				rays++
				if (out[l] < tmax) != (want < tmax) || math.Abs(out[l]-want) > 1e-12*math.Max(1, want) {
					t.Fatalf("scene %d, packet %d, lane %d of %d: %v along %v, tmax %g: packet %v, Cast %v", s, j, l, n, origin, d, tmax, out[l], want)
				}
				if want < tmax {
					hits++
				}
			}
		}
	}
	t.Logf("%d of %d rays hit", hits, rays)
	if hits < rays/5 {
		t.Errorf("only %d of %d rays hit: the test compares too few hits", hits, rays)
	}
}

// TestIntersectPacketMatchesHit runs the packet traversals of one geometry
// (intersectPacketAVX2, and for every other geometry the 8-wide
// intersectPacket8AVX2) on random geometries and checks each lane against
// the scalar test: a lane's distance is the one triangle.hit gives for the
// triangle it names, to the bit (the lanes run the same arithmetic), and
// the same hit or miss as the one-ray traversal. With a stack too small
// for the hierarchy it must report the overflow and leave the lanes'
// tmax as they were, for intersectPacket's lane-by-lane fallback.
func TestIntersectPacketMatchesHit(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2: packets are not traversed")
	}
	rng := rand.New(rand.NewSource(9))
	var st traversal
	stack := make([]packetEntry, fixedStack)
	hits, overflows := 0, 0
	defer func(m int) { wideMinTriangles = m }(wideMinTriangles)
	for i := 0; i < 2000; i++ {
		// Every other geometry traversed by the 8-wide kernel.
		wideMinTriangles = []int{1 << 30, 0}[i%2]
		g := NewGeometry(randomPrimitive(rng, 1+rng.Intn(80)))
		if len(g.packs) == 0 {
			continue
		}
		kernel := func(p *packet, mask uint64, stack *packetEntry, depth int) bool {
			if g.nodes8 != nil {
				return intersectPacket8AVX2(&g.nodes8[0], &g.packs[0], p, mask, stack, depth)
			}
			return intersectPacketAVX2(&g.nodes[0], &g.packs[0], p, mask, stack, depth)
		}
		for j := 0; j < 20; j++ {
			o := [3]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
			base := mgl64.Vec3{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
			dirs := make([]mgl64.Vec3, packLanes)
			for l := range dirs {
				dirs[l] = base.Add(mgl64.Vec3{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}.Mul(0.2))
				if rng.Intn(6) == 0 {
					dirs[l][rng.Intn(3)] = 0
				}
			}
			mask := 1 + rng.Intn(15)
			tmax := []float64{math.Inf(1), 2, rng.Float64() * 4}[rng.Intn(3)]
			var p packet
			p.setRays(nil, o, dirs)
			p.tmax = [packLanes]float64{tmax, tmax, tmax, tmax}
			p.tri = [packLanes]int64{-1, -1, -1, -1}
			depth := []int{fixedStack, 0, 1}[rng.Intn(3)]
			if !kernel(&p, uint64(mask), &stack[0], depth) {
				if depth == fixedStack {
					t.Fatalf("geometry %d: overflow with %d entries", i, depth)
				}
				overflows++
				if p.tmax != [packLanes]float64{tmax, tmax, tmax, tmax} {
					t.Fatalf("geometry %d: an overflow changed tmax to %v", i, p.tmax)
				}
				continue
			}
			for l, d := range dirs {
				r := newRay(o, [3]float64(d))
				want, wantTri := g.intersect(&r, tmax, &st)
				if mask&(1<<l) == 0 {
					if p.tmax[l] != tmax || p.tri[l] != -1 {
						t.Fatalf("geometry %d, ray %d: lane %d not in mask %b changed: %v, triangle %d", i, j, l, mask, p.tmax[l], p.tri[l])
					}
					continue
				}
				if (p.tri[l] >= 0) != (wantTri >= 0) || math.Abs(p.tmax[l]-want) > 1e-12*math.Max(1, want) {
					t.Fatalf("geometry %d, ray %d, lane %d: packet %v (triangle %d), one ray %v (triangle %d)", i, j, l, p.tmax[l], p.tri[l], want, wantTri)
				}
				if p.tri[l] < 0 {
					continue
				}
				hits++
				tr := g.tri(int32(p.tri[l]))
				if got, ok := tr.hit(&r, math.Inf(1)); !ok || math.Float64bits(got) != math.Float64bits(p.tmax[l]) {
					t.Fatalf("geometry %d, ray %d, lane %d: triangle %d gives %v, %v; the packet said %v", i, j, l, p.tri[l], got, ok, p.tmax[l])
				}
			}
		}
	}
	if hits < 10000 || overflows == 0 {
		t.Errorf("%d lanes hit, %d overflows: the test compares too little", hits, overflows)
	}
}

// TestIntersectAVX2Overflow gives the one-ray traversal stacks too small
// for the hierarchy: it must say so (intersect then runs the Go loop), and
// where it does not, find what the Go loop finds.
func TestIntersectAVX2Overflow(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	rng := rand.New(rand.NewSource(13))
	stack := make([]stackEntry, 2)
	overflows, done := 0, 0
	for i := 0; i < 2000; i++ {
		g := NewGeometry(randomPrimitive(rng, 1+rng.Intn(80)))
		if len(g.packs) == 0 {
			continue
		}
		o := [3]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		r := newRay(o, [3]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()})
		depth := rng.Intn(3)
		got, tri, ok := intersectAVX2(&g.nodes[0], &g.packs[0], &r, math.Inf(1), &stack[0], depth)
		if !ok {
			overflows++
			continue
		}
		done++
		want, wantTri := g.intersectGo(&r, math.Inf(1), new(traversal))
		if math.Float64bits(got) != math.Float64bits(want) || tri != wantTri {
			t.Fatalf("geometry %d, stack of %d: %v (triangle %d), the Go loop %v (triangle %d)", i, depth, got, tri, want, wantTri)
		}
	}
	if overflows == 0 || done == 0 {
		t.Errorf("%d overflows, %d traversals: the test compares too little", overflows, done)
	}
}

// TestCastAllBothKernels casts scans with CastAll and CastBatch with the
// vector kernels and without (the scalar loop with its hint), on random
// placed scenes, one with a geometry of only flat triangles (no packets,
// an empty box), and an empty one, for scans of one beam to many, half the
// scenes' geometries with 8-wide hierarchies: every beam as Cast finds it.
func TestCastAllBothKernels(t *testing.T) {
	has := useAVX2
	defer func() { useAVX2 = has }()
	rng := rand.New(rand.NewSource(17))
	flat := &models.Primitive{Positions: []mgl32.Vec3{{0, 0, 0}, {1, 0, 0}, {2, 0, 0}}, Indices: []uint32{0, 1, 2}}
	flat.UpdateKey()
	defer func(m int) { wideMinTriangles = m }(wideMinTriangles)
	for _, avx := range []bool{false, true} {
		useAVX2 = avx && has
		hits, beams := 0, 0
		for s := 0; s < 40; s++ {
			wideMinTriangles = []int{4096, 0}[s%2]
			c := New()
			var ps []Placement
			if s > 0 {
				for i := 0; i < 1+rng.Intn(4); i++ {
					g := NewGeometry(randomPrimitive(rng, 1+rng.Intn(60)))
					if i == 0 && s%2 == 0 {
						g = NewGeometry(flat)
					}
					m := mgl64.Translate3D(rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()).
						Mul4(mgl64.HomogRotate3D(rng.Float64()*6, mgl64.Vec3{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}.Normalize()))
					ps = append(ps, Placement{Geom: g, FromLocal: m, ToLocal: m.Inv()})
				}
			}
			c.Place(ps)
			for _, n := range []int{1, 2, 3, 5, 70} {
				o := mgl64.Vec3{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
				dirs := make([]mgl64.Vec3, n)
				for k := range dirs {
					dirs[k] = mgl64.Vec3{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}.Normalize()
				}
				tmax := []float64{math.Inf(1), 2}[rng.Intn(2)]
				all := make([]float64, n)
				c.CastAll(o, dirs, tmax, all)
				sets := []Rays{{Origin: o, Dirs: dirs, TMax: tmax, Out: make([]float64, n)}}
				c.CastBatch(sets)
				for k, d := range dirs {
					want, ok := c.Cast(o, d, tmax)
					for name, got := range map[string]float64{"CastAll": all[k], "CastBatch": sets[0].Out[k]} {
						if math.IsInf(got, 1) != !ok || math.Abs(got-want) > 1e-12*math.Max(1, want) {
							t.Fatalf("AVX2 %v, scene %d, %s of %d beams, beam %d: %v, Cast %v", useAVX2, s, name, n, k, got, want)
						}
					}
					if ok {
						hits++
					}
					beams++
				}
			}
		}
		if hits == 0 || hits == beams {
			t.Errorf("AVX2 %v: %d of %d beams hit: the test says nothing", useAVX2, hits, beams)
		}
	}
}

// TestOverlappingTrianglesAcrossKernels casts at overlapping triangles in
// one plane (double-sided walls, decals), where hits lie a rounding apart
// and a box's rounded entry may lie past a hit inside it, so that which
// hit a traversal keeps depends on its order: CastAll, CastSerial and
// CastBatch must still agree to the bit (a sensor's frames are the same
// however a cycle casts them), and each must be Cast's hit to rounding.
func TestOverlappingTrianglesAcrossKernels(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	p := &models.Primitive{}
	for k := 0; k < 40; k++ {
		c := [2]float32{float32(rng.NormFloat64()) * 0.3, float32(rng.NormFloat64()) * 0.3}
		for j := 0; j < 3; j++ {
			p.Indices = append(p.Indices, uint32(len(p.Positions)))
			p.Positions = append(p.Positions, mgl32.Vec3{1, c[0] + float32(rng.NormFloat64())*0.5, c[1] + float32(rng.NormFloat64())*0.5})
		}
	}
	p.UpdateKey()
	c := New()
	c.Place([]Placement{{Geom: NewGeometry(p), FromLocal: mgl64.Ident4(), ToLocal: mgl64.Ident4()}})
	apart := 0
	for j := 0; j < 200; j++ {
		o := mgl64.Vec3{rng.Float64() * -3, rng.NormFloat64(), rng.NormFloat64()}
		base := mgl64.Vec3{1, rng.NormFloat64() * 0.3, rng.NormFloat64() * 0.3}
		dirs := make([]mgl64.Vec3, 100)
		for l := range dirs {
			dirs[l] = base.Add(mgl64.Vec3{0, rng.NormFloat64() * 0.1, rng.NormFloat64() * 0.1}).Normalize()
		}
		all, serial := make([]float64, len(dirs)), make([]float64, len(dirs))
		c.CastAll(o, dirs, math.Inf(1), all)
		c.CastSerial(o, dirs, math.Inf(1), serial)
		sets := []Rays{{Origin: o, Dirs: dirs, TMax: math.Inf(1), Out: make([]float64, len(dirs))}}
		c.CastBatch(sets)
		for l, d := range dirs {
			if math.Float64bits(all[l]) != math.Float64bits(serial[l]) || math.Float64bits(all[l]) != math.Float64bits(sets[0].Out[l]) {
				t.Fatalf("origin %v, beam %d: CastAll %v, CastSerial %v, CastBatch %v", o, l, all[l], serial[l], sets[0].Out[l])
			}
			want, _ := c.Cast(o, d, math.Inf(1))
			if math.IsInf(all[l], 1) != math.IsInf(want, 1) || math.Abs(all[l]-want) > 1e-12*math.Max(1, want) {
				t.Fatalf("origin %v, beam %d: CastAll %v, Cast %v", o, l, all[l], want)
			}
			if all[l] != want {
				apart++
			}
		}
	}
	t.Logf("%d beams a rounding apart from Cast", apart)
}

// TestFlatGeometryLeavesTopBoxesFinite places a geometry whose triangles
// all have no area (so no triangle at all is kept, and its box is empty)
// beside ordinary ones: it must not make the boxes of the hierarchy over
// instances NaN (an empty box mapped by a placement is NaN, and a NaN box
// is entered by every ray), and it still counts its triangles.
func TestFlatGeometryLeavesTopBoxesFinite(t *testing.T) {
	rng := rand.New(rand.NewSource(19))
	flat := &models.Primitive{Positions: []mgl32.Vec3{{0, 0, 0}, {1, 0, 0}, {2, 0, 0}}, Indices: []uint32{0, 1, 2, 0, 0, 1}}
	flat.UpdateKey()
	gf := NewGeometry(flat)
	ps := []Placement{{Geom: gf, FromLocal: mgl64.Ident4(), ToLocal: mgl64.Ident4()}}
	triangles := gf.Triangles()
	for i := 0; i < 6; i++ {
		g := NewGeometry(randomPrimitive(rng, 20))
		m := mgl64.Translate3D(float64(3*i), 0, 0)
		ps = append(ps, Placement{Geom: g, FromLocal: m, ToLocal: m.Inv()})
		triangles += g.Triangles()
	}
	c := New()
	c.Place(ps)
	if c.Triangles() != triangles {
		t.Errorf("%d triangles placed, want %d", c.Triangles(), triangles)
	}
	for i := range c.top {
		nd := &c.top[i]
		for k := 0; k < int(nd.n); k++ {
			b := nd.box(k)
			for a := 0; a < 3; a++ {
				if math.IsNaN(b.min[a]) || math.IsNaN(b.max[a]) {
					t.Fatalf("node %d, child %d: box %v", i, k, b)
				}
			}
		}
	}
}

// TestMapRaysMatchesSetRays: the packet's rays set and mapped into a
// placement four lanes at a time (setWorldRays, mapPacketAVX2) are setRays's, bit
// for bit, for one to four rays, on random maps (rotations, scales,
// mirrors) and directions with zero and negative-zero components (infinite
// inverses) and of every magnitude.
func TestMapRaysMatchesSetRays(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2: the packet kernel is not used")
	}
	rng := rand.New(rand.NewSource(7))
	comp := func() float64 {
		switch rng.Intn(6) {
		case 0:
			return 0
		case 1:
			return math.Copysign(0, -1)
		case 2:
			return rng.NormFloat64() * 1e-9
		case 3:
			return rng.NormFloat64() * 1e9
		}
		return rng.NormFloat64()
	}
	same := func(a, b [packLanes]float64) bool {
		for l := range a {
			if math.Float64bits(a[l]) != math.Float64bits(b[l]) {
				return false
			}
		}
		return true
	}
	for it := 0; it < 20000; it++ {
		m := mgl64.HomogRotate3D(rng.Float64()*7, mgl64.Vec3{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}.Normalize())
		m = mgl64.Translate3D(rng.NormFloat64()*10, rng.NormFloat64(), comp()).Mul4(m).Mul4(mgl64.Scale3D(comp(), 1+rng.Float64(), -1))
		if rng.Intn(4) == 0 {
			m = mgl64.Ident4()
		}
		a := affineOf(m)
		o := [3]float64{comp(), comp(), comp()}
		dirs := make([]mgl64.Vec3, 1+rng.Intn(packLanes))
		for i := range dirs {
			dirs[i] = mgl64.Vec3{comp(), comp(), comp()}
		}
		var w, want, got, wantW packet
		wantW.setRays(nil, o, dirs)
		w.setWorldRays(o, dirs)
		want.setRays(&a, o, dirs)
		mapPacketAVX2(&a, &w, &got)
		for k := 0; k < 3; k++ {
			if !same(w.d[k], wantW.d[k]) || !same(w.inv[k], wantW.inv[k]) ||
				!same(got.d[k], want.d[k]) || !same(got.inv[k], want.inv[k]) ||
				math.Float64bits(got.o[k]) != math.Float64bits(want.o[k]) || w.o[k] != wantW.o[k] ||
				w.near[k] != wantW.near[k] || w.far[k] != wantW.far[k] || w.mixed != wantW.mixed ||
				got.near[k] != want.near[k] || got.far[k] != want.far[k] || got.mixed != want.mixed {
				t.Fatalf("case %d, axis %d: world d %v inv %v signs %d %v %v, want %v %v %d %v %v; mapped o %v d %v inv %v signs %d %v %v, want %v %v %v %d %v %v",
					it, k, w.d[k], w.inv[k], w.mixed, w.near, w.far, wantW.d[k], wantW.inv[k], wantW.mixed, wantW.near, wantW.far,
					got.o, got.d[k], got.inv[k], got.mixed, got.near, got.far, want.o, want.d[k], want.inv[k], want.mixed, want.near, want.far)
			}
		}
	}
}
