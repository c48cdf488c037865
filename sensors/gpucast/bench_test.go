package gpucast_test

import (
	"math"
	"testing"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/sensors/gpucast"
	"github.com/simvis/simvis/sensors/raycast"
)

// BenchmarkCycle casts every range sensor's rays of a benchmark scene
// once per op: the 150 scanners of 50 MARVINs (marvin50), and the
// 1M-triangle cave's scanner and 640x480 depth camera (mesh1m), RAVON's
// sensors, rays through its alpha-masked foliage (ravon); in one
// compute dispatch (rays sent, cast, distances read back) and with the
// CPU caster's CastBatch on all cores. The current GPU backend's cycle
// is sensors' BenchmarkMarvins50GPU. The compute dispatch runs with the
// division New picked (compute), and with the other one as well, to show
// the correction's cost: compute-corrected (with the device's fma where
// it is exact, else Dekker's product) where New kept the device's
// division, compute-uncorrected (not exact) where New corrects it; and in
// work groups of 64 invocations instead of 256 (compute-group64).
func BenchmarkCycle(b *testing.B) {
	ctx := newContext(b)
	g, err := gpucast.New(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	other, otherName := gpucast.CorrectedOn(ctx), "compute-corrected"
	if gpucast.DivisionOf(g) != gpucast.DivDevice {
		other, otherName = gpucast.DivDevice, "compute-uncorrected"
	}
	g2, err := gpucast.NewWithDivision(ctx, other)
	if err != nil {
		b.Fatal(err)
	}
	defer g2.Close()
	g64, err := gpucast.NewWithGroup(ctx, 64)
	if err != nil {
		b.Fatal(err)
	}
	defer g64.Close()
	for i, name := range []string{"marvin50", "mesh1m", "ravon"} {
		var w *world
		var sets []raycast.Rays
		rays := 0
		// The scene is read by the first of its benchmarks that runs.
		load := func(b *testing.B) {
			if w != nil {
				return
			}
			if name == "ravon" {
				w = loadWorld(b, "../../scenes/ravon/scene.xml")
			} else {
				w = loadWorld(b, benchScene(b, i))
			}
			sets = make([]raycast.Rays, len(w.dirs))
			for k := range sets {
				sets[k] = raycast.Rays{Origin: w.origins[k], Dirs: w.dirs[k], TMax: math.Inf(1), Out: make([]float64, len(w.dirs[k]))}
				rays += len(w.dirs[k])
			}
		}
		for _, c := range []struct {
			name string
			g    *gpucast.Caster
		}{{"compute", g}, {otherName, g2}, {"compute-group64", g64}} {
			b.Run(name+"/"+c.name, func(b *testing.B) {
				load(b)
				if err := c.g.Sync(w.c); err != nil {
					b.Fatal(err)
				}
				// The first dispatch of a program may compile it (llvmpipe).
				if err := c.g.CastBatch(sets); err != nil {
					b.Fatal(err)
				}
				testkit.LoopCycles(b, rays, func() {
					if err := c.g.CastBatch(sets); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
		b.Run(name+"/CastBatch", func(b *testing.B) {
			load(b)
			testkit.LoopCycles(b, rays, func() { w.c.CastBatch(sets) })
		})
	}
}
