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
// that rays run along box planes.
func TestCastPacketMatchesCast(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2: casts go ray by ray")
	}
	rng := rand.New(rand.NewSource(5))
	var st traversal
	hits, rays := 0, 0
	for s := 0; s < 300; s++ {
		c := New()
		var ps []Placement
		for i := 0; i < 1+rng.Intn(6); i++ {
			g := NewGeometry(randomPrimitive(rng, 1+rng.Intn(60)))
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
			c.castPacket(origin, dirs, tmax, out, &st)
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
