package gpucast_test

import (
	"strings"
	"testing"

	"github.com/simvis/simvis/sensors/gpucast"
)

// The corrected divisions (div.glsl) give Go's quotient, bit for bit, on
// every sample: from the device's guess, and from a guess moved up to 24
// ulps off (what a device whose division is not IEEE 754's gives; NVIDIA's
// was seen 1-2 ulps off). Dekker's product must pass on any device; the
// fused multiply-add only where the device's fma is exact, which the test
// reports. New keeps the device's own division only where it gives Go's
// quotients on its samples; an uncorrected wrong guess fails the probe.
func TestDivision(t *testing.T) {
	ctx := newContext(t)
	ab := gpucast.DivisionSamples(25000)
	t.Logf("%d pairs, each divided seven ways", len(ab)/2)
	for _, d := range []gpucast.Division{gpucast.DivDekker, gpucast.Perturbed(gpucast.DivDekker)} {
		if err := gpucast.ProbeDivision(ctx, d, ab); err != nil {
			t.Error(err)
		}
	}
	if err := gpucast.ProbeDivision(ctx, gpucast.DivFMA, ab); err != nil {
		t.Logf("no exact fma on this device: %v", err)
	} else if err := gpucast.ProbeDivision(ctx, gpucast.Perturbed(gpucast.DivFMA), ab); err != nil {
		t.Error(err)
	}
	if err := gpucast.ProbeDivision(ctx, gpucast.GuessOnly, ab); err == nil || !strings.Contains(err.Error(), ", not ") {
		t.Errorf("a guess up to 24 ulps off, uncorrected: %v, want a quotient that is not Go's", err)
	}
	small := gpucast.DivisionSamples(4096)
	want := gpucast.DivDekker
	for _, d := range []gpucast.Division{gpucast.DivDevice, gpucast.DivFMA} {
		if gpucast.ProbeDivision(ctx, d, small) == nil {
			want = d
			break
		}
	}
	g, err := gpucast.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if got := gpucast.DivisionOf(g); got != want {
		t.Errorf("New divides with %s division, want %s", got, want)
	}
	t.Logf("New divides with %s division", gpucast.DivisionOf(g))
}
