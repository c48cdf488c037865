package sensors_test

import (
	"image"
	"math"
	"testing"

	"github.com/simvis/simvis/internal/testkit"

	"github.com/simvis/simvis/scene"
)

// redCentroid returns the mean column of the crate's red pixels.
func redCentroid(img *image.RGBA) (float64, int) {
	sum, n := 0.0, 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if reddish(img.RGBAAt(x, y)) {
				sum += float64(x) // pixel centers at integers, as Intrinsics
				n++
			}
		}
	}
	return sum / float64(n), n
}

// The stereo example: the crate's front face, 2.89 m ahead, appears
// fx * baseline / Z = 554.26 * 0.12 / 2.89 = 23.0 px further right in LEFT
// than in RIGHT, and the pair's transform is the 12 cm baseline.
func TestStereoPairDisparity(t *testing.T) {
	s, err := scene.Load("../scenes/stereo/scene.xml", scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	left, right := camera(t, s, "LEFT"), camera(t, s, "RIGHT")
	li, err := left.Image(testkit.Renderer(t), s)
	if err != nil {
		t.Fatal(err)
	}
	ri, err := right.Image(testkit.Renderer(t), s)
	if err != nil {
		t.Fatal(err)
	}
	lu, ln := redCentroid(li)
	ru, rn := redCentroid(ri)
	fx := left.Intrinsics().Fx
	want := fx * 0.12 / 2.89
	if ln < 1000 || rn < 1000 || math.Abs((lu-ru)-want) > 0.5 {
		t.Errorf("disparity %.2f px (centroids %.2f, %.2f of %d and %d pixels), want %.2f", lu-ru, lu, ru, ln, rn, want)
	}
	m, err := s.Transform("RIGHT", "LEFT")
	if err != nil {
		t.Fatal(err)
	}
	if p := scene.PoseFromMatrix(m); math.Abs(p.Y+0.12) > 1e-12 || math.Abs(p.X) > 1e-12 || math.Abs(p.Yaw) > 1e-9 {
		t.Errorf("RIGHT in LEFT: %v, want the baseline (0, -0.12, 0)", p)
	}
}
