package cli

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/live"
	"github.com/simvis/simvis/sensors/ros2"
)

// armJoints are scenes/arm's movable joints as the URDF names them, in
// the order of their elements (the mimic finger_right_joint included).
var armJoints = []string{"wheel_fl_joint", "wheel_fr_joint", "wheel_rl_joint", "wheel_rr_joint", "shoulder_pan",
	"shoulder_lift", "elbow", "wrist", "finger_left_joint", "finger_right_joint"}

// The arm's links on the tf tree under their link names, each below its
// parent link (the URDF tree), the root link below the part.
var armLinks = map[string]struct {
	parent string
	static bool
}{
	"base_link": {"ARM", true}, "wheel_fl": {"base_link", false}, "shoulder_link": {"base_link", false},
	"upper_arm_link": {"shoulder_link", false}, "forearm_link": {"upper_arm_link", false},
	"hand_link": {"forearm_link", false}, "finger_left": {"hand_link", false}, "finger_right": {"hand_link", false},
	"tool_link": {"hand_link", true}, "mast_link": {"base_link", true}, "lidar_link": {"mast_link", true},
	"LIDAR": {"lidar_link", true}, "HAND_CAM": {"hand_link", true},
}

// scenes/arm captured with two joints swept (one a mimic leader) into a
// recording the independent ROS 2 bag checker accepts: /joint_states
// decodes (@foxglove/rosmsg2-serialization) with the URDF's joint names
// and the swept positions at every frame; the links are on /tf_static and
// /tf under their link names with their parent links; and the recorded
// tree, composed from the root, puts every link where `simvis frames`
// does at that frame's values (1e-9).
func TestRecordJointStatesAndLinkFrames(t *testing.T) {
	scenePath := filepath.Join(testkit.RepoRoot(), "scenes", "arm", "scene.xml")
	file := filepath.Join(t.TempDir(), "arm.mcap")
	const frames = 4
	sweeps := []live.Sweep{{Element: "ARM/shoulder_lift", Param: "position", From: -0.3, To: 0.9},
		{Element: "ARM/finger_left_joint", Param: "position", From: 0, To: 0.03}}
	code, _, errOut := simvis(t, "capture", scenePath, "--frames", strconv.Itoa(frames), "--mcap", file,
		"--sweep", "ARM/shoulder_lift.position=-0.3:0.9", "--sweep", "ARM/finger_left_joint.position=0:0.03")
	if code != 0 {
		t.Fatalf("capture: %s", errOut)
	}
	bag := wantBag(t, file)
	if tp := bag.Topics["/joint_states"]; tp.Type != ros2.TypeJointState || tp.Count != frames || tp.Durability != "volatile" {
		t.Errorf("/joint_states: %+v, want %s, %d messages", tp, ros2.TypeJointState, frames)
	}

	edges := tfEdges(t, scenePath)
	for child, want := range armLinks {
		e, ok := edges[child]
		if !ok || e.TF.Parent != want.parent || e.TF.Static != want.static {
			t.Errorf("frames --tf: %s: %+v, want parent %s static %v", child, e.TF, want.parent, want.static)
		}
	}

	c := checkInNode(t, file)
	type tfEntry = struct {
		Header struct {
			FrameID string `json:"frame_id"`
		} `json:"header"`
		Child     string `json:"child_frame_id"`
		Transform struct {
			Translation struct{ X, Y, Z float64 }
			Rotation    struct{ X, Y, Z, W float64 }
		} `json:"transform"`
	}
	var tree []tfEntry // the latest value of each edge
	at := map[string]int{}
	put := func(msg json.RawMessage, static bool) {
		var m struct{ Transforms []tfEntry }
		if err := json.Unmarshal(msg, &m); err != nil {
			t.Fatal(err)
		}
		for _, tr := range m.Transforms {
			if e, ok := edges[tr.Child]; !ok || e.TF.Static != static || e.TF.Parent != tr.Header.FrameID {
				t.Errorf("static %v: %s -> %s, frames --tf says %+v", static, tr.Header.FrameID, tr.Child, e.TF)
			}
			if i, ok := at[tr.Child]; ok {
				tree[i] = tr
			} else {
				at[tr.Child] = len(tree)
				tree = append(tree, tr)
			}
		}
	}
	frame := 0
	for _, m := range c.Messages {
		switch m.Topic {
		case "/tf_static":
			put(m.Msg, true)
		case "/tf":
			put(m.Msg, false)
		case "/joint_states":
			var js struct {
				Header struct {
					FrameID string `json:"frame_id"`
				} `json:"header"`
				Name                       []string
				Position, Velocity, Effort []float64
			}
			if err := json.Unmarshal(m.Msg, &js); err != nil {
				t.Fatal(err)
			}
			if m.Schema != ros2.TypeJointState || !reflect.DeepEqual(js.Name, armJoints) || len(js.Position) != len(armJoints) ||
				len(js.Velocity) != 0 || len(js.Effort) != 0 {
				t.Fatalf("frame %d: /joint_states %s (%s)", frame, m.Msg, m.Schema)
			}
			lift, finger := sweeps[0].At(frame, frames), sweeps[1].At(frame, frames)
			want := map[string]float64{"shoulder_lift": lift, "finger_left_joint": finger, "finger_right_joint": finger}
			for i, name := range js.Name {
				if js.Position[i] != want[name] {
					t.Errorf("frame %d: %s at %v, want %v", frame, name, js.Position[i], want[name])
				}
			}
			// The tree recorded up to this frame (the cycle's /tf comes
			// before its joint states) against simvis frames.
			world := composeTFMsgs(t, tree)
			code, out, errOut := simvis(t, "frames", "--json", scenePath,
				"--set", "ARM/shoulder_lift.position="+strconv.FormatFloat(lift, 'g', -1, 64),
				"--set", "ARM/finger_left_joint.position="+strconv.FormatFloat(finger, 'g', -1, 64))
			if code != 0 {
				t.Fatal(errOut)
			}
			var fps []framePose
			if err := json.Unmarshal([]byte(out), &fps); err != nil {
				t.Fatal(err)
			}
			byFrame := map[string]framePose{}
			for _, fp := range fps {
				byFrame[fp.Frame] = fp
			}
			for child := range armLinks {
				fp, ok := byFrame[edges[child].Frame]
				got, ok2 := world[child]
				if !ok || !ok2 {
					t.Fatalf("frame %d: %s: no simvis frame %q (%v) or no recorded pose (%v)", frame, child, edges[child].Frame, ok, ok2)
				}
				var want mgl64.Mat4
				for r := 0; r < 4; r++ {
					for k := 0; k < 4; k++ {
						want.Set(r, k, fp.Matrix[r][k])
					}
				}
				if !got.ApproxEqualThreshold(want, 1e-9) {
					t.Errorf("frame %d: %s: the recorded tree gives\n%v\nsimvis frames\n%v", frame, child, got, want)
				}
			}
			frame++
		}
	}
	if frame != frames {
		t.Errorf("%d /joint_states messages, want %d", frame, frames)
	}
}

