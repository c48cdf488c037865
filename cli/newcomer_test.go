package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/internal/testkit"
)

// gltfReport is one file's line from internal/jstest/gltf_validate.js.
type gltfReport struct {
	File       string
	Errors     int
	Warnings   int
	Messages   []string
	Extensions []string
}

// validateGLTF runs the Khronos glTF validator on files.
func validateGLTF(t *testing.T, files ...string) []gltfReport {
	t.Helper()
	cmd := testkit.Node(t, filepath.Join(testkit.RepoRoot(), "internal", "jstest", "gltf_validate.js"), files...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gltf-validator: %v\n%s", err, out)
	}
	var reps []gltfReport
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r gltfReport
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("validator output %q: %v", line, err)
		}
		reps = append(reps, r)
	}
	if len(reps) != len(files) {
		t.Fatalf("validator reported %d files, want %d", len(reps), len(files))
	}
	return reps
}

// gltfDoc is what the export test reads back from a .gltf file.
type gltfDoc struct {
	Nodes []struct {
		Name       string
		Matrix     []float64
		Children   []int
		Camera     *int
		Mesh       *int
		Extensions map[string]struct{ Light int }
	}
	Cameras []struct {
		Name        string
		Type        string
		Perspective struct{ Yfov, AspectRatio, Znear, Zfar float64 }
	}
	Materials []struct {
		PbrMetallicRoughness struct{ BaseColorFactor []float64 }
		AlphaMode            string
	}
	Extensions struct {
		Lights struct {
			Lights []struct {
				Type, Name string
				Color      [3]float64
				Intensity  float64
				Spot       *struct{ InnerConeAngle, OuterConeAngle float64 }
			}
		} `json:"KHR_lights_punctual"`
	}
	ExtensionsUsed []string
}

// world returns node i's world matrix (glTF, y-up), from the parents.
func (d *gltfDoc) world(i int) mgl64.Mat4 {
	parent := map[int]int{}
	for p, n := range d.Nodes {
		for _, c := range n.Children {
			parent[c] = p
		}
	}
	m := mgl64.Ident4()
	for k, ok := i, true; ok; k, ok = parent[k] {
		local := mgl64.Ident4()
		if len(d.Nodes[k].Matrix) == 16 {
			copy(local[:], d.Nodes[k].Matrix) // column-major, as mgl64
		}
		m = local.Mul4(m)
	}
	return m
}

func (d *gltfDoc) node(t *testing.T, name string) int {
	t.Helper()
	for i, n := range d.Nodes {
		if n.Name == name {
			return i
		}
	}
	t.Fatalf("no node %q in the export", name)
	return 0
}

// zUp converts a glTF (y-up) direction to simvis' z-up frame.
func zUp(v mgl64.Vec3) mgl64.Vec3 { return mgl64.Vec3{v[0], -v[2], v[1]} }

