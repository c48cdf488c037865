package natsipc_test

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/ipc/natsipc"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// jsResult is what internal/jstest/nats_client.js prints.
type jsResult struct {
	Epoch      string   `json:"epoch"`
	Elements   []string `json:"elements"`
	YawBefore  float64  `json:"yawBefore"`
	RequestSeq uint64   `json:"requestSeq"`
	Log        []struct {
		Seq    uint64         `json:"seq"`
		Source string         `json:"source"`
		XML    string         `json:"xml"`
		Files  []ipc.FileHash `json:"files"`
	} `json:"log"`
	Sensors []string                   `json:"sensors"`
	Frames  map[string]json.RawMessage `json:"frames"`
	Chunked []string                   `json:"chunked"`
}

// A client written in JavaScript from NATS.md alone (npm's nats package)
// lists the elements, reads a snapshot, sets a value, sends a request,
// follows the change log and decodes one frame of each sensor kind, the
// large ones in chunks; what it read matches the host.
func TestJavaScriptClient(t *testing.T) {
	script := filepath.Join(testkit.RepoRoot(), "internal", "jstest", "nats_client.js")
	name := uniqueName("js")
	srv := startServer(t, natsipc.ServerOptions{Name: name, MaxPayload: 256 << 10}) // the camera's 921,600 bytes come in chunks
	s := serveAt(t, srv.URL(), name, natsipc.Limits{}, nil)
	dc, err := ipc.Dial(srv.URLFor(natsipc.RoleDriver) + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	for _, x := range []string{
		`<sensor type="depth" name="DEP" insert_at="ROBOT" pose_offset="0.2 0 1.1 0 12 0" width="64" height="48" fov="70" range_max="20"/>`,
		`<sensor type="laser" name="LASER" insert_at="ROBOT" pose_offset="0 0 0.3 0 0 0" angle_min="-90" angle_max="90" resolution="1" rate="5"/>`,
		`<sensor type="psd" name="PSD" insert_at="ROBOT" pose_offset="0 0 0.3 0 0 0"/>`,
		`<sensor type="laser3d" name="CLOUD" insert_at="ROBOT" pose_offset="0 0 0.5 0 0 0"/>`,
		`<sensor type="segmentation" name="SEG" insert_at="ROBOT" pose_offset="0.2 0 1.1 0 12 0" width="64" height="48" fov="70"/>`,
	} {
		if _, err := dc.Request(x); err != nil {
			t.Fatalf("%s: %v", x, err)
		}
	}
	cmd := testkit.Node(t, script, srv.URLFor(natsipc.RoleDriver), name)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 16<<20)
	if !lines.Scan() || lines.Text() != "READY" {
		cmd.Wait()
		t.Fatalf("the script: %q\n%s", lines.Text(), stderr.String())
	}

	// One frame of each sensor, rendered and published as serve does.
	s.pause()
	r := testkit.Renderer(t)
	want := map[string][]byte{} // kind: the data published
	infos := map[string][]byte{}
	for _, se := range s.host.Scene.Sensors() {
		f, err := sensors.RenderFrame(r, s.host.Scene, se, &sensors.Stamp{Frame: 3, Time: 0.1})
		if err != nil {
			t.Fatalf("%s: %v", se.Name, err)
		}
		info, data, err := f.Encode()
		if err != nil {
			t.Fatal(err)
		}
		want[f.Kind], infos[f.Kind] = data, info
		if err := s.pub.PublishSensor(se.Name, f.Kind, info, data); err != nil {
			t.Fatal(err)
		}
	}
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "RESULT ") {
		cmd.Wait()
		t.Fatalf("the script: %q\n%s", lines.Text(), stderr.String())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the script: %v\n%s", err, stderr.String())
	}
	var res jsResult
	if err := json.Unmarshal([]byte(strings.TrimPrefix(lines.Text(), "RESULT ")), &res); err != nil {
		t.Fatal(err)
	}

	t.Logf("frames the script decoded: %s", res.Frames)
	// list, snapshot, set, request
	if res.Epoch != itoaU(s.host.Region.Epoch()) {
		t.Errorf("epoch %q, host %d", res.Epoch, s.host.Region.Epoch())
	}
	var elems []string
	for _, e := range s.host.Scene.Elements() {
		if e.Name != "JS" {
			elems = append(elems, e.Name+":"+e.Type+":"+itoa(e.Start)+":"+strings.Join(paramNames(e), ","))
		}
	}
	if strings.Join(res.Elements, " ") != strings.Join(elems, " ") {
		t.Errorf("elements %v, host %v", res.Elements, elems)
	}
	if res.YawBefore != 20 {
		t.Errorf("snapshot yaw %v, want 20", res.YawBefore)
	}
	if v, _ := s.host.Scene.Value("R_POSE", "yaw"); v != 64 {
		t.Errorf("host yaw %v after the script's set, want 64", v)
	}
	if v, err := s.host.Scene.Value("JS", "yaw"); err != nil || v != 7 || res.RequestSeq != 10 {
		t.Errorf("the script's request: change %d, JS yaw %v %v", res.RequestSeq, v, err)
	}
	// follow the log
	var cur ipc.LogCursor
	host, _ := s.host.Region.ReadLog(&cur)
	if len(res.Log) != len(host) {
		t.Fatalf("the script read %d records, the host has %d", len(res.Log), len(host))
	}
	for i, rec := range res.Log {
		h := host[i]
		if rec.Seq != h.Seq || rec.Source != h.Source || rec.XML != h.XML || len(rec.Files) != len(h.Files) {
			t.Errorf("record %d: %+v, host %+v", i+1, rec, h)
		}
	}
	if len(res.Log[0].Files) != 1 || res.Log[0].Files[0].Path != "world.gltf" ||
		res.Log[0].Files[0].SHA256 != sha256sum(t, filepath.Join(filepath.Dir(s.host.Scene.Parts()[0].File), "world.gltf")) {
		t.Errorf("the world's record lists %+v", res.Log[0].Files)
	}
	if !strings.Contains(res.Log[9].Source, "the JavaScript test") {
		t.Errorf("the request's record: %+v", res.Log[9])
	}
	if strings.Join(res.Sensors, " ") != "ROBOT_CAM:camera:image:500 DEP:depth:depth:500 LASER:laser:scan:5 PSD:psd:psd:500 CLOUD:laser3d:cloud:500 SEG:segmentation:segmentation:500" {
		t.Errorf("sensors in desc: %v", res.Sensors)
	}
	if strings.Join(res.Chunked, " ") != "image" {
		t.Errorf("chunked frames: %v, want the camera's", res.Chunked)
	}

	// decode one frame of each kind: numbers at known places
	var img struct {
		Width, Height int
		Center        [3]int
		Frame         int
	}
	json.Unmarshal(res.Frames["image"], &img)
	at := 3 * (240*640 + 320)
	if img.Width != 640 || img.Height != 480 || img.Center != [3]int{int(want["image"][at]), int(want["image"][at+1]), int(want["image"][at+2])} || img.Frame != 3 {
		t.Errorf("image: %+v", img)
	}
	var dep struct {
		Width, Height int
		Center        float64
	}
	json.Unmarshal(res.Frames["depth"], &dep)
	wantDepth := math.Float32frombits(binary.LittleEndian.Uint32(want["depth"][4*(24*64+32):]))
	if dep.Width != 64 || dep.Height != 48 || float32(dep.Center) != wantDepth || !(wantDepth > 0) {
		t.Errorf("depth: %+v, want center %v", dep, wantDepth)
	}
	var scan struct {
		Beams    int
		First    *float64
		AngleMin float64
	}
	json.Unmarshal(res.Frames["scan"], &scan)
	var goScan struct {
		Ranges []*float64 `json:"ranges"`
	}
	json.Unmarshal(infos["scan"], &goScan)
	if scan.Beams != 181 || scan.Beams != len(goScan.Ranges) || math.Abs(scan.AngleMin+math.Pi/2) > 1e-9 || (scan.First == nil) != (goScan.Ranges[0] == nil) {
		t.Errorf("scan: %+v", scan)
	}
	var cloud struct{ Points, Finite int }
	json.Unmarshal(res.Frames["cloud"], &cloud)
	finite := 0
	for i := 0; i < len(want["cloud"])/12; i++ {
		if !math.IsNaN(float64(math.Float32frombits(binary.LittleEndian.Uint32(want["cloud"][12*i:])))) {
			finite++
		}
	}
	if cloud.Points != len(want["cloud"])/12 || cloud.Finite != finite || finite == 0 {
		t.Errorf("cloud: %+v, want %d of %d finite", cloud, finite, len(want["cloud"])/12)
	}
	var seg struct{ Instance, Class, Instances int }
	json.Unmarshal(res.Frames["segmentation"], &seg)
	n := 64 * 48
	if seg.Instance != int(binary.LittleEndian.Uint16(want["segmentation"][2*(24*64+32):])) ||
		seg.Class != int(binary.LittleEndian.Uint16(want["segmentation"][2*(n+24*64+32):])) || seg.Instances == 0 {
		t.Errorf("segmentation: %+v", seg)
	}
	var psd struct{ Range *float64 }
	json.Unmarshal(res.Frames["psd"], &psd)
	var goPSD struct {
		Range *float64 `json:"range"`
	}
	json.Unmarshal(infos["psd"], &goPSD)
	if (psd.Range == nil) != (goPSD.Range == nil) || psd.Range != nil && *psd.Range != *goPSD.Range {
		t.Errorf("psd: %v, host %v", psd.Range, goPSD.Range)
	}
}

func itoaU(v uint64) string { b, _ := json.Marshal(v); return string(b) }

func paramNames(e *scene.ElementEntry) []string {
	var out []string
	for _, p := range e.Params {
		out = append(out, p.Name)
	}
	return out
}

// sha256sum hashes a file with coreutils' sha256sum.
func sha256sum(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command("sha256sum", path).Output()
	if err != nil {
		t.Skipf("sha256sum: %v", err)
	}
	return strings.Fields(string(out))[0]
}
