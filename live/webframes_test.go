package live

import (
	"context"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/simvis/simvis/elements"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
	"github.com/simvis/simvis/web"
	"github.com/simvis/simvis/web/client"
)

// countFrames counts the frames a loop hands the web viewer's sink, by
// sensor.
type countFrames struct {
	*webFrames
	mu sync.Mutex
	n  map[string]int
}

func (c *countFrames) Frame(se *scene.SensorEntry, f *sensors.Frame, st *sensors.Stamp) error {
	c.mu.Lock()
	c.n[se.Name]++
	c.mu.Unlock()
	return c.webFrames.Frame(se, f, st)
}

func (c *countFrames) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

// marvinWebHost is a 30 Hz MARVIN host (not running: the test runs its
// cycles) and a web viewer of it; both close when the test ends.
func marvinWebHost(t *testing.T) (*ipc.Host, *web.Server) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "simvis-marvin")
	h, err := ipc.NewHost(path, filepath.Join(testkit.RepoRoot(), "scenes", "marvin", "scene.xml"), ipc.HostOptions{Sizes: ipc.DefaultSizes, Rate: 30})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	srv, err := web.Listen(web.Options{Addr: "127.0.0.1:0", Dial: func() (*ipc.Client, error) { return ipc.Open(path) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return h, srv
}

// A host whose only sink is the web viewer (view --web, serve --no-nats
// --web) renders nothing, and makes no renderer, while no page is
// connected, though MARVIN's scan overlay draws a laser's returns; with a
// page it renders that laser and the camera the page shows, no other
// sensor; when the page goes, rendering stops again.
func TestWebFramesOnlyForPages(t *testing.T) {
	h, srv := marvinWebHost(t)
	sink := &countFrames{webFrames: &webFrames{srv: srv}, n: map[string]int{}}
	loop := &Loop{Clock: NewClock(), Fails: NewFailures(h.Warn), Sink: sink, HostRate: 30, Warn: h.Warn}
	defer loop.Close()
	var cycles atomic.Int64
	var made atomic.Bool
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- h.Run(ctx, 0, func(_ int, t time.Duration) error {
			sink.Cycle(h.Scene, t.Seconds())
			loop.Cycle(h.Scene, t.Seconds())
			made.Store(loop.R != nil)
			cycles.Add(1)
			return nil
		})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	for cycles.Load() < 20 {
		time.Sleep(10 * time.Millisecond)
	}
	if n := sink.counts(); len(n) > 0 || made.Load() {
		t.Fatalf("with no page: frames rendered %v, a renderer made: %v", n, made.Load())
	}

	url, err := client.WebSocketURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer dcancel()
	c, err := client.Dial(dctx, url, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetInset("CAMERA", true); err != nil {
		t.Fatal(err)
	}
	var returns []scene.Returns
	var pictures map[string][]byte
	for deadline := time.Now().Add(30 * time.Second); len(returns) == 0 || pictures["CAMERA"] == nil; {
		if time.Now().After(deadline) {
			t.Fatalf("a page got returns %v and pictures of %d cameras", returns, len(pictures))
		}
		select {
		case <-c.Changed():
		case <-time.After(time.Second):
		}
		if r := c.TakeReturns(); len(r) > 0 {
			returns = r
		}
		for k, v := range c.TakeImages() {
			pictures = map[string][]byte{k: v}
		}
	}
	// What each sensor sees, for the page's field-of-view lines: the
	// sensors' own word (scene.Sighted), the page has none to ask.
	sights, _ := c.Sights()
	if f := sights["FRONT_LASER"]; f.AngleMin != -90 || f.AngleMax != 90 || f.HFOV != 0 {
		t.Errorf("FRONT_LASER's field of view in the page: %+v, want the fan from -90 to 90 degrees", f)
	}
	if f := sights["CAMERA"]; math.Abs(f.HFOV-70) > 1e-9 || !(f.VFOV > 50 && f.VFOV < 70) {
		t.Errorf("CAMERA's field of view in the page: %+v, want a 70-degree frustum", f)
	}
	if len(sights) != 5 {
		t.Errorf("the page knows the fields of view of %d sensors, MARVIN has 5", len(sights))
	}
	if returns[0].Sensor != "FRONT_LASER" || len(returns[0].Points) < 50 {
		t.Errorf("the page got %d returns of %q, want FRONT_LASER's", len(returns[0].Points), returns[0].Sensor)
	}
	n := sink.counts()
	if got := slices.Sorted(func(yield func(string) bool) {
		for k := range n {
			if !yield(k) {
				return
			}
		}
	}); !slices.Equal(got, []string{"CAMERA", "FRONT_LASER"}) {
		t.Errorf("rendered for a page: %v, want CAMERA and FRONT_LASER only", n)
	}

	c.Close()
	for deadline := time.Now().Add(10 * time.Second); srv.Pages() > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the page's connection stayed")
		}
	}
	time.Sleep(100 * time.Millisecond) // a cycle under way ends
	before := sink.counts()
	for at := cycles.Load(); cycles.Load() < at+15; {
		time.Sleep(10 * time.Millisecond)
	}
	if after := sink.counts(); !maps.Equal(before, after) {
		t.Errorf("after the page left: frames %v, then %v", before, after)
	}
}

// A host window beside a web viewer (serve --window --no-nats --web) gets
// its scan overlay's returns with no page connected: its share of the
// loop's sinks wants them.
func TestWindowOverlaysBesidePages(t *testing.T) {
	h, srv := marvinWebHost(t)
	for _, window := range []bool{false, true} {
		pages := &countFrames{webFrames: &webFrames{srv: srv}, n: map[string]int{}}
		out := sinks{pages}
		if window {
			out = append(out, windowOverlays{})
		}
		loop := &Loop{Clock: NewClock(), Fails: NewFailures(h.Warn), Sink: out, HostRate: 30, Warn: h.Warn}
		out.Cycle(h.Scene, 0)
		loop.Cycle(h.Scene, 0)
		loop.Close()
		want := map[string]int{}
		if window {
			want["FRONT_LASER"] = 1
		}
		if got := pages.counts(); !maps.Equal(got, want) {
			t.Errorf("with a window %v: rendered %v, want %v", window, got, want)
		}
	}
}
