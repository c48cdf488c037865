package cli

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/coder/websocket"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/sensors/ros2"
)

// robotDescriptions decodes, with the independent checker, the
// std_msgs/msg/String messages of a recording by topic.
func robotDescriptions(t *testing.T, file string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, m := range checkInNode(t, file).Messages {
		if m.Schema != ros2.TypeString {
			continue
		}
		var s struct{ Data *string }
		if err := json.Unmarshal(m.Msg, &s); err != nil || s.Data == nil {
			t.Fatalf("%s: %s does not decode as a String (%v)", m.Topic, m.Msg, err)
		}
		out[m.Topic] = append(out[m.Topic], *s.Data)
	}
	return out
}

// A recording of scenes/arm carries the URDF on /robot_description, once,
// byte for byte as scenes/arm/urdf/arm.urdf, offered transient local (the
// latched topic RViz's RobotModel and Foxglove's URDF panel read); the
// bag checker accepts it.
func TestRecordRobotDescription(t *testing.T) {
	scenePath := filepath.Join(testkit.RepoRoot(), "scenes", "arm", "scene.xml")
	urdf, err := os.ReadFile(filepath.Join(testkit.RepoRoot(), "scenes", "arm", "urdf", "arm.urdf"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "arm.mcap")
	if code, _, errOut := simvis(t, "capture", scenePath, "--frames", "3", "--mcap", file); code != 0 {
		t.Fatalf("capture: %s", errOut)
	}
	bag := wantBag(t, file)
	tp, ok := bag.Topics["/robot_description"]
	if !ok || tp.Type != ros2.TypeString || tp.Count != 1 || tp.Durability != "transient_local" {
		t.Errorf("/robot_description: %+v (present %v), want one %s, transient_local", tp, ok, ros2.TypeString)
	}
	got := robotDescriptions(t, file)
	if d := got["/robot_description"]; len(d) != 1 || d[0] != string(urdf) {
		t.Errorf("/robot_description: %d messages, the first of %d bytes; want arm.urdf's %d bytes", len(d), len(firstOr(d)), len(urdf))
	}
	if len(got) != 1 {
		t.Errorf("String topics %v, want /robot_description only", keys(got))
	}
}

// A second arm's link names are taken by the first: its links keep the
// prefix ARM2/ and its description goes on /ARM2/robot_description, as its
// joint states on /ARM2/joint_states. A scene without URDF parts records no
// description.
func TestRecordRobotDescriptionPrefixedAndNone(t *testing.T) {
	// A copy of scenes/arm (its URDF, meshes and package.xml): a recording
	// holds the files of its scene's folder.
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(testkit.RepoRoot(), "scenes", "arm"))); err != nil {
		t.Fatal(err)
	}
	urdf, err := os.ReadFile(filepath.Join(dir, "urdf", "arm.urdf"))
	if err != nil {
		t.Fatal(err)
	}
	sceneFile := filepath.Join(dir, "two.xml")
	if err := os.WriteFile(sceneFile, []byte(`<scene><part file="urdf/arm.urdf" name="ARM"/>`+
		`<part file="urdf/arm.urdf" name="ARM2" pose_offset="2 0 0 0 0 0"/>`+
		`<sensor type="camera" name="CAM" pose_offset="-2.5 -2 1.8 0 25 40" width="64" height="48" fov="60"/></scene>`), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "two.mcap")
	if code, _, errOut := simvis(t, "capture", sceneFile, "--frames", "2", "--mcap", file); code != 0 {
		t.Fatalf("capture: %s", errOut)
	}
	bag := wantBag(t, file)
	for _, topic := range []string{"/robot_description", "/ARM2/robot_description"} {
		if tp := bag.Topics[topic]; tp.Type != ros2.TypeString || tp.Count != 1 || tp.Durability != "transient_local" {
			t.Errorf("%s: %+v", topic, tp)
		}
	}
	if _, ok := bag.Topics["/ARM2/joint_states"]; !ok {
		t.Errorf("no /ARM2/joint_states: the second arm is not the prefixed robot")
	}
	got := robotDescriptions(t, file)
	for topic, d := range got {
		if len(d) != 1 || d[0] != string(urdf) {
			t.Errorf("%s: %d messages, not arm.urdf", topic, len(d))
		}
	}

	none := filepath.Join(dir, "none.mcap")
	scenePath := filepath.Join(testkit.RepoRoot(), "scenes", "quickstart", "scene.xml")
	if code, _, errOut := simvis(t, "capture", scenePath, "--frames", "2", "--mcap", none); code != 0 {
		t.Fatalf("capture: %s", errOut)
	}
	for topic, tp := range wantBag(t, none).Topics {
		if tp.Type == ros2.TypeString || filepath.Base(topic) == "robot_description" {
			t.Errorf("%s: %s in a scene without URDF parts", topic, tp.Type)
		}
	}
}

func firstOr(d []string) string {
	if len(d) == 0 {
		return ""
	}
	return d[0]
}

func keys(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Foxglove clients get /robot_description (cdr, std_msgs/msg/String) with
// the URDF's text: published once, when the robot appears, and kept by the
// server for a client that subscribes after that, as a latched topic.
func TestFoxgloveRobotDescription(t *testing.T) {
	urdf, err := os.ReadFile(filepath.Join(testkit.RepoRoot(), "scenes", "arm", "urdf", "arm.urdf"))
	if err != nil {
		t.Fatal(err)
	}
	conn, ctx, stop := serveArmToFoxglove(t, "foxrd")
	for {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("reading: %v\n%s", err, stop())
		}
		if typ == websocket.MessageBinary {
			if len(data) < 13 || data[0] != 1 || binary.LittleEndian.Uint32(data[1:]) != 9 {
				continue
			}
			m, err := ros2.DecodeString(data[13:])
			if err != nil {
				t.Fatal(err)
			}
			if m.Data != string(urdf) {
				t.Fatalf("/robot_description: %d bytes, not arm.urdf's %d", len(m.Data), len(urdf))
			}
			return
		}
		var m struct {
			Op       string
			Channels []struct {
				ID                                                  uint32
				Topic, Encoding, SchemaName, SchemaEncoding, Schema string
			}
		}
		json.Unmarshal(data, &m)
		for _, ch := range m.Channels {
			if m.Op != "advertise" || ch.Topic != "/robot_description" {
				continue
			}
			if ch.Encoding != "cdr" || ch.SchemaName != ros2.TypeString || ch.SchemaEncoding != "ros2msg" || ch.Schema != "string data\n" {
				t.Errorf("/robot_description advertised as %+v", ch)
			}
			data, _ := json.Marshal(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 9, "channelId": ch.ID}}})
			if err := conn.Write(ctx, websocket.MessageText, data); err != nil {
				t.Fatal(err)
			}
		}
	}
}
