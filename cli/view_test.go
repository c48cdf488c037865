package cli

import (
	"bufio"
	"fmt"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// windowChild is a simvis command with a window, run as a child process on
// a virtual display.
type windowChild struct {
	t       *testing.T
	display string
	cmd     *exec.Cmd
	lines   chan string
	errOut  *strings.Builder
	done    chan error
}

func startWindow(t *testing.T, display string, args ...string) *windowChild {
	t.Helper()
	if _, err := exec.LookPath("xdotool"); err != nil {
		t.Skip("xdotool is not installed (make deps installs it)")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SIMVIS_CLI_CHILD=1", "DISPLAY="+display)
	w := &windowChild{t: t, display: display, cmd: cmd, lines: make(chan string, 1000), errOut: new(strings.Builder), done: make(chan error, 1)}
	cmd.Stderr = w.errOut
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
		close(w.lines)
		w.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-w.done
	})
	return w
}

// wait returns the next output line that starts with prefix (the load on a
// shared 2-core machine makes a window's start slow: the limit is generous
// and only bounds a hang).
func (w *windowChild) wait(prefix string) string {
	w.t.Helper()
	deadline := time.After(120 * time.Second)
	for {
		select {
		case l, ok := <-w.lines:
			if !ok {
				w.t.Fatalf("the window command ended before %q:\n%s", prefix, w.errOut.String())
			}
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case <-deadline:
			w.t.Fatalf("no %q line in 120 s:\n%s", prefix, w.errOut.String())
		}
	}
}

// xdo runs xdotool on the window's display.
func (w *windowChild) xdo(args ...string) {
	w.t.Helper()
	cmd := exec.Command("xdotool", args...)
	cmd.Env = append(os.Environ(), "DISPLAY="+w.display)
	if out, err := cmd.CombinedOutput(); err != nil {
		w.t.Fatalf("xdotool %v: %v\n%s", args, err, out)
	}
}

// windowID finds the window whose title starts with title.
func (w *windowChild) windowID(title string) uint32 {
	w.t.Helper()
	cmd := exec.Command("xdotool", "search", "--name", "^"+title)
	cmd.Env = append(os.Environ(), "DISPLAY="+w.display)
	out, err := cmd.Output()
	if err != nil {
		w.t.Fatalf("xdotool search %q: %v", title, err)
	}
	var id uint32
	if _, err := fmt.Sscan(string(out), &id); err != nil {
		w.t.Fatalf("xdotool search %q: %q", title, out)
	}
	return id
}

// exit waits for the command to end and returns its error (nil: exit 0).
func (w *windowChild) exit() error {
	w.t.Helper()
	for range w.lines {
	}
	select {
	case err := <-w.done:
		w.done <- err // for the cleanup
		return err
	case <-time.After(60 * time.Second):
		w.t.Fatal("the window command did not end in 60 s")
	}
	return nil
}

// shot presses p and returns the screenshot it wrote.
func (w *windowChild) shot() image.Image {
	w.t.Helper()
	w.xdo("key", "p")
	l := w.wait("viewer: screenshot ")
	return testkit.ReadPNG(w.t, strings.TrimPrefix(l, "viewer: screenshot "))
}

// meanDiff is the mean absolute difference of two same-size images, per
// channel (0..255).
func meanDiff(t *testing.T, a, b image.Image) float64 {
	t.Helper()
	if a.Bounds() != b.Bounds() {
		t.Fatalf("sizes differ: %v, %v", a.Bounds(), b.Bounds())
	}
	sum, n := 0.0, 0
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			r1, g1, b1, _ := a.At(x, y).RGBA()
			r2, g2, b2, _ := b.At(x, y).RGBA()
			for _, d := range [3]int{int(r1>>8) - int(r2>>8), int(g1>>8) - int(g2>>8), int(b1>>8) - int(b2>>8)} {
				if d < 0 {
					d = -d
				}
				sum += float64(d)
			}
			n += 3
		}
	}
	return sum / float64(n)
}

// Without a display, or with one nobody serves, view says so in one line
// naming DISPLAY and pointing at -o.
func TestViewWithoutDisplay(t *testing.T) {
	for _, display := range []string{"", ":59000"} {
		t.Setenv("DISPLAY", display)
		code, _, errOut := simvis(t, "view", marvinScene)
		if code != 1 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "DISPLAY") || !strings.Contains(errOut, "-o FILE.png") {
			t.Errorf("DISPLAY=%q: exit %d, stderr %q: want 1 and one line naming DISPLAY and -o", display, code, errOut)
		}
	}
}

