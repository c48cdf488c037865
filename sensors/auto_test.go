package sensors_test

import (
	"math"
	"testing"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/sensors"
)

// A scanner without a backend attribute is on auto: it measures frames on
// both backends, then keeps one; every frame, on either, gives the ranges
// of the exact caster (within float64 rounding of the two ways to
// intersect the same triangle), so the choice changes no reading.
func TestAutoBackendFramesAreExact(t *testing.T) {
	s := roomScene(t, `<sensor type="laser" name="A" pose_offset="1 0.5 1 0 0 17"/>
<sensor type="laser" name="C" pose_offset="1 0.5 1 0 0 17" backend="cpu"/>
<sensor type="laser" name="F" resolution="0.01"/>`)
	r := testkit.Renderer(t)
	ref, err := laser(t, s, "C").Scan(r, s)
	if err != nil {
		t.Fatal(err)
	}
	a := laser(t, s, "A")
	used := map[string]int{}
	var order []string
	for i := 0; i < 16; i++ {
		used[sensors.Backend(a)]++
		order = append(order, sensors.Backend(a))
		sc, err := a.Scan(r, s)
		if err != nil {
			t.Fatal(err)
		}
		for k, rg := range sc.Ranges {
			if rg != ref.Ranges[k] && !(math.Abs(rg-ref.Ranges[k]) <= 1e-9) {
				t.Fatalf("frame %d, beam %d: %v, exact caster %v", i, k, rg, ref.Ranges[k])
			}
		}
	}
	// Which one is kept depends on this machine's speed; that both were
	// measured (a warm-up and at least one timed frame each, alternating)
	// and one kept for the remaining frames does not.
	got := a.Describe()["backend_chosen"]
	if got != "gpu" && got != "cpu" {
		t.Fatalf("backend_chosen %v after 16 frames", got)
	}
	if used["gpu"] < 2 || used["cpu"] < 2 || order[0] != "gpu" || order[1] != "cpu" || order[14] != got || order[15] != got {
		t.Errorf("backends frame by frame %v: want gpu, cpu alternating, then %s kept", order, got)
	}
	// Beams too fine for GPU views: auto loads and uses the CPU.
	if be := sensors.Backend(laser(t, s, "F")); be != "cpu" {
		t.Errorf("fine scanner on auto: %s, want cpu", be)
	}
	if err := sensors.SetBackend(laser(t, s, "F"), "gpu"); err == nil {
		t.Error("SetBackend gpu on a scanner too fine for GPU views: no error")
	}
}
