package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/web/assets"
)

// startWeb runs `simvis ARGS` (serve or view with --web) in a child process
// until it prints the page's address, and returns the page's address and
// the driver's (with its token, which goes to standard error).
func startWeb(t testing.TB, args ...string) (page, driver string) {
	t.Helper()
	if !assets.Built() {
		t.Fatal("this test binary was built without the web viewer's browser program: run `make web-assets` (go generate ./web/assets) first; make test does")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SIMVIS_CLI_CHILD=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
	})
	pages, drivers := make(chan string, 1), make(chan string, 1)
	var errText strings.Builder // written by its goroutine until drivers is sent on or stderr ends
	scan := func(r io.Reader, prefix string, out chan<- string, keep *strings.Builder) {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), prefix); ok {
				out <- rest
				for sc.Scan() {
				}
				return
			}
			if keep != nil {
				keep.WriteString(sc.Text() + "\n")
			}
		}
		close(out)
	}
	go scan(stdout, "web viewer at ", pages, nil)
	go scan(stderr, "web viewer: to drive, open ", drivers, &errText)
	page, driver = <-pages, <-drivers
	if page == "" || driver == "" {
		t.Fatalf("simvis %s printed no web viewer addresses\n%s", strings.Join(args, " "), errText.String())
	}
	return page, driver
}

// pageState is what the page's simvisState() says.
type pageState struct {
	Ready    bool
	Drawn    int
	Cycle    uint64
	Role     string
	Commands int
	Values   map[string]float64
	Frames   map[string][3]float64
	Returns  uint64
	Cached   int     // frames drawn over the cache of still meshes
	DrawMS   float64 `json:"draw_ms"` // the last frame's Go work
}

