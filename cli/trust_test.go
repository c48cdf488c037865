package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-gl/mathgl/mgl64"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// Issue 12, the command line's side: failing sensors, late sensors,
// signals, dead hosts, budgets.

// goodAndBadSensors writes a scene of two PSDs, GOOD and BAD, into dir;
// tests make BAD's output paths directories, so its frames fail to write.
func goodAndBadSensors(t *testing.T, dir string) string {
	t.Helper()
	sceneFile := filepath.Join(dir, "scene.xml")
	if err := os.WriteFile(sceneFile, []byte(`<scene>
  <sensor type="psd" name="GOOD" insert_at="ROOT"/>
  <sensor type="psd" name="BAD" insert_at="ROOT" pose_offset="0 0 1 0 0 0"/>
</scene>`), 0o644); err != nil {
		t.Fatal(err)
	}
	return sceneFile
}

// A sensor whose frames cannot be written never stops the host: in 20
// cycles the good sensor writes 20 frames, the bad one fails 20 times,
// reported on stderr and counted in the summary, and serve exits 0.
func TestServeCountsFailingSensors(t *testing.T) {
	dir := t.TempDir()
	sceneFile := goodAndBadSensors(t, dir)
	out := filepath.Join(dir, "out")
	// A directory where BAD's file goes: every rename onto it fails.
	if err := os.MkdirAll(filepath.Join(out, "BAD.psd.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := simvis(t, "serve", sceneFile, "--shm", filepath.Join(dir, "region"), "--fast", "--rate", "20",
		"--cycles", "20", "-o", out, "--latest", "--no-nats")
	if code != 0 || !strings.Contains(stdout, "20 cycles in") || !strings.Contains(stdout, "20 files written, 20 sensor frames failed (BAD: 20)") {
		t.Fatalf("serve: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, `simvis serve: sensor "BAD": `) || strings.Contains(stderr, `"GOOD"`) {
		t.Errorf("warnings: %q, want BAD's failure reported and nothing about GOOD", stderr)
	}
	if fi, err := os.Stat(filepath.Join(out, "GOOD.psd.json")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("GOOD's output: %v", err)
	}
	if tmp, _ := filepath.Glob(filepath.Join(out, ".*")); len(tmp) != 0 {
		t.Errorf("temporary files left behind: %v", tmp)
	}
}

// A host started on a scene without sensors renders a sensor a request
// adds later (issue 12, point 11).
func TestServeRendersSensorsAddedLater(t *testing.T) {
	dir := t.TempDir()
	sceneFile := filepath.Join(dir, "scene.xml")
	os.WriteFile(sceneFile, []byte(`<scene>
  <element type="pose" name="P" insert_at="ROOT"/>
</scene>`), 0o644)
	shm, out := filepath.Join(dir, "region"), filepath.Join(dir, "out")
	stop := startServe(t, sceneFile, "--shm", shm, "--rate", "50", "-o", out, "--latest", "--no-nats")
	if !strings.Contains(firstLine, "0 sensors") {
		t.Fatalf("serving line %q", firstLine)
	}
	code, stdout, stderr := simvis(t, "request", "--shm", shm, `<sensor type="psd" name="LATE" insert_at="ROOT" range_max="5"/>`)
	if code != 0 || stdout != "change 2\n" {
		t.Fatalf("request: %d %q %q", code, stdout, stderr)
	}
	file := filepath.Join(out, "LATE.psd.json")
	waitFor(t, func() bool { _, err := os.Stat(file); return err == nil }, "the late sensor's output "+file)
	summary := stop()
	if !strings.Contains(summary, "0 sensor frames failed") || strings.Contains(summary, " 0 files written") {
		t.Errorf("summary: %q", summary)
	}
}

// waitFor polls cond until it holds; the limit only keeps a broken build
// from hanging the test run, it is not a measurement.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
	}
}

// SIGINT right after the serving line always stops the host cleanly: its
// summary printed and its region removed (issue 12, point 10: the signal
// handlers were installed after that line).
func TestServeSignalRightAfterReady(t *testing.T) {
	dir := t.TempDir()
	shm := filepath.Join(dir, "simvis-sig")
	for i := 0; i < 5; i++ {
		stop := startServe(t, quickstart, "--shm", shm, "--no-nats")
		summary := stop()
		if !strings.Contains(summary, " cycles in ") {
			t.Fatalf("run %d: no summary: %q", i, summary)
		}
		if _, err := os.Stat(shm); !os.IsNotExist(err) {
			t.Fatalf("run %d: the region is left behind (%v)", i, err)
		}
	}
}

