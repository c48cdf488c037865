package cli

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/ipc"
)

// Issue 26: a URDF robot's joints are elements the window's panel moves.
// serve's window lists a slider for the arm's shoulder_lift joint over the
// URDF's limits (radians); dragging it sets the joint on the host, and the
// child link turns about the joint's axis by that angle.
func TestServeWindowSlidersMoveURDFJoints(t *testing.T) {
	display := testkit.Xvfb(t, 1400, 900)
	dir := t.TempDir()
	shm := filepath.Join(dir, "region")
	w := startWindow(t, display, "serve", "../scenes/arm/scene.xml", "--shm", shm, "--no-nats", "--window", "--list-controls", "--shots", dir, "--rate", "10")
	w.wait("viewer: window open")
	w.wait("serving ") // the panel's controls come after it
	l := w.wait("viewer: control ARM/shoulder_lift.position slider")
	var x, y, width, h int
	var lo, hi float64
	if _, err := fmt.Sscanf(l, "viewer: control ARM/shoulder_lift.position slider at x=%d y=%d w=%d h=%d range=[%g,%g]", &x, &y, &width, &h, &lo, &hi); err != nil {
		t.Fatalf("%q: %v", l, err)
	}
	if lo != -1.7 || hi != 1.7 {
		t.Errorf("the slider's range [%g, %g], want the URDF's limits [-1.7, 1.7] rad", lo, hi)
	}
	// The knob stands at 0; drag it 60 pixels right.
	knob := x + int(float64(width)*(0-lo)/(hi-lo))
	cy := fmt.Sprint(y + h/2)
	w.xdo("mousemove", fmt.Sprint(knob), cy, "mousedown", "1", "mousemove", fmt.Sprint(knob+30), cy,
		"mousemove", fmt.Sprint(knob+60), cy, "mouseup", "1")
	var set float64
	l = w.wait("viewer: set ARM/shoulder_lift.position = ")
	for {
		fmt.Sscanf(l, "viewer: set ARM/shoulder_lift.position = %g", &set)
		select {
		case next := <-w.lines:
			if strings.HasPrefix(next, "viewer: set ARM/shoulder_lift.position = ") {
				l = next
				continue
			}
		case <-time.After(2 * time.Second):
		}
		break
	}
	if !(set > 0.05 && set <= hi) {
		t.Fatalf("the drag set shoulder_lift = %g rad; want about 60/%d of [%g, %g]", set, width, lo, hi)
	}
	c, err := ipc.Open(shm)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	i, err := c.Param("ARM/shoulder_lift", "position")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { v, err := c.Get(i); return err == nil && v == set }, "the host's shoulder_lift to be the slider's value")
	m, err := ipc.NewMirrorWith(c, ipc.MirrorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Sync(); err != nil {
		t.Fatal(err)
	}
	// upper_arm_link in shoulder_link: the joint's origin (0 0 0.12), then
	// the turn about its axis (0 1 0).
	got, err := m.Scene().Transform("ARM/upper_arm_link", "ARM/shoulder_link")
	if err != nil {
		t.Fatal(err)
	}
	want := mgl64.Translate3D(0, 0, 0.12).Mul4(mgl64.HomogRotate3DY(set))
	for k := range got {
		if math.Abs(got[k]-want[k]) > 1e-9 {
			t.Fatalf("upper_arm_link in shoulder_link:\n%v\nwant\n%v", got, want)
		}
	}
	w.xdo("key", "q")
	if err := w.exit(); err != nil {
		t.Errorf("closing the host's window: %v (want exit 0)\n%s", err, w.errOut.String())
	}
}
