package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/web/client"
)

// BenchmarkWebPage is MARVIN (a 30 Hz host) in the web viewer's page in
// headless Chromium at 1280x720 (WebGL by SwiftShader on this machine's
// CPU), the robot driving in a circle (its pose set 30 times a second, as a
// robot's pose arrives) and the camera still: time from opening the URL to
// the first picture, frames per second the page draws, and the bytes it
// downloaded. scale: auto (a software rasterizer draws at most 640x480
// worth of pixels, scaled up by the browser) or full (every pixel); cache:
// on (the still meshes drawn once, the robot over them each frame) or off
// (every mesh every frame). Run with -benchtime 1x:
//
//	go test -run XXX -bench WebPage -benchtime 1x ./cli/
func BenchmarkWebPage(b *testing.B) {
	scene := filepath.Join(testkit.RepoRoot(), "scenes", "marvin", "scene.xml")
	shm := fmt.Sprintf("webbench-%d", time.Now().UnixNano())
	page, _ := startWeb(b, "serve", scene, "--shm", shm, "--no-nats", "--web", "127.0.0.1:0")
	c, err := ipc.Open(shm)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	x, errX := c.Param("M_POSE", "x")
	y, errY := c.Param("M_POSE", "y")
	yaw, errYaw := c.Param("M_POSE", "yaw")
	if err := errors.Join(errX, errY, errYaw); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// A circle of 1 m radius around (-2, -1) in 20 s.
		tick := time.NewTicker(time.Second / 30)
		defer tick.Stop()
		for t0 := time.Now(); ctx.Err() == nil; <-tick.C {
			a := time.Since(t0).Seconds() * 2 * math.Pi / 20
			c.Set(x, -2+math.Cos(a))
			c.Set(y, -1+math.Sin(a))
			c.Set(yaw, 90+a*180/math.Pi)
		}
	}()
	for _, v := range []struct{ scale, cache string }{{"auto", "on"}, {"auto", "off"}, {"full", "on"}, {"full", "off"}} {
		b.Run("scale="+v.scale+"/cache="+v.cache, func(b *testing.B) {
			br := testkit.Chromium(b, 1280, 720)
			start := time.Now()
			br.Open(page + "#redraw=all&scale=" + v.scale + "&cache=" + v.cache) // every animation frame drawn: a drawing rate
			br.WaitFor(`typeof simvisState === "function" && JSON.parse(simvisState()).drawn > 0`, 120*time.Second)
			first := time.Since(start)
			time.Sleep(3 * time.Second) // past the first frames' shader compiles and the cache's first build
			var s0, s1 pageState
			br.Eval(`JSON.parse(simvisState())`, &s0)
			t0 := time.Now()
			time.Sleep(5 * time.Second)
			br.Eval(`JSON.parse(simvisState())`, &s1)
			fps := float64(s1.Drawn-s0.Drawn) / time.Since(t0).Seconds()
			if v.cache == "on" && s1.Cached-s0.Cached < (s1.Drawn-s0.Drawn)*9/10 {
				b.Errorf("%d of %d frames drawn over the cache", s1.Cached-s0.Cached, s1.Drawn-s0.Drawn)
			}
			if s1.Values["M_POSE.x"] == s0.Values["M_POSE.x"] {
				b.Error("the robot did not move in the page")
			}
			var bytes float64
			br.Eval(`performance.getEntriesByType("resource").concat(performance.getEntriesByType("navigation")).reduce((s, e) => s + e.transferSize, 0)`, &bytes)
			b.ReportMetric(first.Seconds()*1000, "ms-to-first-picture")
			b.ReportMetric(fps, "frames/s")
			b.ReportMetric(s1.DrawMS, "ms-go-per-frame")
			b.ReportMetric(bytes/1e6, "MB-downloaded")
		})
	}
}

// BenchmarkWebPages is a 30 Hz MARVIN host served to 0 and then 10 pages
// (web/client mirrors syncing 30 times a second, what the page program
// runs): the host's cycles per second and the serving process's resident
// memory with each. Run with -benchtime 1x.
func BenchmarkWebPages(b *testing.B) {
	scene := filepath.Join(testkit.RepoRoot(), "scenes", "marvin", "scene.xml")
	shm := fmt.Sprintf("webbench-%d", time.Now().UnixNano())
	cmd, lines, errOut := startChild(b, "serve", scene, "--shm", shm, "--no-nats", "--web", "127.0.0.1:0")
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var page string
	for page == "" && lines.Scan() {
		if rest, ok := strings.CutPrefix(lines.Text(), "web viewer at "); ok {
			page = rest
		}
	}
	if page == "" {
		b.Fatalf("no web viewer address\n%s", errOut)
	}
	go func() {
		for lines.Scan() {
		}
	}()
	c, err := ipc.Open(shm)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	hc := c.Conn().(interface{ HostCycles() uint64 })
	rate := func() float64 {
		n0, t0 := hc.HostCycles(), time.Now()
		time.Sleep(5 * time.Second)
		return float64(hc.HostCycles()-n0) / time.Since(t0).Seconds()
	}
	time.Sleep(2 * time.Second) // the first cycles compile shaders
	alone, rss0 := rate(), rssMiB(b, cmd.Process.Pid)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	ws, _ := client.WebSocketURL(page)
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := client.Dial(ctx, ws, "")
			if err != nil {
				b.Error(err)
				return
			}
			defer conn.Close()
			m, err := ipc.NewMirrorWith(ipc.NewClient(conn), ipc.MirrorOptions{FetchFiles: true})
			if err != nil {
				b.Error(err)
				return
			}
			defer m.Close()
			for ctx.Err() == nil {
				m.Sync()
				time.Sleep(time.Second / 30)
			}
		}()
	}
	time.Sleep(3 * time.Second) // the mirrors fetch the models and build
	served, rss10 := rate(), rssMiB(b, cmd.Process.Pid)
	cancel()
	wg.Wait()
	b.ReportMetric(alone, "cycles/s-alone")
	b.ReportMetric(served, "cycles/s-10-pages")
	b.ReportMetric(rss0, "MiB-alone")
	b.ReportMetric(rss10, "MiB-10-pages")
}

// rssMiB is a process's resident memory.
func rssMiB(b *testing.B, pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return kb / 1024
		}
	}
	b.Fatal("no VmRSS")
	return 0
}
