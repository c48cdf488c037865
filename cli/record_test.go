package cli

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/nats-io/nats.go"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/ipc/natsipc"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/record"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors/ros2"
)

// recordScene writes a closed room (walls at x = ±4, y = ±3, 3 m high)
// with a robot a pose element moves and a joint tilts, carrying every
// range sensor kind and a depth camera.
func recordScene(t *testing.T) string {
	dir := t.TempDir()
	testkit.WriteModel(t, dir, "room.glb", func(m *models.Model) {
		m.AddNode(nil, "room", mgl64.Translate3D(0, 0, 1.5), models.Box("room", 8, 6, 3, [4]float32{1, 1, 1, 1}))
	})
	testkit.WriteModel(t, dir, "robot.glb", func(m *models.Model) {
		m.AddNode(nil, "body", mgl64.Translate3D(0, 0, 0.05), models.Box("body", 0.1, 0.1, 0.1, [4]float32{1, 0, 0, 1}))
	})
	path := filepath.Join(dir, "scene.xml")
	os.WriteFile(path, []byte(`<scene>
  <part file="room.glb" name="ROOM"/>
  <part file="robot.glb" name="ROBOT" insert_at="ROOM" pose_offset="0.5 -0.25 0 0 0 15"/>
  <element type="pose" name="R_POSE" insert_at="ROBOT" x="0" y="0" yaw="0"/>
  <sensor type="depth" name="DEPTH" insert_at="ROBOT" pose_offset="0.1 0 1.5 0 5 0" width="32" height="24"/>
  <sensor type="laser" name="SCAN" insert_at="ROBOT" pose_offset="0 0 1 0 0 0" angle_min="-90" angle_max="90" resolution="5" range_max="3.5"/>
  <element type="rotation" name="TILT" insert_at="ROBOT" axis="0 1 0" angle="0" min="-30" max="30"/>
  <sensor type="laser3d" name="CLOUD" insert_at="ROBOT" pose_offset="0 0 1 0 0 0" layers="-10 0 10" angle_min="-30" angle_max="30" resolution="10"/>
  <sensor type="psd" name="PSD" insert_at="ROOM" pose_offset="0 0 1 0 0 0" range_max="5"/>
</scene>`), 0o644)
	return path
}

// mcapCheck is what internal/jstest/mcap_check.js reports.
type mcapCheck struct {
	Complete    bool           `json:"complete"`
	Profile     string         `json:"profile"`
	Counts      map[string]int `json:"counts"`
	Attachments []struct {
		Name   string `json:"name"`
		Length int    `json:"length"`
	} `json:"attachments"`
	Indexed *struct {
		Counts       map[string]int `json:"counts"`
		Chunks       int            `json:"chunks"`
		Attachments  int            `json:"attachments"`
		MessageCount int            `json:"messageCount"`
	} `json:"indexed"`
	Messages []struct {
		Topic   string          `json:"topic"`
		Schema  string          `json:"schema"`
		LogTime string          `json:"logTime"`
		Msg     json.RawMessage `json:"msg"`
	} `json:"messages"`
}