// The export is what the scene shows: the Khronos validator finds no
// error and no warning; the switched-off cart is absent; the cart's paint
// is on its materials; the sun and the headlight are KHR_lights_punctual
// lights shining where the scene points them; the mast camera is a glTF
// camera with the field of view and size of its sensor command, looking
// along the sensor's +x; a missing output directory is created.
func TestExportShowsWhatTheSceneShows(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not", "yet")
	on, off := filepath.Join(dir, "on.gltf"), filepath.Join(dir, "off.gltf")
	glb := filepath.Join(dir, "on.glb")
	code, outOn, errOut := simvis(t, "export", showcase, "-o", on)
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, errOut)
	}
	if code, _, errOut := simvis(t, "export", showcase, "-o", glb); code != 0 {
		t.Fatalf("export .glb: exit %d: %s", code, errOut)
	}
	code, outOff, errOut := simvis(t, "export", showcase, "-o", off, "--set", "CART_ON.on=0")
	if code != 0 {
		t.Fatalf("export with the cart off: exit %d: %s", code, errOut)
	}
	// The robot model has 460 triangles; switched off, the cart's are gone.
	if !strings.Contains(outOn, "1180 triangles") || !strings.Contains(outOff, "720 triangles") {
		t.Errorf("triangle counts: on %q, off %q; want 1180 and 1180-460", outOn, outOff)
	}
	for _, r := range validateGLTF(t, on, off, glb) {
		if r.Errors != 0 || r.Warnings != 0 {
			t.Errorf("%s: %d errors, %d warnings: %v", r.File, r.Errors, r.Warnings, r.Messages)
		}
	}
	read := func(path string) *gltfDoc {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var d gltfDoc
		if err := json.Unmarshal(data, &d); err != nil {
			t.Fatal(err)
		}
		return &d
	}
	d, dOff := read(on), read(off)

	paint := func(d *gltfDoc) int {
		n := 0
		for _, m := range d.Materials {
			if c := m.PbrMetallicRoughness.BaseColorFactor; len(c) == 4 && c[0] == 1 && math.Abs(c[1]-0.55) < 1e-6 && math.Abs(c[2]-0.1) < 1e-6 && c[3] == 1 {
				n++
			}
		}
		return n
	}
	// The robot model has three meshes with a material each.
	if paint(d) != 3 || paint(dOff) != 0 {
		t.Errorf("materials with the cart's paint 1 0.55 0.1: %d with the cart on, %d off; want 3 and 0", paint(d), paint(dOff))
	}
	for _, n := range dOff.Nodes {
		if strings.HasPrefix(n.Name, "CART/") || n.Name == "robot.gltf" && len(dOff.Nodes) > 0 && n.Mesh != nil {
			t.Errorf("switched-off node %q exported", n.Name)
		}
	}

	// Lights: SUN pitch 50 yaw 35 (directional, 0.75), HEADLIGHT (spot,
	// cutoff 25, 0.6) at x 0.4 z 0.5 on the robot (yaw 20); no ambient.
	lights := d.Extensions.Lights.Lights
	if len(lights) != 2 || len(d.ExtensionsUsed) != 1 || d.ExtensionsUsed[0] != "KHR_lights_punctual" {
		t.Fatalf("lights %+v, extensions used %v: want SUN and HEADLIGHT", lights, d.ExtensionsUsed)
	}
	shine := func(name string) mgl64.Vec3 {
		i := d.node(t, name+" light")
		l := lights[d.Nodes[i].Extensions["KHR_lights_punctual"].Light]
		if l.Name != name+" light" {
			t.Errorf("node %q carries light %q", name+" light", l.Name)
		}
		return zUp(d.world(i).Mul4x1(mgl64.Vec4{0, 0, -1, 0}).Vec3())
	}
	rad := math.Pi / 180
	sun := mgl64.HomogRotate3DZ(35 * rad).Mul4(mgl64.HomogRotate3DY(50 * rad)).Mul4x1(mgl64.Vec4{1, 0, 0, 0}).Vec3()
	if got := shine("SUN"); !got.ApproxEqualThreshold(sun, 1e-6) {
		t.Errorf("the sun shines along %v, want %v", got, sun)
	}
	head := mgl64.Vec3{math.Cos(20 * rad), math.Sin(20 * rad), 0}
	if got := shine("HEADLIGHT"); !got.ApproxEqualThreshold(head, 1e-6) {
		t.Errorf("the headlight shines along %v, want %v", got, head)
	}
	for _, l := range lights {
		switch l.Name {
		case "SUN light":
			if l.Type != "directional" || l.Intensity != 0.75 || l.Color != [3]float64{1, 1, 1} {
				t.Errorf("sun %+v", l)
			}
		case "HEADLIGHT light":
			if l.Type != "spot" || math.Abs(l.Intensity-0.6) > 1e-6 || l.Spot == nil || math.Abs(l.Spot.OuterConeAngle-25*rad) > 1e-6 {
				t.Errorf("headlight %+v", l)
			}
		default:
			t.Errorf("unexpected light %+v", l)
		}
	}

	// MAST_CAM: 640x480, fov 70 (horizontal), near 0.05, far 100.
	if len(d.Cameras) != 1 {
		t.Fatalf("%d cameras, want MAST_CAM's", len(d.Cameras))
	}
	c := d.Cameras[0].Perspective
	yfov := 2 * math.Atan(math.Tan(35*rad)*480/640)
	if d.Cameras[0].Type != "perspective" || math.Abs(c.Yfov-yfov) > 1e-9 || math.Abs(c.AspectRatio-4.0/3) > 1e-9 || c.Znear != 0.05 || c.Zfar != 100 {
		t.Errorf("camera %+v, want yfov %v, aspect 4/3, 0.05 to 100 m", d.Cameras[0], yfov)
	}
	ci := d.node(t, "MAST_CAM camera")
	if d.Nodes[ci].Camera == nil || *d.Nodes[ci].Camera != 0 {
		t.Errorf("node MAST_CAM camera does not carry camera 0")
	}
	// The camera looks along glTF -Z, up +Y; the sensor along its +x, up +z:
	// world directions as `simvis frames` computes them.
	code, out, errOut := simvis(t, "frames", showcase, "MAST_CAM", "--json")
	if code != 0 {
		t.Fatalf("frames: %s", errOut)
	}
	var fp []struct{ Matrix [4][4]float64 }
	if err := json.Unmarshal([]byte(out), &fp); err != nil || len(fp) != 1 {
		t.Fatalf("frames output %q: %v", out, err)
	}
	m := fp[0].Matrix
	w := d.world(ci)
	look, up := zUp(w.Mul4x1(mgl64.Vec4{0, 0, -1, 0}).Vec3()), zUp(w.Mul4x1(mgl64.Vec4{0, 1, 0, 0}).Vec3())
	pos := zUp(w.Col(3).Vec3())
	for k := 0; k < 3; k++ {
		if math.Abs(look[k]-m[k][0]) > 1e-6 || math.Abs(up[k]-m[k][2]) > 1e-6 || math.Abs(pos[k]-m[k][3]) > 1e-6 {
			t.Fatalf("camera node: looks %v, up %v, at %v; the sensor frame is %v", look, up, pos, m)
		}
	}
}

