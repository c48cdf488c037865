package sensors_test

import (
	"math"
	"testing"

	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// BenchmarkQuickstartCamera renders the quickstart scene's 640x480 camera and
// reads the image back, the work `simvis capture` does per camera frame.
func BenchmarkQuickstartCamera(b *testing.B) {
	s, err := scene.Load("../scenes/quickstart/scene.xml", scene.Options{})
	if err != nil {
		b.Fatal(err)
	}
	r, err := sensors.NewRenderer()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	cam := s.Sensors()[0].Sensor.(*sensors.Camera)
	yaw := 0.0
	b.ResetTimer()
	for b.Loop() {
		// Move the robot every frame so nothing is cached between frames.
		yaw += 1
		if err := s.Set("R_POSE", "yaw", yaw); err != nil {
			b.Fatal(err)
		}
		if _, err := cam.Image(r, s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
}

// BenchmarkShowcaseCamera renders the showcase scene's 640x480 mast camera
// (own lights: a sun, an ambient light and a spot headlight) while the pan
// joint turns, and reads the image back.
func BenchmarkShowcaseCamera(b *testing.B) {
	s, err := scene.Load("../scenes/showcase/scene.xml", scene.Options{})
	if err != nil {
		b.Fatal(err)
	}
	r, err := sensors.NewRenderer()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	var cam *sensors.Camera
	for _, se := range s.Sensors() {
		cam = se.Sensor.(*sensors.Camera)
	}
	angle := 0.0
	for b.Loop() {
		angle = math.Mod(angle+1, 90)
		if err := s.Set("PAN", "angle", angle-45); err != nil {
			b.Fatal(err)
		}
		if _, err := cam.Image(r, s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
}
