package raycast_test

import (
	"math"
	"testing"

	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors/raycast"
)

// TestExportLayout checks that the flat export of MARVIN's hierarchy is
// whole (every reference lands inside its arrays) and that exporting again
// after a rebuild keeps the geometries as they were. That the export
// casts to the CPU caster's bits is sensors/gpucast's test.
func TestExportLayout(t *testing.T) {
	s, err := scene.Load("../../scenes/marvin/scene.xml", scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := raycast.New()
	c.Sync(s)
	var f raycast.Flat
	if err := c.Export(&f); err != nil {
		t.Fatal(err)
	}
	nodes, geomNodes := len(f.TopRefs)/raycast.NodeInts, len(f.GeomRefs)/raycast.NodeInts
	insts, packs := len(f.Roots), len(f.Packs)/raycast.PackDoubles
	if insts == 0 || packs == 0 {
		t.Fatalf("%d instances and %d packets exported", insts, packs)
	}
	if len(f.TopNodes) != nodes*raycast.NodeDoubles || len(f.GeomNodes) != geomNodes*raycast.NodeDoubles ||
		len(f.ToLocal) != insts*raycast.AffineDoubles || len(f.Packs) != packs*raycast.PackDoubles {
		t.Fatalf("array lengths disagree: %d/%d top, %d/%d geometry, %d/%d instances, %d packs",
			len(f.TopNodes), len(f.TopRefs), len(f.GeomNodes), len(f.GeomRefs), len(f.ToLocal), len(f.Roots), len(f.Packs))
	}
	check := func(what string, refs []int32, nodes, items int) {
		for i := 0; i < len(refs); i += raycast.NodeInts {
			for k := 0; k < 4; k++ {
				r := refs[i+k]
				if r == 0 {
					continue
				}
				if r >= 0 && int(r) >= nodes {
					t.Fatalf("%s node %d child %d: node %d of %d", what, i/raycast.NodeInts, k, r, nodes)
				}
				if l := ^r; r < 0 && (l&7 == 0 || int(l>>3)+int(l&7) > items) {
					t.Fatalf("%s node %d child %d: leaf of %d from %d, of %d items", what, i/raycast.NodeInts, k, l&7, l>>3, items)
				}
			}
		}
	}
	check("top", f.TopRefs, nodes, insts)
	check("geometry", f.GeomRefs, geomNodes, packs*4)
	for i, r := range f.Roots {
		if r < 0 || int(r) >= geomNodes {
			t.Fatalf("instance %d: root %d of %d nodes", i, r, geomNodes)
		}
	}
	gl := len(f.GeomRefs)
	c.Place(nil) // a rebuild (of nothing) ...
	c.Sync(s)    // ... and the scene's again
	if err := c.Export(&f); err != nil {
		t.Fatal(err)
	}
	if len(f.GeomRefs) != gl || len(f.Roots) != insts {
		t.Fatalf("export again: %d geometry refs (was %d), %d instances (was %d)", len(f.GeomRefs), gl, len(f.Roots), insts)
	}
}

// KeptFrom's threshold decides as float32(x) >= c does, around it, at
// zero, at the extremes and at cuts a material has (0.5, 0.1, 1/3).
func TestKeptFrom(t *testing.T) {
	cuts := []float32{0.5, 0.1, 1.0 / 3, 0, float32(math.Copysign(0, -1)), 1, -0.25, math.SmallestNonzeroFloat32,
		-math.SmallestNonzeroFloat32, math.MaxFloat32, -math.MaxFloat32, float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Nextafter32(0.5, 1), math.Nextafter32(0.5, 0)}
	for _, c := range cuts {
		mid, tie := raycast.KeptFrom(c)
		xs := []float64{mid, math.Nextafter(mid, math.Inf(1)), math.Nextafter(mid, math.Inf(-1)), float64(c),
			float64(math.Nextafter32(c, 0)), float64(math.Nextafter32(c, float32(math.Inf(-1)))), 0, math.Inf(1), math.Inf(-1), math.NaN(),
			math.MaxFloat64, -math.MaxFloat64}
		for _, x := range xs {
			want := float32(x) >= c
			got := x > mid || (x == mid && tie)
			if got != want {
				t.Errorf("cut %g (%#x), x %g (%#x): threshold says %v, float32 says %v", c, math.Float32bits(c), x, math.Float64bits(x), got, want)
			}
		}
	}
}
