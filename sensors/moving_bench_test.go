package sensors_test

import (
	"testing"

	"github.com/simvis/simvis/internal/testkit"
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
	testkit.LoopCycles(b, 0, one)
}