// serveArmToFoxglove serves scenes/arm's robot alone (region name
// NAME-PID) with a Foxglove server and connects to it as a driver: the
// connection, a context bounding the test, and the host's stop.
func serveArmToFoxglove(t *testing.T, name string) (*websocket.Conn, context.Context, func() string) {
	t.Helper()
	urdf := filepath.Join(testkit.RepoRoot(), "scenes", "arm", "urdf", "arm.urdf")
	sceneFile := filepath.Join(t.TempDir(), "scene.xml")
	if err := os.WriteFile(sceneFile, []byte(`<scene><part file="`+urdf+`" name="ARM"/></scene>`), 0o644); err != nil {
		t.Fatal(err)
	}
	stop := startServe(t, sceneFile, "--shm", fmt.Sprintf("%s-%d", name, os.Getpid()), "--no-nats",
		"--foxglove", "127.0.0.1:0", "--foxglove-token", "drive-secret")
	t.Cleanup(func() { stop() })
	url := wsURL.FindString(firstLine)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	conn, _, err := websocket.Dial(ctx, url+"/?token=drive-secret", &websocket.DialOptions{Subprotocols: []string{"foxglove.websocket.v1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.CloseNow() })
	conn.SetReadLimit(64 << 20)
	return conn, ctx, stop
}

// Foxglove clients get /joint_states (cdr, sensor_msgs/msg/JointState)
// every cycle: a driver moves the elbow through setParameters and the
// joint states carry the new position under the URDF's name.
func TestFoxgloveJointStates(t *testing.T) {
	conn, ctx, stop := serveArmToFoxglove(t, "foxjs")
	send := func(v any) {
		data, _ := json.Marshal(v)
		if err := conn.Write(ctx, websocket.MessageText, data); err != nil {
			t.Fatal(err)
		}
	}
	const elbow = 1.2
	// As a client does, the driver sets the elbow once the server lists
	// it: the first joint states may come before the server has read the
	// scene's parameters (then a set would be refused as unknown).
	subscribed, asked, set := false, false, false
	var statuses []string // the server's word, for a failure
	for {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("reading: %v (subscribed %v, set %v; status messages %q)\n%s", err, subscribed, set, statuses, stop())
		}
		if typ == websocket.MessageBinary {
			if data[0] != 1 || binary.LittleEndian.Uint32(data[1:]) != 7 {
				continue
			}
			js, err := ros2.DecodeJointState(data[13:])
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(js.Name, armJoints) {
				t.Fatalf("/joint_states names %v", js.Name)
			}
			if !set && !asked {
				asked = true
				send(map[string]any{"op": "getParameters", "id": "g", "parameterNames": []string{"ARM/elbow.position"}})
			} else if set && js.Position[6] == elbow {
				return
			}
			continue
		}
		var m struct {
			Op       string
			ID       string
			Message  string
			Channels []struct {
				ID                                                  uint32
				Topic, Encoding, SchemaName, SchemaEncoding, Schema string
			}
			Parameters []struct{ Name string }
		}
		json.Unmarshal(data, &m)
		switch {
		case m.Op == "status":
			statuses = append(statuses, m.Message)
		case m.Op == "parameterValues" && m.ID == "g":
			asked = false // not listed yet: asked again after the next joint states
			for _, prm := range m.Parameters {
				if prm.Name == "ARM/elbow.position" && !set {
					set, asked = true, true
					send(map[string]any{"op": "setParameters", "id": "e", "parameters": []any{map[string]any{"name": "ARM/elbow.position", "value": elbow}}})
				}
			}
		}
		for _, ch := range m.Channels {
			if m.Op != "advertise" || ch.Topic != "/joint_states" {
				continue
			}
			if ch.Encoding != "cdr" || ch.SchemaName != ros2.TypeJointState || ch.SchemaEncoding != "ros2msg" ||
				!strings.HasPrefix(ch.Schema, "std_msgs/Header header\nstring[] name\nfloat64[] position\n") {
				t.Errorf("/joint_states advertised as %+v", ch)
			}
			subscribed = true
			send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 7, "channelId": ch.ID}}})
		}
	}
}