// logFollow runs `simvis log --follow` in a child process and waits for
// the n records the host has; wait returns its exit code and stderr.
func logFollow(t *testing.T, shm string, n int) (wait func() (int, string)) {
	t.Helper()
	cmd, lines, errOut := startChild(t, "log", "--shm", shm, "--follow")
	for i := 0; i < n; i++ {
		if !lines.Scan() {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("log --follow printed %d records, want %d: %s", i, n, errOut.String())
		}
	}
	return func() (int, string) {
		for lines.Scan() {
		}
		cmd.Wait()
		return cmd.ProcessState.ExitCode(), errOut.String()
	}
}

// log --follow ends with exit 0 when the host stops (issue 12, point 12).
func TestLogFollowEndsWhenHostStops(t *testing.T) {
	shm := filepath.Join(t.TempDir(), "simvis-f")
	stop := startServe(t, quickstart, "--shm", shm, "--no-nats")
	wait := logFollow(t, shm, 4)
	stop()
	if code, errOut := wait(); code != 0 {
		t.Errorf("log --follow after the host stopped: exit %d %q, want 0", code, errOut)
	}
}

// After kill -9 of the host, whose region is left behind, every client
// command fails with "host NAME is not running" and exit 1, a follower
// included (issue 12, point 5). Before it, set's errors are about the
// argument, not a --set flag it does not have (point 12).
func TestClientsSeeAKilledHost(t *testing.T) {
	dir := t.TempDir()
	shm := filepath.Join(dir, "simvis-k")
	kill, _ := startServeProc(t, quickstart, "--shm", shm, "--no-nats", "--rate", "50")

	code, _, errOut := simvis(t, "set", "--shm", shm, "R_POSE.x=abc")
	if code != 1 || !strings.Contains(errOut, `simvis set: R_POSE.x=abc: "abc" is not a finite number`) || strings.Contains(errOut, "--set") {
		t.Errorf("set of a bad number: %d %q", code, errOut)
	}
	code, _, errOut = simvis(t, "set", "--shm", shm, "R_POSE.x")
	if code != 2 || !strings.Contains(errOut, `simvis set: "R_POSE.x": want ELEMENT.PARAM=VALUE`) || strings.Contains(errOut, "--set") {
		t.Errorf("set without a value: %d %q", code, errOut)
	}
	if code, _, errOut := simvis(t, "set", "--shm", shm, "R_POSE.x=1"); code != 0 {
		t.Fatalf("set with the host running: %d %q", code, errOut)
	}

	wait := logFollow(t, shm, 4)
	pid := kill()
	if _, err := os.Stat(shm); err != nil {
		t.Fatalf("a killed host's region should be left behind: %v", err)
	}
	want := fmt.Sprintf("host %s is not running (pid %d gone)", shm, pid)
	if code, errOut := wait(); code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("log --follow: exit %d %q, want 1 and %q", code, errOut, want)
	}
	for _, args := range [][]string{
		{"set", "R_POSE.x=2"},
		{"elements"},
		{"elements", "--json"},
		{"log"},
		{"request", `<element type="rotation" name="PAN" insert_at="ROBOT" axis="0 0 1"/>`},
		{"mirror", "-o", filepath.Join(dir, "mirror")},
	} {
		code, stdout, errOut := simvis(t, append(args, "--shm", shm)...)
		if code != 1 || !strings.Contains(errOut, want) || strings.Contains(errOut, "simvis serve' running") {
			t.Errorf("%q after kill -9: exit %d %q %q, want 1 and %q", args, code, stdout, errOut, want)
		}
	}
}

