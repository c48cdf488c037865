package raycast_test

import (
	"math"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors/raycast"
)

// BenchmarkMarvinScan syncs the caster to the MARVIN lab and casts a 361-beam
// scan from MARVIN's front scanner position, as each CPU-backend scanner
// does per cycle. cpu-us/op is the process's CPU time per scan (both
// cores): on a machine shared with other work it moves less than ns/op.
func BenchmarkMarvinScan(b *testing.B) {
	s, err := scene.Load("../../scenes/marvin/scene.xml", scene.Options{})
	if err != nil {
		b.Fatal(err)
	}
	c := raycast.New()
	dirs := make([]mgl64.Vec3, 361)
	for i := range dirs {
		a := (float64(i)/2 - 90 + 20) * math.Pi / 180
		dirs[i] = mgl64.Vec3{math.Cos(a), math.Sin(a), 0}
	}
	out := make([]float64, len(dirs))
	cpu := loopCPU(b, func() {
		c.Sync(s)
		c.CastAll(mgl64.Vec3{-1.5, -0.83, 0.1}, dirs, math.Inf(1), out)
	})
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "scans/s")
}
