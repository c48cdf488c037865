package ros2_test

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	_ "github.com/simvis/simvis/elements"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
	"github.com/simvis/simvis/sensors/ros2"
)

// testScene is a closed 8 x 6 x 3 m room (walls at x = ±4, y = ±3) with a
// robot part that a pose element moves and a joint element that tilts one
// of its sensors: every frame kind, static and moving frames.
func testScene(t *testing.T) *scene.Scene {
	dir := t.TempDir()
	testkit.WriteModel(t, dir, "room.glb", func(m *models.Model) {
		m.AddNode(nil, "room", mgl64.Translate3D(0, 0, 1.5), models.Box("room", 8, 6, 3, [4]float32{1, 1, 1, 1}))
	})
	testkit.WriteModel(t, dir, "robot.glb", func(m *models.Model) {
		m.AddNode(nil, "body", mgl64.Translate3D(0, 0, 0.05), models.Box("body", 0.1, 0.1, 0.1, [4]float32{1, 0, 0, 1}))
	})
	return testkit.LoadXML(t, dir, `<scene>
  <part file="room.glb" name="ROOM"/>
  <part file="robot.glb" name="ROBOT" insert_at="ROOM" pose_offset="0.5 -0.25 0 0 0 15"/>
  <element type="pose" name="R_POSE" insert_at="ROBOT" x="0.2" y="0.1" yaw="10"/>
  <sensor type="camera" name="CAM" insert_at="ROBOT" pose_offset="0.1 0 1.5 0 5 0" width="32" height="24"/>
  <sensor type="depth" name="DEPTH" insert_at="ROBOT" pose_offset="0.1 0 1.5 0 5 0" width="32" height="24"/>
  <sensor type="laser" name="SCAN" insert_at="ROBOT" pose_offset="0 0 1 0 0 0" angle_min="-90" angle_max="90" resolution="5"/>
  <element type="rotation" name="TILT" insert_at="ROBOT" axis="0 1 0" angle="10"/>
  <sensor type="laser3d" name="CLOUD" insert_at="ROBOT" pose_offset="0 0 1 0 0 0" layers="-10 0 10" angle_min="-30" angle_max="30" resolution="10"/>
  <sensor type="psd" name="PSD" insert_at="ROOM" pose_offset="0 0 1 0 0 0" range_max="5"/>
  <sensor type="segmentation" name="SEG" insert_at="ROBOT" pose_offset="0.1 0 1.5 0 0 0" width="32" height="24"/>
</scene>`)
}

type decoded struct {
	Topic    string          `json:"topic"`
	Type     string          `json:"type"`
	Msg      json.RawMessage `json:"msg"`
	Trailing bool            `json:"trailing"`
	Consumed int             `json:"consumed"`
	Size     int             `json:"size"`
}

// decodeInNode decodes the messages with @foxglove/rosmsg2-serialization
// from the schemas Schema returns.
func decodeInNode(t *testing.T, msgs []ros2.Message) []decoded {
	var items []map[string]string
	for _, m := range msgs {
		schema, err := ros2.Schema(m.Type)
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, map[string]string{"topic": m.Topic, "type": m.Type, "schema": string(schema), "data": base64.StdEncoding.EncodeToString(m.Data)})
	}
	raw, _ := json.Marshal(items)
	in := filepath.Join(t.TempDir(), "in.json")
	if err := os.WriteFile(in, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := testkit.Node(t, filepath.Join(testkit.RepoRoot(), "internal", "jstest", "ros2_decode.js"), in)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node decoder: %v: %s", err, stderr.String())
	}
	var dec []decoded
	if err := json.Unmarshal(out, &dec); err != nil {
		t.Fatal(err)
	}
	if len(dec) != len(msgs) {
		t.Fatalf("node decoded %d of %d messages", len(dec), len(msgs))
	}
	for _, d := range dec {
		if d.Trailing || d.Consumed != d.Size {
			t.Errorf("%s (%s): the decoder read %d of %d bytes: payload and schema disagree", d.Topic, d.Type, d.Consumed, d.Size)
		}
	}
	return dec
}

// jnum reads a decoded number: JSON numbers, or "Infinity", "-Infinity",
// "NaN" for what JSON cannot hold.
type jnum float64

