package sensors_test

import (
	"testing"

	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// BenchmarkCameraShadows renders a bundled scene's 640x480 camera (the
// stereo scene: its pair; frames/s then counts pairs) lit by an
// ambient light and a sun, without shadows (the sun's shadows="false"),
// with shadows while the robot drives (its pose element changes every
// frame: the shadow map is redrawn every frame), and with shadows in a
// still scene (the shadow map drawn once and reused, as for the second
// camera of a stereo pair).
//
//	go test -run '^$' -bench CameraShadows ./sensors/
func BenchmarkCameraShadows(b *testing.B) {
	for _, sc := range []struct {
		name, path, pose string
		cameras          []string
	}{
		{"quickstart", "../scenes/quickstart/scene.xml", "R_POSE", []string{"ROBOT_CAM"}},
		{"marvin", "../scenes/marvin/scene.xml", "M_POSE", []string{"CAMERA"}},
		{"stereo", "../scenes/stereo/scene.xml", "R_POSE", []string{"LEFT", "RIGHT"}},
	} {
		for _, mode := range []string{"off", "moving", "still"} {
			b.Run(sc.name+"/"+mode, func(b *testing.B) {
				s, err := scene.Load(sc.path, scene.Options{})
				if err != nil {
					b.Fatal(err)
				}
				shadows := "true"
				if mode == "off" {
					shadows = "false"
				}
				for _, x := range []string{
					`<element type="light" name="BENCH_AMB" kind="ambient" intensity="0.3"/>`,
					`<element type="light" name="BENCH_SUN" kind="sun" azimuth="140" elevation="40" shadows="` + shadows + `"/>`,
				} {
					c, err := scene.ParseCommand(x, "bench", "")
					if err != nil {
						b.Fatal(err)
					}
					if err := s.Exec(c); err != nil {
						b.Fatal(err)
					}
				}
				r, err := sensors.NewRenderer()
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				var cams []*sensors.Camera
				for _, name := range sc.cameras {
					for _, se := range s.Sensors() {
						if se.Name == name {
							cams = append(cams, se.Sensor.(*sensors.Camera))
						}
					}
				}
				yaw := 20.0
				for b.Loop() {
					if mode != "still" {
						yaw++
						if err := s.Set(sc.pose, "yaw", yaw); err != nil {
							b.Fatal(err)
						}
					}
					for _, cam := range cams {
						if _, err := cam.Image(r, s); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
			})
		}
	}
}
