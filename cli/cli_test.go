package cli

import (
	"bytes"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/simvis/simvis/internal/testkit"

	"github.com/go-gl/mathgl/mgl64"

	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

const quickstart = "../scenes/quickstart/scene.xml"

// simvis runs the command line in-process and returns exit code and outputs.
func simvis(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestHelpAndUsage(t *testing.T) {
	code, out, _ := simvis(t, "help")
	if code != 0 {
		t.Errorf("help exit %d", code)
	}
	for _, c := range commands() {
		if !strings.Contains(out, "  "+c.name+" ") {
			t.Errorf("help does not list %s:\n%s", c.name, out)
		}
		code, out, _ := simvis(t, c.name, "-h")
		loadsScene := strings.Contains(c.args, "SCENE") && c.name != "serve"
		if code != 0 || !strings.Contains(out, "usage: simvis "+c.name) || loadsScene != strings.Contains(out, "\n  -set ") {
			t.Errorf("%s -h: exit %d, output:\n%s", c.name, code, out)
		}
	}
	if code, _, _ := simvis(t); code != 2 {
		t.Errorf("no arguments: exit %d, want 2", code)
	}
	for _, args := range [][]string{
		{"nosuch"},
		{"help", "nosuch"},
		{"capture", quickstart},                      // -o missing
		{"inspect"},                                  // no scene
		{"inspect", quickstart, "extra"},             // too many arguments
		{"inspect", "--nosuchflag", quickstart},      // unknown flag
		{"inspect", quickstart, "--set", "R_POSE=1"}, // no parameter
	} {
		code, _, errOut := simvis(t, args...)
		if code != 2 || errOut == "" {
			t.Errorf("%q: exit %d stderr %q, want exit 2 with a message", args, code, errOut)
		}
	}
}

func TestBadSceneExitsNonZeroWithLocation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.xml")
	if err := os.WriteFile(path, []byte("<scene>\n  <part name=\"A\" file=\"nope.glb\"/>\n</scene>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := simvis(t, "inspect", path)
	if code != 1 || !strings.Contains(errOut, path+":2:") || !strings.Contains(errOut, `attribute "file"`) {
		t.Errorf("exit %d, stderr %q; want 1 and %s:2 naming attribute file", code, errOut, path)
	}
	code, _, errOut = simvis(t, "inspect", quickstart, "--set", "R_POSE.height=1")
	if code != 1 || !strings.Contains(errOut, `no parameter "height"`) {
		t.Errorf("unknown parameter: exit %d, stderr %q", code, errOut)
	}
}

func TestInspectShowsGraphElementsAndSharing(t *testing.T) {
	code, out, errOut := simvis(t, "inspect", quickstart)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"separator WORLD", "separator ROBOT", "transform R_POSE  pose -2 -1 0 0 0 20",
		"insertion point ROBOT/MAST_TOP", "sensor ROBOT_CAM",
		"R_POSE           pose       at ROBOT        start 0    x=-2 y=-1 z=0 roll=0 pitch=0 yaw=20",
		"meshes:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out)
		}
	}
	// Flags after the scene work like flags before it.
	code, out, errOut = simvis(t, "inspect", quickstart, "--json", "--set", "R_POSE.x=3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var info struct {
		Elements []struct {
			Name   string
			Start  int
			Values []float64
		}
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatalf("inspect --json: %v\n%s", err, out)
	}
	if len(info.Elements) != 1 || info.Elements[0].Name != "R_POSE" || info.Elements[0].Values[0] != 3 {
		t.Errorf("inspect --json elements = %+v, want R_POSE with x=3", info.Elements)
	}
}

func TestFrames(t *testing.T) {
	code, out, errOut := simvis(t, "frames", "--json", quickstart, "ROBOT_CAM", "ROBOT", "--set", "R_POSE.yaw=90")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got []framePose
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	// Relative to the robot's insertion point the camera keeps its mount
	// offset whatever the robot's pose.
	p := got[0].Pose
	if len(got) != 1 || math.Abs(p.X-0.2) > 1e-9 || math.Abs(p.Z-1.1) > 1e-9 || math.Abs(p.Pitch-12) > 1e-9 || math.Abs(p.Yaw) > 1e-9 {
		t.Errorf("ROBOT_CAM in ROBOT = %+v, want 0.2 0 1.1 0 12 0", got)
	}
	code, out, _ = simvis(t, "frames", quickstart, "--set", "R_POSE.yaw=90")
	if code != 0 || !strings.Contains(out, "ROBOT in world: xyz rpy = -2 -1 0 0 0 90") {
		t.Errorf("frames listing: exit %d\n%s", code, out)
	}
	if code, _, errOut := simvis(t, "frames", quickstart, "NOPE"); code != 1 || !strings.Contains(errOut, `no frame "NOPE"`) {
		t.Errorf("unknown frame: exit %d, %q", code, errOut)
	}
}

// The exported scene, read back (y-up converted to z-up again), has the
// robot's mast top where the scene puts it.
func TestExportRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "world.glb")
	code, _, errOut := simvis(t, "export", quickstart, "-o", path, "--set", "R_POSE.x=1", "--set", "R_POSE.yaw=0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	m, err := models.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var mast *mgl64.Mat4
	m.Walk(func(n *models.Node, world mgl64.Mat4) error {
		if n.Name == "ROBOT/MAST_TOP" {
			mast = &world
		}
		return nil
	})
	if mast == nil {
		t.Fatal("exported scene has no node ROBOT/MAST_TOP")
	}
	// robot at (1,-1,0); the generated robot's mast top is 0.15 forward, 1.0 up.
	if got, want := mast.Col(3).Vec3(), (mgl64.Vec3{1.15, -1, 1.0}); !got.ApproxEqualThreshold(want, 1e-6) {
		t.Errorf("exported ROBOT/MAST_TOP at %v, want %v", got, want)
	}
	if m.TriangleCount() != 582 {
		t.Errorf("exported %d triangles, want the scene's 582", m.TriangleCount())
	}
}