// The budget flags reach the scene of every kind of command: scene
// options, the host's options and the mirror's.
func TestBudgetFlagsReachTheScene(t *testing.T) {
	flags := []string{"--max-parts", "1", "--max-vertices", "100", "--max-triangles", "50", "--max-nodes", "7",
		"--max-model-mib", "0.5", "--max-image-mpixels", "-1"}
	want := scene.Limits{Parts: 1, Vertices: 100, Triangles: 50, Nodes: 7,
		Model: models.Limits{FileBytes: 512 << 10, ImagePixels: -1, Vertices: 100, Triangles: 50, Nodes: 7}}
	stopHere := errors.New("stopped by the test")
	var got []scene.Limits
	defer func(l func(string, scene.Options) (*scene.Scene, error)) { loadScene = l }(loadScene)
	loadScene = func(path string, o scene.Options) (*scene.Scene, error) {
		got = append(got, o.Limits)
		return nil, stopHere
	}
	defer func(h func(string, string, ipc.HostOptions) (*ipc.Host, error)) { newHost = h }(newHost)
	newHost = func(path, file string, o ipc.HostOptions) (*ipc.Host, error) {
		got = append(got, o.Limits)
		return nil, stopHere
	}
	defer func(m func(*ipc.Client, ipc.MirrorOptions) (*ipc.Mirror, error)) { newMirror = m }(newMirror)
	newMirror = func(c *ipc.Client, o ipc.MirrorOptions) (*ipc.Mirror, error) {
		got = append(got, o.Scene.Limits)
		return nil, stopHere
	}
	dir := t.TempDir()
	shm := filepath.Join(dir, "simvis-b")
	stop := startServe(t, quickstart, "--shm", shm, "--no-nats")
	defer stop()
	commands := [][]string{
		{"inspect", quickstart}, {"capture", quickstart, "-o", dir}, {"export", quickstart, "-o", filepath.Join(dir, "x.glb")},
		{"frames", quickstart}, {"view", quickstart, "-o", filepath.Join(dir, "x.png")}, {"bench", quickstart},
		{"serve", quickstart, "--shm", filepath.Join(dir, "other"), "--no-nats"}, {"mirror", "--shm", shm, "-o", dir},
	}
	for _, args := range commands {
		got = nil
		code, _, errOut := simvis(t, append(args, flags...)...)
		if code != 1 || !strings.Contains(errOut, stopHere.Error()) || len(got) != 1 || got[0] != want {
			t.Errorf("%s: exit %d %q, limits %+v, want %+v", args[0], code, errOut, got, want)
		}
		got = nil
		simvis(t, args...)
		if len(got) != 1 || got[0] != (scene.Limits{}) {
			t.Errorf("%s without the flags: limits %+v, want zero (the defaults)", args[0], got)
		}
		_, help, _ := simvis(t, "help", args[0])
		if !strings.Contains(help, fmt.Sprintf("(default %d; <0: no limit)", scene.DefaultLimits.Parts)) ||
			!strings.Contains(help, "-max-image-mpixels") {
			t.Errorf("help %s does not show the budgets and their defaults:\n%s", args[0], help)
		}
	}
	for _, bad := range []string{"NaN", "Inf", "2e12"} {
		if code, _, errOut := simvis(t, "inspect", quickstart, "--max-model-mib", bad); code != 2 || !strings.Contains(errOut, "--max-model-mib") {
			t.Errorf("--max-model-mib %s: exit %d %q", bad, code, errOut)
		}
	}
}

// An error that reports a budget names the flag that raises it.
func TestLimitErrorsNameTheFlag(t *testing.T) {
	for _, tc := range []struct{ err, want string }{
		{`scene.xml:3: part "B": adds 2 parts, over the limit of 1`, "--max-parts raises the limit"},
		{`scene.xml:2: part "A": attribute "file": m.glb: 300 nodes over the limit of 7`, "--max-nodes raises the limit"},
		{`scene.xml:2: part "A": attribute "file": m.glb: image t.png is 16384x16384 pixels, over the limit`, "--max-image-mpixels raises the limit"},
		{`part "A": 20000000 vertices exceed the limit of 100`, "--max-vertices raises the limit"},
		{`part "A": 9 triangles exceed the limit of 1`, "--max-triangles raises the limit"},
		{`m.bin: 300 MiB file, over the size limit of 256 MiB`, "--max-model-mib raises the limit"},
		{`part "A": over budget`, "the budgets are set with --max-parts"},
	} {
		if got := withLimitHint(errors.New(tc.err)).Error(); !strings.Contains(got, tc.want) {
			t.Errorf("%q became %q, want %q", tc.err, got, tc.want)
		}
	}
	named := errors.New(`m.glb: 33554430 vertices, over the limit of 16777216 (raise it with --max-vertices or scene.Options.Limits.Model.Vertices)`)
	if withLimitHint(named) != named {
		t.Errorf("an error that names its flag got a second hint: %v", withLimitHint(named))
	}
	plain := errors.New(`scene.xml:2: part "A": attribute "file": missing`)
	if withLimitHint(plain) != plain {
		t.Errorf("an error about no budget was changed: %v", withLimitHint(plain))
	}
}

// End to end: --max-parts 1 refuses a command that adds two parts (a model
// whose embedded command adds another), naming the flag; lifting the limit
// loads it.
func TestMaxPartsRefusesAScene(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "box.glb", 1, 1, 1, [4]float32{1, 1, 1, 1})
	testkit.WriteModel(t, dir, "outer.glb", func(m *models.Model) {
		m.AddNode(nil, "base", mgl64.Ident4(), models.Box("base", 1, 1, 1, [4]float32{1, 1, 1, 1}))
		m.Commands = []models.Command{{XML: `<part file="box.glb" name="IN"/>`}}
	})
	path := filepath.Join(dir, "scene.xml")
	os.WriteFile(path, []byte("<scene>\n  <part file=\"outer.glb\" name=\"OUT\"/>\n</scene>\n"), 0o644)
	if code, out, errOut := simvis(t, "inspect", path, "--max-parts", "-1"); code != 0 || !strings.Contains(out, "OUT/IN") {
		t.Fatalf("without a limit: %d %q %q", code, out, errOut)
	}
	code, _, errOut := simvis(t, "inspect", path, "--max-parts", "1")
	if code == 0 {
		t.Fatalf("--max-parts 1 accepted a command adding 2 parts: %q", errOut)
	}
	if code != 1 || !strings.Contains(errOut, path+":2:") || !strings.Contains(errOut, "--max-parts") {
		t.Errorf("--max-parts 1: exit %d %q, want 1 and a message naming %s:2 and --max-parts", code, errOut, path)
	}
}