// The window shows what view -o renders from the same viewpoint; a mouse
// drag turns the view and r resets it; a sensor's key looks through it; the
// panel's inset toggle shows the
// camera's live picture; closing the window (its close button's message)
// ends the command with exit 0.
func TestViewWindow(t *testing.T) {
	display := testkit.Xvfb(t, 1024, 768)
	dir := t.TempDir()
	w := startWindow(t, display, "view", marvinScene, "--list-controls", "--size", "800x600", "--grid=false", "--panel=false",
		"--shots", dir, "--max-fps", "20")
	w.wait("viewer: window open 800x600")
	var ix, iy int
	l := w.wait("viewer: control CAMERA inset")
	if _, err := fmt.Sscanf(l, "viewer: control CAMERA inset at x=%d y=%d", &ix, &iy); err != nil {
		t.Fatalf("%q: %v", l, err)
	}
	first := w.shot()

	ref := filepath.Join(dir, "ref.png")
	if code, _, errOut := simvis(t, "view", marvinScene, "--size", "800x600", "-o", ref); code != 0 {
		t.Fatalf("view -o: %s", errOut)
	}
	if d := meanDiff(t, first, testkit.ReadPNG(t, ref)); d > 0.5 {
		t.Errorf("the window differs from view -o by %.2f per channel on average (want <= 0.5)", d)
	} else {
		t.Logf("window vs view -o: mean difference %.3f per channel", d)
	}

	w.xdo("mousemove", "320", "180", "mousedown", "1", "mousemove", "360", "190", "mousemove", "420", "210", "mouseup", "1")
	turned := w.shot()
	if d := meanDiff(t, first, turned); d < 8 {
		t.Errorf("a 100-pixel drag changed the picture by only %.2f per channel on average", d)
	}
	w.xdo("key", "r") // reset: the start view again
	if d := meanDiff(t, first, w.shot()); d > 0.5 {
		t.Errorf("after reset the picture differs from the start by %.2f", d)
	}
	// Key 4 looks through the fourth sensor, CAMERA: the window shows what
	// the camera sees at the window's size, overlays included; 4 again goes
	// back.
	s := loadMarvinForTest(t)
	var cam *sensors.Camera
	for _, se := range s.Sensors() {
		if c, ok := se.Sensor.(*sensors.Camera); ok && se.Name == "CAMERA" {
			cam = c
		}
	}
	r := testkit.Renderer(t)
	if err := sensors.RenderReturns(r, s); err != nil { // the scan overlay, as the window has it
		t.Fatal(err)
	}
	w.xdo("key", "4")
	through := w.shot()
	view := cam.View()
	view.Width, view.Height, view.Viewer = 800, 600, true
	want, err := r.RenderRGBA(s, view)
	if err != nil {
		t.Fatal(err)
	}
	if d := meanDiff(t, through, want); d > 0.5 {
		t.Errorf("looking through CAMERA differs from its view by %.2f per channel on average (want <= 0.5)", d)
	} else {
		t.Logf("through CAMERA vs its view: mean difference %.3f per channel", d)
	}
	w.xdo("key", "4")
	if d := meanDiff(t, first, w.shot()); d > 0.5 {
		t.Errorf("4 again: the picture differs from the start by %.2f", d)
	}

	// The panel (Tab) and the camera's inset: its live picture in the top
	// right corner, what the camera renders at inset size.
	w.xdo("key", "Tab")
	w.shot() // the panel is shown once a later frame is drawn
	w.xdo("mousemove", fmt.Sprint(ix+30), fmt.Sprint(iy+8), "sleep", "0.3", "click", "1", "sleep", "0.3", "mousemove", "700", "500")
	withInset := w.shot()
	view = cam.View()
	view.Width, view.Height = 256, 192
	want, err = r.RenderRGBA(s, view)
	if err != nil {
		t.Fatal(err)
	}
	inset := withInset.(interface {
		SubImage(image.Rectangle) image.Image
	}).SubImage(image.Rect(800-256-8, 8, 800-8, 8+192))
	if d := meanDiff(t, translate(inset), want); d > 2 {
		t.Errorf("the camera inset differs from the camera's picture by %.2f per channel on average (want <= 2)", d)
	} else {
		t.Logf("inset vs the camera's picture: mean difference %.3f per channel", d)
	}

	// The close button: what a window manager sends.
	testkit.CloseWindow(t, display, w.windowID("simvis view"))
	if err := w.exit(); err != nil {
		t.Errorf("closing the window: %v (want exit 0)\n%s", err, w.errOut.String())
	}
}

