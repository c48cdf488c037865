package gpucast_test

import (
	"math"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	_ "github.com/simvis/simvis/elements"
	"github.com/simvis/simvis/internal/gpu"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
	"github.com/simvis/simvis/sensors/gpucast"
	"github.com/simvis/simvis/sensors/raycast"
)

// world is a scene's CPU caster and its range sensors' rays.
type world struct {
	c       *raycast.Caster
	origins []mgl64.Vec3
	dirs    [][]mgl64.Vec3
}

func loadWorld(t testing.TB, file string) *world {
	t.Helper()
	s, err := scene.Load(file, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := &world{c: raycast.New()}
	w.c.Sync(s)
	for _, se := range s.Sensors() {
		o, dirs, ok, err := sensors.WorldRays(s, se.Sensor)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			w.origins = append(w.origins, o)
			w.dirs = append(w.dirs, dirs)
		}
	}
	return w
}

func newContext(t testing.TB) *gpu.Context {
	t.Helper()
	ctx, err := gpu.New()
	if err != nil {
		t.Skipf("no GL context: %v", err)
	}
	t.Cleanup(func() { ctx.Close() })
	return ctx
}

// compare casts every sensor's rays on the GPU in one batch, and each
// with the CPU caster's CastSerial, and fails on any distance whose bits
// differ.
func compare(t *testing.T, g *gpucast.Caster, w *world, tmax float64) {
	t.Helper()
	if err := g.Sync(w.c); err != nil {
		t.Fatal(err)
	}
	sets := make([]raycast.Rays, len(w.dirs))
	for i := range sets {
		sets[i] = raycast.Rays{Origin: w.origins[i], Dirs: w.dirs[i], TMax: tmax, Out: make([]float64, len(w.dirs[i]))}
	}
	if err := g.CastBatch(sets); err != nil {
		t.Fatal(err)
	}
	rays, hits, bad := 0, 0, 0
	for i, rs := range sets {
		if rs.Err != nil {
			t.Fatalf("set %d: %v", i, rs.Err)
		}
		want := make([]float64, len(rs.Dirs))
		w.c.CastSerial(rs.Origin, rs.Dirs, tmax, want)
		for k := range want {
			rays++
			if !math.IsInf(want[k], 1) {
				hits++
			}
			if math.Float64bits(rs.Out[k]) != math.Float64bits(want[k]) {
				if bad < 10 {
					t.Errorf("sensor %d ray %d (dir %v): GPU %v (%#x), CPU %v (%#x)", i, k, rs.Dirs[k], rs.Out[k], math.Float64bits(rs.Out[k]), want[k], math.Float64bits(want[k]))
				}
				bad++
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d distances differ", bad, rays)
	}
	if hits == 0 {
		t.Fatalf("no ray of %d hit anything: the comparison proves nothing", rays)
	}
	t.Logf("%d rays in %d sets, %d hits: every distance bit for bit the CPU caster's", rays, len(sets), hits)
}

func TestMarvinBitForBit(t *testing.T) {
	ctx := newContext(t)
	g, err := gpucast.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	w := loadWorld(t, "../../scenes/marvin/scene.xml")
	compare(t, g, w, math.Inf(1))
	compare(t, g, w, 2.5) // a bound that cuts some rays short
}