func (n *jnum) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		switch s {
		case "Infinity":
			*n = jnum(math.Inf(1))
		case "-Infinity":
			*n = jnum(math.Inf(-1))
		default:
			*n = jnum(math.NaN())
		}
		return nil
	}
	var f float64
	err := json.Unmarshal(b, &f)
	*n = jnum(f)
	return err
}

type header struct {
	Stamp struct {
		Sec     int64 `json:"sec"`
		Nanosec int64 `json:"nanosec"`
	} `json:"stamp"`
	FrameID string `json:"frame_id"`
}

type bytesField struct {
	Base64 []byte `json:"base64"`
}

type transform struct {
	Header       header `json:"header"`
	ChildFrameID string `json:"child_frame_id"`
	Transform    struct {
		Translation struct{ X, Y, Z float64 }    `json:"translation"`
		Rotation    struct{ X, Y, Z, W float64 } `json:"rotation"`
	} `json:"transform"`
}

func (tr transform) matrix() mgl64.Mat4 {
	r := tr.Transform.Rotation
	m := mgl64.Quat{W: r.W, V: mgl64.Vec3{r.X, r.Y, r.Z}}.Mat4()
	p := tr.Transform.Translation
	m.SetCol(3, mgl64.Vec4{p.X, p.Y, p.Z, 1})
	return m
}

// composeTF returns the world transform of every frame by composing the
// decoded transforms along their parents.
func composeTF(t *testing.T, tfs []transform) map[string]mgl64.Mat4 {
	parent := map[string]transform{}
	for _, tr := range tfs {
		if _, dup := parent[tr.ChildFrameID]; dup {
			t.Errorf("frame %q has two parents", tr.ChildFrameID)
		}
		parent[tr.ChildFrameID] = tr
	}
	world := map[string]mgl64.Mat4{scene.WorldFrame: mgl64.Ident4()}
	var resolve func(f string, depth int) mgl64.Mat4
	resolve = func(f string, depth int) mgl64.Mat4 {
		if m, ok := world[f]; ok {
			return m
		}
		tr, ok := parent[f]
		if !ok || depth > 100 {
			t.Fatalf("frame %q does not reach the world", f)
		}
		m := resolve(tr.Header.FrameID, depth+1).Mul4(tr.matrix())
		world[f] = m
		return m
	}
	for f := range parent {
		resolve(f, 0)
	}
	return world
}

func maxDiff(a, b mgl64.Mat4) float64 {
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(a[i]-b[i]))
	}
	return d
}

