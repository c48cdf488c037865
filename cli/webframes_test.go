package cli

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/record"
	"github.com/simvis/simvis/sensors"
	"github.com/simvis/simvis/web/client"
)

// pageGot is what a program connected to a web viewer as a page received:
// MARVIN's front laser's returns (the scan overlay's) and the camera's
// picture it asked for.
type pageGot struct {
	points   int
	near     float64 // the returns' least and greatest distance from their origin
	far      float64
	picture  image.Image
	returned []string // the sensors whose returns came
}

// marvinPage connects to page as a page does (web/client, no browser),
// asks for the camera's pictures, and waits for FRONT_LASER's returns and
// a picture.
func marvinPage(t *testing.T, page string) pageGot {
	t.Helper()
	url, err := client.WebSocketURL(page)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, url, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetInset("CAMERA", true); err != nil {
		t.Fatal(err)
	}
	var got pageGot
	var jpg []byte
	for deadline := time.Now().Add(60 * time.Second); got.points == 0 || jpg == nil; {
		if time.Now().After(deadline) {
			t.Fatalf("in 60 s the page got %d returns of FRONT_LASER (of %v) and a picture: %v", got.points, got.returned, jpg != nil)
		}
		select {
		case <-c.Changed():
		case <-time.After(500 * time.Millisecond):
		}
		for _, r := range c.TakeReturns() {
			got.returned = append(got.returned, r.Sensor)
			if r.Sensor != "FRONT_LASER" || len(r.Points) == 0 {
				continue
			}
			got.points, got.near, got.far = len(r.Points), math.Inf(1), 0
			for _, p := range r.Points {
				d := p.Sub(r.Origin).Len()
				got.near, got.far = min(got.near, d), max(got.far, d)
			}
		}
		if b := c.TakeImages()["CAMERA"]; b != nil {
			jpg = b
		}
	}
	if got.picture, err = jpeg.Decode(bytes.NewReader(jpg)); err != nil {
		t.Fatal(err)
	}
	return got
}

// magenta tells the recording's synthetic pictures from rendered ones.
func magenta(img image.Image) bool {
	b := img.Bounds()
	r, g, bl, _ := img.At(b.Dx()/2, b.Dy()/2).RGBA()
	return r>>8 > 230 && g>>8 < 30 && bl>>8 > 230
}

// rendered checks that the page got MARVIN's rendered front scan (the
// lab's walls and furniture at many distances) and camera picture.
func (g pageGot) rendered(t *testing.T) {
	t.Helper()
	if g.points < 50 || g.far-g.near < 0.5 {
		t.Errorf("FRONT_LASER: %d returns from %.2f to %.2f m, want a rendered scan of the lab", g.points, g.near, g.far)
	}
	if g.picture.Bounds().Dx() != 640 || g.picture.Bounds().Dy() != 480 || magenta(g.picture) {
		t.Errorf("CAMERA: a %v picture (magenta: %v), want a rendered 640x480 one", g.picture.Bounds(), magenta(g.picture))
	}
	for _, name := range g.returned {
		if name != "FRONT_LASER" {
			t.Errorf("returns of %s came, which no overlay draws", name)
		}
	}
}

// view --web renders, from its live scene, the sensors its pages want:
// MARVIN's front scan for the scan overlay, the camera for an inset.
func TestWebViewFrames(t *testing.T) {
	page, _ := startWeb(t, "view", filepath.Join(testkit.RepoRoot(), "scenes", "marvin", "scene.xml"), "--web", "127.0.0.1:0")
	marvinPage(t, page).rendered(t)
}

// mirror --web renders from its replica (on its own machine) the sensors
// its pages want.
func TestWebMirrorFrames(t *testing.T) {
	shm := filepath.Join(t.TempDir(), "simvis-mirrorframes")
	startServe(t, filepath.Join(testkit.RepoRoot(), "scenes", "marvin", "scene.xml"), "--shm", shm, "--no-nats")
	page, _ := startWeb(t, "mirror", "--shm", shm, "--web", "127.0.0.1:0")
	marvinPage(t, page).rendered(t)
}

