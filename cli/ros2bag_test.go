package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/internal/testkit"
)

// bagCheck is the output of internal/jstest/ros2bag_check.js.
type bagCheck struct {
	OK       bool     `json:"ok"`
	Problems []string `json:"problems"`
	Topics   map[string]struct {
		Type       string `json:"type"`
		Count      int    `json:"count"`
		Durability string `json:"durability"`
	} `json:"topics"`
	Messages int    `json:"messages"`
	Start    string `json:"start"`
	End      string `json:"end"`
	ROSBag2  *struct {
		Version int `json:"version"`
	} `json:"rosbag2"`
}

// checkBag runs the independent ROS 2 bag checker on file; it returns
// its report and whether the checker passed the file.
func checkBag(t *testing.T, file string) (*bagCheck, bool) {
	t.Helper()
	cmd := testkit.Node(t, filepath.Join(testkit.RepoRoot(), "internal", "jstest", "ros2bag_check.js"), file)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var c bagCheck
	if jerr := json.Unmarshal(out, &c); jerr != nil {
		t.Fatalf("ros2bag_check.js %s: %v %v\n%s", file, err, jerr, stderr.String())
	}
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		t.Fatal(err)
	}
	return &c, err == nil && c.OK
}

// wantBag fails the test unless file passes the ROS 2 bag checker with
// its statistics starting at the first message's time 0.
func wantBag(t *testing.T, file string) *bagCheck {
	t.Helper()
	c, ok := checkBag(t, file)
	if !ok {
		t.Fatalf("%s is not a valid ROS 2 bag:\n%s", file, strings.Join(c.Problems, "\n"))
	}
	if c.Topics["/tf_static"].Durability != "transient_local" || c.ROSBag2 == nil || c.ROSBag2.Version != 9 {
		t.Errorf("%s: /tf_static %+v, rosbag2 metadata %+v", file, c.Topics["/tf_static"], c.ROSBag2)
	}
	for topic, tp := range c.Topics {
		if strings.HasPrefix(topic, "/simvis/") && !strings.HasPrefix(tp.Type, "simvis_msgs/msg/") {
			t.Errorf("%s: %s has type %s", file, topic, tp.Type)
		}
	}
	return c
}