// Each rough edge of issue 19 gets a message that says what is wrong, and
// a refused command writes nothing.
func TestNewcomerMessages(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"view", showcase, "-o", filepath.Join(dir, "v.png"), "--size", "20000x20000"}, 2, "width and height must be 1 to 16384 pixels"},
		{[]string{"view", showcase, "-o", filepath.Join(dir, "v.png"), "--size", "640"}, 2, `--size "640": want WxH`},
		{[]string{"view", showcase, "-o", filepath.Join(dir, "x.jpg")}, 2, "view writes PNG; name the file .png"},
		{[]string{"export", showcase, "-o", filepath.Join(dir, "world.obj")}, 2, "export writes glTF; name the file .glb or .gltf"},
		{[]string{"capture", showcase, "-o", filepath.Join(dir, "c"), "--frames", "0"}, 2, "--frames 0: want 1 to 1000000"},
		// PAN's limits are ±170°: frame 4 of 0..4 asks for 200.
		{[]string{"capture", showcase, "-o", filepath.Join(dir, "c"), "--frames", "5", "--sweep", "PAN.angle=0:200"}, 1,
			`--sweep: frame 4 (PAN.angle=200) of 5 is refused, nothing written: element "PAN": angle = 200° is outside the joint's limits [-170, 170]°`},
	} {
		code, out, errOut := simvis(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) || out != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d and %q", c.args, code, out, errOut, c.code, c.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused commands wrote %v", entries)
	}
	// The sweep's values are checked, not left applied: a good sweep still
	// runs, numbering progress lines from 0 like the files.
	code, out, errOut := simvis(t, "capture", showcase, "-o", filepath.Join(dir, "c"), "--frames", "2", "--sweep", "PAN.angle=0:170")
	if code != 0 || !strings.Contains(out, "frame 0 (1 of 2): 5 files\nframe 1 (2 of 2): 5 files\n") {
		t.Errorf("exit %d, output %q, %s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "c", "MAST_CAM_0001.png")); err != nil {
		t.Error(err)
	}
	_, help, _ := simvis(t, "help", "bench")
	if strings.Contains(help, "sensors,one") || !strings.Contains(help, "all sensors, one after the other") {
		t.Errorf("bench help:\n%s", help)
	}
}

