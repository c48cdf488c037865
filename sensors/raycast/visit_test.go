package raycast

import (
	"math"
	"math/rand"
	"os"
	"regexp"
	"strings"
	"testing"
	"unsafe"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
)

// TestAssemblyLayout holds the offsets and sizes the vector tests
// (traverse_amd64.s) read to the Go structs.
func TestAssemblyLayout(t *testing.T) {
	var r ray
	var nd node4
	var n8 node8f
	var tp triPack
	var p packet
	var e packetEntry
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"ray.o", unsafe.Offsetof(r.o), 0},
		{"ray.d", unsafe.Offsetof(r.d), 24},
		{"ray.inv", unsafe.Offsetof(r.inv), 48},
		{"ray.near", unsafe.Offsetof(r.near), 80},
		{"ray.far", unsafe.Offsetof(r.far), 104},
		{"node4.lo", unsafe.Offsetof(nd.lo), nodeLoOffset},
		{"node4.hi", unsafe.Offsetof(nd.hi), nodeHiOffset},
		{"node4.child", unsafe.Offsetof(nd.child), 192},
		{"node4.n", unsafe.Offsetof(nd.n), 208},
		{"node4 size", unsafe.Sizeof(nd), 216},
		{"node8f.lo", unsafe.Offsetof(n8.lo), nodeLoOffset},
		{"node8f.hi", unsafe.Offsetof(n8.hi), nodeHiOffset},
		{"node8f.child", unsafe.Offsetof(n8.child), 192},
		{"node8f size", unsafe.Sizeof(n8), 256},
		{"stackEntry.t", unsafe.Offsetof(stackEntry{}.t), 8},
		{"stackEntry size", unsafe.Sizeof(stackEntry{}), 16},
		{"triPack.e1", unsafe.Offsetof(tp.e1), 96},
		{"triPack.e2", unsafe.Offsetof(tp.e2), 192},
		{"triPack size", unsafe.Sizeof(tp), 288},
		{"packet.d", unsafe.Offsetof(p.d), 32},
		{"packet.inv", unsafe.Offsetof(p.inv), 128},
		{"packet.tmax", unsafe.Offsetof(p.tmax), 224},
		{"packet.tri", unsafe.Offsetof(p.tri), 256},
		{"packet.mixed", unsafe.Offsetof(p.mixed), 288},
		{"packet.near", unsafe.Offsetof(p.near), 296},
		{"packet.far", unsafe.Offsetof(p.far), 320},
		{"topWalk.mask", unsafe.Offsetof(topWalk{}.mask), 4},
		{"topWalk.sp", unsafe.Offsetof(topWalk{}.sp), 8},
		{"packetEntry.mask", unsafe.Offsetof(e.mask), 4},
		{"packetEntry.t", unsafe.Offsetof(e.t), 8},
		{"packetEntry size", unsafe.Sizeof(e), 16},
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