// The checker is no rubber stamp: a recording of the old layout (a JSON
// channel beside CDR ones, no QoS metadata, a first message at time 0 in
// the first of two chunks) is refused for each of those reasons.
func TestRecordBagCheckerRefusesOldLayout(t *testing.T) {
	var b bytes.Buffer
	w, err := mcap.NewWriter(&b, &mcap.WriterOptions{Chunked: true, ChunkSize: 1, Compression: mcap.CompressionZSTD})
	if err != nil {
		t.Fatal(err)
	}
	errs := []error{
		w.WriteHeader(&mcap.Header{Profile: "ros2"}),
		w.WriteSchema(&mcap.Schema{ID: 1, Name: "simvis/Values", Encoding: "jsonschema", Data: []byte("{}")}),
		w.WriteChannel(&mcap.Channel{ID: 1, SchemaID: 1, Topic: "/simvis/values", MessageEncoding: "json"}),
		w.WriteMessage(&mcap.Message{ChannelID: 1, LogTime: 0, Data: []byte(`{"values":{}}`)}),
		w.WriteMessage(&mcap.Message{ChannelID: 1, Sequence: 1, LogTime: 1e8, Data: []byte(`{"values":{}}`)}),
		w.Close(),
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(t.TempDir(), "old.mcap")
	if err := os.WriteFile(file, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	c, ok := checkBag(t, file)
	all := strings.Join(c.Problems, "\n")
	for _, want := range []string{"message encoding json, want cdr", "schema encoding jsonschema", "no offered_qos_profiles",
		"statistics: start 100000000"} {
		if !strings.Contains(all, want) {
			t.Errorf("problems do not name %q:\n%s", want, all)
		}
	}
	if ok {
		t.Error("the checker passed the old layout")
	}
}

// Every bundled scene's recording (capture --mcap, and serve --record and
// mirror --record for MARVIN and the showcase) is a ROS 2 bag by rosbag2's and rosbags' rules,
// every message decodes, the statistics start at the first message (time
// 0) and end at the last, and play rebuilds a host from it.
func TestRecordROS2BagEveryBundledScene(t *testing.T) {
	dir := t.TempDir()
	scenes, err := filepath.Glob(filepath.Join(testkit.RepoRoot(), "scenes", "*", "scene.xml"))
	if err != nil || len(scenes) < 5 {
		t.Fatalf("bundled scenes: %v %v", scenes, err)
	}
	for _, sc := range scenes {
		name := filepath.Base(filepath.Dir(sc))
		if name == "door" {
			continue // its element type "door" lives in examples/door's own binary (TestDoorRecords there)
		}
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(dir, name+".mcap")
			code, out, errOut := simvis(t, "capture", sc, "--frames", "2", "--mcap", file)
			if code != 0 || strings.Count(out, ": recorded\n") != 2 {
				t.Fatalf("capture exit %d:\n%s\n%s", code, out, errOut)
			}
			c := wantBag(t, file)
			if c.Start != "0" || c.End != "100000000" {
				t.Errorf("messages from %s to %s ns, want 0 to 1e8", c.Start, c.End)
			}
			if name == "arm" {
				// A URDF part's files (Model.Files) are attached: the URDF,
				// the package.xml that makes package://simvis_arm its own
				// package, and its STL and Collada meshes.
				_, names := goCountsAttachments(t, file)
				for _, want := range []string{"arm/urdf/arm.urdf", "arm/package.xml", "arm/meshes/base.stl", "arm/meshes/hand.dae", "quickstart/world.gltf"} {
					if !slices.Contains(strings.Fields(names), want) {
						t.Errorf("attachments %s lack %s", names, want)
					}
				}
			}
			code, out, errOut = simvis(t, "play", file, "--no-nats", "--fast", "--shm", fmt.Sprintf("bag-%s-%d", name, os.Getpid()))
			if code != 0 || !strings.Contains(out, "played to 0.100 s") {
				t.Errorf("play exit %d:\n%s\n%s", code, out, errOut)
			}
		})
	}
	for _, name := range []string{"marvin", "showcase"} {
		t.Run("serve-"+name, func(t *testing.T) {
			file := filepath.Join(dir, "serve-"+name+".mcap")
			code, out, errOut := simvis(t, "serve", filepath.Join(testkit.RepoRoot(), "scenes", name, "scene.xml"), "--no-nats", "--fast",
				"--cycles", "6", "--shm", fmt.Sprintf("bags-%s-%d", name, os.Getpid()), "--record", file)
			if code != 0 {
				t.Fatalf("serve exit %d:\n%s\n%s", code, out, errOut)
			}
			c := wantBag(t, file)
			if c.Start != "0" || c.Topics["/simvis/changes"].Count == 0 {
				t.Errorf("start %s, topics %+v", c.Start, c.Topics)
			}
		})
		t.Run("mirror-"+name, func(t *testing.T) {
			// A mirror of a running host records what it replicates: the
			// same bag rules, and play rebuilds a host from it.
			shm := filepath.Join(t.TempDir(), "region")
			startServe(t, filepath.Join(testkit.RepoRoot(), "scenes", name, "scene.xml"), "--no-nats", "--shm", shm, "--rate", "20")
			file := filepath.Join(dir, "mirror-"+name+".mcap")
			code, out, errOut := simvis(t, "mirror", "--shm", shm, "--record", file, "--frames", "3", "--rate", "10")
			if code != 0 || !strings.Contains(out, "recorded") {
				t.Fatalf("mirror exit %d:\n%s\n%s", code, out, errOut)
			}
			c := wantBag(t, file)
			if c.Topics["/simvis/changes"].Count == 0 || c.Topics["/tf_static"].Count == 0 {
				t.Errorf("topics %+v", c.Topics)
			}
			code, out, errOut = simvis(t, "play", file, "--no-nats", "--fast", "--shm", fmt.Sprintf("mbag-%s-%d", name, os.Getpid()))
			if code != 0 || !strings.Contains(out, "played to") {
				t.Errorf("play exit %d:\n%s\n%s", code, out, errOut)
			}
		})
	}
}

// The showcase's world model lies outside its folder
// (../quickstart/world.gltf): the recording holds it under a base that
// encloses both, says "recorded" for every frame and replays.
func TestShowcaseRecordsModelsOutsideItsFolder(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.mcap")
	code, out, errOut := simvis(t, "capture", filepath.Join(testkit.RepoRoot(), "scenes", "showcase", "scene.xml"), "--frames", "2", "--mcap", file)
	if code != 0 || !strings.Contains(out, "recorded 8 sensor frames") {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
	}
	_, errOut2 := goCountsAttachments(t, file)
	if !strings.Contains(errOut2, "quickstart/world.gltf") || !strings.Contains(errOut2, "showcase/plant.glb") {
		t.Errorf("attachments: %s", errOut2)
	}
}

