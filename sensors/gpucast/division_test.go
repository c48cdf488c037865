package gpucast_test

import (
	"testing"

	"github.com/simvis/simvis/sensors/gpucast"
)

// The corrected division (div.glsl) gives Go's quotient, bit for bit, on
// every sample: from the device's guess, and from a guess moved up to
// 24 ulps off (what a device whose division is not IEEE 754's gives;
// NVIDIA's was seen 1-2 ulps off). New keeps the device's own division
// only where it gives Go's quotients on its samples; an uncorrected
// wrong guess fails the probe.
func TestDivision(t *testing.T) {
	ctx := newContext(t)
	ab := gpucast.DivisionSamples(50000)
	t.Logf("%d pairs, each divided seven ways", len(ab)/2)
	for _, d := range []gpucast.Division{gpucast.DivCorrected, gpucast.DivPerturbed} {
		if err := gpucast.ProbeDivision(ctx, d, ab); err != nil {
			t.Error(err)
		}
	}
	if err := gpucast.ProbeDivision(ctx, gpucast.DivGuessOnly, ab); err == nil {
		t.Error("a guess up to 24 ulps off passed the probe")
	}
	own := gpucast.ProbeDivision(ctx, gpucast.DivDevice, gpucast.DivisionSamples(4096))
	g, err := gpucast.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	want := gpucast.DivDevice
	if own != nil {
		want = gpucast.DivCorrected
	}
	if got := gpucast.DivisionOf(g); got != want {
		t.Errorf("New divides with %s division, want %s (the device's: %v)", got, want, own)
	}
	t.Logf("New divides with %s division (the device's own on the samples: %v)", gpucast.DivisionOf(g), own)
}
