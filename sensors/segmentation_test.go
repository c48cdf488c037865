package sensors_test

import (
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// segBox is an axis-aligned box of the segmentation scene, in the sensor
// frame (the sensor at 0 0 1 looking along +x).
type segBox struct {
	id, class int
	lo, hi    [3]float64
}

func cube(id, class int, x, y, z, half float64) segBox {
	return segBox{id, class, [3]float64{x - half, y - half, z - half}, [3]float64{x + half, y + half, z + half}}
}

// hit returns where the ray t*d enters the box (slab method), +Inf if not.
func (b segBox) hit(d [3]float64) float64 {
	t0, t1 := 0.0, math.Inf(1)
	for k := 0; k < 3; k++ {
		if d[k] == 0 {
			if b.lo[k] > 0 || b.hi[k] < 0 {
				return math.Inf(1)
			}
			continue
		}
		a, c := b.lo[k]/d[k], b.hi[k]/d[k]
		t0, t1 = math.Max(t0, math.Min(a, c)), math.Min(t1, math.Max(a, c))
	}
	if t0 > t1 {
		return math.Inf(1)
	}
	return t0
}

// expectedIDs returns the instance and class a ray through continuous
// pixel position (u, v) meets first, by the published intrinsics: the
// pixel center's ray leaves the axis by (cx-u)/fx to the left (+y), (cy-v)/fy
// up; what lies beyond far (depth along x) is background.
func expectedIDs(in sensors.Intrinsics, boxes []segBox, far, u, v float64) (int, int) {
	d := [3]float64{1, (in.Cx - u) / in.Fx, (in.Cy - v) / in.Fy}
	best, id, class := math.Inf(1), 0, 0
	for _, b := range boxes {
		if t := b.hit(d); t < best {
			best, id, class = t, b.id, b.class
		}
	}
	if best > far { // t is the depth along x, as d[0] = 1
		return 0, 0
	}
	return id, class
}

const segScene = `<scene>
  <part file="box.glb" name="A" pose_offset="3 0 1 0 0 0" class="robot"/>
  <part file="box.glb" name="B" pose_offset="3 1.2 1 0 0 0" class="tree"/>
  <part file="box.glb" name="C" pose_offset="3 0 1.9 0 0 0" class="robot"/>
  <part file="box.glb" name="OVERLAY" pose_offset="2 -0.9 1 0 0 0" class="robot" sensed="false"/>
  <part file="big.glb" name="FAR" pose_offset="22.5 -6 1 0 0 0" class="tree"/>
  <part file="box.glb" name="D" pose_offset="4 -1.5 0.6 0 0 0"/>
  <sensor type="segmentation" name="SEG" pose_offset="0 0 1 0 0 0" width="160" height="120" fov="60" far="20"/>
</scene>`

// Instances in command order without the overlay: A 1, B 2, C 3, FAR 4,
// D 5; classes sorted: robot 1, tree 2; D has none.
var segBoxes = []segBox{
	cube(1, 1, 3, 0, 0, 0.25),
	cube(2, 2, 3, 1.2, 0, 0.25),
	cube(3, 1, 3, 0, 0.9, 0.25),
	cube(4, 2, 22.5, -6, 0, 2), // front face at depth 20.5, beyond far
	cube(5, 0, 4, -1.5, -0.4, 0.25),
}

func loadSegScene(t *testing.T) (*scene.Scene, string) {
	t.Helper()
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "box.glb", 0.5, 0.5, 0.5, [4]float32{1, 0, 0, 1})
	testkit.WriteBox(t, dir, "big.glb", 4, 4, 4, [4]float32{0, 1, 0, 1})
	return testkit.LoadXML(t, dir, segScene), dir
}

