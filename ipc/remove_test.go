package ipc_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
)

func names(t *testing.T, c *ipc.Client) string {
	t.Helper()
	ds, err := c.Elements()
	if err != nil {
		t.Fatal(err)
	}
	var list []string
	for _, d := range ds {
		list = append(list, d.Name)
	}
	return strings.Join(list, " ")
}

// Issue 29, finding 9: elements (and parts and sensors) are removable by
// request, and a removal frees their place in the scene's budget and the
// shared descriptor table. The host builds a new run without the removed
// command and what depended on it (a new region at the same path, whose
// change log lacks them); clients reopen it as after a restart, values
// carry over by name, and a mirror rebuilds to the same scene.
func TestRemoveByRequest(t *testing.T) {
	h, shm := startHost(t, ipc.HostOptions{Limits: scene.Limits{Elements: 4}, RemoveInterval: -1})
	stop := cycleWhile(t, h)
	defer stop()
	c := open(t, shm)
	for _, xml := range []string{
		`<element type="pose" name="E1" insert_at="ROBOT"/>`,
		`<part file="robot.gltf" name="R2" insert_at="WORLD" pose_offset="3 0 0 0 0 0"/>`,
		`<sensor type="camera" name="R2_CAM" insert_at="R2" width="32" height="24"/>`,
		`<element type="rotation" name="R2_PAN" insert_at="R2/MAST_TOP" axis="0 0 1" angle="5"/>`,
		`<element type="pose" name="E2" insert_at="ROBOT"/>`,
	} {
		if _, err := c.Request(xml); err != nil {
			t.Fatalf("%s: %v", xml, err)
		}
	}
	// Full: the fifth element is refused.
	if _, err := c.Request(`<element type="pose" name="E3" insert_at="ROBOT"/>`); err == nil || !strings.Contains(err.Error(), "--max-elements") {
		t.Fatalf("a fifth element: %v", err)
	}
	yaw, _ := c.Param("R_POSE", "yaw")
	if err := c.SetConfirmed([]ipc.ValueWrite{{Index: yaw, Value: 33}}, 5*time.Second, nil); err != nil {
		t.Fatal(err)
	}
	m, err := ipc.NewMirrorWith(open(t, shm), ipc.MirrorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	// Refused removals change nothing.
	for xml, want := range map[string]string{
		`<remove name="NOPE"/>`:            `no part, element or sensor named "NOPE"`,
		`<remove name="R2/MAST_TOP"/>`:     `"R2/MAST_TOP" was added by a part's model, not by a command of its own: remove the part`,
		`<remove name="E2" really="yes"/>`: `attribute "really": unknown attribute (remove takes name only)`,
		`<remove/>`:                        `attribute "name": missing`,
	} {
		if _, err := c.Request(xml); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", xml, err, want)
		}
	}

	seq, err := c.Request(`<remove name="E1"/>`)
	if err != nil || seq != 8 {
		t.Fatalf("removing E1: change %d, %v; want 8 (the new run's log: the file's 4 commands and the 4 requests left)", seq, err)
	}
	// The old region is replaced; a client reopens the new run.
	var reopened bool
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if err := c.Check(); errors.Is(err, ipc.ErrHostReplaced) {
			if err := c.Reopen(); err != nil {
				t.Fatal(err)
			}
			reopened = true
			break
		}
	}
	if !reopened {
		t.Fatal("the client was not told the host's run was replaced")
	}
	if got := names(t, c); got != "R_POSE R2_PAN E2" {
		t.Errorf("elements after removing E1: %q", got)
	}
	yaw, _ = c.Param("R_POSE", "yaw")
	pan, _ := c.Param("R2_PAN", "angle")
	if v, _ := c.Get(yaw); v != 33 {
		t.Errorf("R_POSE.yaw = %v after the removal, want 33 (carried over)", v)
	}
	if v, _ := c.Get(pan); v != 5 {
		t.Errorf("R2_PAN.angle = %v, want 5", v)
	}
	recs, err := c.Follow(1).Poll()
	if err != nil || len(recs) != 8 || strings.Contains(recs[4].XML, "E1") || !strings.Contains(recs[4].XML, `name="R2"`) {
		t.Fatalf("the new run's log: %d records, %v", len(recs), err)
	}
	// The removal freed a place in the budget.
	if _, err := c.Request(`<element type="pose" name="E3" insert_at="ROBOT"/>`); err != nil {
		t.Fatalf("E3 after the removal: %v", err)
	}

	// A part goes with what was inserted inside it: its camera and the
	// element at its insertion point.
	if _, err := c.Request(`<remove name="R2"/>`); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if errors.Is(c.Check(), ipc.ErrHostReplaced) {
			c.Reopen()
			break
		}
	}
	if got := names(t, c); got != "R_POSE E2 E3" {
		t.Errorf("elements after removing R2: %q", got)
	}

	// The mirror rebuilds to the host's scene.
	var synced error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if synced = m.Sync(); synced == nil && len(m.Scene().Elements()) == 3 {
			break
		}
	}
	var got []string
	for _, e := range m.Scene().Elements() {
		got = append(got, e.Name)
	}
	if synced != nil || strings.Join(got, " ") != "R_POSE E2 E3" || m.Rebuilds < 1 {
		t.Errorf("the mirror: %v, elements %v, %d rebuilds", synced, got, m.Rebuilds)
	}
	if v, _ := m.Scene().Value("R_POSE", "yaw"); v != 33 {
		t.Errorf("the mirror's R_POSE.yaw = %v, want 33", v)
	}
	var sensors []string
	for _, se := range m.Scene().Sensors() {
		sensors = append(sensors, se.Name)
	}
	if _, err := m.Scene().Frame("R2"); err == nil || strings.Join(sensors, " ") != "ROBOT_CAM" {
		t.Errorf("after removing R2: frame R2 %v, sensors %v", err, sensors)
	}
}

// A scene file cannot remove: removal is a request to a running host.
func TestRemoveInASceneFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.xml")
	if err := os.WriteFile(file, []byte("<scene>\n  <remove name=\"X\"/>\n</scene>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ipc.NewHost(filepath.Join(dir, "region"), file, ipc.HostOptions{})
	want := fmt.Sprintf("%s:2: remove \"X\": remove is a request to a running host (simvis request), not a command a scene executes", file)
	if err == nil || err.Error() != want {
		t.Errorf("%v\nwant %s", err, want)
	}
}

// Removals are bounded in rate (HostOptions.RemoveInterval, default one a
// second): each reloads the whole scene, so a driver removing in a loop
// would hold the host's cycles up. One inside the interval is refused,
// naming the bound and the flag, and changes nothing.
func TestRemovalsAreBoundedInRate(t *testing.T) {
	h, shm := startHost(t, ipc.HostOptions{})
	stop := cycleWhile(t, h)
	defer stop()
	c := open(t, shm)
	for _, n := range []string{"A", "B"} {
		if _, err := c.Request(`<element type="pose" name="` + n + `" insert_at="ROBOT"/>`); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Request(`<remove name="A"/>`); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if errors.Is(c.Check(), ipc.ErrHostReplaced) {
			c.Reopen()
			break
		}
	}
	_, err := c.Request(`<remove name="B"/>`)
	if err == nil || !strings.Contains(err.Error(), "removals are limited to one every 1s") || !strings.Contains(err.Error(), "--remove-interval") {
		t.Fatalf("a second removal at once: %v", err)
	}
	if got := names(t, c); got != "R_POSE B" {
		t.Errorf("elements after the refused removal: %q", got)
	}
}
