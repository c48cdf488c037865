package scene_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	_ "github.com/simvis/simvis/elements"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	_ "github.com/simvis/simvis/sensors"
)

// writeBoxModel writes a one-box glTF model and returns its path.
func writeBoxModel(t testing.TB, dir, file string, size float64) string {
	t.Helper()
	m := models.NewModel(file)
	m.AddNode(nil, "box", mgl64.Ident4(), models.Box("box", size, size, size, [4]float32{0.5, 0.5, 0.5, 1}))
	path := filepath.Join(dir, file)
	if err := models.Write(path, m); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeFile(t testing.TB, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func load(t *testing.T, path string) *scene.Scene {
	t.Helper()
	s, err := scene.Load(path, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fig1 is the paper's Fig. 1 verbatim (bare commands, no <scene> root), with
// glTF files for the Inventor ones.
const fig1 = `<part file="world.glb" name="WORLD" insert_at="ROOT" pose_offset="0 0 0 0 0 0"/>
<part file="robot.glb" name="ROBOT" insert_at="WORLD" pose_offset="0 0 0 0 0 0"/>
<element type="pose" name="R_POSE" insert_at="ROBOT" x="1" y="2" z="3" roll="0" pitch="0" yaw="-90"/>
<sensor type="camera" name="ROBOT_CAM" insert_at="ROBOT" pose_offset="3 0 5 0 0 0"/>
`

// fig1Swapped has the sensor command before the element command.
const fig1Swapped = `<scene>
<part file="world.glb" name="WORLD" insert_at="ROOT" pose_offset="0 0 0 0 0 0"/>
<part file="robot.glb" name="ROBOT" insert_at="WORLD" pose_offset="0 0 0 0 0 0"/>
<sensor type="camera" name="ROBOT_CAM" insert_at="ROBOT" pose_offset="3 0 5 0 0 0"/>
<element type="pose" name="R_POSE" insert_at="ROBOT" x="1" y="2" z="3" roll="0" pitch="0" yaw="-90"/>
</scene>`

func fig1Dir(t *testing.T) string {
	dir := t.TempDir()
	writeBoxModel(t, dir, "world.glb", 10)
	writeBoxModel(t, dir, "robot.glb", 0.5)
	return dir
}

func assertPose(t *testing.T, s *scene.Scene, frame string, want scene.Pose) {
	t.Helper()
	m, err := s.Transform(frame, scene.WorldFrame)
	if err != nil {
		t.Fatal(err)
	}
	got := scene.PoseFromMatrix(m)
	g := [6]float64{got.X, got.Y, got.Z, got.Roll, got.Pitch, got.Yaw}
	w := [6]float64{want.X, want.Y, want.Z, want.Roll, want.Pitch, want.Yaw}
	for i := range g {
		if math.Abs(g[i]-w[i]) > 1e-9 {
			t.Errorf("%s world pose = %v, want %v", frame, got, want)
			return
		}
	}
}

func TestFig1WorldPoses(t *testing.T) {
	dir := fig1Dir(t)
	s := load(t, writeFile(t, dir, "fig1.xml", fig1))
	assertPose(t, s, "ROOT", scene.Pose{})
	assertPose(t, s, "WORLD", scene.Pose{})
	// The pose element sits before ROBOT: the robot's frame moves.
	assertPose(t, s, "ROBOT", scene.Pose{X: 1, Y: 2, Z: 3, Yaw: -90})
	// The camera was attached after the pose: it rides on it. Rz(-90)·(3,0,5) = (0,-3,5).
	assertPose(t, s, "ROBOT_CAM", scene.Pose{X: 1, Y: -1, Z: 8, Yaw: -90})
}

func TestFig1SwappedOrder(t *testing.T) {
	dir := fig1Dir(t)
	s := load(t, writeFile(t, dir, "fig1.xml", fig1Swapped))
	assertPose(t, s, "ROBOT", scene.Pose{X: 1, Y: 2, Z: 3, Yaw: -90})
	// The camera's separator was inserted before the pose transform existed,
	// so the transform (inserted later, right before ROBOT) does not reach it.
	assertPose(t, s, "ROBOT_CAM", scene.Pose{X: 3, Z: 5})
}

func TestNestedPartsAndSeparatorScope(t *testing.T) {
	dir := t.TempDir()
	writeBoxModel(t, dir, "room.glb", 8)
	writeBoxModel(t, dir, "table.glb", 1)
	writeBoxModel(t, dir, "robot.glb", 0.3)
	s := load(t, writeFile(t, dir, "s.xml", `<scene>
  <part file="room.glb" name="ROOM" pose_offset="10 0 0 0 0 90"/>
  <part file="table.glb" name="TABLE" insert_at="ROOM" pose_offset="2 0 0.75 0 0 0"/>
  <part file="robot.glb" name="ROBOT" insert_at="TABLE" pose_offset="0.1 0.2 0 0 0 180"/>
  <part file="table.glb" name="TABLE2" insert_at="ROOM" pose_offset="-2 0 0.75 0 0 0"/>
  <element type="pose" name="LIFT" insert_at="TABLE" z="0.5"/>
</scene>`))
	// ROOM yaw 90 maps (2,0) to (0,2).
	assertPose(t, s, "ROOM", scene.Pose{X: 10, Yaw: 90})
	assertPose(t, s, "TABLE", scene.Pose{X: 10, Y: 2, Z: 1.25, Yaw: 90})
	// ROBOT was attached before LIFT: unaffected. Robot offset (0.1,0.2) rotated by 90 -> (-0.2, 0.1).
	assertPose(t, s, "ROBOT", scene.Pose{X: 9.8, Y: 2.1, Z: 0.75, Yaw: -90})
	// TABLE2 is in its own separator: LIFT inside TABLE's does not reach it.
	assertPose(t, s, "TABLE2", scene.Pose{X: 10, Y: -2, Z: 0.75, Yaw: 90})

	if err := s.Set("LIFT", "z", 1); err != nil {
		t.Fatal(err)
	}
	assertPose(t, s, "TABLE", scene.Pose{X: 10, Y: 2, Z: 1.75, Yaw: 90})
	assertPose(t, s, "ROBOT", scene.Pose{X: 9.8, Y: 2.1, Z: 0.75, Yaw: -90})

	rel, err := s.Transform("ROBOT", "TABLE")
	if err != nil {
		t.Fatal(err)
	}
	got := scene.PoseFromMatrix(rel)
	// ROBOT in TABLE: TABLE moved up by LIFT (1 m) while ROBOT stayed.
	if math.Abs(got.X-0.1) > 1e-9 || math.Abs(got.Y-0.2) > 1e-9 || math.Abs(got.Z+1) > 1e-9 || math.Abs(math.Abs(got.Yaw)-180) > 1e-9 {
		t.Errorf("ROBOT in TABLE = %v", got)
	}
}

// The g3n mirror that renderers draw must put every frame where the float64
// graph says it is.
func TestG3NMirrorMatchesGraph(t *testing.T) {
	dir := fig1Dir(t)
	s := load(t, writeFile(t, dir, "fig1.xml", fig1))
	if err := s.Set("R_POSE", "roll", 20); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(); err != nil {
		t.Fatal(err)
	}
	s.G3N().UpdateMatrixWorld()
	for _, name := range s.FrameNames() {
		n, err := s.Frame(name)
		if err != nil {
			t.Fatal(err)
		}
		want := n.World()
		got := n.G3N().MatrixWorld()
		for i := range want {
			if math.Abs(float64(got[i])-want[i]) > 1e-5 {
				t.Fatalf("%s: g3n world matrix %v, graph %v", name, got, want)
			}
		}
	}
}

func TestPoseMatrixConvention(t *testing.T) {
	apply := func(p scene.Pose, v mgl64.Vec3) mgl64.Vec3 {
		return p.Matrix().Mul4x1(v.Vec4(1)).Vec3()
	}
	near := func(a, b mgl64.Vec3) bool { return a.Sub(b).Len() < 1e-12 }
	cases := []struct {
		p    scene.Pose
		in   mgl64.Vec3
		want mgl64.Vec3
	}{
		{scene.Pose{Yaw: 90}, mgl64.Vec3{1, 0, 0}, mgl64.Vec3{0, 1, 0}},
		{scene.Pose{Pitch: 90}, mgl64.Vec3{1, 0, 0}, mgl64.Vec3{0, 0, -1}},
		{scene.Pose{Roll: 90}, mgl64.Vec3{0, 1, 0}, mgl64.Vec3{0, 0, 1}},
		// R = Rz·Ry·Rx: roll first. x -> Rx: x -> Ry(90): -z -> Rz(90): -z.
		{scene.Pose{Roll: 90, Pitch: 90, Yaw: 90}, mgl64.Vec3{1, 0, 0}, mgl64.Vec3{0, 0, -1}},
		// y -> Rx(90): z -> Ry(90): x -> Rz(90): y.
		{scene.Pose{Roll: 90, Pitch: 90, Yaw: 90}, mgl64.Vec3{0, 1, 0}, mgl64.Vec3{0, 1, 0}},
		{scene.Pose{X: 1, Y: 2, Z: 3, Yaw: 180}, mgl64.Vec3{1, 0, 0}, mgl64.Vec3{0, 2, 3}},
	}
	for _, c := range cases {
		if got := apply(c.p, c.in); !near(got, c.want) {
			t.Errorf("%v applied to %v = %v, want %v", c.p, c.in, got, c.want)
		}
	}
	for _, p := range []scene.Pose{{1, -2, 3, 10, 20, 30}, {0, 0, 0, -170, 80, 179}, {5, 5, 5, 45, -60, -120}} {
		back := scene.PoseFromMatrix(p.Matrix())
		if math.Abs(back.Roll-p.Roll)+math.Abs(back.Pitch-p.Pitch)+math.Abs(back.Yaw-p.Yaw)+math.Abs(back.X-p.X) > 1e-9 {
			t.Errorf("round trip %v -> %v", p, back)
		}
	}
}

func TestSetErrors(t *testing.T) {
	dir := fig1Dir(t)
	s := load(t, writeFile(t, dir, "fig1.xml", fig1))
	for _, c := range []struct {
		elem, param string
		v           float64
		want        string
	}{
		{"R_POSE", "height", 1, `element "R_POSE" (pose) has no parameter "height" (has x, y, z, roll, pitch, yaw)`},
		{"NOPE", "x", 1, `no element "NOPE"`},
		{"R_POSE", "x", math.NaN(), `R_POSE.x: value NaN is not finite`},
		{"R_POSE", "x", math.Inf(1), `R_POSE.x: value +Inf is not finite`},
	} {
		err := s.Set(c.elem, c.param, c.v)
		if err == nil || err.Error() != c.want {
			t.Errorf("Set(%s.%s=%v) = %v, want %q", c.elem, c.param, c.v, err, c.want)
		}
	}
	if v, _ := s.Value("R_POSE", "x"); v != 1 {
		t.Errorf("rejected sets changed R_POSE.x to %v", v)
	}
}

func TestEmbeddedCommandsAndModelInsertionPoints(t *testing.T) {
	dir := t.TempDir()
	writeBoxModel(t, dir, "head.glb", 0.1)
	m := models.NewModel("robot")
	base := m.AddNode(nil, "base", mgl64.Translate3D(0, 0, 0.2), models.Box("base", 0.6, 0.4, 0.3, [4]float32{0, 0, 1, 1}))
	mast := m.AddNode(base, "mast", mgl64.Translate3D(0.2, 0, 0.8), nil)
	mast.InsertionPoint = "MAST_TOP"
	m.Commands = []models.Command{
		{XML: `<element type="pose" name="TILT" insert_at="MAST_TOP" pitch="30"/>`, Source: "robot.glb: extras"},
		{XML: `<part file="head.glb" name="HEAD" insert_at="MAST_TOP" pose_offset="0 0 0.1 0 0 0"/>`, Source: "robot.glb: extras"},
		{XML: `<sensor type="camera" name="CAM" insert_at="HEAD" pose_offset="0.05 0 0 0 0 0"/>`, Source: "robot.glb: extras"},
	}
	if err := models.Write(filepath.Join(dir, "robot.glb"), m); err != nil {
		t.Fatal(err)
	}
	s := load(t, writeFile(t, dir, "s.xml", `<scene>
  <part file="robot.glb" name="R1" pose_offset="1 0 0 0 0 0"/>
  <part file="robot.glb" name="R2" pose_offset="0 5 0 0 0 90"/>
</scene>`))
	// Model nodes: base at z 0.2, mast 0.2 forward and 0.8 up in base. TILT was
	// inserted before MAST_TOP, so the insertion point's frame is pitched too:
	// what is attached there afterwards rides on the tilt unit.
	assertPose(t, s, "R1/MAST_TOP", scene.Pose{X: 1.2, Z: 1.0, Pitch: 30})
	// HEAD comes after TILT (pitch 30) at MAST_TOP: offset (0,0,0.1) pitched.
	s30, c30 := math.Sin(math.Pi/6), math.Cos(math.Pi/6)
	assertPose(t, s, "R1/HEAD", scene.Pose{X: 1.2 + 0.1*s30, Z: 1.0 + 0.1*c30, Pitch: 30})
	assertPose(t, s, "R1/CAM", scene.Pose{X: 1.2 + 0.1*s30 + 0.05*c30, Z: 1.0 + 0.1*c30 - 0.05*s30, Pitch: 30})
	// Second instance: rotated 90 about z at (0,5,0).
	assertPose(t, s, "R2/MAST_TOP", scene.Pose{Y: 5.2, Z: 1.0, Pitch: 30, Yaw: 90})
	if err := s.Set("R2/TILT", "pitch", 0); err != nil {
		t.Fatal(err)
	}
	assertPose(t, s, "R2/MAST_TOP", scene.Pose{Y: 5.2, Z: 1.0, Yaw: 90})
	assertPose(t, s, "R2/CAM", scene.Pose{Y: 5.25, Z: 1.1, Yaw: 90})
	assertPose(t, s, "R1/CAM", scene.Pose{X: 1.2 + 0.1*s30 + 0.05*c30, Z: 1.0 + 0.1*c30 - 0.05*s30, Pitch: 30})
	if n := len(s.Sensors()); n != 2 {
		t.Errorf("%d sensors, want 2", n)
	}
}

func TestSharedMeshes(t *testing.T) {
	dir := t.TempDir()
	writeBoxModel(t, dir, "chair.glb", 0.5)
	var b strings.Builder
	b.WriteString("<scene>\n")
	for i := 0; i < 100; i++ {
		b.WriteString(`<part file="chair.glb" name="CHAIR` + string(rune('A'+i/26)) + string(rune('a'+i%26)) + `" pose_offset="` + strings.Repeat("0 ", 5) + `0"/>` + "\n")
	}
	b.WriteString("</scene>\n")
	s := load(t, writeFile(t, dir, "s.xml", b.String()))
	st := s.MeshStats()
	if st.Instances != 100 || st.Geometries != 1 || st.Materials != 1 || st.Triangles != 1200 {
		t.Errorf("mesh stats %+v, want 100 instances of 1 geometry and 1 material, 1200 triangles", st)
	}
	info, err := s.Inspect()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	info.WriteSummary(&out)
	if !strings.Contains(out.String(), "meshes: 100 instances share 1 geometries") || !strings.Contains(out.String(), "used by 100 part(s)") {
		t.Errorf("inspect summary does not show sharing:\n%s", out.String())
	}
}

func TestFailedCommandLeavesSceneUnchanged(t *testing.T) {
	dir := t.TempDir()
	writeBoxModel(t, dir, "head.glb", 0.1)
	m := models.NewModel("bad")
	n := m.AddNode(nil, "base", mgl64.Ident4(), models.Box("base", 1, 1, 1, [4]float32{1, 1, 1, 1}))
	n.InsertionPoint = "MOUNT"
	m.Commands = []models.Command{
		{XML: `<element type="pose" name="OK" insert_at="MOUNT"/>`, Source: "bad.glb: extras"},
		{XML: `<element type="pose" name="BROKEN" insert_at="MOUNT" yaw="abc"/>`, Source: "bad.glb: extras"},
	}
	if err := models.Write(filepath.Join(dir, "bad.glb"), m); err != nil {
		t.Fatal(err)
	}
	s := scene.New(scene.Options{})
	before := len(s.Root().Children())
	cmd, err := scene.ParseCommand(`<part file="bad.glb" name="BAD"/>`, "req", dir)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Exec(cmd)
	if err == nil || !strings.Contains(err.Error(), `embedded command 2`) || !strings.Contains(err.Error(), `attribute "yaw": "abc" is not a number`) {
		t.Fatalf("err = %v", err)
	}
	if len(s.Root().Children()) != before || len(s.Elements()) != 0 || len(s.Values()) != 0 || len(s.Parts()) != 0 {
		t.Errorf("failed part left traces: %d children, %d elements, %d values, %d parts", len(s.Root().Children()), len(s.Elements()), len(s.Values()), len(s.Parts()))
	}
	if _, ok := s.InsertionPoint("BAD/MOUNT"); ok {
		t.Error("insertion point of failed part remains")
	}
	// The same names are free again.
	ok, _ := scene.ParseCommand(`<part file="head.glb" name="BAD"/>`, "req", dir)
	if err := s.Exec(ok); err != nil {
		t.Fatal(err)
	}
	if got := len(s.G3N().Children()); got != 3 { // BAD separator, ROOT, lights
		t.Errorf("g3n root has %d children, want 3", got)
	}
}

// BenchmarkLoadQuickstart parses the quickstart scene file, loads its models
// and builds the graph.
func BenchmarkLoadQuickstart(b *testing.B) {
	for b.Loop() {
		if _, err := scene.Load("../scenes/quickstart/scene.xml", scene.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSetUpdateTransform sets one pose parameter and propagates it into
// the graph, then queries a frame below it: the per-change cost the IPC host
// pays before a render.
func BenchmarkSetUpdateTransform(b *testing.B) {
	s, err := scene.Load("../scenes/quickstart/scene.xml", scene.Options{})
	if err != nil {
		b.Fatal(err)
	}
	x := 0.0
	for b.Loop() {
		x += 0.001
		if err := s.Set("R_POSE", "x", x); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Transform("ROBOT_CAM", scene.WorldFrame); err != nil {
			b.Fatal(err)
		}
	}
}

// A command whose verification fails is undone like a failing command:
// its name, parameters and graph nodes are gone.
func TestExecVerifiedUndoes(t *testing.T) {
	s := scene.New(scene.Options{})
	cmd, err := scene.ParseCommand(`<element type="pose" name="P" insert_at="ROOT" x="1"/>`, "test", "")
	if err != nil {
		t.Fatal(err)
	}
	refused := errors.New("no room")
	if err := s.ExecVerified(cmd, func() error {
		if len(s.Elements()) != 1 || len(s.Values()) != 6 {
			t.Errorf("verify runs before the element exists: %d elements", len(s.Elements()))
		}
		return refused
	}); err != refused {
		t.Fatalf("got %v, want the verification's error", err)
	}
	top := s.Root().Children()
	if len(s.Elements()) != 0 || len(s.Values()) != 0 || len(s.Log()) != 0 || len(top) != 1 || top[0].Name != scene.RootName {
		t.Errorf("after the refusal: %d elements, %d values, %d logged, top group %v", len(s.Elements()), len(s.Values()), len(s.Log()), top)
	}
	again, _ := scene.ParseCommand(`<element type="pose" name="P" insert_at="ROOT"/>`, "test", "")
	if err := s.Exec(again); err != nil {
		t.Errorf("the name stayed taken: %v", err)
	}
}