// Every pixel's instance and class are those of the box its center's ray
// meets first, computed in closed form from the published intrinsics;
// pixels within 0.02 px of an edge are left out. The overlay is not seen,
// the box beyond far is background, the background is 0.
func TestSegmentationIDs(t *testing.T) {
	s, _ := loadSegScene(t)
	sg := sensorOf[*sensors.Segmentation](t, s, "SEG")
	im, err := sg.Segment(testkit.Renderer(t), s)
	if err != nil {
		t.Fatal(err)
	}
	in := sg.Intrinsics()
	if in.Width != 160 || in.Height != 120 || in.Cx != 79.5 || in.Cy != 59.5 {
		t.Fatalf("intrinsics %+v", in)
	}
	const far, eps = 20.0, 0.02
	compared, bad := 0, 0
	seen := map[int]int{}
	for j := 0; j < in.Height; j++ {
		for i := 0; i < in.Width; i++ {
			id, class := expectedIDs(in, segBoxes, far, float64(i), float64(j))
			edge := false
			for _, o := range [][2]float64{{-eps, -eps}, {eps, -eps}, {-eps, eps}, {eps, eps}} {
				if oid, _ := expectedIDs(in, segBoxes, far, float64(i)+o[0], float64(j)+o[1]); oid != id {
					edge = true
				}
			}
			if edge {
				continue
			}
			compared++
			k := j*in.Width + i
			if int(im.Instance[k]) != id || int(im.Class[k]) != class {
				if bad++; bad <= 10 {
					t.Errorf("pixel (%d, %d): instance %d class %d, want %d %d", i, j, im.Instance[k], im.Class[k], id, class)
				}
			}
			seen[id]++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d pixels wrong", bad, compared)
	}
	if compared < in.Width*in.Height*9/10 {
		t.Errorf("only %d pixels away from edges", compared)
	}
	for _, id := range []int{0, 1, 2, 3, 5} {
		if seen[id] < 20 {
			t.Errorf("instance %d covers %d pixels, want a visible patch", id, seen[id])
		}
	}
	if seen[4] != 0 {
		t.Errorf("FAR, beyond far, expected on %d pixels", seen[4])
	}
	// A's front face spans u = 79.5 ± fx 0.25/2.75 = 66.9..92.1 on the row
	// of the axis: pixels 67 and 92 are A's, 66 and 93 background.
	row := 59 * in.Width
	for i, want := range map[int]uint16{66: 0, 67: 1, 92: 1, 93: 0} {
		if got := im.Instance[row+i]; got != want {
			t.Errorf("pixel (%d, 59) = %d, want %d", i, got, want)
		}
	}
	// The overlay's center, 0.9 m right at 1.75 m: u = 79.5 + fx 0.9/1.75.
	u := int(math.Round(in.Cx + in.Fx*0.9/1.75))
	if got := im.Instance[row+u]; got != 0 {
		t.Errorf("overlay pixel (%d, 59) = %d, want background", u, got)
	}
	wantLabels := map[string]sensors.Label{
		"1": {Name: "A", Class: "robot", ClassID: 1},
		"2": {Name: "B", Class: "tree", ClassID: 2},
		"3": {Name: "C", Class: "robot", ClassID: 1},
		"4": {Name: "FAR", Class: "tree", ClassID: 2},
		"5": {Name: "D"},
	}
	if len(im.Labels.Instances) != len(wantLabels) {
		t.Errorf("labels %v, want %v", im.Labels.Instances, wantLabels)
	}
	count := map[uint16]int{}
	for _, id := range im.Instance {
		count[id]++
	}
	for k, want := range wantLabels {
		got := im.Labels.Instances[k]
		want.Pixels = got.Pixels
		if got != want {
			t.Errorf("label %s = %+v, want %+v", k, got, want)
		}
		var id uint16
		for i := range k {
			id = 10*id + uint16(k[i]-'0')
		}
		if got.Pixels != count[id] {
			t.Errorf("label %s counts %d pixels, the image %d", k, got.Pixels, count[id])
		}
	}
	if c := im.Labels.Classes; len(c) != 2 || c["1"] != "robot" || c["2"] != "tree" {
		t.Errorf("classes %v, want 1 robot, 2 tree", c)
	}
}

// Capture writes 16-bit PNGs that image/png reads back with the ids, the
// labels and the camera's calibration; ids stay with their parts when a
// part is switched off for a frame.
func TestSegmentationCapture(t *testing.T) {
	s, _ := loadSegScene(t)
	r := testkit.Renderer(t)
	sg := sensorOf[*sensors.Segmentation](t, s, "SEG")
	want, err := sg.Segment(r, s)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	files, err := sensors.CaptureAll(r, s, out)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"SEG.instance.png", "SEG.class.png", "SEG.labels.json", "SEG.json"}
	if len(files) != len(names) {
		t.Fatalf("wrote %v, want %v", files, names)
	}
	for i, n := range names {
		if filepath.Base(files[i]) != n {
			t.Errorf("file %d = %s, want %s", i, files[i], n)
		}
	}
	var idSums [2]int
	for i, ids := range [][]uint16{want.Instance, want.Class} {
		f, err := os.Open(files[i])
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		g, ok := img.(*image.Gray16)
		if !ok {
			t.Fatalf("%s decodes as %T, want 16-bit gray", files[i], img)
		}
		if g.Rect.Dx() != 160 || g.Rect.Dy() != 120 {
			t.Fatalf("%s is %v", files[i], g.Rect)
		}
		nonzero := 0
		for k, id := range ids {
			if got := g.Gray16At(k%160, k/160).Y; got != id {
				t.Fatalf("%s pixel %d = %d, want %d", files[i], k, got, id)
			}
			if id != 0 {
				nonzero++
			}
		}
		if nonzero == 0 {
			t.Errorf("%s has no ids", files[i])
		}
		for _, id := range ids {
			idSums[i] += int(id)
		}
	}
	var labels struct {
		Sensor    string `json:"sensor"`
		Instances map[string]struct {
			Name    string `json:"name"`
			Class   string `json:"class"`
			ClassID int    `json:"class_id"`
			Pixels  int    `json:"pixels"`
		} `json:"instances"`
		Classes map[string]string `json:"classes"`
	}
	data, err := os.ReadFile(files[2])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &labels); err != nil {
		t.Fatal(err)
	}
	if l := labels.Instances["2"]; labels.Sensor != "SEG" || l.Name != "B" || l.Class != "tree" || l.ClassID != 2 || l.Pixels == 0 {
		t.Errorf("labels %s", data)
	}
	if labels.Classes["1"] != "robot" || labels.Classes["2"] != "tree" {
		t.Errorf("classes %v", labels.Classes)
	}
	var cam struct {
		Width, Height int
		K             [9]float64
	}
	if data, err = os.ReadFile(files[3]); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &cam); err != nil {
		t.Fatal(err)
	}
	in := sg.Intrinsics()
	if cam.K != [9]float64{in.Fx, 0, in.Cx, 0, in.Fy, in.Cy, 0, 0, 1} || cam.Width != 160 || cam.Height != 120 {
		t.Errorf("SEG.json %s, want K of %+v", data, in)
	}

	// B switched off: its pixels show what is behind (background), and A,
	// C and D keep their ids.
	if err := s.Exec(mustCommand(t, `<element type="switch" name="HIDE_B" insert_at="B" on="0"/>`)); err != nil {
		t.Fatal(err)
	}
	again, err := sg.Segment(r, s)
	if err != nil {
		t.Fatal(err)
	}
	for k, id := range want.Instance {
		w := id
		if id == 2 {
			w = 0
		}
		if again.Instance[k] != w {
			t.Fatalf("pixel %d with B off = %d, want %d", k, again.Instance[k], w)
		}
	}
	if l := again.Labels.Instances["2"]; l.Name != "B" || l.Pixels != 0 {
		t.Errorf("B switched off: label %+v", l)
	}
	// OpenCV reads the same 16-bit ids: type, size and their sum.
	py := testkit.DebianPython(t, "cv2", "python3-opencv")
	for i, sum := range idSums {
		out, err := exec.Command(py, "-c", `import cv2, sys
a = cv2.imread(sys.argv[1], cv2.IMREAD_UNCHANGED)
print(a.dtype, a.shape[1], a.shape[0], int(a.sum()))`, files[i]).CombinedOutput()
		if want := fmt.Sprintf("uint16 160 120 %d\n", sum); err != nil || string(out) != want {
			t.Errorf("OpenCV reads %s as %q (%v), want %q", files[i], out, err, want)
		}
	}
}

