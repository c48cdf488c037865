package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/ipc"
)

// A mirror's window draws the lab from its cache of still meshes and the
// robot that moves over it: after MARVIN moved, the window shows what
// view -o renders of the scene with MARVIN's new pose (the scan overlay
// included, its points where the front scanner sees them now), and the
// window did draw over its cache.
func TestMirrorWindowMovingRobotOverCache(t *testing.T) {
	display := testkit.Xvfb(t, 1024, 768)
	dir := t.TempDir()
	shm := filepath.Join(dir, "region")
	stop := startServe(t, marvinScene, "--shm", shm, "--no-nats", "--rate", "15")
	w := startWindow(t, display, "mirror", "--shm", shm, "--window", "--size", "800x600", "--grid=false",
		"--panel=false", "--max-fps", "30", "--shots", dir)
	w.wait("viewer: window open 800x600")
	w.shot() // the lab and MARVIN standing: everything cached
	c, err := ipc.Open(shm)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	x, err := c.Param("M_POSE", "x")
	if err != nil {
		t.Fatal(err)
	}
	yaw, err := c.Param("M_POSE", "yaw")
	if err != nil {
		t.Fatal(err)
	}
	// Drive MARVIN in steps, as a client does, so that the window sees it
	// moving and draws it over the cache.
	for i := 1; i <= 10; i++ {
		if err := c.Set(x, -2+0.1*float64(i)); err != nil {
			t.Fatal(err)
		}
		if err := c.Set(yaw, 20+4*float64(i)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(700 * time.Millisecond) // the front scanner renders at 15 Hz: a scan from the new pose
	moved := w.shot()
	ref := filepath.Join(dir, "ref.png")
	if code, _, errOut := simvis(t, "view", marvinScene, "--size", "800x600", "--set", "M_POSE.x=-1",
		"--set", "M_POSE.yaw=60", "-o", ref); code != 0 {
		t.Fatalf("view -o: %s", errOut)
	}
	if d := meanDiff(t, moved, testkit.ReadPNG(t, ref)); d > 0.5 {
		t.Errorf("after MARVIN moved the window differs from view -o by %.2f per channel on average (want <= 0.5)", d)
	} else {
		t.Logf("moved MARVIN, window vs view -o: mean difference %.3f per channel", d)
	}
	w.xdo("key", "q")
	l := w.wait("viewer: ")
	for !strings.Contains(l, "frames shown") {
		l = w.wait("viewer: ")
	}
	var shown, drawn, cached, builds int
	if _, err := fmt.Sscanf(l, "viewer: %d frames shown, %d drawn, %d of them over the still meshes' cache (drawn %d times)",
		&shown, &drawn, &cached, &builds); err != nil {
		t.Fatalf("%q: %v", l, err)
	}
	if cached == 0 || builds < 2 {
		t.Errorf("%q: want frames drawn over the cache, and the cache drawn again when MARVIN first moved", l)
	}
	if err := w.exit(); err != nil {
		t.Errorf("closing the window: %v\n%s", err, w.errOut.String())
	}
	stop()
}
