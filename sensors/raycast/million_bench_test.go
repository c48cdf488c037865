package raycast_test

import (
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
	"github.com/simvis/simvis/sensors/raycast"
)

// benchSet is one benchmark scene's caster and the rays of its range
// sensors, one set per sensor, as sensors.WorldRays exports them.
type benchSet struct {
	c       *raycast.Caster
	s       *scene.Scene
	origins []mgl64.Vec3
	rays    [][]mgl64.Vec3
	kinds   []string
}

var benchScenes struct {
	once sync.Once
	sets []*benchSet
	err  error
}

// loadBench returns the 50-robot scene (0) or the 1M-triangle cave (1),
// written once per test binary by sensors.WriteBenchScenes.
func loadBench(b *testing.B, i int) *benchSet {
	b.Helper()
	benchScenes.once.Do(func() {
		dir, err := os.MkdirTemp("", "simvis-raycast-bench-")
		if err != nil {
			benchScenes.err = err
			return
		}
		defer os.RemoveAll(dir)
		files, err := sensors.WriteBenchScenes(dir, "../../scenes/marvin")
		if err != nil {
			benchScenes.err = err
			return
		}
		for _, f := range files {
			s, err := scene.Load(f, scene.Options{})
			if err != nil {
				benchScenes.err = err
				return
			}
			set := &benchSet{c: raycast.New(), s: s}
			set.c.Sync(s)
			for _, se := range s.Sensors() {
				o, dirs, ok, err := sensors.WorldRays(s, se.Sensor)
				if err != nil {
					benchScenes.err = err
					return
				}
				if ok {
					set.origins = append(set.origins, o)
					set.rays = append(set.rays, dirs)
					set.kinds = append(set.kinds, se.Type)
				}
			}
			benchScenes.sets = append(benchScenes.sets, set)
		}
	})
	if benchScenes.err != nil {
		b.Fatal(benchScenes.err)
	}
	return benchScenes.sets[i]
}

// castBench casts every ray of the sensors of the given type per op: ray
// by ray (Cast), sensor by sensor on this goroutine (CastSerial) or on all
// cores (CastAll), or all sensors in one batch (CastBatch); it reports
// rays/s and the process's CPU time per op.
func castBench(b *testing.B, set *benchSet, kind, how string) {
	var sets []raycast.Rays
	nrays := 0
	for i, k := range set.kinds {
		if k == kind {
			sets = append(sets, raycast.Rays{Origin: set.origins[i], Dirs: set.rays[i], TMax: inf, Out: make([]float64, len(set.rays[i]))})
			nrays += len(set.rays[i])
		}
	}
	if nrays == 0 {
		b.Skip("no such sensor")
	}
	cpu := loopCPU(b, func() {
		if how == "CastBatch" {
			set.c.CastBatch(sets)
			return
		}
		for _, rs := range sets {
			switch how {
			case "CastAll":
				set.c.CastAll(rs.Origin, rs.Dirs, inf, rs.Out)
			case "CastSerial":
				set.c.CastSerial(rs.Origin, rs.Dirs, inf, rs.Out)
			default:
				for _, d := range rs.Dirs {
					set.c.Cast(rs.Origin, d, inf)
				}
			}
		}
	})
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(b.N*nrays)/b.Elapsed().Seconds(), "rays/s")
}

// loopCPU runs op in b's loop and returns the process's CPU time over it
// (user and system, all threads): on a machine shared with other work it
// moves less than the wall time.
func loopCPU(b *testing.B, op func()) time.Duration {
	var r0, r1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	for b.Loop() {
		op()
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	return time.Duration(r1.Utime.Nano() + r1.Stime.Nano() - r0.Utime.Nano() - r0.Stime.Nano())
}

var inf = 1e300

// BenchmarkCaster casts the benchmark scenes' rays: the 150 scanners of
// 50 MARVINs (one cycle per op), and the 1M-triangle cave's scanner and
// depth camera, ray by ray (Cast), sensor by sensor on one goroutine
// (CastSerial) and on all cores (CastAll), and all sensors in one batch on
// all cores (CastBatch, as a simulation cycle casts them).
func BenchmarkCaster(b *testing.B) {
	for _, c := range []struct {
		name  string
		scene int
		kind  string
	}{{"Marvins50Scanners", 0, "laser"}, {"MillionScan", 1, "laser"}, {"MillionDepth", 1, "depth"}} {
		for _, how := range []string{"Cast", "CastSerial", "CastAll", "CastBatch"} {
			b.Run(c.name+"/"+how, func(b *testing.B) { castBench(b, loadBench(b, c.scene), c.kind, how) })
		}
	}
}

// BenchmarkBuildMillion builds the hierarchy over the 1M-triangle cave's
// mesh: ns/op is the build time.
func BenchmarkBuildMillion(b *testing.B) {
	set := loadBench(b, 1)
	var prim *models.Primitive
	for _, m := range set.s.SensedMeshes(nil) {
		for _, p := range m.Mesh.Primitives {
			if prim == nil || len(p.Indices) > len(prim.Indices) {
				prim = p
			}
		}
	}
	cpu := loopCPU(b, func() { raycast.NewGeometry(prim) })
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(len(prim.Indices)/3), "triangles")
}
