package cli

import (
	"bufio"
	"encoding/json"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/simvis/simvis/internal/testkit"

	"github.com/nats-io/nats.go"
)

// The test binary doubles as the simvis command for tests that need a
// second process (a host to attach to).
func TestMain(m *testing.M) {
	if os.Getenv("SIMVIS_CLI_CHILD") == "1" {
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// firstLine is the serving line of the last startServe.
var firstLine string

// startServe runs `simvis serve ARGS` in a child process and waits for it
// to be serving; the returned function stops it (SIGINT) and returns its
// output.
func startServe(t *testing.T, args ...string) func() string {
	t.Helper()
	_, stop := startServeProc(t, args...)
	return stop
}

// startChild starts this test binary as simvis with args, reading its
// standard output line by line and collecting its standard error.
func startChild(t testing.TB, args ...string) (*exec.Cmd, *bufio.Scanner, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SIMVIS_CLI_CHILD=1")
	errOut := new(strings.Builder)
	cmd.Stderr = errOut
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewScanner(stdout), errOut
}

// startServeProc is startServe that also returns a function that kills
// the host with SIGKILL, as a crash would, waits for it to be gone and
// returns its pid; stop then does nothing.
func startServeProc(t *testing.T, args ...string) (kill func() int, stop func() string) {
	t.Helper()
	cmd, lines, errOut := startChild(t, append([]string{"serve"}, args...)...)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "serving ") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("serve did not start: %q\n%s", lines.Text(), errOut.String())
	}
	first := lines.Text()
	firstLine = first
	stopped := false
	stop = func() string {
		if stopped {
			return ""
		}
		stopped = true
		cmd.Process.Signal(syscall.SIGINT)
		var rest strings.Builder
		for lines.Scan() {
			rest.WriteString(lines.Text() + "\n")
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("serve: %v\n%s\nstdout: %s%s", err, errOut.String(), first, rest.String())
		}
		return first + "\n" + rest.String()
	}
	kill = func() int {
		stopped = true
		cmd.Process.Kill()
		for lines.Scan() {
		}
		cmd.Wait()
		return cmd.Process.Pid
	}
	t.Cleanup(func() { stop() })
	return kill, stop
}

func isRed(c color.Color) bool {
	r, g, b, _ := c.RGBA()
	return r>>8 > 120 && g>>8 < 60 && b>>8 < 60
}