// checkInNode reads the recording with @mcap/core and decodes every
// message with @foxglove/rosmsg2-serialization (full byte arrays on the
// topics named), failing the test on any message that does not decode.
func checkInNode(t *testing.T, file string, full ...string) *mcapCheck {
	t.Helper()
	cmd := testkit.Node(t, filepath.Join(testkit.RepoRoot(), "internal", "jstest", "mcap_check.js"), append([]string{file}, full...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcap_check.js %s: %v\n%s", file, err, stderr.String())
	}
	var c mcapCheck
	if err := json.Unmarshal(out, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

// goCounts reads the recording with the Go MCAP lexer (record.Read).
func goCounts(t *testing.T, file string) (*record.Recording, map[string]int) {
	t.Helper()
	rec, err := record.Read(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, ts := range rec.Topics {
		counts[ts.Topic] = ts.Messages
	}
	return rec, counts
}

func sameCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

type jf float64 // a decoded number: JSON, or "Infinity" / "-Infinity" / "NaN"

func (n *jf) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*n = map[string]jf{"Infinity": jf(math.Inf(1)), "-Infinity": jf(math.Inf(-1))}[s]
		if s == "NaN" {
			*n = jf(math.NaN())
		}
		return nil
	}
	var f float64
	err := json.Unmarshal(b, &f)
	*n = jf(f)
	return err
}

type tfMsg struct {
	Transforms []struct {
		Header struct {
			FrameID string `json:"frame_id"`
		} `json:"header"`
		Child     string `json:"child_frame_id"`
		Transform struct {
			Translation struct{ X, Y, Z float64 }
			Rotation    struct{ X, Y, Z, W float64 }
		} `json:"transform"`
	} `json:"transforms"`
}

// readPCD returns the points of a binary PCD file capture wrote.
func readPCD(t *testing.T, path string) [][3]float32 {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte("DATA binary\n"))
	if i < 0 {
		t.Fatalf("%s: no binary data", path)
	}
	raw := data[i+len("DATA binary\n"):]
	pts := make([][3]float32, len(raw)/12)
	for k := range pts {
		for c := 0; c < 3; c++ {
			pts[k][c] = math.Float32frombits(binary.LittleEndian.Uint32(raw[12*k+4*c:]))
		}
	}
	return pts
}

// A captured sequence recorded with --mcap reads back with the Go MCAP
// reader and, independently, with @mcap/core + rosmsg2-serialization; every
// message decodes; each frame's LaserScan equals its .scan.json, its
// PointCloud2 its PCD, its Range the .psd.json; /tf with /tf_static
// composes to `simvis frames` for every frame (1e-9); a wall point
// projected with the recorded CameraInfo K through the recorded tf lands on
// the depth pixel that sees it; stamps are scene time from epoch 0.
func TestCaptureMCAPMatchesFiles(t *testing.T) {
	scenePath := recordScene(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "rec.mcap")
	const frames = 4
	code, out, errOut := simvis(t, "capture", scenePath, "-o", dir, "--mcap", file, "--frames", strconv.Itoa(frames), "--rate", "5",
		"--sweep", "R_POSE.yaw=-20:20", "--sweep", "TILT.angle=-15:15", "--sweep", "R_POSE.x=0:0.6")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "recorded 16 sensor frames into "+file) {
		t.Errorf("output:\n%s", out)
	}
	c := checkInNode(t, file, "/SCAN/scan", "/CLOUD/points", "/DEPTH/depth/image_raw")
	rec, counts := goCounts(t, file)
	if !c.Complete || !rec.Complete || c.Profile != "ros2" || rec.Profile != "ros2" || c.Indexed == nil {
		t.Fatalf("complete: node %v, Go %v; profile %q %q", c.Complete, rec.Complete, c.Profile, rec.Profile)
	}
	if !sameCounts(c.Counts, counts) || !sameCounts(c.Indexed.Counts, counts) {
		t.Errorf("message counts: node stream %v, node index %v, Go %v", c.Counts, c.Indexed.Counts, counts)
	}
	for _, topic := range []string{"/SCAN/scan", "/CLOUD/points", "/PSD/range", "/DEPTH/depth/image_raw", "/DEPTH/depth/camera_info", "/tf"} {
		if counts[topic] != frames {
			t.Errorf("%s: %d messages, want %d", topic, counts[topic], frames)
		}
	}
	if counts[record.TopicChanges] != 8 || counts["/tf_static"] != 1 || counts[record.TopicValues] != frames {
		t.Errorf("changes %d (want the scene's 8 commands), tf_static %d, values %d", counts[record.TopicChanges], counts["/tf_static"], counts[record.TopicValues])
	}
	if len(c.Attachments) != 2 || c.Attachments[0].Name != "room.glb" || c.Attachments[1].Name != "robot.glb" || len(rec.Attachments) != 2 {
		t.Errorf("attachments %+v, want room.glb and robot.glb", c.Attachments)
	}
	for _, a := range rec.Attachments {
		want, _ := os.ReadFile(filepath.Join(filepath.Dir(scenePath), a.Name))
		if !bytes.Equal(a.Data, want) {
			t.Errorf("attachment %s differs from the model file", a.Name)
		}
	}

	var static tfMsg
	byFrame := make([]map[string]json.RawMessage, frames)
	for i := range byFrame {
		byFrame[i] = map[string]json.RawMessage{}
	}
	for _, m := range c.Messages {
		ns, _ := strconv.ParseInt(m.LogTime, 10, 64)
		i := int(math.Round(float64(ns) / 2e8)) // frame i at i/5 s
		if float64(ns) != math.Round(float64(i)*2e8) || i >= frames {
			t.Fatalf("%s: log time %d ns is not a frame's scene time", m.Topic, ns)
		}
		if m.Topic == "/tf_static" {
			json.Unmarshal(m.Msg, &static)
			continue
		}
		byFrame[i][m.Topic] = m.Msg
		var h struct {
			Header struct{ Stamp struct{ Sec, Nanosec int64 } } `json:"header"`
		}
		if json.Unmarshal(m.Msg, &h) == nil && h.Header.Stamp.Sec*1e9+h.Header.Stamp.Nanosec != ns && !strings.HasPrefix(m.Topic, "/simvis") && m.Topic != "/tf" &&
			!strings.HasSuffix(m.Topic, ros2.SuffixDescription) { // a frame's description has no header
			t.Errorf("%s frame %d: header stamp %+v, log time %d", m.Topic, i, h.Header.Stamp, ns)
		}
	}
	for i := 0; i < frames; i++ {
		f := float64(i) / (frames - 1)
		// LaserScan = .scan.json.
		var scan struct {
			Ranges []jf `json:"ranges"`
		}
		json.Unmarshal(byFrame[i]["/SCAN/scan"], &scan)
		var file struct {
			Ranges   []*float64 `json:"ranges"`
			TooClose []int      `json:"too_close"`
		}
		data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("SCAN_%04d.scan.json", i)))
		if err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(data, &file)
		if len(scan.Ranges) != 37 || len(file.Ranges) != 37 {
			t.Fatalf("frame %d: %d ranges recorded, %d in the file", i, len(scan.Ranges), len(file.Ranges))
		}
		inf := 0
		for k, r := range file.Ranges {
			want := math.Inf(1)
			if r != nil {
				want = *r
			}
			for _, tc := range file.TooClose {
				if tc == k {
					want = math.Inf(-1)
				}
			}
			if math.IsInf(want, 1) {
				inf++
			}
			if float32(scan.Ranges[k]) != float32(want) {
				t.Errorf("frame %d beam %d: LaserScan %v, .scan.json %v", i, k, scan.Ranges[k], want)
			}
		}
		if inf == 0 {
			t.Errorf("frame %d: no beam beyond range_max 3.5 m: the +Inf path is untested", i)
		}
		// PointCloud2 = PCD.
		var pc struct {
			Data struct{ Base64 []byte } `json:"data"`
		}
		json.Unmarshal(byFrame[i]["/CLOUD/points"], &pc)
		pcd := readPCD(t, filepath.Join(dir, fmt.Sprintf("CLOUD_%04d.pcd", i)))
		if len(pcd) != 21 || len(pc.Data.Base64) != 20*21 {
			t.Fatalf("frame %d: PCD %d points, PointCloud2 %d bytes", i, len(pcd), len(pc.Data.Base64))
		}
		for k, p := range pcd {
			for d := 0; d < 3; d++ {
				got := math.Float32frombits(binary.LittleEndian.Uint32(pc.Data.Base64[20*k+4*d:]))
				if got != p[d] && !(math.IsNaN(float64(got)) && math.IsNaN(float64(p[d]))) {
					t.Errorf("frame %d point %d: PointCloud2 %v, PCD %v", i, k, got, p[d])
				}
			}
		}
		// Range = .psd.json.
		var rg struct {
			Range jf `json:"range"`
		}
		json.Unmarshal(byFrame[i]["/PSD/range"], &rg)
		var psd struct{ Range float64 }
		data, _ = os.ReadFile(filepath.Join(dir, fmt.Sprintf("PSD_%04d.psd.json", i)))
		json.Unmarshal(data, &psd)
		if float32(rg.Range) != float32(psd.Range) || math.Abs(psd.Range-4) > 1e-3 {
			t.Errorf("frame %d: Range %v, .psd.json %v, want the wall at 4", i, rg.Range, psd.Range)
		}
		// tf composes to simvis frames.
		var moving tfMsg
		json.Unmarshal(byFrame[i]["/tf"], &moving)
		world := composeTFMsgs(t, append(static.Transforms, moving.Transforms...))
		code, out, errOut := simvis(t, "frames", "--json", scenePath, "--set", fmt.Sprintf("R_POSE.yaw=%v", -20+40*f),
			"--set", fmt.Sprintf("TILT.angle=%v", -15+30*f), "--set", fmt.Sprintf("R_POSE.x=%v", 0.6*f))
		if code != 0 {
			t.Fatalf("frames: %s", errOut)
		}
		var fps []framePose
		json.Unmarshal([]byte(out), &fps)
		if len(fps) != 7 {
			t.Fatalf("simvis frames lists %d frames", len(fps))
		}
		for _, fp := range fps {
			got, ok := world[fp.Frame]
			if !ok {
				t.Errorf("frame %d: %s is not in the recorded tf", i, fp.Frame)
				continue
			}
			for r := 0; r < 4; r++ {
				for col := 0; col < 4; col++ {
					if d := math.Abs(got.At(r, col) - fp.Matrix[r][col]); d > 1e-9 {
						t.Errorf("frame %d: %s[%d][%d]: tf %v, simvis frames %v", i, fp.Frame, r, col, got.At(r, col), fp.Matrix[r][col])
					}
				}
			}
		}
		// K and tf put a wall point on the depth pixel that sees it.
		var ci struct {
			K [9]float64 `json:"k"`
		}
		json.Unmarshal(byFrame[i]["/DEPTH/depth/camera_info"], &ci)
		var img struct {
			Width int                     `json:"width"`
			Data  struct{ Base64 []byte } `json:"data"`
		}
		json.Unmarshal(byFrame[i]["/DEPTH/depth/image_raw"], &img)
		opt := world["DEPTH_optical"]
		inv, _ := scene.InvertAffine(opt)
		// The wall straight ahead of the camera, 0.3 m left and up of its axis.
		ahead := opt.Mul4x1(mgl64.Vec4{0, 0, 1, 0}).Vec3()
		origin := opt.Col(3).Vec3()
		s := (4 - origin[0]) / ahead[0]
		wp := origin.Add(ahead.Mul(s)).Add(mgl64.Vec3{0, 0.3, 0.3})
		p := inv.Mul4x1(wp.Vec4(1)).Vec3()
		u, v := ci.K[0]*p[0]/p[2]+ci.K[2], ci.K[4]*p[1]/p[2]+ci.K[5]
		iu, iv := int(math.Round(u)), int(math.Round(v))
		if iu < 0 || iv < 0 || iu >= 32 || iv >= 24 || img.Width != 32 {
			t.Fatalf("frame %d: wall point %v at pixel (%.2f, %.2f), outside the image", i, wp, u, v)
		}
		z := float64(math.Float32frombits(binary.LittleEndian.Uint32(img.Data.Base64[4*(iv*32+iu):])))
		back := opt.Mul4x1(mgl64.Vec4{(float64(iu) - ci.K[2]) * z / ci.K[0], (float64(iv) - ci.K[5]) * z / ci.K[4], z, 1}).Vec3()
		if math.Abs(back[0]-4) > 2e-3 || back.Sub(wp).Len() > 2*z/ci.K[0] {
			t.Errorf("frame %d: wall point %v projects to pixel (%d, %d) whose depth %v is the point %v", i, wp, iu, iv, z, back)
		}
	}
}

