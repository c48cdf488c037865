package ros2_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/internal/testkit"
	_ "github.com/simvis/simvis/models/urdf"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors/ros2"
)

// tinyURDF is a three-link robot: a revolute joint, a prismatic one that
// mimics it and a fixed tool frame.
const tinyURDF = `<robot name="tiny">
  <link name="base_link"><visual><geometry><box size="0.1 0.1 0.1"/></geometry></visual></link>
  <link name="arm"/><link name="tip"/><link name="tool0"/>
  <joint name="j1" type="revolute"><parent link="base_link"/><child link="arm"/>
    <origin xyz="0 0 0.2" rpy="0.1 0 0.3"/><axis xyz="0 0 1"/><limit lower="-3" upper="3"/></joint>
  <joint name="j2" type="prismatic"><parent link="arm"/><child link="tip"/>
    <origin xyz="0.3 0 0"/><axis xyz="1 0 0"/><limit lower="-1" upper="1"/><mimic joint="j1" multiplier="0.5" offset="0.1"/></joint>
  <joint name="tool_joint" type="fixed"><parent link="tip"/><child link="tool0"/><origin xyz="0 0 0.05" rpy="0 1.5707963 0"/></joint>
</robot>
`

func robotScene(t *testing.T, body string) *scene.Scene {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tiny.urdf"), []byte(tinyURDF), 0o644); err != nil {
		t.Fatal(err)
	}
	testkit.WriteBox(t, dir, "box.glb", 0.1, 0.1, 0.1, [4]float32{1, 1, 1, 1})
	return testkit.LoadXML(t, dir, "<scene>\n"+body+"\n</scene>")
}

// edges returns the tf tree's edges by child id, and each child's world
// transform composed from the tree.
func edges(t *testing.T, s *scene.Scene) (map[string]ros2.Edge, map[string]mgl64.Mat4) {
	t.Helper()
	list, err := ros2.SceneTree(s)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]ros2.Edge{}
	for _, e := range list {
		by[e.Child] = e
	}
	world := map[string]mgl64.Mat4{"world": mgl64.Ident4()}
	var resolve func(id string, depth int) mgl64.Mat4
	resolve = func(id string, depth int) mgl64.Mat4 {
		if m, ok := world[id]; ok {
			return m
		}
		e, ok := by[id]
		if !ok || depth > 64 {
			t.Fatalf("frame %s does not reach the world", id)
		}
		m := resolve(e.Parent, depth+1).Mul4(e.Matrix)
		world[id] = m
		return m
	}
	for id := range by {
		resolve(id, 0)
	}
	return by, world
}

// One robot: its links are on tf by their URDF names, each below its
// parent link, the root link below the part; fixed joints static, moving
// ones moving; the tree composes to the scene's world transforms; its
// joints, the mimic one following its leader, on /joint_states.
func TestRobotLinksAndJointStates(t *testing.T) {
	s := robotScene(t, `<part file="box.glb" name="BASE"/>
<part file="tiny.urdf" name="R" insert_at="BASE" pose_offset="1 2 0 0 0 30"/>
<sensor type="laser" name="SCAN" insert_at="R/tool0" pose_offset="0 0 0.1 0 0 0"/>`)
	q := 0.7
	if err := s.Set("R/j1", "position", q); err != nil {
		t.Fatal(err)
	}
	by, world := edges(t, s)
	for child, want := range map[string]struct {
		parent string
		moving bool
	}{"R": {"BASE", false}, "base_link": {"R", false}, "arm": {"base_link", true}, "tip": {"arm", true},
		"tool0": {"tip", false}, "SCAN": {"tool0", false}} {
		e, ok := by[child]
		if !ok || e.Parent != want.parent || e.Moving != want.moving {
			t.Errorf("%s: %+v, want parent %s moving %v", child, e, want.parent, want.moving)
		}
	}
	for _, link := range []string{"base_link", "arm", "tip", "tool0"} {
		want, err := s.Transform("R/"+link, scene.WorldFrame)
		if err != nil {
			t.Fatal(err)
		}
		if by[link].Frame != "R/"+link || !world[link].ApproxEqualThreshold(want, 1e-12) {
			t.Errorf("%s (frame %s): composed %v, the scene's %v", link, by[link].Frame, world[link], want)
		}
	}
	ids := ros2.FrameIDs(s)
	if ids["R/tool0"] != "tool0" || ids["R"] != "R" || ids["SCAN"] != "SCAN" {
		t.Errorf("FrameIDs: %v", ids)
	}
	js := ros2.JointStates(s, ros2.Time{Sec: 2})
	want := []ros2.TopicJointState{{Topic: "/joint_states", Msg: ros2.JointState{Header: ros2.Header{Stamp: ros2.Time{Sec: 2}},
		Name: []string{"j1", "j2"}, Position: []float64{q, 0.5*q + 0.1}, Velocity: []float64{}, Effort: []float64{}}}}
	if !reflect.DeepEqual(js, want) {
		t.Fatalf("JointStates: %+v, want %+v", js, want)
	}
	// Decoded by an independent reader from the schema.
	dec := decodeInNode(t, []ros2.Message{{Topic: js[0].Topic, Type: ros2.TypeJointState, Data: js[0].Msg.Marshal()}})
	var got struct {
		Header struct {
			FrameID string `json:"frame_id"`
		}
		Name     []string
		Position []float64
		Velocity []float64
		Effort   []float64
	}
	if err := json.Unmarshal(dec[0].Msg, &got); err != nil || dec[0].Trailing || dec[0].Consumed != dec[0].Size {
		t.Fatalf("node: %s %v %+v", dec[0].Msg, err, dec[0])
	}
	if !reflect.DeepEqual(got.Name, want[0].Msg.Name) || !reflect.DeepEqual(got.Position, want[0].Msg.Position) ||
		len(got.Velocity) != 0 || len(got.Effort) != 0 || got.Header.FrameID != "" {
		t.Errorf("node decoded %s", dec[0].Msg)
	}
}

