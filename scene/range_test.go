package scene_test

import (
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

const rangeNote = "(not finite, or beyond ±3.4e38 where the renderers' float32 overflows)"

// exec parses one command as if it came from file req and executes it.
func exec(t testing.TB, s *scene.Scene, dir, xml string) error {
	t.Helper()
	c, err := scene.ParseCommand(xml, "req", dir)
	if err != nil {
		t.Fatalf("%s: %v", xml, err)
	}
	return s.Exec(c)
}

// assertInRange fails unless every node's world transform is finite and
// within float32 range, and every sensor's world pose marshals (the host
// died writing such a pose as JSON).
func assertInRange(t testing.TB, s *scene.Scene) {
	t.Helper()
	assertWorldsInRange(t, s)
	info, err := s.Inspect()
	if err != nil {
		t.Fatal(err)
	}
	for _, se := range info.Sensors {
		for _, v := range []float64{se.World.X, se.World.Y, se.World.Z, se.World.Roll, se.World.Pitch, se.World.Yaw} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("sensor %s world pose %v", se.Name, se.World)
			}
		}
	}
}

// assertWorldsInRange fails unless every node's world transform is finite
// and within float32 range. It walks from the top of the graph, not from
// ROOT: elements at ROOT insert their transforms above it.
func assertWorldsInRange(t testing.TB, s *scene.Scene) {
	t.Helper()
	top := s.Root()
	for top.Parent() != nil {
		top = top.Parent()
	}
	// Top down (World of every node would cost the depth each).
	var walk func(n *scene.Node, parent mgl64.Mat4)
	walk = func(n *scene.Node, parent mgl64.Mat4) {
		w := parent.Mul4(n.Local())
		for _, v := range w {
			if !(math.Abs(v) <= math.MaxFloat32) {
				t.Fatalf("node %s %q: world transform %v out of range", n.Kind, n.Name, w)
			}
		}
		for _, c := range n.Children() {
			walk(c, w)
		}
	}
	walk(top, mgl64.Ident4())
}

// robotScene has a part ROBOT (a box) at pose_offset robot.
func robotScene(t testing.TB, robot string) (*scene.Scene, string) {
	dir := t.TempDir()
	writeBoxModel(t, dir, "box.glb", 0.5)
	s := scene.New(scene.Options{})
	if err := exec(t, s, dir, `<part file="box.glb" name="ROBOT" pose_offset="`+robot+`"/>`); err != nil {
		t.Fatal(err)
	}
	return s, dir
}

