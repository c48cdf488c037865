package natsipc_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/ipc/natsipc"
)

// A removal requested over NATS starts the host's new run (ipc.Host): the
// publisher follows it with a new change-log stream and epoch; a client
// that reopens sees the scene without the removed element, with the
// values it had; a mirror over NATS rebuilds to it.
func TestRemoveOverNATS(t *testing.T) {
	name := uniqueName("remove")
	srv := startServer(t, natsipc.ServerOptions{Name: name})
	s := serveAt(t, srv.URL(), name, natsipc.Limits{}, nil)
	c, err := ipc.Dial(srv.URLFor(natsipc.RoleDriver) + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, xml := range []string{`<element type="rotation" name="PAN" insert_at="ROBOT/MAST_TOP" axis="0 0 1" angle="7"/>`,
		`<element type="pose" name="GONE" insert_at="ROBOT"/>`} {
		if _, err := c.Request(xml); err != nil {
			t.Fatal(err)
		}
	}
	yaw, _ := c.Param("R_POSE", "yaw")
	// nil: SetConfirmed waits through the Conn's Flush, for the cycle
	// that took the write (values of earlier cycles must not pass for it).
	if err := c.SetConfirmed([]ipc.ValueWrite{{Index: yaw, Value: 44}}, 5*time.Second, nil); err != nil {
		t.Fatal(err)
	}
	mc, err := ipc.Dial(srv.URLFor(natsipc.RoleViewer) + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer mc.Close()
	m, err := ipc.NewMirrorWith(mc, ipc.MirrorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	epoch := c.Epoch()

	seq, err := c.Request(`<remove name="GONE"/>`)
	if err != nil || seq != 5 {
		t.Fatalf("remove over NATS: change %d, %v; want 5 (the file's 4 commands and PAN)", seq, err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		err := c.Check()
		if errors.Is(err, ipc.ErrHostReplaced) {
			if err := c.Reopen(); err != nil {
				t.Fatal(err)
			}
		}
		if c.Epoch() != epoch {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the client never saw the new run (%v)", err)
		}
	}
	ds, err := c.Elements()
	var got []string
	for _, d := range ds {
		got = append(got, d.Name)
	}
	if err != nil || strings.Join(got, " ") != "R_POSE PAN" {
		t.Errorf("elements over NATS after the removal: %v %v", got, err)
	}
	yaw, _ = c.Param("R_POSE", "yaw")
	if v, _ := c.Get(yaw); v != 44 {
		t.Errorf("R_POSE.yaw = %v, want 44 carried over", v)
	}
	if n := len(s.host.Scene.Elements()); n != 2 {
		t.Errorf("the host has %d elements", n)
	}
	var synced error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if synced = m.Sync(); synced == nil && len(m.Scene().Elements()) == 2 {
			break
		}
	}
	if synced != nil || len(m.Scene().Elements()) != 2 || m.Applied() != 5 {
		t.Errorf("the NATS mirror: %v, %d elements, change %d", synced, len(m.Scene().Elements()), m.Applied())
	}
	if v, _ := m.Scene().Value("PAN", "angle"); v != 7 {
		t.Errorf("the mirror's PAN.angle = %v, want 7", v)
	}
}
