package sensors_test

import (
	"testing"

	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// BenchmarkSegmentation segments MARVIN's scene at 640x480 from the
// camera mount while the robot turns (its pose changes every frame), the
// ID render plus the labelling a segmentation frame costs.
//
//	go test -run '^$' -bench Segmentation ./sensors/
func BenchmarkSegmentation(b *testing.B) {
	s, err := scene.Load("../scenes/marvin/scene.xml", scene.Options{})
	if err != nil {
		b.Fatal(err)
	}
	c, err := scene.ParseCommand(`<sensor type="segmentation" name="BENCH_SEG" insert_at="MARVIN/CAMERA_MOUNT" width="640" height="480" fov="70" far="20"/>`, "bench", "")
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Exec(c); err != nil {
		b.Fatal(err)
	}
	r, err := sensors.NewRenderer()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	var sg *sensors.Segmentation
	for _, se := range s.Sensors() {
		if se.Name == "BENCH_SEG" {
			sg = se.Sensor.(*sensors.Segmentation)
		}
	}
	yaw := 0.0
	for b.Loop() {
		yaw++
		if err := s.Set("M_POSE", "yaw", yaw); err != nil {
			b.Fatal(err)
		}
		if _, err := sg.Segment(r, s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
}
