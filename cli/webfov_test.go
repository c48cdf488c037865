package cli

import (
	"fmt"
	"image"
	"path/filepath"
	"testing"
	"time"

	"github.com/simvis/simvis/internal/testkit"
)

// yellowPixels counts the pixels of the field-of-view lines' yellow.
func yellowPixels(img image.Image) int {
	return pixelsWhere(img, func(r, g, b uint32) bool { return r>>8 > 200 && g>>8 > 170 && b>>8 < 90 })
}

// A sensor's checkbox in the page's panel draws its field of view as the
// desktop viewer does, from what the host's sensor says it sees (the
// page's sensors are stand-ins): MARVIN's front laser's fan of yellow
// lines appears, and goes again when unchecked.
func TestWebPageFieldOfView(t *testing.T) {
	scene := filepath.Join(testkit.RepoRoot(), "scenes", "marvin", "scene.xml")
	// Above the robot, looking down at its front laser's plane.
	page, _ := startWeb(t, "view", scene, "--web", "127.0.0.1:0", "--from", "-2 -1 4 0 80 20", "--fov", "60")
	b := testkit.Chromium(t, 640, 480)
	b.Open(page)
	b.WaitFor(`typeof simvisState === "function" && JSON.parse(simvisState()).drawn > 1 && JSON.parse(simvisState()).sights == 5`, 60*time.Second)
	b.Eval(`document.getElementById("status").style.visibility = "hidden"`, nil)
	toggle := func() {
		t.Helper()
		n := state(t, b).Drawn
		if err := b.Eval(`document.querySelector('input[data-fov="FRONT_LASER"]').click()`, nil); err != nil {
			t.Fatal(err)
		}
		b.WaitFor(fmt.Sprintf(`JSON.parse(simvisState()).drawn > %d`, n), 10*time.Second)
	}
	before := yellowPixels(b.Screenshot())
	toggle()
	with := yellowPixels(b.Screenshot())
	toggle()
	after := yellowPixels(b.Screenshot())
	t.Logf("yellow pixels: %d, with the front laser's field of view %d, without again %d", before, with, after)
	if with-before < 200 {
		t.Errorf("the field of view added %d yellow pixels, want a fan of lines (at least 200)", with-before)
	}
	if after != before {
		t.Errorf("unchecked: %d yellow pixels, %d before", after, before)
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// A slider dragged with the mouse in a driver's page (through the DevTools
// protocol, as a hand would) moves the host's value: MARVIN's tilt unit,
// whose range (-45 to 45 degrees) the rotation element gives, comes back
// from the host at its maximum.
func TestWebPageSliderDrag(t *testing.T) {
	scene := filepath.Join(testkit.RepoRoot(), "scenes", "marvin", "scene.xml")
	_, driver := startWeb(t, "view", scene, "--web", "127.0.0.1:0")
	b := testkit.Chromium(t, 1024, 600)
	b.Open(driver)
	b.WaitFor(`typeof simvisState === "function" && JSON.parse(simvisState()).drawn > 1 && document.querySelector('input[type=range][data-param="TILT.angle"]') !== null`, 60*time.Second)
	if st := state(t, b); st.Role != "driver" || st.Values["TILT.angle"] != 10 {
		t.Fatalf("page: role %q, TILT.angle %v; want a driver's, 10", st.Role, st.Values["TILT.angle"])
	}
	var r struct{ X, Y, W, H float64 }
	if err := b.Eval(`(() => { const r = document.querySelector('input[type=range][data-param="TILT.angle"]').getBoundingClientRect(); return {X: r.x, Y: r.y, W: r.width, H: r.height} })()`, &r); err != nil {
		t.Fatal(err)
	}
	// From the thumb (10 of -45..45) past the slider's right end.
	y := r.Y + r.H/2
	b.Drag("left", r.X+r.W*55/90, y, r.X+r.W+40, y)
	b.WaitFor(`JSON.parse(simvisState()).values["TILT.angle"] === 45`, 20*time.Second)
}