func composeTFMsgs(t *testing.T, tfs []struct {
	Header struct {
		FrameID string `json:"frame_id"`
	} `json:"header"`
	Child     string `json:"child_frame_id"`
	Transform struct {
		Translation struct{ X, Y, Z float64 }
		Rotation    struct{ X, Y, Z, W float64 }
	} `json:"transform"`
}) map[string]mgl64.Mat4 {
	parent := map[string]int{}
	for k, tr := range tfs {
		if _, dup := parent[tr.Child]; dup {
			t.Errorf("frame %s has two parents in one cycle's tf", tr.Child)
		}
		parent[tr.Child] = k
	}
	world := map[string]mgl64.Mat4{"world": mgl64.Ident4()}
	var resolve func(string, int) mgl64.Mat4
	resolve = func(f string, depth int) mgl64.Mat4 {
		if m, ok := world[f]; ok {
			return m
		}
		k, ok := parent[f]
		if !ok || depth > 64 {
			t.Fatalf("frame %s does not reach the world", f)
		}
		tr := tfs[k]
		r := tr.Transform.Rotation
		m := mgl64.Quat{W: r.W, V: mgl64.Vec3{r.X, r.Y, r.Z}}.Mat4()
		p := tr.Transform.Translation
		m.SetCol(3, mgl64.Vec4{p.X, p.Y, p.Z, 1})
		m = resolve(tr.Header.FrameID, depth+1).Mul4(m)
		world[f] = m
		return m
	}
	for f := range parent {
		resolve(f, 0)
	}
	return world
}