// Every message of every frame kind and the tf tree decode with an
// independent ROS 2 CDR reader from the schemas Schema gives, byte for
// byte, and carry the frames' values: scan ranges, PSD range, cloud points
// with ring, RGB, depth and id pixels, K and D; /tf and /tf_static compose
// to the scene's frames (1e-9), the optical frames to FrameInfo's optical
// pose; a wall point projected with K and the tf tree lands on the depth
// pixel that sees it at its depth.
func TestMessagesDecodeInNode(t *testing.T) {
	s := testScene(t)
	r := testkit.Renderer(t)
	stamp := ros2.TimeFromNanos(12_345_678_901)
	var msgs []ros2.Message
	frames := map[string]*sensors.Frame{}
	for _, se := range s.Sensors() {
		f, err := sensors.RenderFrame(r, s, se, &sensors.Stamp{Frame: 1, Time: 12.345678901})
		if err != nil {
			t.Fatal(err)
		}
		frames[se.Name] = f
		m, err := ros2.FrameMessages(f, ros2.SensorTopic(se.Name), stamp)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m...)
	}
	static, moving, err := ros2.SceneTransforms(s)
	if err != nil {
		t.Fatal(err)
	}
	tfStatic, tfMoving := ros2.TF(static, stamp), ros2.TF(moving, stamp)
	msgs = append(msgs, ros2.Message{Topic: "/tf_static", Type: ros2.TypeTFMessage, Data: tfStatic.Marshal()},
		ros2.Message{Topic: "/tf", Type: ros2.TypeTFMessage, Data: tfMoving.Marshal()})

	dec := decodeInNode(t, msgs)
	byTopic := map[string]json.RawMessage{}
	for _, d := range dec {
		byTopic[d.Topic] = d.Msg
		var h struct {
			Header header `json:"header"`
		}
		if d.Type != ros2.TypeTFMessage {
			json.Unmarshal(d.Msg, &h)
			if h.Header.Stamp.Sec != 12 || h.Header.Stamp.Nanosec != 345_678_901 {
				t.Errorf("%s: stamp %+v, want 12 s 345678901 ns", d.Topic, h.Header.Stamp)
			}
		}
	}
	wantTopics := []string{"/CAM/image_raw", "/CAM/camera_info", "/DEPTH/depth/image_raw", "/DEPTH/depth/camera_info",
		"/SCAN/scan", "/CLOUD/points", "/PSD/range", "/SEG/instance/image_raw", "/SEG/class/image_raw", "/SEG/camera_info", "/tf", "/tf_static"}
	for _, topic := range wantTopics {
		if byTopic[topic] == nil {
			t.Errorf("no message on %s", topic)
		}
	}
	if len(byTopic) != len(wantTopics) {
		t.Errorf("topics %d, want %d", len(byTopic), len(wantTopics))
	}

	// LaserScan: the ranges are the scan's, +Inf and all, as float32.
	var scan struct {
		Header         header
		AngleMin       jnum   `json:"angle_min"`
		AngleIncrement jnum   `json:"angle_increment"`
		RangeMax       jnum   `json:"range_max"`
		Ranges         []jnum `json:"ranges"`
	}
	json.Unmarshal(byTopic["/SCAN/scan"], &scan)
	sc := frames["SCAN"].ScanData()
	if scan.Header.FrameID != "SCAN" || len(scan.Ranges) != len(sc.Ranges) || len(sc.Ranges) != 37 {
		t.Fatalf("scan: frame %q, %d ranges, want SCAN and %d", scan.Header.FrameID, len(scan.Ranges), len(sc.Ranges))
	}
	for i, rg := range sc.Ranges {
		if float32(scan.Ranges[i]) != float32(rg) {
			t.Errorf("scan beam %d: %v, scan %v", i, scan.Ranges[i], rg)
		}
	}
	if float32(scan.AngleMin) != float32(-math.Pi/2) || float32(scan.AngleIncrement) != float32(5*math.Pi/180) {
		t.Errorf("scan angles %v %v", scan.AngleMin, scan.AngleIncrement)
	}

	// Range: the PSD at the room's center, 1 m up, looking along +x: the
	// wall at 4 m is within its 5 m.
	var rng struct {
		Header        header
		RadiationType int  `json:"radiation_type"`
		Range         jnum `json:"range"`
		MaxRange      jnum `json:"max_range"`
	}
	json.Unmarshal(byTopic["/PSD/range"], &rng)
	if math.Abs(float64(rng.Range)-4) > 1e-3 || rng.MaxRange != 5 || rng.RadiationType != 1 || rng.Header.FrameID != "PSD" {
		t.Errorf("range %+v, want 4 m of 5, infrared, frame PSD", rng)
	}

	// PointCloud2: x y z are the cloud's points, ring the layer.
	var pc struct {
		Header    header
		Height    int `json:"height"`
		Width     int `json:"width"`
		PointStep int `json:"point_step"`
		RowStep   int `json:"row_step"`
		Fields    []struct {
			Name     string `json:"name"`
			Offset   int    `json:"offset"`
			Datatype int    `json:"datatype"`
		} `json:"fields"`
		Data bytesField `json:"data"`
	}
	json.Unmarshal(byTopic["/CLOUD/points"], &pc)
	cl := frames["CLOUD"].CloudData()
	if pc.Height != 3 || pc.Width != 7 || pc.PointStep != 20 || pc.RowStep != 140 || len(pc.Data.Base64) != 20*21 || len(pc.Fields) != 5 {
		t.Fatalf("cloud %dx%d step %d row %d, %d bytes, %d fields", pc.Height, pc.Width, pc.PointStep, pc.RowStep, len(pc.Data.Base64), len(pc.Fields))
	}
	for i, p := range cl.Points {
		b := pc.Data.Base64[20*i:]
		for k := 0; k < 3; k++ {
			if got := math.Float32frombits(binary.LittleEndian.Uint32(b[4*k:])); got != float32(p[k]) {
				t.Errorf("cloud point %d coordinate %d: %v, cloud %v", i, k, got, p[k])
			}
		}
		if ring := binary.LittleEndian.Uint16(b[12:]); int(ring) != i/7 {
			t.Errorf("cloud point %d: ring %d, want %d", i, ring, i/7)
		}
	}

	// Images: every pixel.
	var img struct {
		Header   header
		Height   int        `json:"height"`
		Width    int        `json:"width"`
		Encoding string     `json:"encoding"`
		Step     int        `json:"step"`
		Data     bytesField `json:"data"`
	}
	json.Unmarshal(byTopic["/CAM/image_raw"], &img)
	rgba, _ := frames["CAM"].ImageData()
	if img.Encoding != "rgb8" || img.Step != 96 || img.Header.FrameID != "CAM_optical" || len(img.Data.Base64) != 32*24*3 {
		t.Fatalf("camera image %s step %d frame %s %d bytes", img.Encoding, img.Step, img.Header.FrameID, len(img.Data.Base64))
	}
	for i := 0; i < 32*24; i++ {
		for c := 0; c < 3; c++ {
			if img.Data.Base64[3*i+c] != rgba.Pix[4*i+c] {
				t.Fatalf("camera pixel %d channel %d: %d, frame %d", i, c, img.Data.Base64[3*i+c], rgba.Pix[4*i+c])
			}
		}
	}
	json.Unmarshal(byTopic["/SEG/instance/image_raw"], &img)
	seg := frames["SEG"].SegmentationData()
	if img.Encoding != "mono16" || img.Step != 64 || len(img.Data.Base64) != 2*32*24 {
		t.Fatalf("instance image %s step %d", img.Encoding, img.Step)
	}
	for i, id := range seg.Instance {
		if got := binary.LittleEndian.Uint16(img.Data.Base64[2*i:]); got != id {
			t.Fatalf("instance pixel %d: %d, frame %d", i, got, id)
		}
	}
	json.Unmarshal(byTopic["/DEPTH/depth/image_raw"], &img)
	depth := frames["DEPTH"].DepthData()
	if img.Encoding != "32FC1" || img.Step != 128 || img.Header.FrameID != "DEPTH_optical" {
		t.Fatalf("depth image %s step %d frame %s", img.Encoding, img.Step, img.Header.FrameID)
	}
	depthAt := func(u, v int) float64 {
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(img.Data.Base64[4*(v*32+u):])))
	}
	for i, z := range depth.Depth {
		if float32(depthAt(i%32, i/32)) != z {
			t.Fatalf("depth pixel %d: %v, frame %v", i, depthAt(i%32, i/32), z)
		}
	}

	// CameraInfo: K, D, the model, the optical frame.
	var ci struct {
		Header          header
		Width           int         `json:"width"`
		Height          int         `json:"height"`
		DistortionModel string      `json:"distortion_model"`
		D               []float64   `json:"d"`
		K               [9]float64  `json:"k"`
		P               [12]float64 `json:"p"`
	}
	json.Unmarshal(byTopic["/DEPTH/depth/camera_info"], &ci)
	in := depth.Info.Intrinsics
	if ci.Header.FrameID != "DEPTH_optical" || ci.K != in.K() || ci.P != in.P() || ci.DistortionModel != "plumb_bob" || len(ci.D) != 5 || ci.Width != 32 || ci.Height != 24 {
		t.Fatalf("depth camera info %+v, want K %v", ci, in.K())
	}
	if ci.K[2] != 15.5 || ci.K[5] != 11.5 {
		t.Errorf("principal point %v %v, want the pixel-center convention's 15.5 11.5", ci.K[2], ci.K[5])
	}

	// /tf and /tf_static compose to the scene's frames.
	var tfs []transform
	for _, topic := range []string{"/tf", "/tf_static"} {
		var m struct {
			Transforms []transform `json:"transforms"`
		}
		json.Unmarshal(byTopic[topic], &m)
		tfs = append(tfs, m.Transforms...)
	}
	world := composeTF(t, tfs)
	for _, name := range s.FrameNames() {
		want, err := s.Transform(name, scene.WorldFrame)
		if err != nil {
			t.Fatal(err)
		}
		if d := maxDiff(world[name], want); d > 1e-9 {
			t.Errorf("frame %s: tf composes to %v, scene %v (%g)", name, world[name], want, d)
		}
	}
	for _, name := range []string{"CAM", "DEPTH", "SEG"} {
		var fi sensors.FrameInfo
		switch name {
		case "CAM":
			_, fi = frames[name].ImageData()
		case "DEPTH":
			fi = frames[name].DepthData().Info
		case "SEG":
			fi = frames[name].SegmentationData().Info
		}
		if d := maxDiff(world[name+"_optical"], fi.OpticalPose().Matrix()); d > 1e-9 {
			t.Errorf("%s_optical differs from the frame's optical pose by %g", name, d)
		}
	}
	// Moving are the transforms the elements change; the static ones stay.
	if err := s.Set("R_POSE", "x", 0.7); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("TILT", "angle", -20); err != nil {
		t.Fatal(err)
	}
	static2, moving2, err := ros2.SceneTransforms(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(static2) != len(static) || len(moving2) != len(moving) || len(moving) == 0 {
		t.Fatalf("%d static and %d moving transforms, then %d and %d", len(static), len(moving), len(static2), len(moving2))
	}
	for i := range static {
		if static2[i].Child != static[i].Child || maxDiff(static2[i].Matrix, static[i].Matrix) > 0 {
			t.Errorf("static transform of %s changed with the elements", static[i].Child)
		}
	}
	changed := map[string]bool{}
	for i := range moving {
		if maxDiff(moving2[i].Matrix, moving[i].Matrix) > 1e-9 {
			changed[moving[i].Child] = true
		}
	}
	// The tree has the scene's shape: ROBOT moves in ROOM (R_POSE, and
	// TILT, which wraps the insertion point ROBOT and what follows it);
	// CAM and SCAN, inserted before TILT, move relative to ROBOT; CLOUD
	// and SEG, inserted after it, tilt with ROBOT and are static below it.
	for _, name := range []string{"ROBOT", "CAM", "SCAN"} {
		if !changed[name] {
			t.Errorf("%s did not move with the elements (moving: %v)", name, changed)
		}
	}
	if err := s.Set("R_POSE", "x", 0.2); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("TILT", "angle", 10); err != nil {
		t.Fatal(err)
	}

	// A point on the wall x = 4 in view of the depth camera: K and the tf
	// tree put it on the pixel whose depth is its z in the optical frame.
	opt := world["DEPTH_optical"]
	inv, _ := scene.InvertAffine(opt)
	for _, wp := range []mgl64.Vec3{{4, 0.3, 1.7}, {4, -0.2, 1.4}} {
		p := inv.Mul4x1(wp.Vec4(1)).Vec3()
		u, v := ci.K[0]*p[0]/p[2]+ci.K[2], ci.K[4]*p[1]/p[2]+ci.K[5]
		iu, iv := int(math.Round(u)), int(math.Round(v))
		if iu < 0 || iv < 0 || iu >= 32 || iv >= 24 {
			t.Fatalf("wall point %v projects to (%.2f, %.2f), outside the image", wp, u, v)
		}
		// The wall is a plane: depth across it is linear in (u, v) per
		// 1/z, so read the pixel back into a point and compare on the wall.
		z := depthAt(iu, iv)
		back := opt.Mul4x1(mgl64.Vec4{(float64(iu) - ci.K[2]) * z / ci.K[0], (float64(iv) - ci.K[5]) * z / ci.K[4], z, 1})
		if math.Abs(back[0]-4) > 2e-3 {
			t.Errorf("pixel (%d, %d) of wall point %v: depth %v puts it at x = %v, not on the wall at 4", iu, iv, wp, z, back[0])
		}
		if d := math.Hypot(back[1]-wp[1], back[2]-wp[2]); d > 2*z/ci.K[0] {
			t.Errorf("wall point %v: its pixel (%d, %d) sees (%.3f %.3f %.3f), %.3f m off (more than a pixel)", wp, iu, iv, back[0], back[1], back[2], d)
		}
	}
}