// JSON never shows -0 (the showcase's frames and inspect output held
// several, from poses computed through rotations), and strings keep theirs.
func TestJSONHasNoNegativeZero(t *testing.T) {
	for _, args := range [][]string{{"frames", showcase, "--json"}, {"inspect", showcase, "--json"}} {
		code, out, errOut := simvis(t, args...)
		if code != 0 {
			t.Fatalf("%q: %s", args, errOut)
		}
		for _, line := range strings.Split(out, "\n") {
			if v := strings.TrimSuffix(strings.TrimSpace(line), ","); v == "-0" || strings.HasSuffix(v, ": -0") {
				t.Errorf("%q prints %q", args, line)
			}
		}
	}
	got := string(positiveZeros([]byte(`{"a": -0, "b": [-0,-0.5,-0e3,-01], "s": "-0, \"-0\"", "c": -0}`)))
	want := `{"a": 0, "b": [0,-0.5,-0e3,-01], "s": "-0, \"-0\"", "c": 0}`
	if got != want {
		t.Errorf("positiveZeros: %s, want %s", got, want)
	}
}

// inspect sizes its element and sensor columns to the longest name, type
// and insertion point, so every row's "at" and "start" line up.
func TestInspectColumnsFitLongNames(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, "../scenes/quickstart/robot.gltf", filepath.Join(dir, "robot.gltf"))
	scene := `<scene>
  <part file="robot.gltf" name="ROBOT"/>
  <element type="pose" name="A_RATHER_LONG_POSE_ELEMENT_NAME" insert_at="ROBOT"/>
  <element type="rotation" name="PAN" insert_at="ROBOT/MAST_TOP"/>
  <sensor type="camera" name="CAM" insert_at="ROBOT/MAST_TOP"/>
</scene>`
	path := filepath.Join(dir, "scene.xml")
	if err := os.WriteFile(path, []byte(scene), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := simvis(t, "inspect", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var cols []int
	for _, line := range strings.Split(out, "\n") {
		for _, name := range []string{"A_RATHER_LONG_POSE_ELEMENT_NAME ", "PAN ", "CAM "} {
			if strings.HasPrefix(line, "  "+name) {
				cols = append(cols, strings.Index(line, " at "), strings.Index(line, "ROBOT")+len("ROBOT/MAST_TOP"))
			}
		}
	}
	if len(cols) != 6 || cols[0] != cols[2] || cols[2] != cols[4] || cols[0] < len("  A_RATHER_LONG_POSE_ELEMENT_NAME") {
		t.Errorf("columns %v do not line up:\n%s", cols, out)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// `elements` wraps a long value list (a 361-point cloud has 1084) into
// lines of at most 100 characters, losing nothing.
func TestElementsWrapsLongLists(t *testing.T) {
	vals := []string{"count=361"}
	for i := 0; i < 1083; i++ {
		vals = append(vals, "x12=3.14159")
	}
	var b bytes.Buffer
	writeWrapped(&b, "SCAN (pointcloud at ROOT) start 0:", vals, elementsWidth)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	var items []string
	for i, l := range lines {
		if len(l) > elementsWidth || i > 0 && !strings.HasPrefix(l, "    ") {
			t.Errorf("line %d (%d characters): %q", i, len(l), l)
		}
		items = append(items, strings.Fields(l)...)
	}
	if len(lines) < 100 || strings.Join(items[6:], " ") != strings.Join(vals, " ") {
		t.Errorf("%d lines; items %d, want the head and %d values", len(lines), len(items), len(vals))
	}
}

// `simvis version` prints the module version and the VCS revision from the
// build information.
func TestVersion(t *testing.T) {
	defer func(f func() (*debug.BuildInfo, bool)) { readVersion = f }(readVersion)
	readVersion = func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Path: "github.com/simvis/simvis", Version: "v1.2.3"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-11-23T17:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}, true
	}
	code, out, _ := simvis(t, "version")
	want := "simvis v1.2.3 (module github.com/simvis/simvis, revision abc123 of 2026-11-23T17:00:00Z, with uncommitted changes, go1.99)\n"
	if code != 0 || out != want {
		t.Errorf("exit %d, %q, want %q", code, out, want)
	}
	code, out, _ = simvis(t, "version", "--json")
	var v versionInfo
	if err := json.Unmarshal([]byte(out), &v); code != 0 || err != nil || v.Version != "v1.2.3" || v.Revision != "abc123" || !v.Modified {
		t.Errorf("--json: exit %d, %q (%v)", code, out, err)
	}
}

// The Python client answers -h with its usage, names what is wrong without
// a traceback, takes a bare region name like the Go client (or --shm, or
// $SIMVIS_SHM), and prints a
// change-log record spanning lines on one line, as `simvis log` does.
func TestPythonClientMessages(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	name := fmt.Sprintf("test-py-%d", os.Getpid())
	startServe(t, quickstart, "--shm", name, "--rate", "50", "--no-nats")
	if code, _, errOut := simvis(t, "request", "--shm", name, "<element type=\"rotation\"\n  name=\"PAN\" insert_at=\"ROBOT/MAST_TOP\"/>"); code != 0 {
		t.Fatalf("request: %s", errOut)
	}
	py := func(args ...string) (int, string, string) {
		cmd := exec.Command(python, append([]string{"../ipc/python/simvis_shm.py"}, args...)...)
		cmd.Env = append(os.Environ(), "SIMVIS_SHM="+name)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(errOut.String(), "Traceback") {
			t.Errorf("%q: a traceback:\n%s", args, errOut.String())
		}
		return code, out.String(), errOut.String()
	}
	for _, c := range []struct {
		args       []string
		code       int
		out, error string
	}{
		{[]string{"-h"}, 0, "Usage:", ""},
		{[]string{name, "--help"}, 0, "REGION is a host's name", ""},
		{[]string{name}, 0, "R_POSE (pose at ROBOT) start 0: x=-2 y=-1 z=0 roll=0 pitch=0 yaw=20\nPAN (rotation at ROBOT/MAST_TOP) start 6: angle=0\n", ""},
		{[]string{name, "R_POSE.yaw"}, 0, "20.0\n", ""},
		{[]string{"--shm", name, "R_POSE.yaw"}, 0, "20.0\n", ""},
		{[]string{"R_POSE.yaw"}, 0, "20.0\n", ""}, // the region from $SIMVIS_SHM
		{[]string{name, "NOPE.x"}, 1, "", "no element NOPE (have R_POSE, PAN)"},
		{[]string{name, "R_POSE.warp"}, 1, "", "R_POSE has no parameter warp (has x, y, z, roll, pitch, yaw)"},
		{[]string{name, "R_POSE.x=abc"}, 2, "", "R_POSE.x=abc: 'abc' is not a finite number"},
		{[]string{name, "yaw"}, 2, "", "'yaw': want ELEMENT.PARAM or ELEMENT.PARAM=VALUE"},
		{[]string{name, "--bogus"}, 2, "", "unknown option --bogus"},
		{[]string{name + "-none"}, 1, "", "no region /dev/shm/simvis-" + name + "-none"},
	} {
		code, out, errOut := py(c.args...)
		if code != c.code || !strings.Contains(strings.ToLower(out), strings.ToLower(c.out)) || !strings.Contains(errOut, c.error) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d, %q, %q", c.args, code, out, errOut, c.code, c.out, c.error)
		}
	}
	_, pyLog, _ := py(name, "--log")
	_, goLog, _ := simvis(t, "log", "--shm", name)
	if lines := strings.Split(strings.TrimSpace(pyLog), "\n"); len(lines) != 5 || pyLog != goLog {
		t.Errorf("python --log:\n%s\nsimvis log:\n%s", pyLog, goLog)
	}
}

