package sensors_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/scene"
)

// A gray (0.4) box under an ambient light of 0.25 alone has radiance 0.1
// everywhere on its face (no direction, no highlight); the background's
// radiance is its color, 0.2. Exposure, gain and gamma map them as
// Response says: round(255 clip(L · exposure · 10^(gain/20))^(1/gamma)).
func TestExposureGainGamma(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "box.glb", 1, 1, 1, [4]float32{0.4, 0.4, 0.4, 1})
	r := testkit.Renderer(t)
	for _, c := range []struct{ exposure, gain, gamma float64 }{
		{1, 0, 1}, {2, 6, 2.2}, {0.5, 0, 1}, {1, 20, 1}, {1.5, -3, 1.8},
	} {
		s := testkit.LoadXML(t, dir, fmt.Sprintf(`<scene>
  <part file="box.glb" name="BOX" pose_offset="3 0 0 0 0 0"/>
  <element type="light" name="AMB" kind="ambient" intensity="0.25"/>
  <sensor type="camera" name="CAM" width="64" height="48" background="0.2 0.2 0.2"
    exposure="%g" gain="%g" gamma="%g"/>
</scene>`, c.exposure, c.gain, c.gamma))
		img, err := camera(t, s, "CAM").Image(r, s)
		if err != nil {
			t.Fatal(err)
		}
		want := func(l float64) float64 {
			v := math.Min(1, l*c.exposure*math.Pow(10, c.gain/20))
			return math.Round(255 * math.Pow(v, 1/c.gamma))
		}
		face, bg := img.RGBAAt(32, 24), img.RGBAAt(1, 1)
		if math.Abs(float64(face.R)-want(0.1)) > 1 || face.R != face.B {
			t.Errorf("%+v: face %v, want %v", c, face, want(0.1))
		}
		if math.Abs(float64(bg.G)-want(0.2)) > 1 {
			t.Errorf("%+v: background %v, want %v", c, bg, want(0.2))
		}
	}
}

func TestExposureErrors(t *testing.T) {
	dir := t.TempDir()
	for attr, want := range map[string]string{
		`gamma="0"`:     "gamma",
		`exposure="-1"`: "exposure",
		`gain="100"`:    "gain",
		`gain="x"`:      "gain",
	} {
		path := filepath.Join(dir, "scene.xml")
		xml := `<scene><sensor type="camera" name="CAM" ` + attr + `/></scene>`
		if err := os.WriteFile(path, []byte(xml), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := scene.Load(path, scene.Options{})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "scene.xml") {
			t.Errorf("%s: error %v, want one naming the file and %q", attr, err, want)
		}
	}
}
