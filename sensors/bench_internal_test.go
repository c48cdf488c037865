package sensors

import (
	"math"
	"testing"
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
