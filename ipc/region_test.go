package ipc_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	_ "github.com/simvis/simvis/elements"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
	_ "github.com/simvis/simvis/sensors" // the quickstart scene has a camera
)

const quickstart = "../scenes/quickstart/scene.xml"

var testSizes = ipc.Sizes{Elements: 16, NameBytes: 4096, Values: 1024, Requests: 8, RequestBytes: 4096, LogBytes: 1 << 16}

// hostScene creates a region and loads the quickstart scene into it, its
// parameter table mapped.
func hostScene(t *testing.T, path string) (*ipc.Region, *scene.Scene) {
	t.Helper()
	r, err := ipc.Create(path, testSizes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	cmds, err := scene.ReadCommands(quickstart)
	if err != nil {
		t.Fatal(err)
	}
	s := scene.New(r.SceneOptions())
	for _, c := range cmds {
		if err := s.Exec(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Publish(s); err != nil {
		t.Fatal(err)
	}
	return r, s
}

// A client attached to the file finds R_POSE, writes its yaw in place, and
// the host's next Update turns the robot.
func TestClientMovesHostScene(t *testing.T) {
	path := filepath.Join(t.TempDir(), "simvis-test")
	host, s := hostScene(t, path)
	c, err := ipc.Attach(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	descs, used, err := c.Descriptors()
	if err != nil {
		t.Fatal(err)
	}
	want := []ipc.Descriptor{{Name: "R_POSE", At: "ROBOT", Type: "pose", Start: 0, Params: []string{"x", "y", "z", "roll", "pitch", "yaw"}}}
	if !reflect.DeepEqual(descs, want) || used != 6 {
		t.Fatalf("descriptors %+v, %d values used; want %+v, 6", descs, used, want)
	}
	if v := c.Values(); v[0] != -2 || v[5] != 20 {
		t.Errorf("client reads x %v yaw %v, want -2 and 20", v[0], v[5])
	}
	c.Values()[5] = 90
	m, err := s.Transform("ROBOT", scene.WorldFrame)
	if err != nil {
		t.Fatal(err)
	}
	if p := scene.PoseFromMatrix(m); p.Yaw < 89.999 || p.Yaw > 90.001 {
		t.Errorf("ROBOT yaw %v after the client's write, want 90", p.Yaw)
	}
	// Elements added later are appended; earlier indices stay.
	cmd, err := scene.ParseCommand(`<element type="rotation" name="MAST_PAN" insert_at="ROBOT/MAST_TOP"/>`, "test", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Exec(cmd); err != nil {
		t.Fatal(err)
	}
	if err := host.Publish(s); err != nil {
		t.Fatal(err)
	}
	descs, used, err = c.Descriptors()
	if err != nil {
		t.Fatal(err)
	}
	if len(descs) != 2 || descs[0].Start != 0 || descs[1].Name != "MAST_PAN" || descs[1].Start != 6 ||
		!reflect.DeepEqual(descs[1].Params, []string{"angle"}) || used != 7 {
		t.Errorf("after adding MAST_PAN: %+v, %d used", descs, used)
	}
}

// A host restarting on the same path writes a new file with a new epoch;
// clients still mapping the old one see it marked replaced.
func TestEpochAndHostState(t *testing.T) {
	path := filepath.Join(t.TempDir(), "simvis-test")
	host, _ := hostScene(t, path)
	c, err := ipc.Attach(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	first := c.Epoch()
	if first == 0 || !c.HostRunning() {
		t.Fatalf("epoch %d, running %v", first, c.HostRunning())
	}
	host.Close()
	if c.HostRunning() {
		t.Error("host closed, client still sees it running")
	}
	host2, _ := hostScene(t, path)
	c2, err := ipc.Attach(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if c.HostRunning() || c2.Epoch() == first || c2.Epoch() != host2.Epoch() || !c2.HostRunning() {
		t.Errorf("old mapping running %v; new epoch %d (was %d, host says %d)", c.HostRunning(), c2.Epoch(), first, host2.Epoch())
	}
}

// Foreign, damaged or missing files are errors naming the file; a region
// too small for the scene refuses to publish instead of dropping elements.
func TestBadRegions(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "none")
	if _, err := ipc.Attach(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: %v", err)
	}
	foreign := filepath.Join(dir, "foreign")
	os.WriteFile(foreign, make([]byte, 8192), 0o600)
	if _, err := ipc.Attach(foreign); err == nil || !strings.Contains(err.Error(), "not a simvis region") {
		t.Errorf("foreign file: %v", err)
	}
	path := filepath.Join(dir, "region")
	host, _ := hostScene(t, path)
	host.Close()
	data, _ := os.ReadFile(path)
	os.WriteFile(path, data[:8192], 0o600) // the values section cut off
	if _, err := ipc.Attach(path); err == nil || !strings.Contains(err.Error(), "outside the 8192-byte file") {
		t.Errorf("truncated file: %v", err)
	}

	small, err := ipc.Create(filepath.Join(dir, "small"), ipc.Sizes{Elements: 1, NameBytes: 64, Values: 64, Requests: 4, RequestBytes: 1024, LogBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	s := scene.New(small.SceneOptions())
	for _, xml := range []string{`<element type="pose" name="A"/>`, `<element type="pose" name="B"/>`} {
		cmd, _ := scene.ParseCommand(xml, "test", "")
		if err := s.Exec(cmd); err != nil {
			t.Fatal(err)
		}
	}
	if err := small.Publish(s); err == nil || !strings.Contains(err.Error(), "2 elements do not fit the 1 descriptor records") {
		t.Errorf("too many elements: %v", err)
	}
	if _, err := ipc.Create(filepath.Join(dir, "zero"), ipc.Sizes{}); err == nil {
		t.Error("zero sizes accepted")
	}
}

// The layout is enough for another language: the standard-library Python
// script finds R_POSE in the region and moves the robot.
func TestPythonClient(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the language-neutral check needs it")
	}
	path := filepath.Join(t.TempDir(), "simvis-test")
	_, s := hostScene(t, path)
	out, err := exec.Command(python, "python/simvis_shm.py", path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "R_POSE (pose at ROBOT) start 0: x=-2 y=-1 z=0 roll=0 pitch=0 yaw=20") {
		t.Fatalf("listing: %v\n%s", err, out)
	}
	if out, err := exec.Command(python, "python/simvis_shm.py", path, "R_POSE.x=1.25", "R_POSE.yaw=-30").CombinedOutput(); err != nil {
		t.Fatalf("setting: %v\n%s", err, out)
	}
	m, err := s.Transform("ROBOT", scene.WorldFrame)
	if err != nil {
		t.Fatal(err)
	}
	if p := scene.PoseFromMatrix(m); p.X != 1.25 || p.Yaw < -30.0001 || p.Yaw > -29.9999 {
		t.Errorf("ROBOT at %v after the Python client's writes, want x 1.25 yaw -30", p)
	}
	if out, err := exec.Command(python, "python/simvis_shm.py", path, "R_POSE.heading").CombinedOutput(); err == nil || !strings.Contains(string(out), "R_POSE has no parameter heading") {
		t.Errorf("unknown parameter: %v\n%s", err, out)
	}
}

// The Python client checks what it reads as LAYOUT.md says: a change log
// whose counters were rewound is an error after its retries, never a
// shorter log, and a host whose process is gone is reported as such.
func TestPythonClientChecks(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the language-neutral check needs it")
	}
	h, shm := startHost(t, ipc.HostOptions{})
	a := attacker(t, shm)
	py := func(args ...string) (string, error) {
		cmd := exec.Command(python, append([]string{"python/simvis_shm.py", shm}, args...)...)
		cmd.Env = append(os.Environ(), "SIMVIS_SHM_PATIENCE=0.05")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := py("--log"); err != nil || strings.Count(out, "\n") != len(h.Scene.Log()) {
		t.Fatalf("log of an intact region: %v\n%s", err, out)
	}
	// Rewound: nothing repairs it (the host does not cycle here).
	used := a.Peek64(ipc.OffLogUsed)
	a.Poke64(ipc.OffLogUsed, 0)
	a.Poke64(ipc.OffLogCount, 0)
	if out, err := py("--log"); err == nil || !strings.Contains(out, "damaged region") || !strings.Contains(out, "record 1 lies past log_used 0") {
		t.Errorf("log with rewound counters: %v\n%s", err, out)
	}
	a.Poke64(ipc.OffLogUsed, used)
	a.Poke64(ipc.OffLogCount, 4)
	a.Poke32(ipc.OffDescSeq, a.Peek32(ipc.OffDescSeq)+1)
	if out, err := py(); err == nil || !strings.Contains(out, "desc_seq stays odd") {
		t.Errorf("listing with desc_seq odd: %v\n%s", err, out)
	}
	a.Poke32(ipc.OffDescSeq, a.Peek32(ipc.OffDescSeq)+1)
	a.Poke32(ipc.OffDescCount, 0)
	if out, err := py(); err == nil || !strings.Contains(out, "past desc_count 0") {
		t.Errorf("listing with desc_count rewound: %v\n%s", err, out)
	}
	a.Poke32(ipc.OffDescCount, 1)

	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	a.Poke32(ipc.OffPID, uint32(gone.Process.Pid)) // reaped: no such process
	want := fmt.Sprintf("host %s is not running (pid %d gone)", shm, gone.Process.Pid)
	for _, args := range [][]string{nil, {"--log"}, {"R_POSE.x"}, {"R_POSE.x=1"}} {
		if out, err := py(args...); err == nil || !strings.Contains(out, want) {
			t.Errorf("%v on a host whose process is gone: %v\n%s", args, err, out)
		}
	}
}