func mustCommand(t *testing.T, xml string) *scene.Command {
	t.Helper()
	c, err := scene.ParseCommand(xml, "req", "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Bad attributes are errors naming the file, line and attribute; a
// camera's color attributes mean nothing to it.
func TestSegmentationBadAttributes(t *testing.T) {
	cases := []struct{ attrs, want string }{
		{`background="0 0 0"`, `attribute "background": unknown attribute for sensor type "segmentation"`},
		{`class="robot"`, `attribute "class": unknown attribute for sensor type "segmentation"`},
		{`far="0.01"`, `attribute "far": 0.01 must be greater than near (0.05)`},
		{`near="0"`, `attribute "near": 0 must be > 0`},
		{`fov="180"`, `attribute "fov": 180 is not in (0, 180) degrees`},
		{`width="0"`, `attribute "width": 0 is out of range [1, 16384]`},
	}
	for _, c := range cases {
		s := scene.New(scene.Options{})
		err := s.Exec(mustCommand(t, `<sensor type="segmentation" name="SEG" `+c.attrs+`/>`))
		want := `req:1: sensor "SEG": ` + c.want
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", c.attrs, err, want)
		}
	}
}

// An element that adds meshes (a navigation graph's markers) is an
// instance of its own with its class attribute, numbered after the parts;
// one under sensed="false" is not seen and not numbered.
func TestSegmentationElementInstance(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "box.glb", 0.5, 0.5, 0.5, [4]float32{1, 0, 0, 1})
	s := testkit.LoadXML(t, dir, `<scene>
  <element type="graph" name="NAV" nodes="W" W_x="3" W_y="-1" W_z="1" marker_size="0.5" class="waypoint"/>
  <element type="graph" name="HIDDEN_NAV" nodes="V" V_x="3" V_y="1" V_z="1" marker_size="0.5" class="waypoint" sensed="false"/>
  <part file="box.glb" name="A" pose_offset="3 0 1 0 0 0" class="robot"/>
  <sensor type="segmentation" name="SEG" pose_offset="0 0 1 0 0 0" width="160" height="120" fov="60"/>
</scene>`)
	sg := sensorOf[*sensors.Segmentation](t, s, "SEG")
	im, err := sg.Segment(testkit.Renderer(t), s)
	if err != nil {
		t.Fatal(err)
	}
	in := sg.Intrinsics()
	boxes := []segBox{cube(1, 1, 3, 0, 0, 0.25), cube(2, 2, 3, -1, 0, 0.25)}
	for _, u := range []float64{in.Cx, in.Cx + in.Fx*1/2.75, in.Cx - in.Fx*1/2.75} {
		i, j := int(math.Round(u)), 59
		id, class := expectedIDs(in, boxes, 100, float64(i), float64(j))
		k := j*in.Width + i
		if int(im.Instance[k]) != id || int(im.Class[k]) != class {
			t.Errorf("pixel (%d, %d): instance %d class %d, want %d %d", i, j, im.Instance[k], im.Class[k], id, class)
		}
	}
	want := map[string]sensors.Label{"1": {Name: "A", Class: "robot", ClassID: 1}, "2": {Name: "NAV", Class: "waypoint", ClassID: 2}}
	if len(im.Labels.Instances) != 2 {
		t.Errorf("labels %v, want A and NAV", im.Labels.Instances)
	}
	for k, w := range want {
		got := im.Labels.Instances[k]
		if got.Pixels == 0 {
			t.Errorf("instance %s covers no pixel", k)
		}
		w.Pixels = got.Pixels
		if got != w {
			t.Errorf("label %s = %+v, want %+v", k, got, w)
		}
	}
}

