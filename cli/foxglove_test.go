package cli

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/foxglove/mcap/go/mcap"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/ipc/foxglove"
	"github.com/simvis/simvis/record"
)

// foxgloveScene writes a scene with the quickstart's world and robot, the
// robot placed by R_POSE, a laser scanner on it and a label overlay.
func foxgloveScene(t *testing.T) string {
	t.Helper()
	return foxgloveSceneIn(t, t.TempDir(), ` rate="10"`)
}

// foxgloveSceneIn writes that scene into dir, the laser's rate attribute
// as given.
func foxgloveSceneIn(t testing.TB, dir, rate string) string {
	t.Helper()
	for _, f := range []string{"world.gltf", "robot.gltf"} {
		data, err := os.ReadFile(filepath.Join(testkit.RepoRoot(), "scenes", "quickstart", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sceneFile := filepath.Join(dir, "scene.xml")
	if err := os.WriteFile(sceneFile, []byte(`<scene>
  <part file="world.gltf" name="WORLD" insert_at="ROOT"/>
  <part file="robot.gltf" name="ROBOT" insert_at="WORLD"/>
  <element type="pose" name="R_POSE" insert_at="ROBOT" x="-2" y="-1" yaw="20"/>
  <sensor type="laser" name="SCAN" insert_at="ROBOT" pose_offset="0.2 0 0.5 0 0 0"
          angle_min="-90" angle_max="90" resolution="1" range_min="0.05" range_max="30"`+rate+`/>
  <element type="label" name="HELLO" insert_at="WORLD" text="hello" x="0" y="0" z="2" sensed="false"/>
</scene>`), 0o644); err != nil {
		t.Fatal(err)
	}
	return sceneFile
}

var wsURL = regexp.MustCompile(`ws://127\.0\.0\.1:\d+`)

// Foxglove's own client (npm @foxglove/ws-protocol, in node) drives a
// host: it sees the channels and services, decodes a scan, /tf and the
// scene, moves the robot with setParameters and sees the next scan change,
// adds a part through the add-part service, and a viewer token's writes
// and calls are refused.
func TestFoxgloveClientDrivesHost(t *testing.T) {
	script := filepath.Join(testkit.RepoRoot(), "internal", "jstest", "foxglove_client.js")
	node := testkit.Node(t, script) // skips without node and the npm packages
	shm := fmt.Sprintf("fox-%d", os.Getpid())
	stop := startServe(t, foxgloveScene(t), "--shm", shm, "--no-nats", "--foxglove", "127.0.0.1:0",
		"--foxglove-token", "drive-secret", "--foxglove-viewer-token", "view-secret")
	url := wsURL.FindString(firstLine)
	if url == "" {
		t.Fatalf("no ws:// URL in the serving line %q", firstLine)
	}
	const newYaw = 110.0
	part := `<part file="robot.gltf" name="ADDED" insert_at="WORLD" pose_offset="1 1 0 0 0 0"/>`
	node.Args = append(node.Args, url, "drive-secret", "view-secret", "/SCAN/scan", fmt.Sprint(newYaw), part)
	node.Env = append(node.Env, "NODE_OPTIONS=--experimental-websocket")
	var stderr strings.Builder
	node.Stderr = &stderr
	raw, err := node.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s\nserve: %s", err, stderr.String(), stop())
	}
	var out struct {
		Capabilities, SupportedEncodings, Topics, Services []string
		Channels                                           map[string]struct{ Encoding, SchemaName, SchemaEncoding string }
		Scan                                               struct {
			FrameID  string  `json:"frame_id"`
			N        int     `json:"n"`
			AngleMin float64 `json:"angle_min"`
		}
		TF, TFStatic, TFAfter []struct {
			Parent, Child string
			T             struct {
				Translation struct{ X, Y, Z float64 }
				Rotation    struct{ X, Y, Z, W float64 }
			}
		}
		Scene []struct {
			ID          string `json:"id"`
			FrameID     string `json:"frame_id"`
			FrameLocked bool   `json:"frame_locked"`
			Models      []struct {
				MediaType  string `json:"media_type"`
				Magic      string
				Bytes      int
				GLTFErrors int
				Vertices   int // as the validator counts them
			}
		}
		Overlays []struct {
			ID      string
			FrameID string `json:"frame_id"`
			Texts   []string
		}
		SchemaErrors              []string
		YawBefore, YawAfterViewer float64
		SetReply, Update          []struct {
			Name  string
			Value float64
		}
		ViewerReply []struct {
			Name  string
			Value float64
		}
		ScanChanged bool
		AddPart     struct {
			Failure string
			Body    struct{ Seq int }
		}
		SceneAfterAdd                                   []string
		WrongKind, ViewerRole, ViewerStatus, ViewerCall string
		NoTokenOpened                                   bool

		SceneAfterSwitch struct {
			Entities  []string
			Deletions []struct {
				Type int
				ID   string
			}
		}
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	t.Logf("node saw: %s", raw)

	for _, c := range []string{"parameters", "parametersSubscribe", "services"} {
		if !slices.Contains(out.Capabilities, c) {
			t.Errorf("capabilities %v lack %s", out.Capabilities, c)
		}
	}
	for _, topic := range []string{"/SCAN/scan", "/tf", "/tf_static", "/simvis/scene", "/simvis/overlays", "/simvis/values"} {
		if !slices.Contains(out.Topics, topic) {
			t.Errorf("topics %v lack %s", out.Topics, topic)
		}
	}
	if ch := out.Channels["/SCAN/scan"]; ch.Encoding != "cdr" || ch.SchemaName != "sensor_msgs/msg/LaserScan" || ch.SchemaEncoding != "ros2msg" {
		t.Errorf("scan channel %+v", ch)
	}
	if ch := out.Channels["/simvis/scene"]; ch.Encoding != "json" || ch.SchemaName != "foxglove.SceneUpdate" || ch.SchemaEncoding != "jsonschema" {
		t.Errorf("scene channel %+v", ch)
	}
	if out.Scan.FrameID != "SCAN" || out.Scan.N != 181 || math.Abs(out.Scan.AngleMin+math.Pi/2) > 1e-6 {
		t.Errorf("scan: %+v, want frame SCAN, 181 beams from -pi/2", out.Scan)
	}
	yawOf := func(list []struct {
		Parent, Child string
		T             struct {
			Translation struct{ X, Y, Z float64 }
			Rotation    struct{ X, Y, Z, W float64 }
		}
	}) (float64, bool) {
		for _, tr := range list {
			// The robot hangs in WORLD's insertion point, which sits at
			// the origin (world -> ROOT -> WORLD, static, identity).
			if tr.Child == "ROBOT" && tr.Parent == "WORLD" {
				q := tr.T.Rotation
				return 2 * math.Atan2(q.Z, q.W) * 180 / math.Pi, math.Abs(tr.T.Translation.X+2) < 1e-9 && math.Abs(tr.T.Translation.Y+1) < 1e-9
			}
		}
		return math.NaN(), false
	}
	if yaw, at := yawOf(out.TF); math.Abs(yaw-20) > 1e-6 || !at {
		t.Errorf("/tf ROBOT in world: yaw %v (want 20), at (-2,-1): %v; %+v", yaw, at, out.TF)
	}
	if yaw, _ := yawOf(out.TFAfter); math.Abs(yaw-newYaw) > 1e-6 {
		t.Errorf("/tf after setParameters: yaw %v, want %v", yaw, newYaw)
	}
	if len(out.TFStatic) == 0 {
		t.Errorf("no static transforms")
	}
	if len(out.SchemaErrors) > 0 {
		t.Errorf("the scene message does not match @foxglove/schemas' SceneUpdate: %v", out.SchemaErrors)
	}
	if len(out.Overlays) != 1 || out.Overlays[0].ID != "overlay:HELLO" || out.Overlays[0].FrameID != "WORLD" ||
		!slices.Equal(out.Overlays[0].Texts, []string{"hello"}) {
		t.Errorf("overlays %+v: want the label HELLO in WORLD", out.Overlays)
	}
	parts := map[string]bool{}
	for _, e := range out.Scene {
		parts[e.ID] = true
		if e.FrameID != strings.TrimPrefix(e.ID, "part:") || !e.FrameLocked || len(e.Models) != 1 ||
			e.Models[0].MediaType != "model/gltf-binary" || e.Models[0].Magic != "glTF" || e.Models[0].GLTFErrors != 0 || e.Models[0].Vertices == 0 {
			t.Errorf("scene entity %+v: want its part's frame, frame-locked, one embedded binary glTF that the validator passes", e)
		}
	}
	if !parts["part:WORLD"] || !parts["part:ROBOT"] {
		t.Errorf("scene entities %v, want part:WORLD and part:ROBOT", parts)
	}
	if out.YawBefore != 20 {
		t.Errorf("getParameters R_POSE.yaw = %v, want 20", out.YawBefore)
	}
	if len(out.SetReply) != 1 || out.SetReply[0].Value != newYaw || len(out.Update) == 0 || out.Update[0].Value != newYaw {
		t.Errorf("setParameters reply %+v, update %+v: want %v", out.SetReply, out.Update, newYaw)
	}
	if !out.ScanChanged {
		t.Errorf("the scan after turning the robot equals the one before")
	}
	if out.AddPart.Failure != "" || out.AddPart.Body.Seq != 6 {
		t.Errorf("add_part: %+v, want change 6 (5 commands in the scene file)", out.AddPart)
	}
	if !slices.Contains(out.SceneAfterAdd, "part:ADDED") {
		t.Errorf("scene after add_part: %v", out.SceneAfterAdd)
	}
	// A switch turned ADDED off: deleted by id (type 0); the others, which the
	// client has as they are, are not sent again.
	if off := out.SceneAfterSwitch; len(off.Deletions) != 1 || off.Deletions[0].ID != "part:ADDED" || off.Deletions[0].Type != 0 ||
		len(off.Entities) != 0 {
		t.Errorf("scene after switching ADDED off: %+v", off)
	}
	if !strings.Contains(out.WrongKind, "takes one <part> command") {
		t.Errorf("a sensor through add_part: %q", out.WrongKind)
	}
	if out.ViewerRole != "viewer" || !strings.Contains(out.ViewerStatus, "viewer token may only subscribe") ||
		len(out.ViewerReply) != 1 || out.ViewerReply[0].Value != newYaw || out.YawAfterViewer != newYaw {
		t.Errorf("viewer: role %q, status %q, reply %+v, yaw after %v: want refused, yaw still %v",
			out.ViewerRole, out.ViewerStatus, out.ViewerReply, out.YawAfterViewer, newYaw)
	}
	if !strings.Contains(out.ViewerCall, "viewer token may only subscribe") {
		t.Errorf("viewer's service call: %q", out.ViewerCall)
	}
	if out.NoTokenOpened {
		t.Errorf("a connection without a token opened")
	}
	if summary := stop(); !strings.Contains(summary, "foxglove: ") {
		t.Errorf("no foxglove summary in %q", summary)
	}
}

// mirror --foxglove serves the replica: its scan reaches a client, and a
// driver's setParameters reaches the host through the mirror's own
// connection.
func TestFoxgloveMirrorDrivesHost(t *testing.T) {
	shm := fmt.Sprintf("foxm-%d", os.Getpid())
	startServe(t, foxgloveScene(t), "--shm", shm, "--no-nats")
	cmd, lines, errOut := startChild(t, "mirror", "--shm", shm, "--foxglove", "127.0.0.1:0", "--frames", "1200", "--rate", "20")
	defer func() {
		cmd.Process.Signal(syscall.SIGINT)
		for lines.Scan() {
		}
		cmd.Wait()
	}()
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "serving the replica to Foxglove at ") {
		cmd.Process.Kill()
		t.Fatalf("mirror: %q\n%s", lines.Text(), errOut.String())
	}
	// Clients without a token watch: this user's token file makes it a driver.
	url, err := foxglove.DriverURL(wsURL.FindString(lines.Text()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{"foxglove.websocket.v1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(64 << 20)
	send := func(v any) {
		data, _ := json.Marshal(v)
		if err := conn.Write(ctx, websocket.MessageText, data); err != nil {
			t.Fatal(err)
		}
	}
	// Read until the scan's channel is advertised, subscribe, and wait
	// for a scan; then set the yaw and wait for the answer.
	scanSub := false
	var answer map[string]any
	for answer == nil {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("reading: %v\n%s", err, errOut.String())
		}
		if typ == websocket.MessageBinary {
			if data[0] == 1 && binary.LittleEndian.Uint32(data[1:]) == 5 && len(data) > 100 {
				send(map[string]any{"op": "setParameters", "id": "yaw", "parameters": []any{map[string]any{"name": "R_POSE.yaw", "value": -30}}})
			}
			continue
		}
		var m map[string]any
		json.Unmarshal(data, &m)
		switch m["op"] {
		case "advertise":
			for _, ch := range m["channels"].([]any) {
				if c := ch.(map[string]any); c["topic"] == "/SCAN/scan" && !scanSub {
					scanSub = true
					send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 5, "channelId": c["id"]}}})
				}
			}
		case "parameterValues":
			if m["id"] == "yaw" {
				answer = m
			}
		}
	}
	if p := answer["parameters"].([]any)[0].(map[string]any); p["value"] != -30.0 {
		t.Errorf("the mirror answered %v, want -30", p)
	}
	c, err := ipc.Open(shm)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	i, err := c.Param("R_POSE", "yaw")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(i); err != nil || v != -30 {
		t.Errorf("the host's R_POSE.yaw = %v (%v), want -30", v, err)
	}
}