// TestIntersectMatchesGo casts rays at small random geometries (triangles
// sharing vertices and edges, degenerate ones, rays aimed at vertices and
// edge midpoints, finite and infinite tmax) and compares the traversal in
// use (the assembly one where the CPU has AVX2) with the Go loop on the
// scalar tests: the same triangle at the very same distance, to the bit.
// Both are checked against triangle.hit on every triangle in turn: the
// same hit or miss, and the same distance but where several triangles meet
// the ray at one point (a shared vertex or edge), whose distances differ
// by rounding and whose boxes the traversal may skip for a hit already
// found there.
func TestIntersectMatchesGo(t *testing.T) {
	if !useAVX2 {
		t.Log("no AVX2 here: the Go loop is compared with itself and with every triangle in turn")
	}
	scalarIntersect := func(g *Geometry, r *ray, tmax float64) (float64, int32) {
		defer func(v bool) { useAVX2 = v }(useAVX2)
		useAVX2 = false
		return g.intersectGo(r, tmax, new(traversal))
	}
	rng := rand.New(rand.NewSource(11))
	grid := []float32{-1, 0, 0.5, 1}
	pick := func() float32 {
		if rng.Intn(3) == 0 {
			return grid[rng.Intn(len(grid))]
		}
		return float32(rng.NormFloat64())
	}
	vert := func() [3]float32 { return [3]float32{pick(), pick(), pick()} }
	var st traversal
	hits := 0
	for i := 0; i < 10000; i++ {
		n := 1 + rng.Intn(40)
		prim := &models.Primitive{}
		for k := 0; k < n; k++ {
			v := [3][3]float32{vert(), vert(), vert()}
			switch rng.Intn(4) {
			case 0:
				if k > 0 { // share an edge with the last triangle
					last := prim.Positions[len(prim.Positions)-3:]
					v[0], v[1] = last[0], last[1]
				}
			case 1:
				v[2] = v[1] // degenerate
			}
			for _, q := range v {
				prim.Indices = append(prim.Indices, uint32(len(prim.Positions)))
				prim.Positions = append(prim.Positions, mgl32.Vec3(q))
			}
		}
		g := NewGeometry(prim)
		for j := 0; j < 20; j++ {
			o := vert()
			origin := [3]float64{float64(o[0]), float64(o[1]), float64(o[2])}
			var dir [3]float64
			if rng.Intn(2) == 0 {
				v0, v1, _, _ := g.Triangle(rng.Intn(n))
				target := [3]float64(v0)
				if rng.Intn(2) == 0 {
					target = [3]float64(v0.Add(v1).Mul(0.5))
				}
				dir = sub(target, origin)
			} else {
				dir = [3]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
			}
			tmax := []float64{math.Inf(1), 1, rng.Float64() * 3}[rng.Intn(3)]
			r := newRay(origin, dir)
			got, tri := g.intersect(&r, tmax, &st)
			goT, goTri := scalarIntersect(g, &r, tmax)
			if math.Float64bits(got) != math.Float64bits(goT) || tri != goTri {
				t.Fatalf("geometry %d, ray %d (%v along %v, tmax %g): got %v (triangle %d), the Go loop %v (triangle %d)",
					i, j, origin, dir, tmax, got, tri, goT, goTri)
			}
			want, found := tmax, false
			for k := 0; k < n; k++ {
				if tk, ok := g.IntersectTriangle(k, mgl64.Vec3(origin), mgl64.Vec3(dir), want); ok {
					want, found = tk, true
				}
			}
			if (tri >= 0) != found || math.Abs(got-want) > 1e-12*math.Max(1, want) {
				t.Fatalf("geometry %d, ray %d (%v along %v, tmax %g): got %v (triangle %d), every triangle in turn %v (hit %v)",
					i, j, origin, dir, tmax, got, tri, want, found)
			}
			if found {
				hits++
				tr := g.tri(tri)
				if tt, ok := tr.hit(&r, math.Inf(1)); !ok || tt != got {
					t.Fatalf("geometry %d, ray %d: triangle %d gives %v, %v; the traversal said %v", i, j, tri, tt, ok, got)
				}
			}
		}
	}
	if hits < 25000 {
		t.Errorf("only %d rays hit: the test compares too few hits", hits)
	}
}

// TestAssemblyIsVEXOnly reads traverse_amd64.s for instructions on vector
// registers without the VEX encoding (MOVQ R, X6 rather than VMOVQ): with
// the upper halves of the YMM registers in use, each such instruction
// stalls for hundreds of cycles on this machine (one made the traversal
// twice as slow), and nothing else would tell.
func TestAssemblyIsVEXOnly(t *testing.T) {
	src, err := os.ReadFile("traverse_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	vector := regexp.MustCompile(`\b[XY]([0-9]|1[0-5])\b`)
	for i, line := range strings.Split(string(src), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(strings.SplitN(line, "//", 2)[0]), `\`))
		line = strings.TrimSuffix(strings.TrimSpace(line), ";")
		if line == "" || strings.HasPrefix(line, "#") || strings.HasSuffix(line, ":") {
			continue
		}
		op, operands, _ := strings.Cut(line, " ")
		if strings.Contains(op, "(") {
			continue // a macro, checked where it is defined
		}
		if vector.MatchString(operands) && !strings.HasPrefix(op, "V") {
			t.Errorf("traverse_amd64.s:%d: %q is not VEX-encoded", i+1, line)
		}
	}
}