func state(t *testing.T, b *testkit.Browser) pageState {
	t.Helper()
	var js string
	var st pageState
	if err := b.Eval(`simvisState()`, &js); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(js), &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// The page in a real browser (headless Chromium, WebGL by SwiftShader)
// draws what `simvis view -o` draws from the same viewpoint, with no
// console errors: the picture looked at is drawn over the page's cache of
// still meshes (the first is drawn in full, later ones copy the cache).
func TestWebPageEqualsViewPNG(t *testing.T) {
	scene := filepath.Join(testkit.RepoRoot(), "scenes", "quickstart", "scene.xml")
	from := "-3 -4 2.5 0 25 50"
	page, _ := startWeb(t, "view", scene, "--web", "127.0.0.1:0", "--from", from, "--fov", "60")
	ref := filepath.Join(t.TempDir(), "ref.png")
	if code := Main([]string{"view", scene, "-o", ref, "--from", from, "--fov", "60", "--size", "640x480"}, new(strings.Builder), new(strings.Builder)); code != 0 {
		t.Fatalf("view -o: exit %d", code)
	}
	b := testkit.Chromium(t, 640, 480)
	b.Open(page + "#ui=off&scale=full") // every pixel, as view -o draws
	b.WaitFor(`typeof simvisState === "function" && JSON.parse(simvisState()).cached > 0`, 60*time.Second)
	got := b.Screenshot()
	want := testkit.ReadPNG(t, ref)
	d := meanDiff(t, got, want)
	t.Logf("mean difference to view -o: %.2f of 255", d)
	if d > 4 {
		if f, err := os.Create(filepath.Join(os.TempDir(), "simvis-web-page.png")); err == nil {
			png.Encode(f, got)
			f.Close()
			t.Logf("the page's picture: %s; view -o's: %s", f.Name(), ref)
		}
		t.Errorf("the page differs from view -o by %.2f of 255 on average (want at most 4)", d)
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// A driver's page follows the host (a value set from outside moves the
// robot), drives it (a field typed into sets the host's value), and shows
// what requests add; a viewer's page cannot set; a page of another origin
// cannot connect.
func TestWebPageFollowsAndDrives(t *testing.T) {
	scene := filepath.Join(testkit.RepoRoot(), "scenes", "quickstart", "scene.xml")
	shm := fmt.Sprintf("webtest-%d", time.Now().UnixNano())
	page, driver := startWeb(t, "serve", scene, "--shm", shm, "--no-nats", "--web", "127.0.0.1:0",
		"--web-viewer-token", "look-only")
	c, err := ipc.Open(shm)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b := testkit.Chromium(t, 800, 600)
	b.Open(driver)
	b.WaitFor(`typeof simvisState === "function" && JSON.parse(simvisState()).drawn > 1`, 60*time.Second)
	if st := state(t, b); st.Role != "driver" {
		t.Fatalf("the driver URL's page has role %q", st.Role)
	}
	// Moved from outside: the page's replica follows.
	before := b.Screenshot()
	if code := Main([]string{"set", "--shm", shm, "R_POSE.x=1.5"}, new(strings.Builder), new(strings.Builder)); code != 0 {
		t.Fatalf("simvis set: exit %d", code)
	}
	b.WaitFor(`JSON.parse(simvisState()).values["R_POSE.x"] === 1.5`, 20*time.Second)
	// A picture drawn after the value came (it moved the robot: one is).
	b.WaitFor(fmt.Sprintf(`JSON.parse(simvisState()).drawn > %d`, state(t, b).Drawn), 20*time.Second)
	if d := meanDiff(t, before, b.Screenshot()); d < 0.2 {
		t.Errorf("the picture did not change when the robot moved (mean difference %.3f)", d)
	}
	// Typed into the page's field: the host's value follows.
	b.WaitFor(`document.querySelector('[data-param="R_POSE.y"]') !== null`, 10*time.Second)
	if err := b.Eval(`(() => { const i = document.querySelector('[data-param="R_POSE.y"]'); i.value = "0.75"; i.dispatchEvent(new Event("input")); return true })()`, nil); err != nil {
		t.Fatal(err)
	}
	idx, err := c.Param("R_POSE", "y")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for v, _ := c.Get(idx); v != 0.75; v, _ = c.Get(idx) {
		if time.Now().After(deadline) {
			t.Fatalf("host R_POSE.y = %v, want 0.75 from the page's field", v)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A request's new part appears in the page.
	n := state(t, b).Commands
	if _, err := c.Request(`<part name="ROBOT2" file="robot.gltf" insert_at="WORLD" pose_offset="2 2 0 0 0 90"/>`); err != nil {
		t.Fatal(err)
	}
	b.WaitFor(fmt.Sprintf(`JSON.parse(simvisState()).commands === %d`, n+1), 20*time.Second)
	// The robot's camera as an inset: the host renders it for the page,
	// which shows its 640x480 pictures.
	if err := b.Eval(`document.querySelector('[data-inset="ROBOT_CAM"]').click()`, nil); err != nil {
		t.Fatal(err)
	}
	b.WaitFor(`JSON.parse(simvisState()).images > 1 && document.querySelector('img[data-inset="ROBOT_CAM"]').naturalWidth === 640`, 20*time.Second)
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}

	// The viewer token's page watches: its controls are disabled, and
	// typing into one anyway leaves the host's value alone.
	v := testkit.Chromium(t, 800, 600)
	v.Open(page + "#token=look-only")
	v.WaitFor(`typeof simvisState === "function" && JSON.parse(simvisState()).drawn > 1`, 60*time.Second)
	if st := state(t, v); st.Role != "viewer" || st.Values["R_POSE.y"] != 0.75 {
		t.Errorf("viewer page: role %q, R_POSE.y %v", st.Role, st.Values["R_POSE.y"])
	}
	var disabled bool
	v.Eval(`document.querySelector('[data-param="R_POSE.y"]').disabled`, &disabled)
	if !disabled {
		t.Error("a viewer's page has enabled controls")
	}
	v.Eval(`(() => { const i = document.querySelector('[data-param="R_POSE.y"]'); i.disabled = false; i.value = "-3"; i.dispatchEvent(new Event("input")); return true })()`, nil)
	time.Sleep(time.Second)
	if got, _ := c.Get(idx); got != 0.75 {
		t.Errorf("a viewer's page set R_POSE.y to %v", got)
	}

	// A page of another origin cannot open the WebSocket.
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<html></html>") }))
	defer other.Close()
	o := testkit.Chromium(t, 320, 240)
	o.Open(other.URL)
	o.WaitFor(`document.readyState === "complete"`, 20*time.Second)
	ws := strings.Replace(strings.TrimSuffix(page, "/"), "http://", "ws://", 1) + "/ws"
	var outcome string
	if err := o.Eval(fmt.Sprintf(`new Promise(r => { const w = new WebSocket(%q, "simvis.web.v1"); w.onopen = () => r("open"); w.onerror = () => r("refused"); })`, ws), &outcome); err != nil {
		t.Fatal(err)
	}
	if outcome != "refused" {
		t.Errorf("a page of origin %s opened the viewer's WebSocket: %s", other.URL, outcome)
	}
}

// Issue 28: the page's default view of a robot in an enclosed room shows
// the robot (the framing of view -o and the windows, worked out by the
// server).
func TestWebDefaultViewSeesInsideARoom(t *testing.T) {
	page, _ := startWeb(t, "view", roomScene(t), "--web", "127.0.0.1:0", "--size", "320x180")
	b := testkit.Chromium(t, 320, 180)
	b.Open(page + "#ui=off")
	b.WaitFor(`typeof simvisState === "function" && JSON.parse(simvisState()).drawn > 1`, 60*time.Second)
	if n := redIn(b.Screenshot()); n < 300 {
		t.Errorf("the page's default view shows %d of the robot's pixels, want it in view (300 or more of 57,600)", n)
	}
}

// MARVIN's scan overlays in the page draw the returns the host's lasers
// measured: the page's picture equals view -o's, which renders them itself;
// from serve's host and from view --web's, which renders them for pages.
func TestWebPageScanPoints(t *testing.T) {
	scene := filepath.Join(testkit.RepoRoot(), "scenes", "marvin", "scene.xml")
	ref := filepath.Join(t.TempDir(), "ref.png")
	// The page starts from the framing at 1280x720 and 70 degrees; at
	// 640x360 (the same aspect) view -o frames the same.
	if code := Main([]string{"view", scene, "-o", ref, "--size", "640x360"}, new(strings.Builder), new(strings.Builder)); code != 0 {
		t.Fatalf("view -o: exit %d", code)
	}
	want := testkit.ReadPNG(t, ref)
	for _, args := range [][]string{
		{"serve", scene, "--shm", fmt.Sprintf("webscan-%d", time.Now().UnixNano()), "--no-nats", "--web", "127.0.0.1:0"},
		{"view", scene, "--web", "127.0.0.1:0"},
	} {
		t.Run(args[0], func(t *testing.T) {
			page, _ := startWeb(t, args...)
			b := testkit.Chromium(t, 640, 360)
			b.Open(page + "#ui=off&scale=full")
			// Frames drawn over the cache of still meshes, with the scan
			// points, which change, drawn over a copy of it.
			b.WaitFor(`typeof simvisState === "function" && JSON.parse(simvisState()).returns > 0 && JSON.parse(simvisState()).cached > 1`, 60*time.Second)
			time.Sleep(500 * time.Millisecond) // a frame drawn with them
			got := b.Screenshot()
			d := meanDiff(t, got, want)
			t.Logf("mean difference to view -o: %.2f of 255", d)
			if d > 4 {
				t.Errorf("the page with scan points differs from view -o by %.2f of 255 on average (want at most 4)", d)
			}
			// The points are red (1 0.1 0.1): about as many in the page as
			// in view -o (measured: 1,132 and 1,308; WebGL's rasterizing
			// differs a little), and none without them.
			if page, ref := redIn(got), redIn(want); ref < 50 || page < ref*3/4 || page > ref*5/4 {
				t.Errorf("red scan-point pixels: %d in the page, %d in view -o", page, ref)
			} else {
				t.Logf("red scan-point pixels: %d in the page, %d in view -o", page, ref)
			}
		})
	}
}

// The page's camera moves as people expect: a left drag orbits about the
// target (the eye turns, the distance stays), a right drag pans (the
// target moves), two fingers spreading zoom in (the eye comes closer), and
// key 1 looks through the first sensor.
func TestWebPageOrbitPanZoom(t *testing.T) {
	scene := filepath.Join(testkit.RepoRoot(), "scenes", "quickstart", "scene.xml")
	page, _ := startWeb(t, "view", scene, "--web", "127.0.0.1:0")
	b := testkit.Chromium(t, 640, 480)
	b.Open(page + "#ui=off")
	b.WaitFor(`typeof simvisState === "function" && JSON.parse(simvisState()).drawn > 0`, 60*time.Second)
	type cam struct{ Eye, Target [3]float64 }
	get := func() cam {
		var js string
		var c cam
		if err := b.Eval(`simvisState()`, &js); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(js), &c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	dist := func(c cam) float64 {
		d := 0.0
		for i := range 3 {
			d += (c.Eye[i] - c.Target[i]) * (c.Eye[i] - c.Target[i])
		}
		return math.Sqrt(d)
	}
	c0 := get()
	b.Drag("left", 300, 240, 400, 260)
	c1 := get()
	if c1.Eye == c0.Eye || c1.Target != c0.Target || math.Abs(dist(c1)-dist(c0)) > 1e-6 {
		t.Errorf("a left drag: eye %v -> %v, target %v -> %v: want the eye turned about a fixed target", c0.Eye, c1.Eye, c0.Target, c1.Target)
	}
	b.Drag("right", 300, 240, 350, 240)
	c2 := get()
	if c2.Target == c1.Target || math.Abs(dist(c2)-dist(c1)) > 1e-6 {
		t.Errorf("a right drag: target %v -> %v, distance %v -> %v: want a pan", c1.Target, c2.Target, dist(c1), dist(c2))
	}
	b.Pinch(320, 240, 100, 250)
	c3 := get()
	if !(dist(c3) < dist(c2)*0.8) {
		t.Errorf("fingers spreading: distance %v -> %v, want closer", dist(c2), dist(c3))
	}
	if err := b.Eval(`document.dispatchEvent(new KeyboardEvent("keydown", {key: "1"}))`, nil); err != nil {
		t.Fatal(err)
	}
	var looking int
	b.Eval(`JSON.parse(simvisState()).looking`, &looking)
	if looking != 1 {
		t.Errorf("key 1: looking through sensor %d, want 1", looking)
	}
}

// `mirror --web` relays a host on another machine (reached over NATS) to
// pages: the model files come from the host over NATS (the mirror's machine
// lacks the scene's folder), the page follows the host's values and drives
// it through the mirror's connection (a driver's token in --connect), and
// shows a camera's pictures, which the mirror renders from its replica.
func TestWebMirrorRelays(t *testing.T) {
	dir := t.TempDir()
	scene := filepath.Join(testkit.CopyFiles(t, filepath.Join(testkit.RepoRoot(), "scenes", "quickstart"), "scene.xml", "robot.gltf", "world.gltf"), "scene.xml")
	startServe(t, scene, "--shm", filepath.Join(dir, "simvis-relay"), "--rate", "20", "--listen", "127.0.0.1:0", "--token", "s3cret")
	_, after, _ := strings.Cut(firstLine, " and ")
	natsURL := strings.Replace(strings.TrimSuffix(strings.Fields(after)[0], ":"), "nats://", "nats://s3cret@", 1)
	// A relay fetches what it serves from the host, whether or not the
	// scene's folder is on its machine (--fetch-files: the mirror's own
	// replica too).
	_, driver := startWeb(t, "mirror", "--connect", natsURL, "--fetch-files", "--web", "127.0.0.1:0")
	b := testkit.Chromium(t, 640, 480)
	b.Open(driver)
	b.WaitFor(`typeof simvisState === "function" && JSON.parse(simvisState()).drawn > 0 && JSON.parse(simvisState()).role === "driver"`, 60*time.Second)
	if code, _, errOut := simvis(t, "set", "--connect", natsURL, "R_POSE.x=1.25"); code != 0 {
		t.Fatalf("set: %s", errOut)
	}
	b.WaitFor(`JSON.parse(simvisState()).values["R_POSE.x"] === 1.25`, 20*time.Second)
	if err := b.Eval(`(() => { const i = document.querySelector('[data-param="R_POSE.y"]'); i.value = "0.5"; i.dispatchEvent(new Event("input")); return true })()`, nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, out, _ := simvis(t, "elements", "--connect", natsURL, "--json")
		var elems []struct {
			Name   string
			Params []string
			Values []float64
		}
		if code == 0 && json.Unmarshal([]byte(out), &elems) == nil && len(elems) == 1 && len(elems[0].Values) > 1 &&
			elems[0].Params[1] == "y" && elems[0].Values[1] == 0.5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the host's R_POSE.y did not become 0.5 from the relayed page: %s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The robot's camera as an inset: the mirror renders it from its
	// replica (its models fetched) for the page.
	if err := b.Eval(`document.querySelector('[data-inset="ROBOT_CAM"]').click()`, nil); err != nil {
		t.Fatal(err)
	}
	b.WaitFor(`JSON.parse(simvisState()).images > 1 && document.querySelector('img[data-inset="ROBOT_CAM"]').naturalWidth === 640`, 30*time.Second)
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// The page draws the grid and the frames' axes and names as the desktop
// viewer does, and key g takes them away and brings them back.
func TestWebPageGrid(t *testing.T) {
	scene := filepath.Join(testkit.RepoRoot(), "scenes", "quickstart", "scene.xml")
	page, _ := startWeb(t, "view", scene, "--web", "127.0.0.1:0")
	b := testkit.Chromium(t, 640, 480)
	b.Open(page)
	b.WaitFor(`typeof simvisState === "function" && JSON.parse(simvisState()).drawn > 1`, 60*time.Second)
	// The status line's figures change by the second: out of the pictures.
	b.Eval(`document.getElementById("status").style.visibility = "hidden"`, nil)
	key := func() {
		t.Helper()
		n := state(t, b).Drawn
		if err := b.Eval(`document.dispatchEvent(new KeyboardEvent("keydown", {key: "g"}))`, nil); err != nil {
			t.Fatal(err)
		}
		b.WaitFor(fmt.Sprintf(`JSON.parse(simvisState()).drawn > %d`, n), 10*time.Second)
	}
	with := b.Screenshot()
	key()
	without := b.Screenshot()
	key()
	again := b.Screenshot()
	// Thin lines and small labels: a small share of the pixels (measured:
	// 0.22 of 255 on average), none of which changes when drawn again.
	if d := meanDiff(t, with, without); d < 0.1 {
		t.Errorf("key g changed the picture by %.3f of 255 on average: no grid was drawn", d)
	}
	if d := meanDiff(t, with, again); d > 0.01 {
		t.Errorf("the grid drawn again differs from the first by %.3f of 255", d)
	}
}