// A slider moved in a mirror's window sets the value on the host: the host's
// value array holds it and the host's own capture of the tilted scanner
// shows it; closing the window ends the mirror, not the host.
func TestMirrorWindowSliderMovesHost(t *testing.T) {
	display := testkit.Xvfb(t, 1024, 768)
	dir := t.TempDir()
	shm := filepath.Join(dir, "region")
	out := filepath.Join(dir, "host")
	stop := startServe(t, marvinScene, "--shm", shm, "--no-nats", "-o", out, "--latest", "--rate", "10")
	w := startWindow(t, display, "mirror", "--shm", shm, "--window", "--list-controls", "--size", "800x600", "--max-fps", "20", "--shots", dir)
	w.wait("viewer: window open")
	l := w.wait("viewer: control TILT.angle slider")
	var x, y, width, h int
	var lo, hi float64
	if _, err := fmt.Sscanf(l, "viewer: control TILT.angle slider at x=%d y=%d w=%d h=%d range=[%g,%g]", &x, &y, &width, &h, &lo, &hi); err != nil {
		t.Fatalf("%q: %v", l, err)
	}
	// The knob stands at the scene's 10 degrees; drag it 60 pixels right.
	knob := x + int(float64(width)*(10-lo)/(hi-lo))
	cy := fmt.Sprint(y + h/2)
	w.xdo("mousemove", fmt.Sprint(knob), cy, "mousedown", "1", "mousemove", fmt.Sprint(knob+30), cy,
		"mousemove", fmt.Sprint(knob+60), cy, "mouseup", "1")
	var set float64
	l = w.wait("viewer: set TILT.angle = ")
	for {
		fmt.Sscanf(l, "viewer: set TILT.angle = %g", &set)
		select {
		case next := <-w.lines:
			if strings.HasPrefix(next, "viewer: set TILT.angle = ") {
				l = next
				continue
			}
		case <-time.After(2 * time.Second):
		}
		break
	}
	if set < 20 || set > hi {
		t.Fatalf("the drag set TILT.angle = %g; want about 10 + 60/%d of [%g, %g]", set, width, lo, hi)
	}
	c, err := ipc.Open(shm)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	i, err := c.Param("TILT", "angle")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { v, err := c.Get(i); return err == nil && v == set }, "the host's TILT.angle to be the slider's value")
	waitFor(t, func() bool {
		data, err := os.ReadFile(filepath.Join(out, "TILT_LASER.scan.json"))
		var pitch float64
		if err != nil {
			return false
		}
		k := strings.Index(string(data), `"pitch":`)
		if k < 0 {
			return false
		}
		fmt.Sscanf(string(data[k+len(`"pitch":`):]), "%g", &pitch)
		return pitch > set-0.01 && pitch < set+0.01
	}, "the host's TILT_LASER capture to be tilted by the slider's value")
	w.xdo("key", "q")
	if err := w.exit(); err != nil {
		t.Errorf("closing the mirror's window: %v (want exit 0)\n%s", err, w.errOut.String())
	}
	if v, err := c.Get(i); err != nil || v != set {
		t.Errorf("after the mirror closed the host reads %v, %v", v, err)
	}
	stop()
}

func loadMarvinForTest(t *testing.T) *scene.Scene {
	t.Helper()
	s, err := scene.Load(marvinScene, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// translate moves an image's bounds to start at (0, 0).
func translate(img image.Image) image.Image {
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			out.Set(x, y, img.At(b.Min.X+x, b.Min.Y+y))
		}
	}
	return out
}

// serve --window shows the host's scene; closing the window stops the host
// as Ctrl-C does: summary, exit 0, region removed.
func TestServeWindowClosesHost(t *testing.T) {
	display := testkit.Xvfb(t, 1024, 768)
	dir := t.TempDir()
	shm := filepath.Join(dir, "region")
	w := startWindow(t, display, "serve", marvinScene, "--shm", shm, "--no-nats", "--window", "--shots", dir)
	w.wait("viewer: window open")
	w.wait("serving ")
	c, err := ipc.Open(shm)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	testkit.CloseWindow(t, display, w.windowID("simvis serve"))
	if err := w.exit(); err != nil {
		t.Errorf("closing the host's window: %v (want exit 0)\n%s", err, w.errOut.String())
	}
	if _, err := os.Stat(shm); !os.IsNotExist(err) {
		t.Errorf("the host's region is still there after its window closed: %v", err)
	}
}
