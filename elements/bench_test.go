package elements_test

import (
	"math"
	"strconv"
	"testing"

	"github.com/simvis/simvis/scene"
)

// BenchmarkPointCloudScan writes a 361-point scan (1083 coordinates) into
// the parameter table, as a scanner client does every cycle, and applies it
// to the pointcloud element's geometry.
func BenchmarkPointCloudScan(b *testing.B) {
	s, err := scene.Load("../scenes/showcase/scene.xml", scene.Options{})
	if err != nil {
		b.Fatal(err)
	}
	cmd, err := scene.ParseCommand(`<element type="pointcloud" name="SCAN361" max_points="361" count="361" noise="0.01" sensed="false"/>`, "bench", "")
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Exec(cmd); err != nil {
		b.Fatal(err)
	}
	e, _ := s.Element("SCAN361")
	v := s.Values()[e.Start+1 : e.Start+1+3*361]
	phase := 0.0
	for b.Loop() {
		phase += 0.01
		for i := 0; i < 361; i++ {
			a := float64(i)*math.Pi/360 - math.Pi/2
			r := 3 + math.Sin(phase+a)
			v[3*i], v[3*i+1], v[3*i+2] = r*math.Cos(a), r*math.Sin(a), 0.3
		}
		if err := s.Update(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpdateNoChange is the per-cycle cost of finding changed values in
// a table of 1000 pose elements when none changed.
func BenchmarkUpdateNoChange(b *testing.B) {
	s := scene.New(scene.Options{})
	for i := 0; i < 1000; i++ {
		cmd, err := scene.ParseCommand(`<element type="pose" name="P`+strconv.Itoa(i)+`"/>`, "bench", "")
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Exec(cmd); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if err := s.Update(); err != nil {
			b.Fatal(err)
		}
	}
}
