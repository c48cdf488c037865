package testkit

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// Browser is a headless Chromium (Debian's chromium, WebGL through
// SwiftShader) driven over the DevTools protocol: the real browser the web
// viewer's tests open its page in.
type Browser struct {
	t      testing.TB
	cmd    *exec.Cmd
	dir    string // its profile
	ws     *websocket.Conn
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	nextID  int64
	waiting map[int64]chan cdpReply
	errors  []string // console errors and uncaught exceptions, all pages
	session string   // the page's DevTools session
	width   int
	height  int
}

type cdpReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Chromium starts a headless Chromium whose window is width x height CSS
// pixels, or skips the test where Debian's chromium is missing (`make
// deps` installs it). It is stopped when the test ends.
func Chromium(t testing.TB, width, height int) *Browser {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skipf("no chromium (Debian package chromium; `make deps` installs it): %v", err)
	}
	// Its own directory, removed once every process of the browser is gone
	// (t.TempDir's removal would race with its helpers still writing).
	dir, err := os.MkdirTemp("", "simvis-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
		"--ignore-gpu-blocklist", "--disable-gpu-vsync", "--no-first-run", "--no-default-browser-check",
		fmt.Sprintf("--window-size=%d,%d", width, height), "--hide-scrollbars", "--force-device-scale-factor=1",
		"--remote-debugging-port=0", "--user-data-dir="+dir, "about:blank")
	cmd.Env = append(os.Environ(), "DBUS_SESSION_BUS_ADDRESS=disabled:")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its helpers in its group, stopped with it
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := &Browser{t: t, cmd: cmd, dir: dir, waiting: map[int64]chan cdpReply{}, width: width, height: height}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	t.Cleanup(b.close)
	// Chromium writes its DevTools port and path once it listens.
	var port, path string
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort"))
		if lines := strings.Split(string(data), "\n"); err == nil && len(lines) >= 2 && lines[1] != "" {
			port, path = lines[0], lines[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("chromium did not open its DevTools port in 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.ws, _, err = websocket.Dial(b.ctx, "ws://127.0.0.1:"+port+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.ws.SetReadLimit(256 << 20) // screenshots
	go b.readLoop()
	return b
}

func (b *Browser) close() {
	b.cancel()
	if b.ws != nil {
		b.ws.Close(websocket.StatusNormalClosure, "")
	}
	syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
	b.cmd.Wait()
	for range 50 { // the group's last processes may take a moment to go
		if os.RemoveAll(b.dir) == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (b *Browser) readLoop() {
	for {
		_, msg, err := b.ws.Read(b.ctx)
		if err != nil {
			return
		}
		var m struct {
			ID     int64           `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			cdpReply
		}
		if json.Unmarshal(msg, &m) != nil {
			continue
		}
		if m.ID != 0 {
			b.mu.Lock()
			ch := b.waiting[m.ID]
			delete(b.waiting, m.ID)
			b.mu.Unlock()
			if ch != nil {
				ch <- m.cdpReply
			}
			continue
		}
		b.event(m.Method, m.Params)
	}
}

// event records what a page reports as an error.
func (b *Browser) event(method string, params json.RawMessage) {
	var text string
	switch method {
	case "Runtime.consoleAPICalled":
		var p struct {
			Type string `json:"type"`
			Args []struct {
				Value       any    `json:"value"`
				Description string `json:"description"`
			} `json:"args"`
		}
		if json.Unmarshal(params, &p) != nil || p.Type != "error" {
			return
		}
		for _, a := range p.Args {
			text += fmt.Sprint(a.Value) + a.Description + " "
		}
	case "Runtime.exceptionThrown":
		text = "exception: " + string(params)
	case "Log.entryAdded":
		var p struct {
			Entry struct {
				Level, Text, URL string
			} `json:"entry"`
		}
		if json.Unmarshal(params, &p) != nil || p.Entry.Level != "error" {
			return
		}
		text = p.Entry.Text + " " + p.Entry.URL
	default:
		return
	}
	b.mu.Lock()
	b.errors = append(b.errors, text)
	b.mu.Unlock()
}

// call sends a DevTools command (to the page's session once one is open)
// and decodes its result into out (nil: ignored).
func (b *Browser) call(method string, params any, out any) error {
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan cdpReply, 1)
	b.waiting[id] = ch
	session := b.session
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method, "params": params}
	if session != "" && !strings.HasPrefix(method, "Target.") {
		msg["sessionId"] = session
	}
	data, _ := json.Marshal(msg)
	if err := b.ws.Write(b.ctx, websocket.MessageText, data); err != nil {
		return err
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return fmt.Errorf("%s: %s", method, r.Error.Message)
		}
		if out != nil {
			return json.Unmarshal(r.Result, out)
		}
		return nil
	case <-time.After(60 * time.Second):
		return fmt.Errorf("%s: no answer from chromium in 60 s", method)
	}
}

// Open opens url in a new page and watches its console.
func (b *Browser) Open(url string) {
	b.t.Helper()
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call("Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		b.t.Fatal(err)
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call("Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att); err != nil {
		b.t.Fatal(err)
	}
	b.mu.Lock()
	b.session = att.SessionID
	b.mu.Unlock()
	for _, m := range []string{"Runtime.enable", "Log.enable", "Page.enable"} {
		if err := b.call(m, map[string]any{}, nil); err != nil {
			b.t.Fatal(err)
		}
	}
	// The page's viewport is the window's size exactly (headless windows
	// keep some of it for the browser's own frame).
	if err := b.call("Emulation.setDeviceMetricsOverride", map[string]any{"width": b.width, "height": b.height,
		"deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
		b.t.Fatal(err)
	}
	if err := b.call("Page.navigate", map[string]any{"url": url}, nil); err != nil {
		b.t.Fatal(err)
	}
}

// Eval evaluates a JavaScript expression in the page (promises awaited)
// and decodes its value into out (nil: ignored).
func (b *Browser) Eval(expr string, out any) error {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := b.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r); err != nil {
		return err
	}
	if r.Exception != nil {
		return fmt.Errorf("%s: %s %s", expr, r.Exception.Text, r.Exception.Exception.Description)
	}
	if out != nil && len(r.Result.Value) > 0 {
		return json.Unmarshal(r.Result.Value, out)
	}
	return nil
}

// WaitFor evaluates a boolean expression until it is true, failing the test
// after timeout with what the page's console said.
func (b *Browser) WaitFor(expr string, timeout time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		var ok bool
		if last = b.Eval("Boolean("+expr+")", &ok); last == nil && ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	var status string
	b.Eval(`document.getElementById("status") ? document.getElementById("status").textContent + " | " + document.getElementById("error").textContent : ""`, &status)
	b.t.Fatalf("page: %s not true in %v (last error %v; status %q; console errors %q)", expr, timeout, last, status, b.Errors())
}

// Screenshot captures the page's viewport.
func (b *Browser) Screenshot() image.Image {
	b.t.Helper()
	var r struct {
		Data string `json:"data"`
	}
	if err := b.call("Page.captureScreenshot", map[string]any{"format": "png"}, &r); err != nil {
		b.t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		b.t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		b.t.Fatal(err)
	}
	return img
}

// Errors are the console errors and uncaught exceptions seen so far.
func (b *Browser) Errors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}

// Drag drags the mouse (button "left" or "right") from (x0, y0) to (x1,
// y1) in steps, as a person's hand would.
func (b *Browser) Drag(button string, x0, y0, x1, y1 float64) {
	b.t.Helper()
	const steps = 10
	ev := func(typ string, x, y float64, buttons int) {
		if err := b.call("Input.dispatchMouseEvent", map[string]any{"type": typ, "x": x, "y": y, "button": button,
			"buttons": buttons, "clickCount": 1}, nil); err != nil {
			b.t.Fatal(err)
		}
	}
	mask := map[string]int{"left": 1, "right": 2, "middle": 4}[button]
	ev("mousePressed", x0, y0, mask)
	for i := 1; i <= steps; i++ {
		f := float64(i) / steps
		ev("mouseMoved", x0+(x1-x0)*f, y0+(y1-y0)*f, mask)
	}
	ev("mouseReleased", x1, y1, 0)
}

// Pinch moves two fingers from d0 apart to d1 apart about (cx, cy),
// horizontally.
func (b *Browser) Pinch(cx, cy, d0, d1 float64) {
	b.t.Helper()
	const steps = 10
	touch := func(typ string, d float64) {
		pts := []map[string]any{{"x": cx - d/2, "y": cy, "id": 1}, {"x": cx + d/2, "y": cy, "id": 2}}
		if typ == "touchEnd" {
			pts = []map[string]any{}
		}
		if err := b.call("Input.dispatchTouchEvent", map[string]any{"type": typ, "touchPoints": pts}, nil); err != nil {
			b.t.Fatal(err)
		}
	}
	touch("touchStart", d0)
	for i := 1; i <= steps; i++ {
		touch("touchMove", d0+(d1-d0)*float64(i)/steps)
	}
	touch("touchEnd", d1)
}