func TestCaptureWritesCameraImage(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := simvis(t, "capture", quickstart, "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	path := filepath.Join(dir, "ROBOT_CAM.png")
	meta := filepath.Join(dir, "ROBOT_CAM.json")
	if strings.TrimSpace(out) != path+"\n"+meta {
		t.Errorf("capture printed %q, want %q and %q", out, path, meta)
	}
	var info struct {
		Intrinsics struct{ Fx, Cx float64 }
		Pose       struct{ X, Yaw float64 }
	}
	data, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &info); err != nil {
		t.Fatal(err)
	}
	// fov 70 at 640 px: fx = 320 / tan 35° = 457.0; the camera rides on the robot at yaw 20.
	if math.Abs(info.Intrinsics.Fx-320/math.Tan(35*math.Pi/180)) > 1e-9 || info.Intrinsics.Cx != 319.5 || math.Abs(info.Pose.Yaw-20) > 1e-9 {
		t.Errorf("ROBOT_CAM.json: %s", data)
	}
	img := testkit.ReadPNG(t, path)
	if b := img.Bounds(); b.Dx() != 640 || b.Dy() != 480 {
		t.Errorf("image %v, want 640x480", b)
	}
}

const (
	showcase = "../scenes/showcase/scene.xml"
	armScene = "../scenes/arm/scene.xml"
)