func goCountsAttachments(t *testing.T, file string) (int, string) {
	rec, _ := goCounts(t, file)
	var names []string
	for _, a := range rec.Attachments {
		names = append(names, a.Name)
	}
	return len(names), strings.Join(names, " ")
}

// A recording that fails leaves no file behind and no frame is said to be
// recorded: a scene whose model cannot be read by the recorder (a file
// larger than the recorder's model budget) stops it.
func TestFailedRecordingLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	scenePath := recordScene(t)
	file := filepath.Join(dir, "bad.mcap")
	// Two sensors that map to the same topic namespace: the recorder
	// refuses the scene at its first cycle.
	data, _ := os.ReadFile(scenePath)
	bad := strings.Replace(string(data), "</scene>", `<sensor type="psd" name="a-b" range_max="5"/><sensor type="psd" name="a_b" range_max="5"/></scene>`, 1)
	badScene := filepath.Join(filepath.Dir(scenePath), "bad.xml")
	if err := os.WriteFile(badScene, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := simvis(t, "capture", badScene, "--frames", "2", "--mcap", file)
	if code == 0 || strings.Contains(out, ": recorded\n") || strings.Contains(out, "sensor frames into") {
		t.Errorf("exit %d:\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "the file was removed") {
		t.Errorf("stderr does not say the file was removed:\n%s", errOut)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("a failed recording left %s: %v", file, err)
	}
}

// tfEdges runs `simvis frames --tf --json` on a scene: each child's parent
// and whether it is static.
func tfEdges(t *testing.T, scenePath string, args ...string) map[string]framePose {
	t.Helper()
	code, out, errOut := simvis(t, append([]string{"frames", "--tf", "--json", scenePath}, args...)...)
	if code != 0 {
		t.Fatalf("frames --tf: %s", errOut)
	}
	var fps []framePose
	if err := json.Unmarshal([]byte(out), &fps); err != nil {
		t.Fatal(err)
	}
	edges := map[string]framePose{}
	for _, fp := range fps {
		edges[fp.TF.Child] = fp
	}
	return edges
}

// MARVIN's and the showcase's tf trees have the robots' shape, edge by
// edge: each scanner below the mount it is inserted at, mounts below the
// robot, the robot below the part it stands in; static where no element
// lies between, moving where a pose or rotation element does.
func TestRecordTFTreeShape(t *testing.T) {
	type edge struct {
		parent string
		static bool
	}
	for _, c := range []struct {
		scene string
		want  map[string]edge
	}{
		{"marvin", map[string]edge{
			"ROOT": {"world", true}, "LAB": {"ROOT", true}, "MARVIN": {"LAB", false},
			"MARVIN/FRONT_SCANNER": {"MARVIN", true}, "MARVIN/REAR_SCANNER": {"MARVIN", true},
			"MARVIN/TILT_UNIT": {"MARVIN", false}, "MARVIN/CAMERA_MOUNT": {"MARVIN", true},
			"FRONT_LASER": {"MARVIN/FRONT_SCANNER", true}, "REAR_LASER": {"MARVIN/REAR_SCANNER", true},
			"TILT_LASER": {"MARVIN/TILT_UNIT", true}, "CAMERA": {"MARVIN/CAMERA_MOUNT", true},
			"DEPTH": {"MARVIN/CAMERA_MOUNT", true}, "CAMERA_optical": {"CAMERA", true}, "DEPTH_optical": {"DEPTH", true},
		}},
		{"showcase", map[string]edge{
			"ROBOT": {"WORLD", false}, "ROBOT/MAST_TOP": {"ROBOT", false}, "CART": {"WORLD", false},
			"CART/MAST_TOP": {"CART", true}, "PLANT": {"WORLD", true},
			"MAST_CAM": {"ROBOT/MAST_TOP", true}, "MAST_LIDAR": {"ROBOT/MAST_TOP", true},
			"FRONT_LASER": {"ROBOT", true}, "FRONT_IR": {"ROBOT", true}, "MAST_CAM_optical": {"MAST_CAM", true},
		}},
	} {
		got := tfEdges(t, filepath.Join(testkit.RepoRoot(), "scenes", c.scene, "scene.xml"))
		for child, e := range c.want {
			g, ok := got[child]
			if !ok || g.TF.Parent != e.parent || g.TF.Static != e.static {
				t.Errorf("%s: %s: parent %q static %v, want %q %v", c.scene, child, g.Relative, ok && g.TF.Static, e.parent, e.static)
			}
		}
	}
}

// MARVIN recorded: the static edges are on /tf_static once, the moving
// ones only on /tf; and a tilt scan's point mapped through the recorded
// tree lands where `simvis frames` puts it (1e-9 m).
func TestRecordedTFTreeMapsScanPoints(t *testing.T) {
	scenePath := filepath.Join(testkit.RepoRoot(), "scenes", "marvin", "scene.xml")
	file := filepath.Join(t.TempDir(), "m.mcap")
	code, _, errOut := simvis(t, "capture", scenePath, "--frames", "3", "--mcap", file, "--sweep", "TILT.angle=-20:20")
	if code != 0 {
		t.Fatalf("capture: %s", errOut)
	}
	edges := tfEdges(t, scenePath)
	c := checkInNode(t, file)
	var static tfMsg
	var moving []tfMsg
	var scan struct {
		AngleMin       float64 `json:"angle_min"`
		AngleIncrement float64 `json:"angle_increment"`
		Ranges         []jf    `json:"ranges"`
	}
	statics := 0
	for _, m := range c.Messages {
		switch m.Topic {
		case "/tf_static":
			statics++
			json.Unmarshal(m.Msg, &static)
		case "/tf":
			var tf tfMsg
			json.Unmarshal(m.Msg, &tf)
			moving = append(moving, tf)
		case "/TILT_LASER/scan":
			json.Unmarshal(m.Msg, &scan) // the last frame's
		}
	}
	if statics != 1 || len(moving) != 3 {
		t.Fatalf("%d /tf_static and %d /tf messages, want 1 and 3", statics, len(moving))
	}
	for _, tr := range static.Transforms {
		if e, ok := edges[tr.Child]; !ok || !e.TF.Static || e.TF.Parent != tr.Header.FrameID {
			t.Errorf("/tf_static holds %s -> %s, frames --tf says %+v", tr.Header.FrameID, tr.Child, e.TF)
		}
	}
	for _, tf := range moving {
		for _, tr := range tf.Transforms {
			if e, ok := edges[tr.Child]; !ok || e.TF.Static || e.TF.Parent != tr.Header.FrameID {
				t.Errorf("/tf holds %s -> %s, frames --tf says %+v", tr.Header.FrameID, tr.Child, e.TF)
			}
		}
	}
	// The tree at the last frame: the static edges and each moving edge's
	// latest value (/tf carries an edge when it moves).
	latest := static.Transforms
	at := map[string]int{}
	for _, tf := range moving {
		for _, tr := range tf.Transforms {
			if i, ok := at[tr.Child]; ok {
				latest[i] = tr
			} else {
				at[tr.Child] = len(latest)
				latest = append(latest, tr)
			}
		}
	}
	world := composeTFMsgs(t, latest)
	code, out, errOut := simvis(t, "frames", "--json", scenePath, "TILT_LASER", "--set", "TILT.angle=20")
	if code != 0 {
		t.Fatal(errOut)
	}
	var fps []framePose
	json.Unmarshal([]byte(out), &fps)
	var want mgl64.Mat4
	for r := 0; r < 4; r++ {
		for k := 0; k < 4; k++ {
			want.Set(r, k, fps[0].Matrix[r][k])
		}
	}
	got := world["TILT_LASER"]
	points := 0
	for k, r := range scan.Ranges {
		rr := float64(r)
		if math.IsInf(rr, 0) || math.IsNaN(rr) {
			continue
		}
		a := scan.AngleMin + float64(k)*scan.AngleIncrement
		p := mgl64.Vec4{rr * math.Cos(a), rr * math.Sin(a), 0, 1}
		if d := got.Mul4x1(p).Sub(want.Mul4x1(p)).Len(); d > 1e-9 {
			t.Errorf("beam %d: the recorded tree puts its point %g m from where simvis frames does", k, d)
		}
		points++
	}
	if points < 100 {
		t.Errorf("only %d beams hit", points)
	}
}

// play honours $SIMVIS_SHM for its region, and a play that re-renders into
// files starts no NATS unless a NATS flag asks.
func TestPlayShmAndNoNATSWhenRerenderingToFiles(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "q.mcap")
	scenePath := filepath.Join(testkit.RepoRoot(), "scenes", "quickstart", "scene.xml")
	if code, _, errOut := simvis(t, "capture", scenePath, "--frames", "2", "--mcap", file); code != 0 {
		t.Fatal(errOut)
	}
	name := fmt.Sprintf("envplay-%d", os.Getpid())
	t.Setenv("SIMVIS_SHM", name)
	code, out, errOut := simvis(t, "play", file, "--fast", "--rerender", "-o", filepath.Join(dir, "out"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "/dev/shm/simvis-"+name+":") || strings.Contains(out, "nats://") {
		t.Errorf("play --rerender -o: %s", out)
	}
}
