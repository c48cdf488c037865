package sensors_test

import (
	"testing"

	"github.com/simvis/simvis/internal/gpu"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/sensors"
)

// BenchmarkCameraRing renders the cycle of the ring of 16 cameras
// (sensors.BenchCameras) with RenderFrames: each picture read back
// behind a fence after all are drawn (async), or each waited for as it is
// read (waiting), as before the reads were started.
func BenchmarkCameraRing(b *testing.B) {
	s := loadBenchScene(b, 2)
	r := testkit.Renderer(b)
	entries := s.Sensors()
	stamps := make([]*sensors.Stamp, len(entries))
	for _, async := range []bool{true, false} {
		name := map[bool]string{true: "async", false: "waiting"}[async]
		b.Run(name, func(b *testing.B) {
			defer func(v bool) { gpu.AsyncReads = v }(gpu.AsyncReads)
			gpu.AsyncReads = async
			cycle := func() {
				_, errs := sensors.RenderFrames(r, s, entries, stamps)
				for _, err := range errs {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			cycle() // shaders, textures, buffers
			b.ResetTimer()
			testkit.LoopCycles(b, 0, cycle)
			b.ReportMetric(float64(b.N*len(entries))/b.Elapsed().Seconds(), "frames/s")
		})
	}
}