// The schemas are the ros2msg form: the type's own text first, each
// dependency once after a line of 80 '=' and "MSG: pkg/Type".
func TestSchemaForm(t *testing.T) {
	s, err := ros2.Schema(ros2.TypeTFMessage)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(string(s), strings.Repeat("=", 80)+"\n")
	want := []string{"", "MSG: geometry_msgs/TransformStamped\n", "MSG: std_msgs/Header\n", "MSG: builtin_interfaces/Time\n",
		"MSG: geometry_msgs/Transform\n", "MSG: geometry_msgs/Vector3\n", "MSG: geometry_msgs/Quaternion\n"}
	if len(parts) != len(want) || parts[0] != "geometry_msgs/TransformStamped[] transforms\n" {
		t.Fatalf("TFMessage schema has %d sections:\n%s", len(parts), s)
	}
	for i := 1; i < len(want); i++ {
		if !strings.HasPrefix(parts[i], want[i]) {
			t.Errorf("section %d starts %q, want %q", i, parts[i][:min(40, len(parts[i]))], want[i])
		}
	}
	if _, err := ros2.Schema("sensor_msgs/msg/Nope"); err == nil || !strings.Contains(err.Error(), `"sensor_msgs/msg/Nope"`) {
		t.Errorf("unknown type: %v", err)
	}
}