// Finite inputs that compose to a world transform out of range are refused
// at the command, naming its line and the attribute, and leave the scene as
// it was: the name is free again afterwards.
func TestOutOfRangeCommandsRefused(t *testing.T) {
	cases := []struct{ name, robot, xml, want string }{
		{"camera", "0 0 0 0 0 0",
			`<sensor type="camera" name="EVIL" insert_at="ROBOT" pose_offset="1.7e308 1.7e308 0 0 0 0" width="16" height="16"/>`,
			`req:1: sensor "EVIL": attribute "pose_offset": the composed world transform of separator "EVIL" is out of range ` + rangeNote},
		{"laser", "0 0 0 0 0 0",
			`<sensor type="laser" name="EVIL" insert_at="ROBOT" pose_offset="1.7e308 1.7e308 0 0 0 0"/>`,
			`req:1: sensor "EVIL": attribute "pose_offset": the composed world transform of separator "EVIL" is out of range`},
		// Each offset is in range alone; composed they are not.
		{"composed sensor", "3e38 0 0 0 0 0",
			`<sensor type="camera" name="EVIL" insert_at="ROBOT" pose_offset="3e38 0 0 0 0 0"/>`,
			`req:1: sensor "EVIL": attribute "pose_offset": the composed world transform of separator "EVIL" is out of range`},
		{"part", "0 0 0 0 0 0",
			`<part file="box.glb" name="EVIL" insert_at="ROBOT" pose_offset="1.7e308 1.7e308 0 0 0 0"/>`,
			`req:1: part "EVIL": attribute "pose_offset": the composed world transform of separator "EVIL" is out of range`},
		{"composed part", "0 0 -3e38 0 90 0",
			`<part file="box.glb" name="EVIL" insert_at="ROBOT" pose_offset="3e38 0 0 0 0 0"/>`,
			`req:1: part "EVIL": attribute "pose_offset": the composed world transform of separator "EVIL" is out of range`},
		{"pose element", "0 0 0 0 0 0",
			`<element type="pose" name="EVIL" insert_at="ROBOT" y="2" x="1.7e308"/>`,
			`req:1: element "EVIL": attribute "x": the composed world transform of transform "EVIL" is out of range`},
		{"composed pose element", "0 3e38 0 0 0 0",
			`<element type="pose" name="EVIL" insert_at="ROBOT" y="3e38"/>`,
			`req:1: element "EVIL": attribute "y": the composed world transform of transform "EVIL" is out of range`},
		// The scale's own matrix is out of range.
		{"scale element", "0 0 0 0 0 0",
			`<element type="scale" name="EVIL" insert_at="ROBOT" sx="1e300"/>`,
			`req:1: element "EVIL": attribute "sx": the composed world transform of transform "EVIL" is out of range`},
		// Just in range: accepted.
		{"at the edge", "0 0 0 0 0 0",
			`<element type="translation" name="EVIL" insert_at="ROBOT" axis="1 0 0" offset="3.4e38"/>`,
			``},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, dir := robotScene(t, c.robot)
			parts, sensors, elems, children := len(s.Parts()), len(s.Sensors()), len(s.Elements()), len(s.Root().Children()[0].Children())
			err := exec(t, s, dir, c.xml)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused a command in range: %v", err)
				}
				assertInRange(t, s)
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("error\n  %v\nwant prefix\n  %s", err, c.want)
			}
			if len(s.Parts()) != parts || len(s.Sensors()) != sensors || len(s.Elements()) != elems ||
				len(s.Root().Children()[0].Children()) != children || len(s.Values()) != 0 {
				t.Errorf("the refused command left traces")
			}
			assertInRange(t, s)
			// The name is free again and a sane pose is accepted.
			sane := strings.NewReplacer("1.7e308", "1", "3e38", "1", "1e300", "2").Replace(c.xml)
			if err := exec(t, s, dir, sane); err != nil {
				t.Errorf("%s: %v", sane, err)
			}
			assertInRange(t, s)
		})
	}
}

// A transform inserted at a model's insertion point moves the model's
// nodes after it, and what is attached to them: the command that inserts
// it is refused if that puts an attached frame out of range.
func TestOutOfRangeInsertedAboveAttachments(t *testing.T) {
	dir := t.TempDir()
	m := models.NewModel("arm")
	base := m.AddNode(nil, "base", mgl64.Ident4(), models.Box("base", 1, 1, 1, [4]float32{1, 1, 1, 1}))
	base.InsertionPoint = "BASE"
	m.AddNode(base, "mast", mgl64.Translate3D(0, 0, 1), nil).InsertionPoint = "TOP"
	if err := models.Write(filepath.Join(dir, "arm.glb"), m); err != nil {
		t.Fatal(err)
	}
	s := scene.New(scene.Options{})
	for _, xml := range []string{
		`<part file="arm.glb" name="ARM"/>`,
		`<sensor type="camera" name="CAM" insert_at="ARM/TOP" pose_offset="3e38 0 0 0 0 0"/>`,
	} {
		if err := exec(t, s, dir, xml); err != nil {
			t.Fatal(err)
		}
	}
	err := exec(t, s, dir, `<element type="translation" name="PUSH" insert_at="ARM/BASE" offset="2e38"/>`)
	want := `req:1: element "PUSH": attribute "offset": the composed world transform of separator "CAM" is out of range`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error\n  %v\nwant prefix\n  %s", err, want)
	}
	assertPose(t, s, "CAM", scene.Pose{X: 3e38, Z: 1})
	assertInRange(t, s)
	// In range it moves the camera: the insertion was undone cleanly.
	if err := exec(t, s, dir, `<element type="translation" name="PUSH" insert_at="ARM/BASE" offset="2"/>`); err != nil {
		t.Fatal(err)
	}
	assertPose(t, s, "CAM", scene.Pose{X: 3e38, Z: 1})
	if err := s.Set("PUSH", "offset", -3e38); err != nil {
		t.Fatal(err)
	}
	assertPose(t, s, "CAM", scene.Pose{X: 0, Z: 1})
}