// recordMarvin writes a 2 s recording of MARVIN (10 cycles a second) that
// holds the frames of one sensor only, made up so that a page can tell
// them from rendered ones: a magenta picture for CAMERA, every beam at
// 1 m for FRONT_LASER; from cycle from on (the cycles before have none).
func recordMarvin(t *testing.T, file, sensor string, from int) {
	t.Helper()
	sceneFile := filepath.Join(testkit.RepoRoot(), "scenes", "marvin", "scene.xml")
	h, err := ipc.NewHost(filepath.Join(t.TempDir(), "simvis-rec"), sceneFile, ipc.HostOptions{Rate: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	w, err := record.Create(file, record.Options{Meta: record.Meta{Scene: sceneFile, Rate: 10}})
	if err != nil {
		t.Fatal(err)
	}
	r := testkit.Renderer(t)
	for _, se := range h.Scene.Sensors() {
		if se.Name != sensor {
			continue
		}
		for i := range 20 {
			at := float64(i) / 10
			if err := w.Cycle(h.Scene, at); err != nil {
				t.Fatal(err)
			}
			if i < from {
				continue
			}
			f, err := sensors.RenderFrame(r, h.Scene, se, &sensors.Stamp{Frame: i, Time: at})
			if err != nil {
				t.Fatal(err)
			}
			if img, _ := f.ImageData(); img != nil {
				for p := 0; p < len(img.Pix); p += 4 {
					img.Pix[p], img.Pix[p+1], img.Pix[p+2] = 255, 0, 255
				}
			} else {
				for k := range f.ScanData().Ranges {
					f.ScanData().Ranges[k] = 1
				}
			}
			if err := w.Frame(f, at); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// play --web shows pages the frames the recording holds (its made-up
// picture, its made-up scan) and renders from the replayed scene the
// sensors it lacks; with NATS (its republisher reads the recording for
// both) as without.
func TestWebPlayFrames(t *testing.T) {
	dir := t.TempDir()
	for i, c := range []struct {
		sensor string
		flags  []string
	}{
		{"CAMERA", []string{"--no-nats"}},
		{"FRONT_LASER", []string{"--listen", "127.0.0.1:0"}},
	} {
		t.Run(c.sensor, func(t *testing.T) {
			file := filepath.Join(dir, c.sensor+".mcap")
			recordMarvin(t, file, c.sensor, 0)
			args := append([]string{"play", file, "--loop", "--shm", filepath.Join(dir, fmt.Sprintf("simvis-play%d", i)), "--web", "127.0.0.1:0"}, c.flags...)
			page, _ := startWeb(t, args...)
			got := marvinPage(t, page)
			if c.sensor == "CAMERA" {
				if !magenta(got.picture) {
					t.Error("CAMERA: the page's picture is not the recording's (magenta)")
				}
				if got.points < 50 || got.far-got.near < 0.5 {
					t.Errorf("FRONT_LASER (not recorded): %d returns from %.2f to %.2f m, want a scan rendered from the replayed scene", got.points, got.near, got.far)
				}
			} else {
				if math.Abs(got.near-1) > 1e-3 || math.Abs(got.far-1) > 1e-3 || got.points < 50 {
					t.Errorf("FRONT_LASER: %d returns from %.4f to %.4f m, want the recording's (every beam at 1 m)", got.points, got.near, got.far)
				}
				if magenta(got.picture) || got.picture.Bounds().Dx() != 640 {
					t.Errorf("CAMERA (not recorded): a %v picture, want one rendered from the replayed scene", got.picture.Bounds())
				}
			}
		})
	}
}

// play --web renders a sensor whose frames the recording holds while the
// position is outside their span: here before the first (1.0 s), where
// the page gets a scan rendered from the replayed scene, not nothing.
// Played at a twentieth of its speed, the position is under 0.25 s for
// the first 5 s.
func TestWebPlayBeforeRecordedFrames(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "late.mcap")
	recordMarvin(t, file, "FRONT_LASER", 10)
	page, _ := startWeb(t, "play", file, "--rate", "0.05", "--shm", filepath.Join(dir, "simvis-playlate"), "--no-nats", "--web", "127.0.0.1:0")
	got := marvinPage(t, page)
	if got.points < 50 || got.far-got.near < 0.5 {
		t.Errorf("FRONT_LASER before its first recorded frame: %d returns from %.2f to %.2f m, want a scan rendered from the replayed scene", got.points, got.near, got.far)
	}
}

// mirror --web --window: the pages get the frames of the sensors they want
// from the loop that draws the window (its scan overlays' sensors, and a
// camera only a page shows).
func TestWebMirrorWindowFrames(t *testing.T) {
	shm := filepath.Join(t.TempDir(), "simvis-mirrorwindowframes")
	startServe(t, filepath.Join(testkit.RepoRoot(), "scenes", "marvin", "scene.xml"), "--shm", shm, "--no-nats")
	display := testkit.Xvfb(t, 1024, 768)
	w := startWindow(t, display, "mirror", "--shm", shm, "--web", "127.0.0.1:0", "--window", "--size", "640x480")
	page := strings.TrimPrefix(w.wait("web viewer at "), "web viewer at ")
	marvinPage(t, page).rendered(t)
}

// mirror --web's relay waits for its host however long (its pages follow
// the host on their own): when the host goes it says so, without naming a
// patience it does not keep, and stays.
func TestWebMirrorRelayWaitsForHost(t *testing.T) {
	shm := filepath.Join(t.TempDir(), "simvis-relaywait")
	stop := startServe(t, filepath.Join(testkit.RepoRoot(), "scenes", "quickstart", "scene.xml"), "--shm", shm, "--no-nats")
	cmd := exec.Command(os.Args[0], "mirror", "--shm", shm, "--web", "127.0.0.1:0", "--patience", "1s")
	cmd.Env = append(os.Environ(), "SIMVIS_CLI_CHILD=1")
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() { cmd.Process.Kill(); <-exited }()
	waitFor(t, func() bool { return strings.Contains(stderr.String(), "web viewer: to drive") }, "the relay to serve")
	stop()
	waitFor(t, func() bool { return strings.Contains(stderr.String(), "retrying until the host is back") }, "the relay to say it waits")
	select {
	case err := <-exited:
		t.Fatalf("the relay ended %v past its patience: %v\n%s", 1*time.Second, err, stderr.String())
	case <-time.After(3 * time.Second):
	}
	if strings.Contains(stderr.String(), "retrying for") {
		t.Errorf("the relay named a patience it does not keep:\n%s", stderr.String())
	}
}