// The showcase scene holds every built-in element type but the URDF
// joints, which the example robot's URDF makes, and --set reaches every one
// of them: each element's last parameter, set through the command line,
// shows in inspect's parameter table.
func TestSetEveryBuiltInElement(t *testing.T) {
	code, out, errOut := simvis(t, "inspect", "--json", showcase)
	if code != 0 {
		t.Fatalf("inspect: exit %d: %s", code, errOut)
	}
	var info scene.Info
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatal(err)
	}
	types := map[string]bool{}
	for _, e := range info.Elements {
		types[e.Type] = true
	}
	// A joint of the arm, set from the command line (radians).
	code, out, errOut = simvis(t, "inspect", "--json", "--set", "ARM/shoulder_pan.position=0.5", armScene)
	if code != 0 {
		t.Fatalf("inspect the arm: exit %d: %s", code, errOut)
	}
	var arm scene.Info
	if err := json.Unmarshal([]byte(out), &arm); err != nil {
		t.Fatal(err)
	}
	for _, e := range arm.Elements {
		types[e.Type] = true
		if e.Name == "ARM/shoulder_pan" && (len(e.Values) != 1 || e.Values[0] != 0.5) {
			t.Errorf("--set ARM/shoulder_pan.position=0.5: inspect shows %v", e.Values)
		}
	}
	for _, typ := range scene.ElementTypes() {
		if !types[typ] {
			t.Errorf("neither the showcase nor the arm scene has a %q element: add one so that every built-in type is exercised", typ)
		}
	}
	for _, e := range info.Elements {
		param := e.Params[len(e.Params)-1]
		value := validValue(e.Type, param)
		arg := e.Name + "." + param + "=" + strconv.FormatFloat(value, 'g', -1, 64)
		code, out, errOut := simvis(t, "inspect", "--json", "--set", arg, showcase)
		if code != 0 {
			t.Errorf("--set %s: exit %d: %s", arg, code, errOut)
			continue
		}
		var after scene.Info
		if err := json.Unmarshal([]byte(out), &after); err != nil {
			t.Fatal(err)
		}
		for _, a := range after.Elements {
			if a.Name == e.Name && a.Values[len(a.Values)-1] != value {
				t.Errorf("--set %s: inspect shows %v", arg, a.Values[len(a.Values)-1])
			}
		}
	}
	// And captures: the cart in the lower right of MAST_CAM's view is gone
	// once switched off from the command line.
	orange := func(sets ...string) bool {
		dir := t.TempDir()
		args := append([]string{"capture", showcase, "-o", dir}, sets...)
		if code, _, errOut := simvis(t, args...); code != 0 {
			t.Fatalf("capture %q: %s", sets, errOut)
		}
		f, err := os.Open(filepath.Join(dir, "MAST_CAM.png"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		img, err := png.Decode(f)
		if err != nil {
			t.Fatal(err)
		}
		r, g, b, _ := img.At(470, 358).RGBA()
		return r > 3*b && r > g+g/4
	}
	if !orange() {
		t.Error("MAST_CAM does not see the orange cart at (470,358)")
	}
	if orange("--set", "CART_ON.on=0") {
		t.Error("with --set CART_ON.on=0 MAST_CAM still sees the cart")
	}
}

// validValue is a value each element type accepts for param, different
// from the showcase's own values.
func validValue(typ, param string) float64 {
	switch {
	case typ == "switch":
		return 0
	case typ == "color" || typ == "foliage" || typ == "light" && param != "yaw" && param != "cutoff":
		return 0.25
	case param == "count":
		return 1
	case param == "size", param == "sz":
		return 0.5
	}
	return 1.5
}

const marvinScene = "../scenes/marvin/scene.xml"

// A sequence: numbered files, stamps, and a swept parameter moving the
// sensors frame by frame.
func TestCaptureSequenceWithSweep(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := simvis(t, "capture", marvinScene, "-o", dir, "--frames", "3", "--rate", "4", "--sweep", "M_POSE.x=-2:-1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "frame 2 (3 of 3): 9 files") || !strings.Contains(out, "27 files in") {
		t.Errorf("progress output:\n%s", out)
	}
	for i, want := range []float64{-2, -1.5, -1} {
		data, err := os.ReadFile(filepath.Join(dir, "REAR_LASER_000"+strconv.Itoa(i)+".scan.json"))
		if err != nil {
			t.Fatal(err)
		}
		var sc struct {
			Stamp struct {
				Frame int
				Time  float64
			}
			Pose struct{ X float64 }
		}
		if err := json.Unmarshal(data, &sc); err != nil {
			t.Fatal(err)
		}
		// The rear scanner sits 0.42 m behind the robot's origin, turned
		// 20° with it: x = robot x - 0.42·cos 20°.
		if sc.Stamp.Frame != i || sc.Stamp.Time != float64(i)/4 || math.Abs(sc.Pose.X-(want-0.42*math.Cos(20*math.Pi/180))) > 1e-9 {
			t.Errorf("frame %d: %s", i, data)
		}
	}
	for _, args := range [][]string{
		{"capture", marvinScene, "-o", dir, "--sweep", "M_POSE.x=0:1"},                     // no --frames
		{"capture", marvinScene, "-o", dir, "--frames", "2", "--sweep", "M_POSE.x=0"},      // no range
		{"capture", marvinScene, "-o", dir, "--frames", "2", "--sweep", "NOPE.x=0:1"},      // unknown element
		{"capture", marvinScene, "-o", dir, "--frames", "2", "--rate", "0"},                // bad rate
		{"capture", marvinScene, "-o", dir, "--frames", "2", "--sweep", "TILT.angle=0:90"}, // beyond the joint's limits
	} {
		if code, _, errOut := simvis(t, args...); code == 0 || errOut == "" {
			t.Errorf("%q: exit %d, want an error", args, code)
		}
	}
}

// simvis bench reports every sensor, the sets, and agreement with the
// exact ray caster within the accuracy targets.
func TestBenchReportsAccuracy(t *testing.T) {
	// Triangles drawn and sensed are the depth-buffer views' figures; on a
	// context with compute shaders the GPU backend draws none (it casts
	// every beam there, sensors/compute.go), so this test keeps the views.
	t.Setenv("SIMVIS_NO_COMPUTE_RANGES", "1")
	code, out, errOut := simvis(t, "bench", marvinScene, "--seconds", "0.02", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Renderer string
		Results  []struct {
			Sensor, Type       string
			FPS                float64 `json:"frames_per_s"`
			Within1mm          float64 `json:"within_1mm"`
			Within1cm          float64 `json:"within_1cm"`
			TrianglesDrawn     int     `json:"triangles_drawn"`
			TrianglesSensed    int     `json:"triangles_sensed"`
			BeamsPerFrame      int     `json:"beams_per_frame"`
			CPUFramesPerSecond float64 `json:"cpu_frames_per_s"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range rep.Results {
		seen[r.Sensor] = true
		if r.FPS <= 0 {
			t.Errorf("%s: %v frames/s", r.Sensor, r.FPS)
		}
		if r.Type == "laser" {
			if r.BeamsPerFrame != 361 || r.Within1mm < 0.99 || r.Within1cm < 1 || r.CPUFramesPerSecond <= 0 {
				t.Errorf("%s: %+v", r.Sensor, r)
			}
			if r.TrianglesDrawn <= 0 || r.TrianglesDrawn >= 2*r.TrianglesSensed {
				t.Errorf("%s drew %d of %d triangles", r.Sensor, r.TrianglesDrawn, r.TrianglesSensed)
			}
		}
		if r.Type == "depth" && r.Within1mm < 0.99 {
			t.Errorf("%s: %.4f of pixels within 1 mm", r.Sensor, r.Within1mm)
		}
	}
	for _, name := range []string{"FRONT_LASER", "REAR_LASER", "TILT_LASER", "CAMERA", "DEPTH", "all scanners", "all sensors"} {
		if !seen[name] {
			t.Errorf("bench does not report %q", name)
		}
	}
}
