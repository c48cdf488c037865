package sensors

import (
	"math"
	"slices"
	"testing"
	"time"
)

// compareRanges reports a range against no return or too close as a
// hit/miss disagreement, which the largest error (over beams where both
// saw a surface) cannot show.
func TestCompareRangesCountsHitMiss(t *testing.T) {
	inf := math.Inf(1)
	got := []float64{1, 2.0005, 3.02, inf, 5, inf, math.Inf(-1), math.Inf(-1)}
	ref := []float64{1, 2, 3, inf, inf, 6, math.Inf(-1), inf}
	mm, cm, worst, hitMiss := compareRanges(got, ref)
	if hitMiss != 3 {
		t.Errorf("%d hit/miss disagreements, want 3 (beams 4, 5, 7)", hitMiss)
	}
	if mm != 4.0/8 || cm != 4.0/8 || math.Abs(worst-0.02) > 1e-12 {
		t.Errorf("within 1 mm %v, 1 cm %v, worst %v; want 0.5, 0.5, 0.02", mm, cm, worst)
	}
}

// Auto alternates GPU and CPU frames, warm-ups first, and keeps the
// backend of the faster best timed frame, whatever slow outliers (other
// work on the machine) the other frames had.
func TestAutoKeepsTheFasterBestFrame(t *testing.T) {
	b := &beamSet{backend: BackendAuto, views: []surfaceView{{}}}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	gpu := []time.Duration{ms(90), ms(4), ms(5), ms(6), ms(4), ms(5)} // warm-up, then 4-6 ms
	cpu := []time.Duration{ms(1), ms(7), ms(50), ms(3), ms(7), ms(6)} // outliers of 6-50 ms
	var seen []string
	for i := 0; i < 2*(autoTrials+1); i++ {
		be := b.backendNow()
		seen = append(seen, be)
		d := gpu[i/2]
		if be == BackendCPU {
			d = cpu[i/2]
		}
		b.took(be, d)
	}
	var want []string
	for i := 0; i <= autoTrials; i++ {
		want = append(want, "gpu", "cpu")
	}
	if !slices.Equal(seen, want) {
		t.Fatalf("backends while measuring %v, want %v", seen, want)
	}
	for i := 0; i < 3; i++ {
		if be := b.backendNow(); be != BackendCPU {
			t.Fatalf("after measuring: %s, want cpu (best 3 ms against 4 ms)", be)
		}
		b.took(BackendCPU, ms(100)) // later frames change nothing
	}
	m := map[string]any{}
	b.describe(m)
	if m["backend"] != "auto" || m["backend_chosen"] != "cpu" {
		t.Errorf("describe: %v", m)
	}
	// A backend more than twice as slow in every timed frame is dropped
	// after the first timed pair.
	slow := &beamSet{backend: BackendAuto, views: []surfaceView{{}}}
	for _, d := range []time.Duration{ms(900), ms(9), ms(2000), ms(8)} {
		slow.took(slow.backendNow(), d)
	}
	if slow.auto.chosen != BackendCPU {
		t.Errorf("GPU 2 s against CPU 8 ms: chose %q after one timed pair, want cpu", slow.auto.chosen)
	}
	// Beams too fine for GPU views go to the CPU at once.
	fine := &beamSet{backend: BackendAuto}
	if be := fine.backendNow(); be != BackendCPU {
		t.Errorf("no GPU views: %s, want cpu", be)
	}
}