// The segmentation sensor sees what a camera with the same attributes
// shows, pixel for pixel: every pixel a camera colors (not its background)
// has an instance, and no other.
func TestSegmentationMatchesCamera(t *testing.T) {
	s, _ := loadSegScene(t)
	r := testkit.Renderer(t)
	if err := s.Exec(mustCommand(t, `<sensor type="camera" name="CAM" pose_offset="0 0 1 0 0 0" width="160" height="120" fov="60" far="20" background="0.2 0.4 0.6"/>`)); err != nil {
		t.Fatal(err)
	}
	img, err := camera(t, s, "CAM").Image(r, s)
	if err != nil {
		t.Fatal(err)
	}
	im, err := sensorOf[*sensors.Segmentation](t, s, "SEG").Segment(r, s)
	if err != nil {
		t.Fatal(err)
	}
	differ, objects := 0, 0
	for k, id := range im.Instance {
		bg := isBackground(img.RGBAAt(k%160, k/160))
		if id != 0 {
			objects++
		}
		if bg != (id == 0) {
			differ++
		}
	}
	// Both rasterize the same triangles by pixel centers; float32
	// matrices computed apart may flip a pixel whose center lies on an edge.
	t.Logf("%d of %d differ", differ, objects)
	if objects < 1000 || differ > objects/200 {
		t.Errorf("%d of %d object pixels differ from the camera's", differ, objects)
	}
}

// Encode gives a transport the ids (instance plane, then class plane,
// uint16 little-endian) and the calibration with the labels.
func TestSegmentationEncode(t *testing.T) {
	s, _ := loadSegScene(t)
	im, err := sensorOf[*sensors.Segmentation](t, s, "SEG").Segment(testkit.Renderer(t), s)
	if err != nil {
		t.Fatal(err)
	}
	info, data, err := im.Encode()
	if err != nil {
		t.Fatal(err)
	}
	n := 160 * 120
	if len(data) != 4*n {
		t.Fatalf("%d bytes, want %d", len(data), 4*n)
	}
	for k := 0; k < n; k++ {
		inst := uint16(data[2*k]) | uint16(data[2*k+1])<<8
		class := uint16(data[2*(n+k)]) | uint16(data[2*(n+k)+1])<<8
		if inst != im.Instance[k] || class != im.Class[k] {
			t.Fatalf("pixel %d: %d %d, want %d %d", k, inst, class, im.Instance[k], im.Class[k])
		}
	}
	var msg struct {
		Sensor    string            `json:"sensor"`
		K         [9]float64        `json:"K"`
		Classes   map[string]string `json:"classes"`
		Instances map[string]struct {
			Name string `json:"name"`
		} `json:"instances"`
	}
	if err := json.Unmarshal(info, &msg); err != nil {
		t.Fatal(err)
	}
	if msg.Sensor != "SEG" || msg.K[0] != im.Info.Intrinsics.Fx || msg.Classes["2"] != "tree" || msg.Instances["3"].Name != "C" {
		t.Errorf("info %s", info)
	}
}