// A host killed (SIGKILL) while recording leaves a file both MCAP readers
// read up to its last chunk, every message decoding; one stopped with
// Ctrl-C leaves a complete file with summary and index.
func TestServeRecordSurvivesKill(t *testing.T) {
	scenePath := recordScene(t)
	dir := t.TempDir()
	for _, killed := range []bool{true, false} {
		file := filepath.Join(dir, fmt.Sprintf("serve-%v.mcap", killed))
		shm := fmt.Sprintf("i15rec%d%v", os.Getpid(), killed)
		kill, stop := startServeProc(t, scenePath, "--shm", shm, "--no-nats", "--rate", "20", "--record", file)
		// Chunks close at least every second: wait for one to reach the
		// file (whatever the machine's load), then a little more.
		deadline := time.Now().Add(60 * time.Second)
		for {
			if st, err := os.Stat(file); err == nil && st.Size() > 20000 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no chunk in %s after 60 s", file)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if killed {
			kill()
			os.Remove("/dev/shm/simvis-" + shm)
		} else {
			// A request and a value during the recording: play replays both.
			if code, out, errOut := simvis(t, "request", "--shm", shm, `<sensor type="psd" name="PSD2" insert_at="ROOM" pose_offset="0 0 1 0 0 90" range_max="5"/>`); code != 0 {
				t.Fatalf("request: %s %s", out, errOut)
			}
			if code, _, errOut := simvis(t, "set", "--shm", shm, "R_POSE.x=0.25"); code != 0 {
				t.Fatalf("set: %s", errOut)
			}
			time.Sleep(300 * time.Millisecond) // a few cycles record the value
			out := stop()
			if !strings.Contains(out, "recorded ") {
				t.Errorf("serve output lacks the recording line:\n%s", out)
			}
		}
		c := checkInNode(t, file)
		rec, counts := goCounts(t, file)
		if c.Complete == killed || rec.Complete == killed {
			t.Errorf("killed %v: node reads complete = %v, Go %v", killed, c.Complete, rec.Complete)
		}
		if !sameCounts(c.Counts, counts) || counts["/SCAN/scan"] == 0 || counts[record.TopicChanges] < 8 || len(rec.Attachments) != 2 {
			t.Errorf("killed %v: counts node %v, Go %v; %d attachments", killed, c.Counts, counts, len(rec.Attachments))
		}
		if !killed {
			if counts[record.TopicChanges] != 9 || counts["/PSD2/range"] == 0 || rec.Values[len(rec.Values)-1].Msg.Values["R_POSE.x"] != 0.25 {
				t.Errorf("the request and the value are not recorded: %v, last values %v", counts, rec.Values[len(rec.Values)-1])
			}
			code, out, errOut := simvis(t, "play", file, "--fast", "--no-nats", "--shm", shm+"p")
			if code != 0 || !strings.Contains(out, "9 of 9 changes") {
				t.Errorf("play: exit %d %s %s", code, out, errOut)
			}
			if !sameCounts(c.Indexed.Counts, counts) || c.Indexed.Chunks == 0 {
				t.Errorf("index counts %v, stream %v", c.Indexed.Counts, counts)
			}
			f, _ := os.Open(file)
			r, err := mcap.NewReader(f)
			if err != nil {
				t.Fatal(err)
			}
			info, err := r.Info()
			if err != nil || info.Statistics.MessageCount != uint64(rec.Messages) || len(info.ChunkIndexes) == 0 {
				t.Errorf("Go indexed reader: %v, %+v", err, info)
			}
			f.Close()
		}
	}
}

