package cli

import (
	"bufio"
	"encoding/binary"
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
	// One fixed viewpoint for the window and the reference: the framed
	// default follows the robot's pose at the start.
	const from = "-4.7 -3.7 2.4 0 25 38"
	w := startWindow(t, display, "mirror", "--shm", shm, "--window", "--size", "800x600", "--grid=false",
		"--panel=false", "--max-fps", "30", "--shots", dir, "--from", from)
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
	ref := filepath.Join(dir, "ref.png")
	if code, _, errOut := simvis(t, "view", marvinScene, "--size", "800x600", "--set", "M_POSE.x=-1",
		"--set", "M_POSE.yaw=60", "-o", ref, "--from", from); code != 0 {
		t.Fatalf("view -o: %s", errOut)
	}
	want := testkit.ReadPNG(t, ref)
	// The mirror shows the last values within a frame or two and a scan
	// from the new pose once the front scanner rendered (15 Hz); on a
	// loaded machine that may take a few frames more: shots until then.
	d := 0.0
	for i := 0; i < 40; i++ {
		if d = meanDiff(t, w.shot(), want); d <= 0.5 {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if d > 0.5 {
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

// xvfbScreen starts Xvfb with its screen memory-mapped into a file (-fbdir:
// XWD format), so that a test reads what the X server shows, not what a
// program says it drew. It returns DISPLAY and the screen file's path;
// skipped where Xvfb is missing.
func xvfbScreen(t *testing.T, width, height int, extra ...string) (string, string) {
	t.Helper()
	bin, err := exec.LookPath("Xvfb")
	if err != nil {
		t.Skip("Xvfb is not installed (make deps installs xvfb)")
	}
	dir := t.TempDir()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(bin, append([]string{"-displayfd", "3", "-screen", "0", fmt.Sprintf("%dx%dx24", width, height),
		"-fbdir", dir, "-nolisten", "tcp", "-noreset"}, extra...)...)
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		w.Close()
		t.Skipf("Xvfb cannot start: %v", err)
	}
	w.Close()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, _ := bufio.NewReader(r).ReadString('\n')
	if strings.TrimSpace(line) == "" {
		t.Skip("Xvfb did not start")
	}
	return ":" + strings.TrimSpace(line), filepath.Join(dir, "Xvfb_screen0")
}

// readXWD reads the rectangle r of an XWD screen file (Xvfb's -fbdir: a
// big-endian header, a colormap, then 32-bit pixels in the server's byte
// order).
func readXWD(t *testing.T, path string, r image.Rectangle) *image.RGBA {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 100 {
		t.Fatalf("%s: %d bytes, no XWD header", path, len(data))
	}
	u := func(i int) uint32 { return binary.BigEndian.Uint32(data[4*i:]) }
	headerSize, depth, width, height := u(0), u(3), int(u(4)), int(u(5))
	byteOrder, bpp, stride := u(7), u(11), int(u(12))
	redMask, ncolors := u(14), u(19)
	if depth != 24 || bpp != 32 || redMask != 0xff0000 {
		t.Fatalf("%s: depth %d, %d bits a pixel, red mask %#x: want 24, 32, 0xff0000", path, depth, bpp, redMask)
	}
	off := int(headerSize) + 12*int(ncolors)
	if !r.In(image.Rect(0, 0, width, height)) || len(data) < off+stride*height {
		t.Fatalf("%s: %dx%d screen, %d bytes: rectangle %v out of it", path, width, height, len(data), r)
	}
	img := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	for y := 0; y < r.Dy(); y++ {
		for x := 0; x < r.Dx(); x++ {
			p := data[off+(r.Min.Y+y)*stride+4*(r.Min.X+x):]
			var px uint32
			if byteOrder == 0 { // LSBFirst
				px = binary.LittleEndian.Uint32(p)
			} else {
				px = binary.BigEndian.Uint32(p)
			}
			img.Pix[y*img.Stride+4*x+0] = uint8(px >> 16)
			img.Pix[y*img.Stride+4*x+1] = uint8(px >> 8)
			img.Pix[y*img.Stride+4*x+2] = uint8(px)
			img.Pix[y*img.Stride+4*x+3] = 255
		}
	}
	return img
}

// What the X server shows in the window is what view -o renders, with
// frames presented by the GL swap, by the viewer's own XShmPutImage, and by
// its plain XPutImage where the server has no shared memory (as a remote
// one).
func TestViewWindowOnScreen(t *testing.T) {
	for _, c := range []struct {
		name, present string
		xvfb          []string
	}{
		{"gl", "gl", nil},
		{"x11", "x11", nil},
		{"x11-without-shm", "x11", []string{"-extension", "MIT-SHM"}},
	} {
		present := c.present
		t.Run(c.name, func(t *testing.T) {
			display, screen := xvfbScreen(t, 1024, 768, c.xvfb...)
			dir := t.TempDir()
			w := startWindow(t, display, "view", marvinScene, "--size", "800x600", "--grid=false", "--panel=false",
				"--shots", dir, "--max-fps", "20", "--present", present)
			w.wait("viewer: window open 800x600")
			// Two frames shown: the first one's picture is surely with
			// the X server once the second one was drawn.
			w.shot()
			w.shot()
			time.Sleep(300 * time.Millisecond)
			cmd := exec.Command("xdotool", "getwindowgeometry", fmt.Sprint(w.windowID("simvis view")))
			cmd.Env = append(os.Environ(), "DISPLAY="+display)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("xdotool getwindowgeometry: %v", err)
			}
			var x, y int
			k := strings.Index(string(out), "Position: ")
			if k < 0 {
				t.Fatalf("xdotool getwindowgeometry: %q", out)
			}
			if _, err := fmt.Sscanf(string(out[k:]), "Position: %d,%d", &x, &y); err != nil {
				t.Fatalf("%q: %v", out, err)
			}
			shown := readXWD(t, screen, image.Rect(x, y, x+800, y+600))
			ref := filepath.Join(dir, "ref.png")
			if code, _, errOut := simvis(t, "view", marvinScene, "--size", "800x600", "-o", ref); code != 0 {
				t.Fatalf("view -o: %s", errOut)
			}
			if d := meanDiff(t, shown, testkit.ReadPNG(t, ref)); d > 0.5 {
				t.Errorf("the screen shows a window that differs from view -o by %.2f per channel on average (want <= 0.5)", d)
			} else {
				t.Logf("screen vs view -o: mean difference %.3f per channel", d)
			}
			w.xdo("key", "q")
			if err := w.exit(); err != nil {
				t.Errorf("closing: %v\n%s", err, w.errOut.String())
			}
		})
	}
}