// The whole loop across processes: a host serves the quickstart scene and
// renders its camera; the standard-library Python client and `simvis set`
// move the robot; `simvis request` adds an element; `simvis log` lists
// the changes; `simvis mirror` replicates the scene in a third process. The
// host's camera image then equals a plain capture with the same values,
// and so does the mirror's.
func TestServeClientsAndMirror(t *testing.T) {
	dir := t.TempDir()
	shm := filepath.Join(dir, "region")
	hostOut, mirrorOut, want := filepath.Join(dir, "host"), filepath.Join(dir, "mirror"), filepath.Join(dir, "want")
	stop := startServe(t, quickstart, "--shm", shm, "--rate", "20", "-o", hostOut, "--latest", "--no-nats")

	code, out, errOut := simvis(t, "elements", "--shm", shm)
	if code != 0 || !strings.Contains(out, "R_POSE (pose at ROBOT) start 0: x=-2 y=-1 z=0 roll=0 pitch=0 yaw=20") {
		t.Fatalf("elements: %d %q %q", code, out, errOut)
	}
	if python, err := exec.LookPath("python3"); err == nil {
		if out, err := exec.Command(python, "../ipc/python/simvis_shm.py", shm, "R_POSE.x=-1.25", "R_POSE.yaw=-30").CombinedOutput(); err != nil {
			t.Fatalf("python client: %v\n%s", err, out)
		}
	} else {
		t.Log("python3 not installed: the Go client sets all values")
		simvis(t, "set", "--shm", shm, "R_POSE.x=-1.25", "R_POSE.yaw=-30")
	}
	if code, _, errOut := simvis(t, "set", "--shm", shm, "R_POSE.y=0.5"); code != 0 {
		t.Fatalf("set: %s", errOut)
	}
	if code, _, errOut := simvis(t, "set", "--shm", shm, "R_POSE.y=7", "R_POSE.warp=1"); code != 1 || !strings.Contains(errOut, `has no parameter "warp"`) {
		t.Errorf("set of an unknown parameter: %d %q", code, errOut)
	}
	code, out, errOut = simvis(t, "request", "--shm", shm, `<element type="rotation" name="PAN" insert_at="ROBOT/MAST_TOP" axis="0 0 1"/>`)
	if code != 0 || out != "change 5\n" {
		t.Fatalf("request: %d %q %q", code, out, errOut)
	}
	code, _, errOut = simvis(t, "request", "--shm", shm, `<part file="/etc/passwd" name="P" insert_at="ROOT"/>`)
	if code != 1 || !strings.Contains(errOut, "absolute path") {
		t.Errorf("hostile request: %d %q", code, errOut)
	}
	if python, err := exec.LookPath("python3"); err == nil {
		out, err := exec.Command(python, "../ipc/python/simvis_shm.py", shm, "--log").CombinedOutput()
		if lines := strings.Split(strings.TrimSpace(string(out)), "\n"); err != nil || len(lines) != 5 ||
			!strings.HasPrefix(lines[4], "5\trequest 0 from pid ") || !strings.Contains(lines[4], `name="PAN"`) {
			t.Errorf("python client's change log: %v\n%s", err, out)
		}
	}
	code, out, _ = simvis(t, "log", "--shm", shm, "--from", "4")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != 0 || len(lines) != 2 ||
		!strings.HasPrefix(lines[0], "4\t") || !strings.Contains(lines[0], "scene.xml:7") || !strings.Contains(lines[1], `name="PAN"`) {
		t.Errorf("log: %d %q", code, out)
	}
	time.Sleep(300 * time.Millisecond) // a few host cycles render the moved robot

	// The overlay: a red point for people only, and a camera that (as any
	// sensor) does not see it.
	overlay := filepath.Join(dir, "overlay.xml")
	os.WriteFile(overlay, []byte(`<scene>
  <element type="pointcloud" name="MARK" insert_at="ROOT" max_points="1" point_size="0.6" color="1 0 0" points="-2 0 3" sensed="false"/>
  <sensor type="camera" name="VIEW" insert_at="ROOT" pose_offset="-6 0 3 0 0 0" width="64" height="48"/>
</scene>`), 0o644)
	code, out, errOut = simvis(t, "mirror", "--shm", shm, "--overlay", overlay, "-o", mirrorOut, "--latest")
	if code != 0 || !strings.Contains(out, "replica at change 5 (0 rebuilds)") {
		t.Fatalf("mirror: %d %q %q", code, out, errOut)
	}
	viewOut := filepath.Join(dir, "view")
	code, out, errOut = simvis(t, "mirror", "--shm", shm, "--overlay", overlay, "-o", viewOut, "--from", "-6 0 3 0 0 0", "--size", "64x48", "--frames", "2", "--rate", "50")
	if code != 0 || !strings.Contains(out, "frame 1 (2 of 2): change 5, 1 files") {
		t.Fatalf("mirror --from: %d %q %q", code, out, errOut)
	}
	if c := testkit.ReadPNG(t, filepath.Join(viewOut, "view_0001.png")).At(32, 24); !isRed(c) {
		t.Errorf("viewpoint render: %v at the image center, want the overlay's red point", c)
	}
	if c := testkit.ReadPNG(t, filepath.Join(mirrorOut, "VIEW.png")).At(32, 24); isRed(c) {
		t.Errorf("overlay camera sees the sensed=\"false\" point: %v", c)
	}
	summary := stop()
	if !strings.Contains(summary, "5 changes logged, 0 values rejected") {
		t.Errorf("serve output: %q", summary)
	}
	if _, err := os.Stat(shm); !os.IsNotExist(err) {
		t.Errorf("stopped host left its region: %v", err)
	}
	if code, _, errOut := simvis(t, "elements", "--shm", shm); code != 1 || !strings.Contains(errOut, "is 'simvis serve' running") {
		t.Errorf("elements without a host: %d %q", code, errOut)
	}

	if code, _, errOut := simvis(t, "capture", quickstart, "-o", want, "--set", "R_POSE.x=-1.25", "--set", "R_POSE.y=0.5", "--set", "R_POSE.yaw=-30"); code != 0 {
		t.Fatal(errOut)
	}
	expected := testkit.ReadPNG(t, filepath.Join(want, "ROBOT_CAM.png"))
	if d := testkit.MaxDiff(testkit.ReadPNG(t, filepath.Join(hostOut, "ROBOT_CAM.png")), expected); d > 2 {
		t.Errorf("host camera differs from a capture with the clients' values by %d levels", d)
	}
	if d := testkit.MaxDiff(testkit.ReadPNG(t, filepath.Join(mirrorOut, "ROBOT_CAM.png")), expected); d > 2 {
		t.Errorf("mirror camera differs from a capture with the clients' values by %d levels", d)
	}
	simvis(t, "capture", quickstart, "-o", want)
	if d := testkit.MaxDiff(testkit.ReadPNG(t, filepath.Join(want, "ROBOT_CAM.png")), expected); d < 50 {
		t.Errorf("moving the robot changed the camera image by only %d levels: the comparison proves nothing", d)
	}
	if _, err := os.Stat(filepath.Join(mirrorOut, "VIEW.png")); err != nil {
		t.Errorf("overlay camera: %v", err)
	}
}

