package testkit

import (
	"image"
	"image/png"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

var (
	rendererOnce sync.Once
	shared       *sensors.Renderer
	sharedErr    error
)

// Renderer returns the test binary's one offscreen renderer (starting a
// GL context costs more than most tests).
func Renderer(t testing.TB) *sensors.Renderer {
	t.Helper()
	rendererOnce.Do(func() { shared, sharedErr = sensors.NewRenderer() })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

// WriteModel writes dir/file, a model that build fills.
func WriteModel(t testing.TB, dir, file string, build func(m *models.Model)) {
	t.Helper()
	m := models.NewModel(file)
	build(m)
	if err := models.Write(filepath.Join(dir, file), m); err != nil {
		t.Fatal(err)
	}
}

// WriteBox writes dir/file: one box of the given size and color centered on
// the model origin.
func WriteBox(t testing.TB, dir, file string, sx, sy, sz float64, rgba [4]float32) {
	t.Helper()
	WriteModel(t, dir, file, func(m *models.Model) {
		m.AddNode(nil, "box", mgl64.Ident4(), models.Box("box", sx, sy, sz, rgba))
	})
}

// CopyFiles copies the named files from src into a fresh directory and
// returns it.
func CopyFiles(t testing.TB, src string, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// ReadPNG decodes a PNG file.
func ReadPNG(t testing.TB, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

// MaxDiff is the largest 8-bit channel difference between two images of
// one size.
func MaxDiff(a, b image.Image) int {
	worst := 0
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			ar, ag, ab, _ := a.At(x, y).RGBA()
			br, bg, bb, _ := b.At(x, y).RGBA()
			for _, d := range []int{int(ar>>8) - int(br>>8), int(ag>>8) - int(bg>>8), int(ab>>8) - int(bb>>8)} {
				worst = max(worst, d, -d)
			}
		}
	}
	return worst
}

// WorldPose returns a frame's world pose (changes pending in the table
// applied first).
func WorldPose(t testing.TB, s *scene.Scene, frame string) scene.Pose {
	t.Helper()
	m, err := s.Transform(frame, scene.WorldFrame)
	if err != nil {
		t.Fatal(err)
	}
	return scene.PoseFromMatrix(m)
}

// LoadXML writes xml as dir/scene.xml and loads it.
func LoadXML(t testing.TB, dir, xml string) *scene.Scene {
	t.Helper()
	path := filepath.Join(dir, "scene.xml")
	if err := os.WriteFile(path, []byte(xml), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := scene.Load(path, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Loop calls step every pause on a goroutine of its own, as a host's loop
// does, until the returned stop is called (stop may be called again). An
// error of step fails the test and ends the loop.
func Loop(t testing.TB, step func() error, pause time.Duration) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := step(); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(pause)
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); <-finished }) }
}