func TestSensorTopic(t *testing.T) {
	for in, want := range map[string]string{
		"FRONT_LASER": "/FRONT_LASER", "arm/cam 1": "/arm/cam_1", "2d": "/_2d", "/a//b/": "/a/b", "a--b": "/a_b", "": "/sensor",
	} {
		if got := ros2.SensorTopic(in); got != want {
			t.Errorf("SensorTopic(%q) = %q, want %q", in, got, want)
		}
	}
	var n ros2.Namespaces
	if ns, err := n.Of("a b"); err != nil || ns != "/a_b" {
		t.Errorf("a b: %q %v", ns, err)
	}
	if ns, err := n.Of("a b"); err != nil || ns != "/a_b" {
		t.Errorf("a b again: %q %v", ns, err)
	}
	if _, err := n.Of("a-b"); err == nil || err.Error() != `sensors "a b" and "a-b" both map to the topics /a_b/...: rename one` {
		t.Errorf("colliding names: %v", err)
	}
	if ns, ok := n.Known("a-b"); ok || ns != "" {
		t.Errorf("a-b known as %q", ns)
	}
}

// What this package encodes decodes back to the same message, and every
// cut of a message is refused, not misread.
func TestDecodeRoundTripAndTruncation(t *testing.T) {
	scan := ros2.LaserScan{Header: ros2.Header{Stamp: ros2.Time{Sec: 3, Nanosec: 7}, FrameID: "S"}, AngleMin: -1, AngleMax: 1,
		AngleIncrement: 0.5, RangeMin: 0.1, RangeMax: 30, Ranges: []float32{1, float32(math.Inf(1)), float32(math.Inf(-1)), 2, 3}}
	rg := ros2.Range{Header: ros2.Header{FrameID: "P"}, RadiationType: ros2.Infrared, MinRange: 0.04, MaxRange: 0.8, Range: 0.5}
	img := ros2.Image{Header: ros2.Header{FrameID: "C_optical"}, Height: 2, Width: 3, Encoding: "rgb8", Step: 9, Data: []byte("abcdefghijklmnopqr")}
	pc := ros2.PointCloud2{Header: ros2.Header{FrameID: "L"}, Height: 1, Width: 2, Fields: ros2.CloudFields, PointStep: 20, RowStep: 40, Data: make([]byte, 40), IsDense: true}
	for _, c := range []struct {
		data   []byte
		decode func([]byte) (any, error)
		want   any
	}{
		{scan.Marshal(), func(b []byte) (any, error) { return ros2.DecodeLaserScan(b) }, &scan},
		{rg.Marshal(), func(b []byte) (any, error) { return ros2.DecodeRange(b) }, &rg},
		{img.Marshal(), func(b []byte) (any, error) { return ros2.DecodeImage(b) }, &img},
		{pc.Marshal(), func(b []byte) (any, error) { return ros2.DecodePointCloud2(b) }, &pc},
	} {
		got, err := c.decode(c.data)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(c.want)
		if string(a) != string(b) && !strings.Contains(string(a), "Inf") {
			t.Errorf("round trip: %s, want %s", a, b)
		}
		if s, ok := got.(*ros2.LaserScan); ok {
			for i := range scan.Ranges {
				if s.Ranges[i] != scan.Ranges[i] {
					t.Errorf("range %d: %v, want %v", i, s.Ranges[i], scan.Ranges[i])
				}
			}
		}
		for n := 0; n < len(c.data); n++ {
			if _, err := c.decode(c.data[:n]); err == nil {
				t.Errorf("%T cut to %d of %d bytes decodes", c.want, n, len(c.data))
			}
		}
		if _, err := c.decode(append(c.data, 0, 0, 0, 0, 0, 0, 0, 0)); err == nil {
			t.Errorf("%T with 8 trailing bytes decodes", c.want)
		}
	}
}