// Sensors render at their rate attribute in scene time: in --fast mode at
// 20 Hz for 20 cycles (one second), a 5 Hz sensor writes 5 frames, one
// without a rate 20.
func TestServeSensorRates(t *testing.T) {
	dir := t.TempDir()
	sceneFile := filepath.Join(dir, "scene.xml")
	os.WriteFile(sceneFile, []byte(`<scene>
  <sensor type="psd" name="SLOW" insert_at="ROOT" rate="5"/>
  <sensor type="psd" name="EVERY" insert_at="ROOT" pose_offset="0 0 1 0 0 0"/>
</scene>`), 0o644)
	code, out, errOut := simvis(t, "serve", sceneFile, "--shm", filepath.Join(dir, "region"), "--fast", "--rate", "20", "--cycles", "20", "-o", filepath.Join(dir, "out"), "--no-nats")
	if code != 0 || !strings.Contains(out, "20 cycles") || !strings.Contains(out, "25 files written") {
		t.Fatalf("serve: %d %q %q", code, out, errOut)
	}
	slow, _ := filepath.Glob(filepath.Join(dir, "out", "SLOW_*.psd.json"))
	every, _ := filepath.Glob(filepath.Join(dir, "out", "EVERY_*.psd.json"))
	if len(slow) != 5 || len(every) != 20 {
		t.Errorf("%d SLOW and %d EVERY frames, want 5 and 20", len(slow), len(every))
	}
	data, _ := os.ReadFile(filepath.Join(dir, "out", "SLOW_0001.psd.json"))
	if !strings.Contains(string(data), `"time": 0.2`) {
		t.Errorf("second SLOW frame not stamped at 0.2 s: %s", data)
	}
	if code, _, errOut := simvis(t, "serve", sceneFile, "--rate", "0"); code != 2 || !strings.Contains(errOut, "--rate") {
		t.Errorf("bad rate: %d %q", code, errOut)
	}
	os.WriteFile(sceneFile, []byte(`<scene><sensor type="psd" name="S" insert_at="ROOT" rate="-1"/></scene>`), 0o644)
	if code, _, errOut := simvis(t, "serve", sceneFile, "--shm", filepath.Join(dir, "region"), "--no-nats"); code != 1 || !strings.Contains(errOut, `attribute "rate"`) {
		t.Errorf("bad sensor rate: %d %q", code, errOut)
	}
}