// Names stay unique: a second robot whose links are named like the
// first's, and a robot with a link named like another frame, keep the
// prefix of their parts (R/LINK, frame_prefix) and publish their joints on
// R/joint_states; the robot added first keeps the plain names.
func TestRobotNamesStayUnique(t *testing.T) {
	s := robotScene(t, `<part file="box.glb" name="BASE"/>
<part file="tiny.urdf" name="A" insert_at="BASE"/>
<part file="tiny.urdf" name="B" insert_at="A/tool0" pose_offset="0 0 0.1 0 0 0"/>`)
	by, world := edges(t, s)
	if by["base_link"].Parent != "A" || by["B"].Parent != "tool0" || by["B/base_link"].Parent != "B" ||
		by["B/arm"].Parent != "B/base_link" || by["B/tool0"].Parent != "B/tip" {
		t.Errorf("two robots: %v", by)
	}
	want, _ := s.Transform("B/tool0", scene.WorldFrame)
	if !world["B/tool0"].ApproxEqualThreshold(want, 1e-12) {
		t.Errorf("B/tool0: composed %v, the scene's %v", world["B/tool0"], want)
	}
	js := ros2.JointStates(s, ros2.Time{})
	if len(js) != 2 || js[0].Topic != "/joint_states" || js[1].Topic != "/B/joint_states" ||
		!reflect.DeepEqual(js[1].Msg.Name, []string{"j1", "j2"}) {
		t.Errorf("two robots' joint states: %+v", js)
	}

	// A frame named like a link: the robot takes its part's prefix.
	s = robotScene(t, `<part file="box.glb" name="tip"/>
<part file="tiny.urdf" name="R" insert_at="tip"/>`)
	by, _ = edges(t, s)
	if by["R/base_link"].Parent != "R" || by["R"].Parent != "tip" || by["tip"].Parent != "ROOT" {
		t.Errorf("link named like a part: %v", by)
	}
	if js := ros2.JointStates(s, ros2.Time{}); len(js) != 1 || js[0].Topic != "/R/joint_states" {
		t.Errorf("joint states: %+v", js)
	}
}

// A scene without robots has no joint states and its frames' ids are
// FrameID's.
func TestNoRobotNoJointStates(t *testing.T) {
	s := testScene(t)
	if js := ros2.JointStates(s, ros2.Time{}); js != nil {
		t.Errorf("joint states of a scene without joints: %+v", js)
	}
	for name, id := range ros2.FrameIDs(s) {
		if id != ros2.FrameID(name) {
			t.Errorf("%s: id %s", name, id)
		}
	}
}

func TestJointStateRoundTrip(t *testing.T) {
	m := ros2.JointState{Header: ros2.Header{Stamp: ros2.Time{Sec: 1, Nanosec: 5}}, Name: []string{"a", "elbow"},
		Position: []float64{1.5, -0.25}, Velocity: []float64{}, Effort: []float64{}}
	data := m.Marshal()
	got, err := ros2.DecodeJointState(data)
	if err != nil || !reflect.DeepEqual(*got, m) || !bytes.Equal(got.Marshal(), data) {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	for n := 0; n < len(data); n++ {
		if _, err := ros2.DecodeJointState(data[:n]); err == nil {
			t.Errorf("%d of %d bytes decoded", n, len(data))
		}
	}
	schema, err := ros2.Schema(ros2.TypeJointState)
	if err != nil || !strings.HasPrefix(string(schema), "std_msgs/Header header\nstring[] name\nfloat64[] position\n") ||
		!strings.Contains(string(schema), "MSG: builtin_interfaces/Time\n") {
		t.Errorf("schema %s %v", schema, err)
	}
}