// A 100-frame MARVIN sequence (the robot driving, the tilt unit sweeping)
// recorded by capture --mcap and played back with --rerender renders the
// same scans: every LaserScan message of the replay is byte for byte the
// recorded one (ranges and stamps), so the recorded values reached the
// rebuilt scene at their times; info describes both files.
func TestPlayRerenderEqualsRecording(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.mcap"), filepath.Join(dir, "b.mcap")
	code, _, errOut := simvis(t, "capture", marvinScene, "--mcap", a, "--frames", "100", "--rate", "5",
		"--sweep", "M_POSE.x=-2:-1", "--sweep", "M_POSE.yaw=20:60", "--sweep", "TILT.angle=-20:20")
	if code != 0 {
		t.Fatalf("capture: exit %d: %s", code, errOut)
	}
	shm := fmt.Sprintf("i15play%d", os.Getpid())
	code, out, errOut := simvis(t, "play", a, "--rerender", "--fast", "--no-nats", "--shm", shm, "--record", b)
	if code != 0 {
		t.Fatalf("play: exit %d: %s\n%s", code, errOut, out)
	}
	if !strings.Contains(out, "played to 19.800 s") || !strings.Contains(out, "100 values messages") {
		t.Errorf("play output:\n%s", out)
	}
	scans := func(file string) map[string][][]byte {
		m := map[string][][]byte{}
		_, err := record.Read(file, func(topic, schema, _ string, msg *mcap.Message) error {
			if schema == "sensor_msgs/msg/LaserScan" {
				m[topic] = append(m[topic], bytes.Clone(msg.Data))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	want, got := scans(a), scans(b)
	if len(want) != 3 {
		t.Fatalf("recorded scan topics %d, want MARVIN's 3", len(want))
	}
	for topic, w := range want {
		if len(w) != 100 || len(got[topic]) != 100 {
			t.Errorf("%s: %d recorded, %d replayed, want 100", topic, len(w), len(got[topic]))
			continue
		}
		for i := range w {
			if !bytes.Equal(w[i], got[topic][i]) {
				t.Errorf("%s message %d differs between the recording and its replay", topic, i)
				break
			}
		}
	}
	// The sweep moved the robot: scans differ from frame to frame.
	if f := want["/FRONT_LASER/scan"]; len(f) == 100 && bytes.Equal(f[0][16:], f[99][16:]) {
		t.Error("the first and last front scans are equal: the sweep did not move the robot")
	}
	code, out, _ = simvis(t, "info", "--json", b)
	var info struct {
		Complete bool
		Duration float64
		Topics   []struct {
			Topic    string
			Messages int
		}
		Attachments []struct{ Name string }
	}
	json.Unmarshal([]byte(out), &info)
	if code != 0 || !info.Complete || math.Abs(info.Duration-19.8) > 1e-9 || len(info.Attachments) != 2 || len(info.Topics) != 11+5 { // 11, and each of the 5 sensors' descriptions
		t.Errorf("info: exit %d\n%s", code, out)
	}
	if code, _, errOut := simvis(t, "play", filepath.Join(dir, "nope.mcap")); code != 1 || !strings.Contains(errOut, "nope.mcap") {
		t.Errorf("missing file: exit %d %q", code, errOut)
	}
	if code, _, _ := simvis(t, "play", a, "--rate", "0"); code != 2 {
		t.Errorf("--rate 0: exit %d, want 2", code)
	}
}

// Without --rerender, play republishes the recorded frames to NATS clients
// as a live host publishes frames: each scan's ranges are the recorded
// LaserScan's, one per recorded frame, in order; clouds carry the recorded
// points. Standard input controls it (here: resume from --paused).
func TestPlayRepublishesRecordedFrames(t *testing.T) {
	scenePath := recordScene(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "a.mcap")
	const frames = 10
	if code, _, errOut := simvis(t, "capture", scenePath, "--mcap", file, "--frames", strconv.Itoa(frames), "--rate", "10",
		"--sweep", "R_POSE.yaw=-20:20", "--sweep", "R_POSE.x=0:0.5"); code != 0 {
		t.Fatalf("capture: %s", errOut)
	}
	var want [][]float32
	var wantCloud [][]byte
	if _, err := record.Read(file, func(topic, _, _ string, m *mcap.Message) error {
		switch topic {
		case "/SCAN/scan":
			s, err := ros2.DecodeLaserScan(m.Data)
			if err != nil {
				return err
			}
			want = append(want, s.Ranges)
		case "/CLOUD/points":
			pc, err := ros2.DecodePointCloud2(m.Data)
			if err != nil {
				return err
			}
			wantCloud = append(wantCloud, pc.Data)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("i15rp%d", os.Getpid())
	p := startPlayer(t, file, "--shm", name, "--listen", "127.0.0.1:0")
	cmd, stdin, lines, errOut := p.cmd, p.stdin, p.lines, p.errOut
	nc := p.viewer(t, name)
	defer nc.Close()
	scans, _ := nc.SubscribeSync("simvis." + name + ".sensor.SCAN")
	clouds, _ := nc.SubscribeSync("simvis." + name + ".sensor.CLOUD")
	nc.Flush()
	fmt.Fprintln(stdin, "resume")
	for i := 0; i < frames; i++ {
		msg, err := scans.NextMsg(30 * time.Second)
		if err != nil {
			t.Fatalf("scan %d: %v\n%s", i, err, errOut.String())
		}
		var sc struct {
			Stamp  struct{ Frame int }
			Ranges []*float64
		}
		if err := json.Unmarshal(msg.Data, &sc); err != nil || msg.Header.Get("Simvis-Kind") != "scan" || sc.Stamp.Frame != i || len(sc.Ranges) != len(want[i]) {
			t.Fatalf("scan %d: kind %q, %v: %s", i, msg.Header.Get("Simvis-Kind"), err, msg.Data)
		}
		for k, r := range sc.Ranges {
			got := float32(math.Inf(1))
			if r != nil {
				got = float32(*r)
			}
			if got != want[i][k] {
				t.Errorf("scan %d beam %d: republished %v, recorded %v", i, k, got, want[i][k])
			}
		}
		cm, err := clouds.NextMsg(30 * time.Second)
		if err != nil {
			t.Fatalf("cloud %d: %v", i, err)
		}
		for k := 0; k < 21; k++ {
			if !bytes.Equal(cm.Data[12*k:12*k+12], wantCloud[i][20*k:20*k+12]) {
				t.Errorf("cloud %d point %d: republished %x, recorded %x", i, k, cm.Data[12*k:12*k+12], wantCloud[i][20*k:20*k+12])
			}
		}
	}
	var rest strings.Builder
	for lines.Scan() {
		rest.WriteString(lines.Text() + "\n")
	}
	if err := cmd.Wait(); err != nil || !strings.Contains(rest.String(), "play: playing at 0.000 s of 0.900 s") || !strings.Contains(rest.String(), "played to 0.900 s") {
		t.Errorf("play: %v\n%s\n%s", err, rest.String(), errOut.String())
	}
}

// A mirror of the player, seeked to the end of a MARVIN sequence, renders
// what a capture at the sequence's last values renders: the seek applied
// the recorded values (replayed from the start) to a host clients attach to.
func TestMirrorOfPlayerAfterSeek(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.mcap")
	if code, _, errOut := simvis(t, "capture", marvinScene, "--mcap", file, "--frames", "5", "--rate", "5",
		"--sweep", "M_POSE.x=-2:-1", "--sweep", "M_POSE.yaw=20:60", "--sweep", "TILT.angle=-20:20"); code != 0 {
		t.Fatalf("capture: %s", errOut)
	}
	shm := filepath.Join(dir, "simvis-player")
	p := startPlayer(t, file, "--no-nats", "--shm", shm)
	stdin, lines := p.stdin, p.lines
	fmt.Fprintln(stdin, "seek 0.8")
	if !lines.Scan() || lines.Text() != "play: paused at 0.800 s of 0.800 s, change 10, rate 1" {
		t.Fatalf("after seek: %q", lines.Text())
	}
	fmt.Fprintln(stdin, "bogus")
	if !lines.Scan() || !strings.Contains(lines.Text(), `unknown control "bogus"`) {
		t.Errorf("unknown control: %q", lines.Text())
	}
	// A time too large for a Duration is the end, not a wrapped negative
	// position; an overlong line is one report, and reading goes on.
	fmt.Fprintln(stdin, "seek 1e300")
	if !lines.Scan() || lines.Text() != "play: paused at 0.800 s of 0.800 s, change 10, rate 1" {
		t.Fatalf("after seek 1e300: %q", lines.Text())
	}
	fmt.Fprintln(stdin, strings.Repeat("x", 100000))
	fmt.Fprintln(stdin, "status")
	if !lines.Scan() || lines.Text() != "play: a control line longer than 4096 bytes; ignored" {
		t.Fatalf("after a long line: %q", lines.Text())
	}
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "play: paused at 0.800 s") {
		t.Fatalf("status after a long line: %q", lines.Text())
	}
	mirrored := filepath.Join(dir, "mirror")
	// The seek applies at the player's next cycle: wait for it through the
	// mirror, which copies the host's values.
	waitFor(t, func() bool {
		code, out, _ := simvis(t, "elements", "--shm", shm)
		return code == 0 && strings.Contains(out, "start 0: x=-1 y=-1 z=0 roll=0 pitch=0 yaw=60\n") && strings.Contains(out, "angle=20\n")
	}, "the player's values at 0.8 s")
	if code, out, errOut := simvis(t, "mirror", "--shm", shm, "-o", mirrored, "--latest"); code != 0 {
		t.Fatalf("mirror: %s %s", out, errOut)
	}
	want := filepath.Join(dir, "want")
	if code, _, errOut := simvis(t, "capture", marvinScene, "-o", want, "--set", "M_POSE.x=-1", "--set", "M_POSE.yaw=60", "--set", "TILT.angle=20"); code != 0 {
		t.Fatal(errOut)
	}
	if d := testkit.MaxDiff(testkit.ReadPNG(t, filepath.Join(mirrored, "CAMERA.png")), testkit.ReadPNG(t, filepath.Join(want, "CAMERA.png"))); d > 2 {
		t.Errorf("the player's mirror's camera differs from a capture at the last values by %d levels", d)
	}
	for _, name := range []string{"FRONT_LASER", "TILT_LASER"} {
		var a, b struct{ Ranges []*float64 }
		da, _ := os.ReadFile(filepath.Join(mirrored, name+".scan.json"))
		db, _ := os.ReadFile(filepath.Join(want, name+".scan.json"))
		json.Unmarshal(da, &a)
		json.Unmarshal(db, &b)
		if len(a.Ranges) != 361 || len(b.Ranges) != 361 {
			t.Fatalf("%s: %d and %d ranges", name, len(a.Ranges), len(b.Ranges))
		}
		for k := range a.Ranges {
			if (a.Ranges[k] == nil) != (b.Ranges[k] == nil) || a.Ranges[k] != nil && *a.Ranges[k] != *b.Ranges[k] {
				t.Errorf("%s beam %d: mirror of the player %v, capture %v", name, k, a.Ranges[k], b.Ranges[k])
				break
			}
		}
	}
}

// connectAsViewer connects to the embedded server of host name with the
// viewer's credentials from the host's secrets file, as a local dashboard
// would: the server refuses anyone without them.
func connectAsViewer(t *testing.T, url, name string) *nats.Conn {
	t.Helper()
	raw, err := os.ReadFile(natsipc.SecretsPath(name))
	if err != nil {
		t.Fatal(err)
	}
	var sec struct {
		Viewer struct{ User, Password string }
	}
	if err := json.Unmarshal(raw, &sec); err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(url, nats.UserInfo(sec.Viewer.User, sec.Viewer.Password))
	if err != nil {
		t.Fatal(err)
	}
	return nc
}

// playerChild is a `simvis play FILE --paused` child: its controls' input, its
// output after the "playing ..." line, and its standard error.
type playerChild struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	lines   *bufio.Scanner
	errOut  *strings.Builder
	playing string // the first line, which names where it serves
}

// startPlayer starts this test binary as `simvis play file --paused args...`
// and waits for its "playing" line; the player is killed when the test
// ends.
func startPlayer(t *testing.T, file string, args ...string) *playerChild {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"play", file, "--paused"}, args...)...)
	cmd.Env = append(os.Environ(), "SIMVIS_CLI_CHILD=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &playerChild{cmd: cmd, stdin: stdin, lines: bufio.NewScanner(stdout), errOut: new(strings.Builder)}
	cmd.Stderr = p.errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if !p.lines.Scan() || !strings.HasPrefix(p.lines.Text(), "playing ") {
		t.Fatalf("play did not start: %q %s", p.lines.Text(), p.errOut.String())
	}
	p.playing = p.lines.Text()
	return p
}

// viewer connects to the player's embedded NATS server (the URL its
// "playing ... and nats://..." line names) as scene name's viewer.
func (p *playerChild) viewer(t *testing.T, name string) *nats.Conn {
	t.Helper()
	_, after, _ := strings.Cut(p.playing, " and ")
	url := strings.TrimSuffix(strings.Fields(after)[0], ":")
	return connectAsViewer(t, url[:strings.LastIndex(url, "/")], name)
}
