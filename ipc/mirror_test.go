package ipc_test

import (
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simvis/simvis/internal/testkit"

	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
)

// request runs one request through a host that is cycled by the test.
func request(t *testing.T, h *ipc.Host, c *ipc.Client, xml string) {
	t.Helper()
	seq, err := c.Submit(xml)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Cycle(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Outcome(seq); err != nil {
		t.Fatal(err)
	}
}

// sameScene checks that every frame of the host's scene has the same world
// pose in the replica, and every element the same values.
func sameScene(t *testing.T, host, replica *scene.Scene) {
	t.Helper()
	for _, name := range host.FrameNames() {
		want, got := testkit.WorldPose(t, host, name), testkit.WorldPose(t, replica, name)
		if d := math.Max(math.Abs(want.X-got.X), math.Max(math.Abs(want.Y-got.Y), math.Max(math.Abs(want.Z-got.Z),
			math.Max(math.Abs(want.Roll-got.Roll), math.Max(math.Abs(want.Pitch-got.Pitch), math.Abs(want.Yaw-got.Yaw)))))); d > 1e-9 {
			t.Errorf("frame %s: host %+v, replica %+v", name, want, got)
		}
	}
	for _, e := range host.Elements() {
		for _, p := range e.Params {
			want, _ := host.Value(e.Name, p.Name)
			got, err := replica.Value(e.Name, p.Name)
			if err != nil || got != want {
				t.Errorf("%s.%s: host %v, replica %v (%v)", e.Name, p.Name, want, got, err)
			}
		}
	}
}

// A mirror that joins late rebuilds the scene from the change log and the
// values, follows later requests and writes, keeps its overlay to itself,
// and rebuilds after the host restarts.
func TestMirror(t *testing.T) {
	h, shm := startHost(t, ipc.HostOptions{})
	c := open(t, shm)
	request(t, h, c, `<part file="robot.gltf" name="ROBOT2" insert_at="WORLD" pose_offset="1 2 0 0 0 90"/>`)
	request(t, h, c, `<element type="rotation" name="PAN" insert_at="ROBOT2/MAST_TOP" axis="0 0 1" angle="10"/>`)
	pan, _ := c.Param("PAN", "angle")
	x, _ := c.Param("R_POSE", "x")
	c.Set(pan, 33)
	c.Set(x, 0.5)
	h.Cycle()

	overlay, err := scene.ParseCommands([]byte(`<element type="label" name="VIEW_POSE" insert_at="ROOT" text="mirror" z="3"/>
		<sensor type="camera" name="VIEW" insert_at="ROOT" pose_offset="-4 0 3 0 30 0" width="32" height="24"/>`), "overlay.xml", "")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ipc.NewMirror(c, overlay, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sameScene(t, h.Scene, m.Scene())
	if m.Applied() != 6 {
		t.Errorf("mirror replayed up to change %d, want 6", m.Applied())
	}
	if _, ok := m.Scene().Element("VIEW_POSE"); !ok {
		t.Error("overlay element missing from the mirror")
	}
	if _, ok := h.Scene.Element("VIEW_POSE"); ok {
		t.Error("overlay element reached the host")
	}

	// Later structure changes and values; the overlay's slots sit between
	// the host's in the replica, so values are matched by element.
	request(t, h, c, `<element type="translation" name="LIFT" insert_at="ROBOT/MAST_TOP" axis="0 0 1"/>`)
	lift, _ := c.Param("LIFT", "offset")
	c.Set(lift, 0.25)
	c.Set(pan, -70)
	h.Cycle()
	if err := m.Sync(); err != nil {
		t.Fatal(err)
	}
	sameScene(t, h.Scene, m.Scene())
	if v, _ := m.Scene().Value("VIEW_POSE", "z"); v != 3 {
		t.Errorf("overlay value %v, want its own 3", v)
	}

	// The host restarts with the plain scene file: the mirror rebuilds.
	h2, err := ipc.NewHost(shm, sceneCopy(t), ipc.HostOptions{Sizes: testSizes})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	if err := m.Sync(); err != nil {
		t.Fatal(err)
	}
	if m.Rebuilds != 1 || len(m.Scene().Parts()) != 2 || m.Applied() != 4 {
		t.Errorf("after the restart: %d rebuilds, %d parts, change %d", m.Rebuilds, len(m.Scene().Parts()), m.Applied())
	}
	if _, ok := m.Scene().Element("VIEW_POSE"); !ok {
		t.Error("overlay lost in the rebuild")
	}
	sameScene(t, h2.Scene, m.Scene())
}

// An overlay whose names clash with the host's is an error naming the
// overlay command.
func TestMirrorOverlayClash(t *testing.T) {
	_, shm := startHost(t, ipc.HostOptions{})
	c := open(t, shm)
	overlay, _ := scene.ParseCommands([]byte(`<element type="pose" name="R_POSE" insert_at="ROOT"/>`), "overlay.xml", "")
	_, err := ipc.NewMirror(c, overlay, scene.Options{})
	if err == nil || !strings.Contains(err.Error(), "overlay: overlay.xml:1") || !strings.Contains(err.Error(), `"R_POSE"`) {
		t.Errorf("clashing overlay: %v", err)
	}
}

// The MARVIN overlay shipped for `simvis mirror` applies to a replica of
// the MARVIN scene and stays out of the host.
func TestMarvinOverlay(t *testing.T) {
	sz := ipc.DefaultSizes
	sz.LogBytes = 1 << 20
	h, err := ipc.NewHost(filepath.Join(t.TempDir(), "region"), "../scenes/marvin/scene.xml", ipc.HostOptions{Sizes: sz})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	overlay, err := scene.ReadCommands("../scenes/marvin/overlay.xml")
	if err != nil {
		t.Fatal(err)
	}
	c := open(t, h.Region.Path())
	m, err := ipc.NewMirror(c, overlay, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"VIEW_BEAMS", "VIEW_LABEL"} {
		if _, ok := m.Scene().Element(name); !ok {
			t.Errorf("overlay element %s missing from the replica", name)
		}
		if _, ok := h.Scene.Element(name); ok {
			t.Errorf("overlay element %s in the host", name)
		}
	}
	sameScene(t, h.Scene, m.Scene())
}

// A record the replica cannot replay (here: the host's new element takes
// an overlay's name) stops the replay there, and Sync keeps reporting it:
// nothing after it is skipped.
func TestMirrorHoldsFailedRecord(t *testing.T) {
	h, shm := startHost(t, ipc.HostOptions{})
	c := open(t, shm)
	overlay, _ := scene.ParseCommands([]byte(`<element type="label" name="NOTE" insert_at="ROOT" text="x"/>`), "overlay.xml", "")
	m, err := ipc.NewMirror(c, overlay, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	request(t, h, c, `<element type="pose" name="NOTE" insert_at="ROOT"/>`)
	request(t, h, c, `<element type="pose" name="AFTER" insert_at="ROOT"/>`)
	for i := 0; i < 2; i++ {
		if err := m.Sync(); err == nil || !strings.Contains(err.Error(), "replaying change 5") {
			t.Errorf("sync %d: %v", i, err)
		}
	}
	if _, ok := m.Scene().Element("AFTER"); ok || m.Applied() != 4 {
		t.Errorf("the replica went past the failed record (at change %d)", m.Applied())
	}
}

// A host that stops and a new one that starts under the same name: the
// mirror finds the new one and rebuilds.
func TestMirrorAfterStopAndStart(t *testing.T) {
	shm := filepath.Join(t.TempDir(), "region")
	h1, err := ipc.NewHost(shm, sceneCopy(t), ipc.HostOptions{Sizes: testSizes})
	if err != nil {
		t.Fatal(err)
	}
	c := open(t, shm)
	m, err := ipc.NewMirror(c, nil, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h1.Close()
	if err := m.Sync(); !errors.Is(err, ipc.ErrHostStopped) {
		t.Errorf("with no host: %v", err)
	}
	h2, err := ipc.NewHost(shm, sceneCopy(t), ipc.HostOptions{Sizes: testSizes})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	if err := m.Sync(); err != nil || m.Rebuilds != 1 || c.Epoch() != h2.Region.Epoch() {
		t.Errorf("after the new host started: %v, %d rebuilds", err, m.Rebuilds)
	}
}