// capture and mirror also write every sensor they can, frame after frame,
// when one fails, and then exit 1 with the count.
func TestCaptureAndMirrorGoOnPastAFailingSensor(t *testing.T) {
	dir := t.TempDir()
	sceneFile := goodAndBadSensors(t, dir)
	out := filepath.Join(dir, "capture")
	for _, name := range []string{"BAD_0000.psd.json", "BAD_0001.psd.json", "BAD_0002.psd.json", "BAD.psd.json"} {
		os.MkdirAll(filepath.Join(out, name), 0o755)
	}
	code, stdout, stderr := simvis(t, "capture", sceneFile, "-o", out, "--frames", "3")
	if code != 1 || !strings.Contains(stdout, "frame 2 (3 of 3): 1 files\n3 files in") ||
		!strings.Contains(stderr, "simvis capture: 3 sensor frames failed (BAD: 3)") {
		t.Errorf("capture --frames 3: exit %d %q %q", code, stdout, stderr)
	}
	code, stdout, stderr = simvis(t, "capture", sceneFile, "-o", out)
	if code != 1 || stdout != filepath.Join(out, "GOOD.psd.json")+"\n" || !strings.Contains(stderr, "1 sensor frames failed (BAD: 1)") {
		t.Errorf("capture: exit %d %q %q", code, stdout, stderr)
	}

	shm := filepath.Join(dir, "region")
	stop := startServe(t, sceneFile, "--shm", shm, "--no-nats")
	defer stop()
	mirrorOut := filepath.Join(dir, "mirror")
	os.MkdirAll(filepath.Join(mirrorOut, "BAD.psd.json"), 0o755)
	code, stdout, stderr = simvis(t, "mirror", "--shm", shm, "-o", mirrorOut, "--latest", "--frames", "2", "--rate", "100")
	if code != 1 || !strings.Contains(stdout, "frame 1 (2 of 2): change 2, 1 files") || !strings.Contains(stdout, ": 2 files in") ||
		!strings.Contains(stderr, "simvis mirror: 2 sensor frames failed (BAD: 2)") {
		t.Errorf("mirror: exit %d %q %q", code, stdout, stderr)
	}
}

// The reproduction: a camera requested at a pose that composes to
// infinity, on a host that writes files and publishes over NATS. The host
// either refuses the request or counts the sensor's failures; it never
// dies, and its other sensor keeps being written.
func TestServeSurvivesAnOverflowingSensor(t *testing.T) {
	dir := t.TempDir()
	shm, out := filepath.Join(dir, "simvis-evil"), filepath.Join(dir, "out")
	stop := startServe(t, quickstart, "--shm", shm, "--rate", "20", "-o", out, "--latest", "--listen", "127.0.0.1:0", "--token", "s3cret")
	cam := filepath.Join(out, "ROBOT_CAM.png")
	waitFor(t, func() bool { _, err := os.Stat(cam); return err == nil }, cam)
	code, stdout, stderr := simvis(t, "request", "--shm", shm,
		`<sensor type="camera" name="EVIL" insert_at="ROBOT" pose_offset="1.7e308 1.7e308 0 0 0 0" width="16" height="16"/>`)
	accepted := code == 0
	if !accepted && !strings.Contains(stderr, "pose_offset") {
		t.Errorf("request refused without naming pose_offset: %d %q", code, stderr)
	}
	if accepted {
		// Frames of EVIL fail from now on; ROBOT_CAM's go on.
		os.Remove(cam)
		waitFor(t, func() bool { _, err := os.Stat(cam); return err == nil }, "ROBOT_CAM's next frame after "+stdout)
	}
	if code, _, stderr := simvis(t, "set", "--shm", shm, "R_POSE.x=-1"); code != 0 {
		t.Errorf("set after the request: %d %q", code, stderr)
	}
	summary := stop()
	if accepted && !strings.Contains(summary, "sensor frames failed (EVIL: ") {
		t.Errorf("summary: %q, want EVIL's failures counted", summary)
	}
	if _, err := os.Stat(filepath.Join(out, "EVIL.png")); err == nil {
		t.Errorf("EVIL's image was written from an infinite pose")
	}
}