// A mirror stamps its frames with the host's scene time (multiples of the
// host's 50 ms period, not of its own 1 ms), and says when it falls behind
// its --rate: a 640x480 frame takes longer than 1 ms to render and write.
func TestMirrorStampsHostTimeAndWarnsWhenBehind(t *testing.T) {
	dir := t.TempDir()
	shm := filepath.Join(dir, "region")
	startServe(t, quickstart, "--shm", shm, "--rate", "20", "--no-nats")
	out := filepath.Join(dir, "mirror")
	code, stdout, stderr := simvis(t, "mirror", "--shm", shm, "-o", out, "--frames", "4", "--rate", "1000")
	if code != 0 {
		t.Fatalf("mirror: exit %d: %s", code, stderr)
	}
	if strings.Count(stdout, ", host time ") != 4 || !strings.Contains(stderr, "behind its schedule at --rate 1000") ||
		!strings.Contains(stderr, "frames started late: 4 frames at --rate 1000 should take 3ms") {
		t.Errorf("stdout %q\nstderr %q", stdout, stderr)
	}
	// Warnings are limited to one a second: this run is far shorter.
	if n := strings.Count(stderr, "behind its schedule"); n != 1 {
		t.Errorf("%d behind warnings, want 1:\n%s", n, stderr)
	}
	last := -1.0
	for i := 0; i < 4; i++ {
		data, err := os.ReadFile(filepath.Join(out, fmt.Sprintf("ROBOT_CAM_%04d.json", i)))
		if err != nil {
			t.Fatal(err)
		}
		var info struct{ Stamp struct{ Time float64 } }
		if err := json.Unmarshal(data, &info); err != nil {
			t.Fatal(err)
		}
		at := info.Stamp.Time
		if k := math.Round(at / 0.05); math.Abs(at-k*0.05) > 1e-6 || at < last {
			t.Errorf("frame %d stamped %v s: want a multiple of the host's 0.05 s period, not before %v", i, at, last)
		}
		last = at
	}
}