// Commands embedded in a model are checked like the model's own nodes:
// the error names the part's file and then the embedded command and its
// attribute, or the model node.
func TestOutOfRangeFromModels(t *testing.T) {
	dir := t.TempDir()
	m := models.NewModel("far")
	n := m.AddNode(nil, "base", mgl64.Ident4(), models.Box("base", 1, 1, 1, [4]float32{1, 1, 1, 1}))
	n.InsertionPoint = "MOUNT"
	m.Commands = []models.Command{{XML: `<element type="pose" name="FAR" insert_at="MOUNT" z="1e39"/>`, Source: "far.glb: extras"}}
	if err := models.Write(filepath.Join(dir, "far.glb"), m); err != nil {
		t.Fatal(err)
	}
	// A model whose own node is placed out of range (a 1e20 offset under
	// a 1e20 one).
	m2 := models.NewModel("nodes")
	outer := m2.AddNode(nil, "outer", mgl64.Translate3D(0, 0, 3e38), nil)
	m2.AddNode(outer, "inner", mgl64.Translate3D(0, 0, 3e38), models.Box("b", 1, 1, 1, [4]float32{1, 1, 1, 1}))
	if err := models.Write(filepath.Join(dir, "nodes.glb"), m2); err != nil {
		t.Fatal(err)
	}
	s := scene.New(scene.Options{})
	err := exec(t, s, dir, `<part file="far.glb" name="A"/>`)
	if err == nil || !strings.HasPrefix(err.Error(), `req:1: part "A": attribute "file": embedded command 1: `) ||
		!strings.Contains(err.Error(), `far.glb: scene 0 extras.simvis.commands[0]:1: element "FAR": attribute "z": the composed world transform of transform "A/FAR" is out of range`) {
		t.Errorf("embedded: %v", err)
	}
	err = exec(t, s, dir, `<part file="nodes.glb" name="B"/>`)
	if err == nil || !strings.HasPrefix(err.Error(), `req:1: part "B": attribute "file": the composed world transform of model node "inner" of "B" is out of range`) {
		t.Errorf("model node: %v", err)
	}
	if len(s.Parts()) != 0 || len(s.Elements()) != 0 || len(s.Root().Children()) != 1 {
		t.Errorf("refused parts left traces")
	}
}

