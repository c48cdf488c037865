package sensors_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/simvis/simvis/sensors"
)

// BenchmarkMarvins50CPUMoving is BenchmarkMarvins50CPU with one robot's
// tilt unit turning every cycle, as in a running simulation: the scene
// changes once per cycle, so the caster reads it and rebuilds the hierarchy
// over the instances once per cycle (not once per scanner).
func BenchmarkMarvins50CPUMoving(b *testing.B) {
	s := loadBenchScene(b, 0)
	r, err := sensors.NewRenderer()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	var set []*sensors.Laser
	for _, se := range s.Sensors() {
		if l, ok := se.Sensor.(*sensors.Laser); ok {
			if err := sensors.SetBackend(l, sensors.BackendCPU); err != nil {
				b.Fatal(err)
			}
			set = append(set, l)
		}
	}
	cycle := 0
	one := func() {
		cycle++
		if err := s.Set("M00_TILT_UNIT", "angle", float64(10+cycle%2)); err != nil {
			b.Fatal(err)
		}
		for _, l := range set {
			if _, err := l.Scan(r, s); err != nil {
				b.Fatal(err)
			}
		}
	}
	one()
	b.ResetTimer()
	var r0, r1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	for b.Loop() {
		one()
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	cpu := time.Duration(r1.Utime.Nano() + r1.Stime.Nano() - r0.Utime.Nano() - r0.Stime.Nano())
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/cycle")
}