// Over NATS too, a mirror stamps its frames with the host's scene time,
// learned from the values messages: a multiple of the host's 50 ms period,
// past the cycles run so far.
func TestMirrorOverNATSStampsHostTime(t *testing.T) {
	dir := t.TempDir()
	startServe(t, quickstart, "--shm", filepath.Join(dir, "simvis-qs"), "--rate", "20", "--listen", "127.0.0.1:0", "--token", "s3cret")
	_, after, _ := strings.Cut(firstLine, " and ")
	url := strings.TrimSuffix(strings.Fields(after)[0], ":")
	if !strings.HasPrefix(url, "nats://127.0.0.1:") {
		t.Fatalf("serving line %q", firstLine)
	}
	url = strings.Replace(url, "nats://", "nats://s3cret@", 1)
	time.Sleep(200 * time.Millisecond) // a few host cycles
	code, out, errOut := simvis(t, "mirror", "--connect", url, "-o", filepath.Join(dir, "mirror"), "--frames", "2", "--rate", "50")
	i := strings.Index(out, "host time ")
	var at float64
	if code != 0 || i < 0 {
		t.Fatalf("mirror: %d %q %q", code, out, errOut)
	}
	if _, err := fmt.Sscanf(out[i+len("host time "):], "%g s", &at); err != nil || at < 0.05 || math.Abs(at-0.05*math.Round(at/0.05)) > 1e-6 {
		t.Errorf("mirror over NATS stamped %v s (%v): want a multiple of 0.05 s after the first cycle\n%s", at, err, out)
	}
}

// A depth camera's glTF camera clips at its range_min and range_max; the
// scanners of MARVIN are no cameras. The validator finds nothing wrong.
func TestExportDepthCamera(t *testing.T) {
	path := filepath.Join(t.TempDir(), "marvin.gltf")
	if code, _, errOut := simvis(t, "export", marvinScene, "-o", path); code != 0 {
		t.Fatalf("export: %s", errOut)
	}
	for _, r := range validateGLTF(t, path) {
		if r.Errors != 0 || r.Warnings != 0 {
			t.Errorf("%s: %d errors, %d warnings: %v", r.File, r.Errors, r.Warnings, r.Messages)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d gltfDoc
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	yfov := 2 * math.Atan(math.Tan(35*math.Pi/180)*480/640)
	if len(d.Cameras) != 2 || d.Cameras[0].Name != "CAMERA camera" || d.Cameras[1].Name != "DEPTH camera" {
		t.Fatalf("cameras %+v, want CAMERA's and DEPTH's", d.Cameras)
	}
	if p := d.Cameras[1].Perspective; p.Znear != 0.1 || p.Zfar != 20 || math.Abs(p.Yfov-yfov) > 1e-9 {
		t.Errorf("depth camera %+v, want 0.1 to 20 m, yfov %v", p, yfov)
	}
}
