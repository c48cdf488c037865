package gpucast_test

import (
	"math"
	"syscall"
	"testing"
	"time"

	"github.com/simvis/simvis/sensors/gpucast"
	"github.com/simvis/simvis/sensors/raycast"
)

// BenchmarkCycle casts every range sensor's rays of a benchmark scene
// once per op: the 150 scanners of 50 MARVINs (marvin50), and the
// 1M-triangle cave's scanner and 640x480 depth camera (mesh1m), RAVON's
// sensors, rays through its alpha-masked foliage (ravon); in one
// compute dispatch (rays sent, cast, distances read back) and with the
// CPU caster's CastBatch on all cores. The current GPU backend's cycle
// is sensors' BenchmarkMarvins50GPU.
func BenchmarkCycle(b *testing.B) {
	ctx := newContext(b)
	g, err := gpucast.New(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
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
		b.Run(name+"/compute", func(b *testing.B) {
			load(b)
			if err := g.Sync(w.c); err != nil {
				b.Fatal(err)
			}
			loopCycles(b, rays, func() {
				if err := g.CastBatch(sets); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(name+"/CastBatch", func(b *testing.B) {
			load(b)
			loopCycles(b, rays, func() { w.c.CastBatch(sets) })
		})
	}
}

// loopCycles runs one cycle per iteration of b's loop and reports
// cycles/s, rays/s and the process's CPU time per cycle (user and system,
// all threads, llvmpipe's included).
func loopCycles(b *testing.B, rays int, one func()) {
	var r0, r1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	for b.Loop() {
		one()
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	cpu := time.Duration(r1.Utime.Nano() + r1.Stime.Nano() - r0.Utime.Nano() - r0.Stime.Nano())
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
	b.ReportMetric(float64(b.N*rays)/b.Elapsed().Seconds(), "rays/s")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/cycle")
}