// foxFirst connects to a Foxglove server and returns the first message
// of each topic (its payload), subscribing as the topics are advertised.
func foxFirst(t *testing.T, url string, topics ...string) map[string][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{"foxglove.websocket.v1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(64 << 20)
	subs := map[uint32]string{}
	got := map[string][]byte{}
	for len(got) < len(topics) {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("reading: %v (got %d of %v)", err, len(got), topics)
		}
		if typ == websocket.MessageBinary {
			if topic, ok := subs[binary.LittleEndian.Uint32(data[1:])]; ok && data[0] == 1 && got[topic] == nil {
				got[topic] = data[13:]
			}
			continue
		}
		var m struct {
			Op       string
			Channels []struct {
				ID    uint32
				Topic string
			}
		}
		json.Unmarshal(data, &m)
		for _, ch := range m.Channels {
			if m.Op == "advertise" && slices.Contains(topics, ch.Topic) {
				subs[ch.ID] = ch.Topic
				sub, _ := json.Marshal(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": ch.ID, "channelId": ch.ID}}})
				if err := conn.Write(ctx, websocket.MessageText, sub); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return got
}

// play --foxglove serves a recording's playback: values at their times,
// the scene, and the scans: re-rendered (--rerender) or as recorded.
func TestFoxglovePlay(t *testing.T) {
	dir := t.TempDir()
	sceneFile := foxgloveScene(t)
	rec := filepath.Join(dir, "run.mcap")
	if code, _, errOut := simvis(t, "capture", sceneFile, "--mcap", rec, "--frames", "20", "--rate", "5", "--sweep", "R_POSE.yaw=0:90"); code != 0 {
		t.Fatalf("capture: exit %d: %s", code, errOut)
	}
	recorded := map[string]bool{}
	if _, err := record.Read(rec, func(topic, _, _ string, m *mcap.Message) error {
		if topic == "/SCAN/scan" {
			recorded[string(m.Data)] = true
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"--rerender", "--loop"} {
		cmd, lines, errOut := startChild(t, "play", rec, "--no-nats", "--shm", fmt.Sprintf("foxp-%d", os.Getpid()),
			"--foxglove", "127.0.0.1:0", "--loop", mode)
		if !lines.Scan() || !strings.HasPrefix(lines.Text(), "playing ") {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("play %s: %q\n%s", mode, lines.Text(), errOut.String())
		}
		got := foxFirst(t, wsURL.FindString(lines.Text()), "/SCAN/scan", "/simvis/values", "/simvis/scene")
		t.Logf("%s: %d recorded scans; got %d scan bytes", mode, len(recorded), len(got["/SCAN/scan"]))
		cmd.Process.Signal(syscall.SIGINT)
		for lines.Scan() {
		}
		cmd.Wait()
		var values struct{ Values map[string]float64 }
		if err := json.Unmarshal(got["/simvis/values"], &values); err != nil {
			t.Fatal(err)
		}
		if yaw, ok := values.Values["R_POSE.yaw"]; !ok || yaw < 0 || yaw > 90 {
			t.Errorf("%s: played R_POSE.yaw %v (%v), want within the sweep 0..90", mode, yaw, ok)
		}
		if len(got["/SCAN/scan"]) < 181*4 || !strings.Contains(string(got["/simvis/scene"]), `"part:ROBOT"`) {
			t.Errorf("%s: scan of %d bytes, scene %.200s", mode, len(got["/SCAN/scan"]), got["/simvis/scene"])
		}
		// Without --rerender the scans are the recorded messages, byte for byte.
		if mode == "--loop" && !recorded[string(got["/SCAN/scan"])] {
			t.Errorf("the scan played without --rerender is not one of the %d recorded", len(recorded))
		}
	}
}

// Off loopback --foxglove needs a token; a bad address names the flag.
func TestFoxgloveFlagErrors(t *testing.T) {
	sceneFile := goodAndBadSensors(t, t.TempDir())
	shm := fmt.Sprintf("foxe-%d", os.Getpid())
	code, _, errOut := simvis(t, "serve", sceneFile, "--shm", shm, "--no-nats", "--foxglove", "0.0.0.0:0", "--cycles", "1")
	if code != 2 || !strings.Contains(errOut, "--foxglove 0.0.0.0:0 is not a loopback address: give --foxglove-token") {
		t.Errorf("off loopback without a token: exit %d: %s", code, errOut)
	}
	code, _, errOut = simvis(t, "serve", sceneFile, "--shm", shm, "--no-nats", "--foxglove", "nonsense", "--cycles", "1")
	if code != 1 || !strings.Contains(errOut, "--foxglove nonsense: ") {
		t.Errorf("a bad address: exit %d: %s", code, errOut)
	}
	code, out, errOut := simvis(t, "serve", sceneFile, "--shm", shm, "--no-nats", "--foxglove", "0.0.0.0:0", "--foxglove-viewer-token", "v", "--cycles", "1")
	if code != 0 || !strings.Contains(out, "ws://0.0.0.0:") {
		t.Errorf("off loopback with a viewer token: exit %d: %s%s", code, out, errOut)
	}
}
