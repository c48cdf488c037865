package elements_test

import (
	"image"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/simvis/simvis/internal/testkit"

	_ "github.com/simvis/simvis/elements"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// Shared by every test file of the package: one GL context (llvmpipe start-up
// costs more than the tests), scene and model builders, pixel predicates.

// loadErr loads xml expecting an error and returns its text.
func loadErr(t *testing.T, dir, xml string) string {
	t.Helper()
	path := filepath.Join(dir, "scene.xml")
	if err := os.WriteFile(path, []byte(xml), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := scene.Load(path, scene.Options{})
	if err == nil {
		t.Fatalf("loading succeeded, want an error:\n%s", xml)
	}
	return err.Error()
}

// set sets element.param and fails the test on error.
func set(t *testing.T, s *scene.Scene, element, param string, v float64) {
	t.Helper()
	if err := s.Set(element, param, v); err != nil {
		t.Fatal(err)
	}
}

// assertNear compares poses to 1e-9 m / 1e-7 degrees.
func assertNear(t *testing.T, what string, got, want scene.Pose) {
	t.Helper()
	g := []float64{got.X, got.Y, got.Z, got.Roll, got.Pitch, got.Yaw}
	w := []float64{want.X, want.Y, want.Z, want.Roll, want.Pitch, want.Yaw}
	for i := range g {
		tol := 1e-9
		if i >= 3 {
			tol = 1e-7
		}
		if math.Abs(g[i]-w[i]) > tol {
			t.Errorf("%s = %v, want %v", what, got, want)
			return
		}
	}
}

// lookAt renders a w x h view from pose (x forward, z up) with a black
// background. viewer selects a render for people (sensed="false" shown).
func lookAt(t *testing.T, s *scene.Scene, pose scene.Pose, w, h int, viewer bool) *image.RGBA {
	t.Helper()
	img, err := testkit.Renderer(t).RenderRGBA(s, sensors.View{
		Pose: pose.Matrix(), Width: w, Height: h, HFOV: 60, Near: 0.05, Far: 100, Viewer: viewer,
	})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func isBlack(c color.RGBA) bool { return c.R < 4 && c.G < 4 && c.B < 4 }

// dominant reports whether channel ch (0 r, 1 g, 2 b) is bright and at least
// twice each other channel.
func dominant(c color.RGBA, ch int) bool {
	v := [3]uint8{c.R, c.G, c.B}
	for i := range v {
		if i != ch && int(v[ch]) < 2*int(v[i]) {
			return false
		}
	}
	return v[ch] > 60
}