// The same host over NATS: the serving line gives the URL; clients need the
// token; set, request, log and mirror work with --connect; every sensor
// frame is published on its subject.
func TestServeOverNATS(t *testing.T) {
	dir := t.TempDir()
	stop := startServe(t, quickstart, "--shm", filepath.Join(dir, "simvis-qs"), "--rate", "20", "--listen", "127.0.0.1:0", "--token", "s3cret")
	_, after, _ := strings.Cut(firstLine, " and ")
	clientURL := strings.Fields(after)[0]
	clientURL = strings.TrimSuffix(clientURL, ":")
	if !strings.HasPrefix(clientURL, "nats://127.0.0.1:") || !strings.HasSuffix(clientURL, "/qs") || strings.Contains(clientURL, "s3cret") {
		t.Fatalf("serving line %q", firstLine)
	}
	withToken := strings.Replace(clientURL, "nats://", "nats://s3cret@", 1)
	// (Without credentials, a local client takes them from the host's
	// secrets file: natsipc's TestLocalSecrets.)
	if code, _, errOut := simvis(t, "elements", "--connect", strings.Replace(clientURL, "nats://", "nats://wrong@", 1)); code != 1 || !strings.Contains(strings.ToLower(errOut), "authorization") {
		t.Errorf("with a wrong token: %d %q", code, errOut)
	}
	nc, err := nats.Connect(withToken[:strings.LastIndex(withToken, "/")])
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	frames, err := nc.SubscribeSync("simvis.qs.sensor.ROBOT_CAM")
	if err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := simvis(t, "set", "--connect", withToken, "R_POSE.yaw=90"); code != 0 {
		t.Fatalf("set: %s", errOut)
	}
	if code, out, errOut := simvis(t, "request", "--connect", withToken, `<element type="rotation" name="PAN" insert_at="ROBOT/MAST_TOP" axis="0 0 1"/>`); code != 0 || out != "change 5\n" {
		t.Fatalf("request: %d %q %q", code, out, errOut)
	}
	if code, out, _ := simvis(t, "log", "--connect", withToken); code != 0 || strings.Count(out, "\n") != 5 || !strings.Contains(out, "remote request 1 from") {
		t.Errorf("log: %d %q", code, out)
	}
	msg, err := frames.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Intrinsics struct{ Width, Height int }
	}
	if err := json.Unmarshal([]byte(msg.Header.Get("Simvis-Info")), &info); err != nil || msg.Header.Get("Simvis-Kind") != "image" ||
		info.Intrinsics.Width != 640 || len(msg.Data) != 640*480*3 {
		t.Errorf("camera frame: kind %q, info %q (%v), %d bytes", msg.Header.Get("Simvis-Kind"), msg.Header.Get("Simvis-Info"), err, len(msg.Data))
	}
	time.Sleep(200 * time.Millisecond)
	mirrorOut := filepath.Join(dir, "mirror")
	if code, out, errOut := simvis(t, "mirror", "--connect", withToken, "-o", mirrorOut, "--latest"); code != 0 || !strings.Contains(out, "replica at change 5") {
		t.Fatalf("mirror: %d %q %q", code, out, errOut)
	}
	stop()
	want := filepath.Join(dir, "want")
	simvis(t, "capture", quickstart, "-o", want, "--set", "R_POSE.yaw=90")
	if d := testkit.MaxDiff(testkit.ReadPNG(t, filepath.Join(mirrorOut, "ROBOT_CAM.png")), testkit.ReadPNG(t, filepath.Join(want, "ROBOT_CAM.png"))); d > 2 {
		t.Errorf("the mirror's camera over NATS differs from a capture with yaw 90 by %d levels", d)
	}
}

// The new commands' bad command lines: usage errors (exit 2) naming the
// flag, and a mirror asked for a sensor the replica lacks (exit 1).
func TestIPCUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve", quickstart, "--latest", "--no-nats"}, 2, "--latest needs -o DIR"},
		{[]string{"serve", quickstart, "--log-mib", "0", "--no-nats"}, 2, "--log-mib 0: want 1 to 1048576"},
		{[]string{"serve", quickstart, "--cycles", "-1", "--no-nats"}, 2, "--cycles -1: want N >= 0"},
		{[]string{"serve", quickstart, "--no-nats", "--token", "x"}, 2, "--no-nats excludes the other NATS flags"},
		{[]string{"serve", quickstart, "--shm", filepath.Join(dir, "r"), "--listen", "0.0.0.0:0"}, 1, "give a token or a user and password"},
		{[]string{"set", "--shm", filepath.Join(dir, "r")}, 2, "no ELEMENT.PARAM=VALUE given"},
		{[]string{"request", "--shm", filepath.Join(dir, "r")}, 2, "no XML command given"},
		{[]string{"elements", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"mirror", "--shm", filepath.Join(dir, "r")}, 2, "-o DIR is required"},
		{[]string{"mirror", "-o", dir, "--frames", "0"}, 2, "--frames 0: want 1 to 1000000"},
		{[]string{"mirror", "-o", dir, "--from", "0 0 1 0 0 0", "--sensor", "CAM"}, 2, "--from and --sensor exclude each other"},
		{[]string{"bench-ipc", "--rate", "0"}, 2, "--rate 0: want 1 to 10000 cycles per second"},
		{[]string{"elements", "--connect", "nats://127.0.0.1:1/a.b"}, 1, `scene name "a.b" in nats://127.0.0.1:1: want letters, digits`},
	} {
		code, _, errOut := simvis(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d %q, want exit %d with %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}

	stop := startServe(t, quickstart, "--shm", filepath.Join(dir, "simvis-u"), "--no-nats")
	code, _, errOut := simvis(t, "mirror", "--shm", filepath.Join(dir, "simvis-u"), "-o", dir, "--sensor", "NOPE")
	if code != 1 || !strings.Contains(errOut, "--sensor NOPE: the replica has no such sensor") {
		t.Errorf("unknown sensor: exit %d %q", code, errOut)
	}
	// The host was signalled after its ready line (startServe waits for
	// it): it stops with its summary, never killed by the signal.
	if summary := stop(); !strings.Contains(summary, " cycles in ") || !strings.Contains(summary, "0 sensor frames failed") {
		t.Errorf("serve's summary: %q", summary)
	}
}
