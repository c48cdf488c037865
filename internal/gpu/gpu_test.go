package gpu

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/g3n/engine/core"
	"github.com/g3n/engine/geometry"
	"github.com/g3n/engine/gls"
	"github.com/g3n/engine/graphic"
	"github.com/g3n/engine/material"
	"github.com/g3n/engine/math32"
	"github.com/g3n/engine/renderer"
)

// One context shared by most tests: creating one costs tens of ms on llvmpipe.
var (
	sharedOnce sync.Once
	sharedCtx  *Context
	sharedErr  error
)

func shared(t *testing.T) *Context {
	t.Helper()
	sharedOnce.Do(func() {
		start := time.Now()
		sharedCtx, sharedErr = New()
		if sharedErr == nil {
			fmt.Fprintf(os.Stderr, "gpu test context: %+v (New took %v)\n", sharedCtx.Info(), time.Since(start))
		}
	})
	if sharedErr != nil {
		t.Fatalf("New: %v", sharedErr)
	}
	return sharedCtx
}

func TestMain(m *testing.M) {
	if os.Getenv("SIMVIS_GPU_TEST_NOEGL") != "" {
		// Child process of TestMissingEGL: pretend libEGL is absent.
		eglLibName = "libEGL-simvis-test-missing.so.1"
		_, err := New()
		fmt.Printf("ERR=%v\n", err)
		os.Exit(0)
	}
	code := m.Run()
	if sharedCtx != nil {
		if err := sharedCtx.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "close shared context:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func TestNewInfoClose(t *testing.T) {
	start := time.Now()
	c, err := New()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Logf("New took %v", time.Since(start))
	info := c.Info()
	t.Logf("info: %+v", info)
	if info.Renderer == "" || info.Vendor == "" || info.Version == "" {
		t.Errorf("incomplete info %+v", info)
	}
	if info.Platform != PlatformDevice && info.Platform != PlatformSurfaceless {
		t.Errorf("platform %q", info.Platform)
	}
	ran := false
	if err := c.Do(func(gs *gls.GLS) error { ran = gs != nil; return nil }); err != nil || !ran {
		t.Fatalf("Do: err=%v ran=%v", err, ran)
	}
	want := errors.New("boom")
	if err := c.Do(func(*gls.GLS) error { return want }); err != want {
		t.Errorf("Do returned %v, want f's error", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	ran = false
	err = c.Do(func(*gls.GLS) error { ran = true; return nil })
	if !errors.Is(err, ErrClosed) || ran {
		t.Fatalf("Do after Close: err=%v ran=%v", err, ran)
	}
}

// Several contexts may coexist; closing one must not break the others even
// though EGL returns the same display for both.
func TestTwoContexts(t *testing.T) {
	a, err := New()
	if err != nil {
		t.Fatal(err)
	}
	b, err := New()
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	err = b.Do(func(gs *gls.GLS) error {
		fb, err := NewFramebuffer(gs, 4, 4, ColorRGBA8)
		if err != nil {
			return err
		}
		defer fb.Delete(gs)
		fb.Clear(gs, 0, 1, 0, 1)
		img := image.NewRGBA(image.Rect(0, 0, 4, 4))
		if err := fb.ReadRGBA(gs, img); err != nil {
			return err
		}
		if img.Pix[1] != 255 {
			return fmt.Errorf("pixel %v", img.Pix[:4])
		}
		return nil
	})
	if err != nil {
		t.Errorf("second context after closing first: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestMissingEGL(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SIMVIS_GPU_TEST_NOEGL=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	s := string(out)
	t.Logf("child output: %s", strings.TrimSpace(s))
	if !strings.Contains(s, "ERR=gpu: EGL not available: libEGL-simvis-test-missing.so.1: cannot open shared object file") {
		t.Errorf("unexpected error text: %s", s)
	}
}

func TestPlatformEnv(t *testing.T) {
	t.Setenv(PlatformEnv, "bogus")
	if c, err := New(); err == nil {
		c.Close()
		t.Errorf("New with %s=bogus succeeded", PlatformEnv)
	} else if !strings.Contains(err.Error(), PlatformEnv) {
		t.Errorf("error does not name the variable: %v", err)
	}
	for _, p := range []string{PlatformSurfaceless, PlatformDevice} {
		t.Setenv(PlatformEnv, p)
		c, err := New()
		if err != nil {
			// Not every machine has both platforms; the error must say why.
			t.Logf("%s=%s: %v", PlatformEnv, p, err)
			continue
		}
		info := c.Info()
		t.Logf("%s=%s: %+v", PlatformEnv, p, info)
		if info.Platform != p {
			t.Errorf("forced %s, got %s", p, info.Platform)
		}
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}
}

func TestClearOddSize(t *testing.T) {
	c := shared(t)
	const w, h = 37, 23
	err := c.Do(func(gs *gls.GLS) error {
		fb, err := NewFramebuffer(gs, w, h, ColorRGBA8)
		if err != nil {
			return err
		}
		defer fb.Delete(gs)
		if fb.Width != w || fb.Height != h || fb.Format() != ColorRGBA8 {
			return fmt.Errorf("framebuffer %dx%d %v", fb.Width, fb.Height, fb.Format())
		}
		fb.Clear(gs, 0.2, 0.4, 0.6, 1)
		img := image.NewRGBA(image.Rect(0, 0, w, h))
		if err := fb.ReadRGBA(gs, img); err != nil {
			return err
		}
		want := [4]uint8{51, 102, 153, 255}
		for i := 0; i < w*h; i++ {
			if got := [4]uint8(img.Pix[4*i : 4*i+4]); got != want {
				return fmt.Errorf("pixel %d = %v, want %v", i, got, want)
			}
		}
		depth := make([]float32, w*h)
		if err := fb.ReadDepth(gs, depth); err != nil {
			return err
		}
		for i, d := range depth {
			if d != 1 {
				return fmt.Errorf("depth[%d] = %v, want 1", i, d)
			}
		}
		// A sub-image destination (rows not contiguous) takes the scratch path.
		big := image.NewRGBA(image.Rect(0, 0, w+5, h+3))
		sub := big.SubImage(image.Rect(2, 1, w+2, h+1)).(*image.RGBA)
		if err := fb.ReadRGBA(gs, sub); err != nil {
			return err
		}
		if got := [4]uint8(sub.Pix[sub.PixOffset(w+1, h) : sub.PixOffset(w+1, h)+4]); got != want {
			return fmt.Errorf("sub-image corner = %v", got)
		}
		if got := big.RGBAAt(0, 0); got.A != 0 {
			return fmt.Errorf("wrote outside the sub-image: %v", got)
		}
		// Wrong sizes are errors, not crashes.
		if err := fb.ReadRGBA(gs, image.NewRGBA(image.Rect(0, 0, w, h+1))); err == nil {
			return errors.New("ReadRGBA accepted a wrong-size image")
		}
		if err := fb.ReadDepth(gs, depth[:5]); err == nil {
			return errors.New("ReadDepth accepted a short slice")
		}
		if err := fb.ReadFloat(gs, depth); err == nil {
			return errors.New("ReadFloat accepted an RGBA8 framebuffer")
		}
		return CheckGLError(gs)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestFloatFormats(t *testing.T) {
	c := shared(t)
	err := c.Do(func(gs *gls.GLS) error {
		fb, err := NewFramebuffer(gs, 13, 7, ColorR32F)
		if err != nil {
			return err
		}
		defer fb.Delete(gs)
		fb.Clear(gs, 3.25, 0, 0, 0)
		vals := make([]float32, 13*7)
		for i := range 2 { // twice: the second read reuses the scratch
			if err := fb.ReadFloat(gs, vals); err != nil {
				return err
			}
			for j, v := range vals {
				if v != 3.25 {
					return fmt.Errorf("read %d: R32F[%d] = %v, want 3.25", i, j, v)
				}
			}
		}
		allocs := testing.AllocsPerRun(5, func() {
			if err := fb.ReadFloat(gs, vals); err != nil {
				panic(err)
			}
		})
		if allocs != 0 {
			return fmt.Errorf("ReadFloat allocates %v times per call", allocs)
		}

		fb4, err := NewFramebuffer(gs, 5, 3, ColorRGBA32F)
		if err != nil {
			return err
		}
		defer fb4.Delete(gs)
		fb4.Clear(gs, 1.5, -2, 1e6, 0.25)
		v4 := make([]float32, 5*3*4)
		if err := fb4.ReadFloat(gs, v4); err != nil {
			return err
		}
		for i := 0; i < len(v4); i += 4 {
			if got := [4]float32(v4[i : i+4]); got != [4]float32{1.5, -2, 1e6, 0.25} {
				return fmt.Errorf("RGBA32F pixel %d = %v", i/4, got)
			}
		}
		if err := fb4.ReadFloat(gs, vals); err == nil {
			return errors.New("ReadFloat accepted a wrong length")
		}
		return CheckGLError(gs)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestFramebufferErrors(t *testing.T) {
	c := shared(t)
	err := c.Do(func(gs *gls.GLS) error {
		for _, sz := range [][2]int{{0, 1}, {1, 0}, {-3, 4}, {1 << 20, 1}} {
			if fb, err := NewFramebuffer(gs, sz[0], sz[1], ColorRGBA8); err == nil {
				fb.Delete(gs)
				return fmt.Errorf("size %v accepted", sz)
			}
		}
		if _, err := NewFramebuffer(gs, 1, 1, ColorFormat(99)); err == nil {
			return errors.New("unknown format accepted")
		}
		fb, err := NewFramebuffer(gs, 1, 1, ColorRGBA8)
		if err != nil {
			return err
		}
		fb.Delete(gs)
		fb.Delete(gs) // idempotent
		if err := fb.ReadRGBA(gs, image.NewRGBA(image.Rect(0, 0, 1, 1))); err == nil {
			return errors.New("read after Delete succeeded")
		}
		return CheckGLError(gs)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestLargeFramebuffer(t *testing.T) {
	if testing.Short() {
		t.Skip("large allocation")
	}
	c := shared(t)
	const n = 4096
	err := c.Do(func(gs *gls.GLS) error {
		fb, err := NewFramebuffer(gs, n, n, ColorRGBA8)
		if err != nil {
			return err
		}
		defer fb.Delete(gs)
		fb.Clear(gs, 1, 0, 1, 1)
		img := image.NewRGBA(image.Rect(0, 0, n, n))
		start := time.Now()
		if err := fb.ReadRGBA(gs, img); err != nil {
			return err
		}
		t.Logf("4096x4096 RGBA8 read: %v", time.Since(start))
		for _, i := range []int{0, n*n/2 + 7, n*n - 1} {
			if got := [4]uint8(img.Pix[4*i : 4*i+4]); got != [4]uint8{255, 0, 255, 255} {
				return fmt.Errorf("pixel %d = %v", i, got)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// perspCam is a minimal camera.ICamera: at the origin looking down -Z.
type perspCam struct{ proj math32.Matrix4 }

func newPerspCam(fovY, aspect float32) *perspCam {
	c := &perspCam{}
	c.proj.MakePerspective(fovY, aspect, 0.1, 100)
	return c
}

func (c *perspCam) ViewMatrix(m *math32.Matrix4) { m.Identity() }
func (c *perspCam) ProjMatrix(m *math32.Matrix4) { *m = c.proj }

func TestRenderMesh(t *testing.T) {
	// g3n's math32.ArrayF32.ToFloat32 casts to a huge array pointer, which
	// checkptr (on by default with -race) rejects with a fatal error.
	if raceBuild && os.Getenv("SIMVIS_G3N_CHECKPTR_OFF") == "" {
		t.Skip("g3n fails checkptr under -race; run with -gcflags=all=-d=checkptr=0 and SIMVIS_G3N_CHECKPTR_OFF=1")
	}
	c := shared(t)
	const w, h = 64, 48
	err := c.Do(func(gs *gls.GLS) error {
		r := renderer.NewRenderer(gs)
		if err := r.AddDefaultShaders(); err != nil {
			return err
		}
		red := math32.Color{R: 1, G: 0, B: 0}
		mat := material.NewStandard(&red)
		mat.SetEmissiveColor(&red) // no lights in the scene
		mesh := graphic.NewMesh(geometry.NewPlane(1, 1), mat)
		mesh.SetPosition(0, 0, -2)
		scene := core.NewNode()
		scene.Add(mesh)
		cam := newPerspCam(60, float32(w)/float32(h))

		fb, err := NewFramebuffer(gs, w, h, ColorRGBA8)
		if err != nil {
			return err
		}
		defer fb.Delete(gs)
		img := image.NewRGBA(image.Rect(0, 0, w, h))
		depth := make([]float32, w*h)
		render := func() error {
			fb.Clear(gs, 0, 0, 1, 1)
			start := time.Now()
			if err := r.Render(scene, cam); err != nil {
				return err
			}
			if err := fb.ReadRGBA(gs, img); err != nil {
				return err
			}
			if err := fb.ReadDepth(gs, depth); err != nil {
				return err
			}
			t.Logf("render+read %dx%d: %v", w, h, time.Since(start))
			return CheckGLError(gs)
		}
		isRed := func(x, y int) bool {
			p := img.RGBAAt(x, y)
			return p.R > 200 && p.G < 50 && p.B < 50
		}
		isClear := func(x, y int) bool {
			return img.RGBAAt(x, y) == color.RGBA{0, 0, 255, 255}
		}

		// Centered plane: red in the middle, clear color in the corners.
		if err := render(); err != nil {
			return err
		}
		if !isRed(w/2, h/2) {
			return fmt.Errorf("center pixel %v is not red", img.RGBAAt(w/2, h/2))
		}
		if d := depth[(h/2)*w+w/2]; !(d > 0 && d < 1) {
			return fmt.Errorf("center depth %v, want in (0,1)", d)
		}
		for _, p := range [][2]int{{0, 0}, {w - 1, 0}, {0, h - 1}, {w - 1, h - 1}} {
			if !isClear(p[0], p[1]) {
				return fmt.Errorf("corner %v = %v, want clear color", p, img.RGBAAt(p[0], p[1]))
			}
			if d := depth[p[1]*w+p[0]]; d != 1 {
				return fmt.Errorf("corner %v depth %v, want 1", p, d)
			}
		}

		// Plane moved up: only the upper half of the image may show it.
		// This catches a missing bottom-up to top-down flip.
		mesh.SetPosition(0, 0.65, -2)
		if err := render(); err != nil {
			return err
		}
		if !isRed(w/2, h/4) {
			return fmt.Errorf("upper-half pixel %v is not red", img.RGBAAt(w/2, h/4))
		}
		for y := h / 2; y < h; y++ {
			for x := 0; x < w; x++ {
				if !isClear(x, y) || depth[y*w+x] != 1 {
					return fmt.Errorf("lower-half pixel (%d,%d) = %v depth %v, want clear", x, y, img.RGBAAt(x, y), depth[y*w+x])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentDo(t *testing.T) {
	c := shared(t)
	const goroutines, calls = 8, 25
	var (
		mu   sync.Mutex
		tids = map[int]bool{}
		n    int
		wg   sync.WaitGroup
	)
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				err := c.Do(func(gs *gls.GLS) error {
					fb, err := NewFramebuffer(gs, 3, 2, ColorR32F)
					if err != nil {
						return err
					}
					defer fb.Delete(gs)
					fb.Clear(gs, float32(i), 0, 0, 0)
					v := make([]float32, 6)
					if err := fb.ReadFloat(gs, v); err != nil {
						return err
					}
					if v[5] != float32(i) {
						return fmt.Errorf("read %v, want %d", v[5], i)
					}
					mu.Lock()
					tids[syscall.Gettid()] = true
					n++
					mu.Unlock()
					return nil
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n != goroutines*calls {
		t.Errorf("%d calls ran, want %d", n, goroutines*calls)
	}
	if len(tids) != 1 {
		t.Errorf("Do ran on %d OS threads, want 1", len(tids))
	}
}

func TestDoAllocs(t *testing.T) {
	c := shared(t)
	f := func(*gls.GLS) error { return nil }
	allocs := testing.AllocsPerRun(50, func() {
		if err := c.Do(f); err != nil {
			panic(err)
		}
	})
	if allocs > 0 {
		t.Errorf("Do allocates %v times per call", allocs)
	}
}

func BenchmarkDo(b *testing.B) {
	c, err := New()
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	f := func(*gls.GLS) error { return nil }
	for b.Loop() {
		if err := c.Do(f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkClearReadRGBA640x480(b *testing.B) {
	c, err := New()
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	img := image.NewRGBA(image.Rect(0, 0, 640, 480))
	var fb *Framebuffer
	if err := c.Do(func(gs *gls.GLS) (err error) {
		fb, err = NewFramebuffer(gs, 640, 480, ColorRGBA8)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	f := func(gs *gls.GLS) error {
		fb.Clear(gs, 0.5, 0.5, 0.5, 1)
		return fb.ReadRGBA(gs, img)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Do(f); err != nil {
			b.Fatal(err)
		}
	}
	c.Do(func(gs *gls.GLS) error { fb.Delete(gs); return nil })
}

func TestPanicInDo(t *testing.T) {
	c := shared(t)
	func() {
		defer func() {
			r := recover()
			if r == nil || !strings.Contains(fmt.Sprint(r), "kaboom") {
				t.Errorf("recovered %v, want the render-thread panic", r)
			}
		}()
		c.Do(func(*gls.GLS) error { panic("kaboom") })
	}()
	// The render thread survives.
	if err := c.Do(func(*gls.GLS) error { return nil }); err != nil {
		t.Fatal(err)
	}
}

func TestFlipRows(t *testing.T) {
	buf := []byte{1, 1, 2, 2, 3, 3, 4, 4, 5, 5}
	flipRows(buf, 2, 5, make([]byte, 2))
	if string(buf) != string([]byte{5, 5, 4, 4, 3, 3, 2, 2, 1, 1}) {
		t.Errorf("got %v", buf)
	}
}

func TestColorFormat(t *testing.T) {
	for f, want := range map[ColorFormat][2]any{
		ColorRGBA8: {"RGBA8", 4}, ColorR32F: {"R32F", 1}, ColorRGBA32F: {"RGBA32F", 4}, ColorFormat(7): {"ColorFormat(7)", 0},
	} {
		if f.String() != want[0] || f.Channels() != want[1] {
			t.Errorf("%d: %s %d", int(f), f.String(), f.Channels())
		}
	}
}

// A function given to Do that calls runtime.Goexit (t.Fatal inside Do)
// ends the render thread: Do returns an error instead of waiting for ever,
// later calls return ErrClosed, and Close returns.
func TestDoSurvivesGoexit(t *testing.T) {
	ctx, err := New()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- ctx.Do(func(*gls.GLS) error { runtime.Goexit(); return nil }) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "Goexit") {
			t.Errorf("Do of a Goexit: %v, want an error naming it", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Do of a Goexit did not return")
	}
	if err := ctx.Do(func(*gls.GLS) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("Do after it: %v, want ErrClosed", err)
	}
	if err := ctx.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
