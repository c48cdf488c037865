package sensors_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// The benchmark scenes (sensors.WriteBenchScenes), written once per test
// binary into a folder of its own.
var benchScenes struct {
	once  sync.Once
	dir   string
	files []string
	err   error
}

func loadBenchScene(b *testing.B, i int) *scene.Scene {
	b.Helper()
	benchScenes.once.Do(func() {
		benchScenes.dir, benchScenes.err = os.MkdirTemp("", "simvis-bench-")
		if benchScenes.err == nil {
			benchScenes.files, benchScenes.err = sensors.WriteBenchScenes(benchScenes.dir, "../scenes/marvin")
		}
	})
	if benchScenes.err != nil {
		b.Fatal(benchScenes.err)
	}
	s, err := scene.Load(benchScenes.files[i], scene.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// runCycle measures one simulation cycle: every sensor of the given types,
// one after the other, on backend.
func runCycle(b *testing.B, s *scene.Scene, backend string, types ...string) {
	r, err := sensors.NewRenderer()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	var set []scene.Sensor
	for _, se := range s.Sensors() {
		for _, t := range types {
			if se.Type == t {
				if err := sensors.SetBackend(se.Sensor, backend); err != nil {
					b.Fatal(err)
				}
				set = append(set, se.Sensor)
			}
		}
	}
	one := func() {
		for _, se := range set {
			var err error
			switch x := se.(type) {
			case *sensors.Laser:
				_, err = x.Scan(r, s)
			case *sensors.DepthCamera:
				_, err = x.Depth(r, s)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	one() // hierarchies, shaders
	b.ResetTimer()
	faults := testkit.LoopCycles(b, 0, one)
	b.ReportMetric(float64(faults)/float64(b.N), "faults/cycle")
}

func BenchmarkMarvinScannersCPU(b *testing.B) {
	s, err := scene.Load(filepath.Join("../scenes/marvin/scene.xml"), scene.Options{})
	if err != nil {
		b.Fatal(err)
	}
	runCycle(b, s, sensors.BackendCPU, "laser")
}

func BenchmarkMarvinDepthCPU(b *testing.B) {
	s, err := scene.Load(filepath.Join("../scenes/marvin/scene.xml"), scene.Options{})
	if err != nil {
		b.Fatal(err)
	}
	runCycle(b, s, sensors.BackendCPU, "depth")
}

func BenchmarkMarvins50CPU(b *testing.B) {
	runCycle(b, loadBenchScene(b, 0), sensors.BackendCPU, "laser")
}
func BenchmarkMarvins50GPU(b *testing.B) {
	runCycle(b, loadBenchScene(b, 0), sensors.BackendGPU, "laser")
}
func BenchmarkMillionScanCPU(b *testing.B) {
	runCycle(b, loadBenchScene(b, 1), sensors.BackendCPU, "laser")
}
func BenchmarkMillionDepthCPU(b *testing.B) {
	runCycle(b, loadBenchScene(b, 1), sensors.BackendCPU, "depth")
}

// BenchmarkMarvins50Cycle is the 50 robots' cycle as serve renders it
// (RenderFrames: the 150 scanners' beams cast together), on the CPU.
func BenchmarkMarvins50Cycle(b *testing.B) {
	s := loadBenchScene(b, 0)
	r, err := sensors.NewRenderer()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for _, se := range s.Sensors() {
		if err := sensors.SetBackend(se.Sensor, sensors.BackendCPU); err != nil {
			b.Fatal(err)
		}
	}
	entries := s.Sensors()
	stamps := make([]*sensors.Stamp, len(entries))
	one := func() {
		_, errs := sensors.RenderFrames(r, s, entries, stamps)
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	one()
	testkit.LoopCycles(b, 0, one)
}