// Values set at run time that would put a world transform out of range are
// rejected like other bad values: reported, and put back in the table.
func TestOutOfRangeValuesRejected(t *testing.T) {
	s, dir := robotScene(t, "3e38 0 0 0 0 0")
	for _, xml := range []string{
		`<element type="pose" name="R_POSE" insert_at="ROBOT"/>`,
		`<sensor type="camera" name="CAM" insert_at="ROBOT" pose_offset="1 0 0 0 0 0"/>`,
	} {
		if err := exec(t, s, dir, xml); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range []float64{3e38, 1.7e308, -1.7e308} {
		if err := s.Set("R_POSE", "x", x); err != nil {
			t.Fatal(err)
		}
		if err := s.Set("R_POSE", "y", 2); err != nil {
			t.Fatal(err)
		}
		err := s.Update()
		var rej *scene.RejectedError
		if !errors.As(err, &rej) || rej.Element != "R_POSE" || rej.Values != 2 ||
			!strings.HasPrefix(rej.Error(), `element "R_POSE": parameter x = `) ||
			!strings.Contains(rej.Error(), `: the composed world transform of transform "R_POSE" would be out of range `+rangeNote) {
			t.Fatalf("x = %g: Update = %v", x, err)
		}
		if v, _ := s.Value("R_POSE", "x"); v != 0 {
			t.Errorf("rejected x stayed in the table: %g", v)
		}
		if v, _ := s.Value("R_POSE", "y"); v != 0 {
			t.Errorf("y of the rejected run stayed in the table: %g", v)
		}
		assertPose(t, s, "CAM", scene.Pose{X: 3e38 + 1})
		assertInRange(t, s)
	}
	// Values in range still apply, and a host counting rejections gets them
	// through OnRejected.
	if err := s.Set("R_POSE", "y", 5); err != nil {
		t.Fatal(err)
	}
	assertPose(t, s, "CAM", scene.Pose{X: 3e38 + 1, Y: 5})
}

func TestOutOfRangeValuesCounted(t *testing.T) {
	dir := t.TempDir()
	writeBoxModel(t, dir, "box.glb", 0.5)
	var rejected []*scene.RejectedError
	s := scene.New(scene.Options{OnRejected: func(e *scene.RejectedError) { rejected = append(rejected, e) }})
	for _, xml := range []string{
		`<part file="box.glb" name="ROBOT"/>`,
		`<element type="scale" name="GROW" insert_at="ROBOT"/>`,
		`<element type="pose" name="FAR" insert_at="ROBOT" x="1e30"/>`,
		`<sensor type="camera" name="CAM" insert_at="ROBOT"/>`,
	} {
		if err := exec(t, s, dir, xml); err != nil {
			t.Fatal(err)
		}
	}
	// A scale of 1e10 carries FAR's 1e30 to 1e40; it is rejected, counted
	// and reset, and Update goes on with the other elements.
	s.Values()[0] = 1e10
	s.Values()[3+1] = 7 // FAR.y, changed in the same cycle
	if err := s.Update(); err != nil {
		t.Fatalf("with OnRejected, Update = %v", err)
	}
	if len(rejected) != 1 || rejected[0].Element != "GROW" ||
		!strings.HasPrefix(rejected[0].Error(), `element "GROW": parameter sx = 1e+10: the composed world transform of transform "FAR" would be out of range`) {
		t.Fatalf("rejected %v", rejected)
	}
	if s.Values()[0] != 1 {
		t.Errorf("sx not reset: %g", s.Values()[0])
	}
	assertPose(t, s, "CAM", scene.Pose{X: 1e30, Y: 7})
	assertInRange(t, s)
}

// Transform reports a relative transform out of range (a frame scaled
// nearly to nothing) instead of returning a wrong one, and handles scales
// mgl64's inverse would give up on.
func TestTransformRelativeToScaledFrames(t *testing.T) {
	s, dir := robotScene(t, "1 0 0 0 0 0")
	if err := exec(t, s, dir, `<element type="scale" name="SHRINK" insert_at="ROBOT" sx="1e-4" sy="1e-4" sz="1e-4"/>`); err != nil {
		t.Fatal(err)
	}
	m, err := s.Transform(scene.RootName, "ROBOT")
	if err != nil {
		t.Fatal(err)
	}
	// ROOT is 1 m behind ROBOT, which is scaled by 1e-4: -1e4 in ROBOT's units.
	if p := m.Col(3); math.Abs(p[0]+1e4) > 1e-6 || math.Abs(m.At(0, 0)-1e4) > 1e-6 {
		t.Errorf("ROOT in ROBOT = %v", m)
	}
	if err := s.Set("SHRINK", "sx", 1e-39); err != nil {
		t.Fatal(err)
	}
	_, err = s.Transform(scene.RootName, "ROBOT")
	if err == nil || err.Error() != `the transform of "ROOT" relative to "ROBOT" is out of range (is "ROBOT" scaled nearly to zero?)` {
		t.Errorf("Transform = %v", err)
	}
}

// sloppy breaks Element's contract: it moves its transform to x before it
// fails (on fail != 0), as a third-party element might.
type sloppy struct{ t *scene.Node }

func (s *sloppy) Params() []scene.Param {
	return []scene.Param{{Name: "x"}, {Name: "fail"}}
}

func (s *sloppy) Apply(v []float64) error {
	s.t.SetLocal(mgl64.Translate3D(v[0], 0, 0))
	if v[1] != 0 {
		return errors.New("refused after moving")
	}
	return nil
}

func init() {
	scene.RegisterElement("test-sloppy", func(ctx *scene.Context) (scene.Element, error) {
		return &sloppy{t: ctx.InsertTransform(mgl64.Ident4())}, nil
	})
}

// An element whose failing Apply moved a node anyway is put back with its
// last accepted values, and the world transforms below are recomputed: a
// later change below, composed with a stale world, could pass a check the
// real one fails.
func TestFailedApplyKeepsWorldsCurrent(t *testing.T) {
	dir := t.TempDir()
	s := scene.New(scene.Options{})
	for _, xml := range []string{
		`<element type="test-sloppy" name="S"/>`,
		`<element type="pose" name="P"/>`,
		`<sensor type="camera" name="CAM"/>`,
	} {
		if err := exec(t, s, dir, xml); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Set("S", "x", 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(); err != nil {
		t.Fatal(err)
	}
	s.Values()[0], s.Values()[1] = 3e38, 1
	if err := s.Update(); err == nil || !strings.Contains(err.Error(), "refused after moving") {
		t.Fatalf("sloppy Update = %v", err)
	}
	if v, _ := s.Value("S", "x"); v != 2 {
		t.Errorf("S x = %g after the refusal, want 2", v)
	}
	assertPose(t, s, "CAM", scene.Pose{X: 2})
	if err := s.Set("P", "x", 3e38); err != nil {
		t.Fatal(err)
	}
	assertPose(t, s, "CAM", scene.Pose{X: 3e38 + 2})
	assertInRange(t, s)
}
