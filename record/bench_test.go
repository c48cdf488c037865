package record_test

import (
	"path/filepath"
	"testing"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/record"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// BenchmarkRecordMARVINCycle measures what recording adds to a host cycle
// that renders all of MARVIN's five sensors (three 361-beam scans, a
// 640x480 camera and depth image): the cycle record (tf, values) and the
// frames' ROS 2 encoding, compression and writing; rendering is done once,
// outside the loop. go test -bench RecordMARVIN ./record/
func BenchmarkRecordMARVINCycle(b *testing.B) {
	for _, comp := range []string{"zstd", "lz4"} {
		b.Run(comp, func(b *testing.B) {
			s, err := scene.Load(filepath.Join(testkit.RepoRoot(), "scenes", "marvin", "scene.xml"), scene.Options{})
			if err != nil {
				b.Fatal(err)
			}
			r := testkit.Renderer(b)
			var frames []*sensors.Frame
			bytes := 0
			for _, se := range s.Sensors() {
				f, err := sensors.RenderFrame(r, s, se, nil)
				if err != nil {
					b.Fatal(err)
				}
				_, data, _ := f.Encode()
				bytes += len(data)
				frames = append(frames, f)
			}
			w, err := record.Create(filepath.Join(b.TempDir(), "bench.mcap"), record.Options{Compression: comp, Meta: record.Meta{Rate: 30}})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(bytes))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t := float64(i) / 30
				if err := w.Cycle(s, t); err != nil {
					b.Fatal(err)
				}
				for _, f := range frames {
					if err := w.Frame(f, t); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.StopTimer()
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
