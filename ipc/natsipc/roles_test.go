package natsipc_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/ipc/natsipc"
)

// violations collects the permission errors the server reports to a
// connection.
type violations struct {
	mu   sync.Mutex
	errs []string
}

func (v *violations) has(what, subject string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, e := range v.errs {
		if strings.Contains(e, fmt.Sprintf("Permissions Violation for %s to %q", what, subject)) {
			return true
		}
	}
	return false
}

// lastSubject is one no role may publish to (no allow list has it).
const lastSubject = "simvis-roles-test.last"

// awaitRefusals publishes to lastSubject and waits for its refusal: the
// server answers a connection's commands in order and the client hands
// their errors to the handler in order, so every refusal of what nc sent
// before has come by then (a fixed wait let a loaded machine's late
// errors count as permissions granted).
func awaitRefusals(t *testing.T, nc *nats.Conn, v *violations, who string) {
	t.Helper()
	nc.Publish(lastSubject, nil)
	nc.Flush()
	for deadline := time.Now().Add(10 * time.Second); !v.has("Publish", lastSubject); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: publishing to %s not refused within 10 s", who, lastSubject)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func roleConn(t *testing.T, url string) (*nats.Conn, *violations) {
	t.Helper()
	v := &violations{}
	nc, err := nats.Connect(url, inboxOf(url), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		v.mu.Lock()
		v.errs = append(v.errs, err.Error())
		v.mu.Unlock()
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc, v
}

// jetStreamOf is JetStream over a connection of roleConn's (closed when
// the test ends).
func jetStreamOf(t *testing.T, url string) jetstream.JetStream {
	t.Helper()
	nc, _ := roleConn(t, url)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// inboxOf is the inbox prefix option of the role a URL's user name is
// (the servers name their users after the roles), as every client library
// must set it to get replies (NATS.md, "Roles").
func inboxOf(rawURL string) nats.Option {
	switch {
	case strings.Contains(rawURL, "//viewer:"):
		return nats.CustomInboxPrefix(natsipc.ViewerInbox)
	case strings.Contains(rawURL, "//driver:"):
		return nats.CustomInboxPrefix(natsipc.DriverInbox)
	}
	return func(*nats.Options) error { return nil }
}

// uniqueName is a scene name no other test run uses, since secrets files
// live in /dev/shm.
func uniqueName(what string) string { return fmt.Sprintf("%s%d", what, os.Getpid()) }

// The embedded server gives each role its own subjects: per subject,
// publishing and subscribing are allowed or refused as NATS.md lists.
func TestRolePermissions(t *testing.T) {
	name := uniqueName("perm")
	srv := startServer(t, natsipc.ServerOptions{Name: name})
	serveAt(t, srv.URL(), name, natsipc.Limits{}, nil)
	checkRoles(t, name, srv.URLFor, fmt.Sprintf("nats://127.0.0.1:%d", srv.Port()))
}

// The shipped nats-server.conf gives Debian's nats-server the same roles.
func TestRolePermissionsExternal(t *testing.T) {
	x := startExternal(t, true)
	name := uniqueName("xperm")
	serveAt(t, x.url(natsipc.RoleHost), name, natsipc.Limits{}, nil)
	checkRoles(t, name, x.url, fmt.Sprintf("nats://127.0.0.1:%d", x.port))
}

func checkRoles(t *testing.T, name string, urlFor func(natsipc.Role) string, anonymous string) {
	sub := func(what string) string { return "simvis." + name + "." + what }
	type check struct {
		subject        string
		driver, viewer bool // allowed to the driver, the viewer
	}
	pubs := []check{
		{subject: sub("set"), driver: true},
		{subject: sub("request"), driver: true},
		{subject: sub("desc"), driver: true, viewer: true},
		{subject: sub("snapshot"), driver: true, viewer: true},
		{subject: sub("file"), driver: true, viewer: true},
		{subject: sub("values")},
		{subject: sub("log")},
		{subject: sub("sensor.cam")},
		{subject: "$JS.API.STREAM.DELETE.SIMVIS_" + name},
		{subject: "$JS.API.STREAM.PURGE.SIMVIS_" + name},
		{subject: "$JS.API.STREAM.UPDATE.SIMVIS_" + name},
		{subject: "$JS.API.STREAM.CREATE.X"},
		{subject: "$JS.API.STREAM.MSG.DELETE.SIMVIS_" + name},
		{subject: "$JS.API.STREAM.INFO.SIMVIS_" + name, driver: true, viewer: true},
		{subject: "_INBOX.x"},
	}
	subs := []check{
		{subject: sub("values"), driver: true, viewer: true},
		{subject: sub("sensor.cam"), driver: true, viewer: true},
		{subject: sub("set")},
		{subject: sub("request")},
		{subject: sub("file")},
		// Replies: each role's own inbox prefix, never all inboxes.
		{subject: "_INBOX.>"},
		{subject: "_INBOX.*.>"},
		{subject: "_INBOX.x"},
		{subject: natsipc.ViewerInbox + ".x", driver: true, viewer: true},
		{subject: natsipc.DriverInbox + ".x", driver: true},
		{subject: natsipc.DriverInbox + ".>", driver: true},
		{subject: ">"},
	}
	for _, role := range []natsipc.Role{natsipc.RoleDriver, natsipc.RoleViewer} {
		nc, v := roleConn(t, urlFor(role))
		for _, c := range pubs {
			nc.Publish(c.subject, []byte("x"))
		}
		for _, c := range subs {
			s, err := nc.SubscribeSync(c.subject)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Unsubscribe()
		}
		awaitRefusals(t, nc, v, string(role))
		for _, c := range pubs {
			allowed := c.driver
			if role == natsipc.RoleViewer {
				allowed = c.viewer
			}
			if refused := v.has("Publish", c.subject); refused == allowed {
				t.Errorf("%s publishing to %s: refused %v", role, c.subject, refused)
			}
		}
		for _, c := range subs {
			allowed := c.driver
			if role == natsipc.RoleViewer {
				allowed = c.viewer
			}
			if refused := v.has("Subscription", c.subject); refused == allowed {
				t.Errorf("%s subscribing to %s: refused %v", role, c.subject, refused)
			}
		}
	}
	// The host may do what the others may not.
	nc, v := roleConn(t, urlFor(natsipc.RoleHost))
	nc.Publish("$JS.API.STREAM.INFO.SIMVIS_"+name, nil)
	nc.Publish(sub("values"), nil)
	awaitRefusals(t, nc, v, "host")
	v.mu.Lock()
	if len(v.errs) > 1 { // the last subject's refusal only
		t.Errorf("host refused: %v", v.errs)
	}
	v.mu.Unlock()
	// Without credentials: refused outright.
	if _, err := nats.Connect(anonymous); !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("anonymous connection: %v", err)
	}
}

// A local client finds the driver's and viewer's credentials in the
// secrets file next to the region, which only its owner may read: the
// viewer reads but cannot write, the driver writes. A file others may read
// is not used.
func TestLocalSecrets(t *testing.T) {
	name := uniqueName("local")
	srv := startServer(t, natsipc.ServerOptions{Name: name})
	s := serveAt(t, srv.URL(), name, natsipc.Limits{}, nil)
	path := natsipc.SecretsPath(name)
	if srv.SecretsFile() != path || path != "/dev/shm/simvis-"+name+".nats" {
		t.Fatalf("secrets at %q", srv.SecretsFile())
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 || int(st.Sys().(*syscall.Stat_t).Uid) != os.Getuid() {
		t.Errorf("secrets file mode %v, owner %d", st.Mode(), st.Sys().(*syscall.Stat_t).Uid)
	}
	url := fmt.Sprintf("nats://127.0.0.1:%d/%s", srv.Port(), name)
	viewer, err := natsipc.DialAs(url, natsipc.RoleViewer)
	if err != nil {
		t.Fatal(err)
	}
	defer viewer.Close()
	driver, err := natsipc.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer driver.Close()
	vc, dc := ipc.NewClient(viewer), ipc.NewClient(driver)
	yaw, err := vc.Param("R_POSE", "yaw")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vc.Request(`<element type="pose" name="V" insert_at="ROOT"/>`); err == nil || !strings.Contains(err.Error(), "refuses this client's role") {
		t.Errorf("the viewer's request: %v", err)
	}
	vc.Set(yaw, 11)
	if err := viewer.Flush(); err == nil || !strings.Contains(err.Error(), "refuses this client's role publishing to simvis."+name+".set") {
		t.Errorf("a viewer's write: %v", err)
	}
	if err := vc.Set(yaw, 11); err == nil {
		t.Error("the viewer's next write was sent")
	}
	if err := dc.Set(yaw, 12); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the driver's write", func() bool { v, _ := vc.Get(yaw); return v == 12 })
	s.pause()
	if v, _ := s.host.Scene.Value("R_POSE", "yaw"); v != 12 {
		t.Errorf("host yaw %v, want the driver's 12", v)
	}
	if _, ok := s.host.Scene.Element("V"); ok {
		t.Error("the viewer added an element")
	}

	os.Chmod(path, 0o644)
	if _, err := natsipc.Dial(url); err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization violation") || !strings.Contains(err.Error(), path) {
		t.Errorf("with a secrets file others may read: %v", err)
	}
	srv.Close()
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("secrets file left behind: %v", err)
	}
}

// A secrets file another user planted (here: a symbolic link) is not
// overwritten or followed: the server refuses to start.
func TestSecretsNotFollowed(t *testing.T) {
	name := uniqueName("planted")
	target := t.TempDir() + "/target"
	if err := os.Symlink(target, natsipc.SecretsPath(name)); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(natsipc.SecretsPath(name))
	_, err := natsipc.StartServer(natsipc.ServerOptions{Listen: "127.0.0.1:0", Name: name})
	if err == nil || !strings.Contains(err.Error(), "is not a file of this user") {
		t.Errorf("planted link: %v", err)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Errorf("the link was followed: %v", err)
	}
}

// The attacks of issue 13 fail from driver and viewer accounts: forged
// change-log records, forged values, deleting the change-log stream,
// filling it. A client that follows the host sees none of them.
func TestRoleAttacksFail(t *testing.T) {
	name := uniqueName("attack")
	srv := startServer(t, natsipc.ServerOptions{Name: name})
	serveAt(t, srv.URL(), name, natsipc.Limits{}, nil)
	attack(t, name, srv.URLFor)
}

// The same attacks fail on Debian's nats-server with nats-server.conf.
func TestRoleAttacksFailExternal(t *testing.T) {
	x := startExternal(t, true)
	name := uniqueName("xattack")
	serveAt(t, x.url(natsipc.RoleHost), name, natsipc.Limits{}, nil)
	attack(t, name, x.url)
}

func attack(t *testing.T, name string, urlFor func(natsipc.Role) string) {
	hc, err := ipc.Dial(urlFor(natsipc.RoleViewer) + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	honest := hc
	yaw, _ := hc.Param("R_POSE", "yaw")
	stream := "SIMVIS_" + name
	hostNC, _ := roleConn(t, urlFor(natsipc.RoleHost))
	hostJS, _ := jetstream.New(hostNC)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	before, err := hostJS.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	info0, _ := before.Info(ctx)

	for _, role := range []natsipc.Role{natsipc.RoleDriver, natsipc.RoleViewer} {
		t.Run(string(role), func(t *testing.T) {
			nc, v := roleConn(t, urlFor(role))
			js, _ := jetstream.New(nc)
			short := func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 300*time.Millisecond)
			}
			// Forged change-log record, colliding with the host's next.
			m := nats.NewMsg("simvis." + name + ".log")
			m.Header.Set("Simvis-Epoch", fmt.Sprint(honest.Epoch()))
			m.Header.Set("Simvis-Seq", fmt.Sprint(info0.State.Msgs+1))
			m.Header.Set("Simvis-Dir", "/")
			m.Data = []byte(`<part name="GHOST" file="robot.gltf" insert_at="ROOT"/>`)
			c, cc := short()
			if _, err := js.PublishMsg(c, m); err == nil {
				t.Error("forged change-log record stored")
			}
			cc()
			// Forged values of a later host run: every client would
			// rebuild; and of this run: a value changed behind the host.
			for _, epoch := range []uint64{honest.Epoch() + 1, honest.Epoch()} {
				b := make([]byte, 40)
				binary.LittleEndian.PutUint64(b, epoch)
				binary.LittleEndian.PutUint32(b[16:], 100)
				binary.LittleEndian.PutUint32(b[20:], 1)
				binary.LittleEndian.PutUint32(b[24:], 1)
				binary.LittleEndian.PutUint32(b[28:], uint32(yaw))
				binary.LittleEndian.PutUint64(b[32:], 0x4059000000000000) // 100.0
				nc.Publish("simvis."+name+".values", b)
			}
			// Delete, purge, fill the stream.
			c, cc = short()
			if err := js.DeleteStream(c, stream); err == nil {
				t.Error("stream deleted")
			}
			cc()
			c, cc = short()
			if st, err := js.Stream(c, stream); err != nil {
				t.Errorf("stream info refused: %v", err)
			} else if err := st.Purge(c); err == nil {
				t.Error("stream purged")
			}
			cc()
			big := make([]byte, 512<<10)
			for i := 0; i < 20; i++ {
				nc.Publish("simvis."+name+".log", big)
			}
			nc.Flush()
			time.Sleep(100 * time.Millisecond)
			for _, subj := range []string{"simvis." + name + ".log", "simvis." + name + ".values", "$JS.API.STREAM.DELETE." + stream, "$JS.API.STREAM.PURGE." + stream} {
				if !v.has("Publish", subj) {
					t.Errorf("no permission violation for %s: %v", subj, v.errs)
				}
			}
		})
	}
	info, err := before.Info(ctx)
	if err != nil {
		t.Fatalf("the stream after the attacks: %v", err)
	}
	if info.State.Msgs != info0.State.Msgs || info.State.Bytes != info0.State.Bytes {
		t.Errorf("stream went from %d messages (%d bytes) to %d (%d)", info0.State.Msgs, info0.State.Bytes, info.State.Msgs, info.State.Bytes)
	}
	// The host goes on: a request is logged with the next number, and the
	// honest client sees it, its log intact and no restart.
	dc, err := ipc.Dial(urlFor(natsipc.RoleDriver) + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	seq, err := dc.Request(`<element type="pose" name="AFTER" insert_at="ROOT"/>`)
	if err != nil || seq != info0.State.Msgs+1 {
		t.Fatalf("request after the attacks: change %d, %v", seq, err)
	}
	f := hc.Follow(0)
	var recs []ipc.LogRecord
	eventually(t, "the honest client's log", func() bool {
		more, err := f.Poll()
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, more...)
		return uint64(len(recs)) >= seq
	})
	for _, r := range recs {
		if strings.Contains(r.XML, "GHOST") {
			t.Errorf("forged record reached a client: %+v", r)
		}
	}
	if err := hc.Check(); err != nil {
		t.Errorf("honest client: %v", err)
	}
	if v, _ := hc.Get(yaw); v != 20 {
		t.Errorf("honest client reads yaw %v, want the host's 20", v)
	}
}

// A viewer may create consumers on the change log, and NATS checks no
// permission on a push consumer's deliver subject: one delivering the log
// onto the host's set subject reaches the host, which ignores what
// JetStream delivers (else it would count malformed set messages).
func TestDeliveredMessagesIgnored(t *testing.T) {
	name := uniqueName("deliver")
	srv := startServer(t, natsipc.ServerOptions{Name: name})
	var warnings syncBuffer
	serveAt(t, srv.URL(), name, natsipc.Limits{}, &warnings)
	nc, _ := roleConn(t, srv.URLFor(natsipc.RoleViewer))
	req := fmt.Sprintf(`{"stream_name":"SIMVIS_%s","config":{"deliver_subject":"simvis.%s.set","deliver_policy":"all","ack_policy":"none"}}`, name, name)
	reply, err := nc.Request("$JS.API.CONSUMER.CREATE.SIMVIS_"+name, []byte(req), 5*time.Second)
	if err != nil || !strings.Contains(string(reply.Data), `"num_pending"`) {
		t.Fatalf("the push consumer was not created (%v): %s", err, reply.Data)
	}
	time.Sleep(300 * time.Millisecond) // the log is delivered and the host cycles
	dc, err := ipc.Dial(srv.URLFor(natsipc.RoleDriver) + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	yaw, _ := dc.Param("R_POSE", "yaw")
	dc.Set(yaw, 33)
	eventually(t, "a driver's write", func() bool { v, _ := dc.Get(yaw); return v == 33 })
	if w := warnings.String(); strings.Contains(w, "malformed") {
		t.Errorf("the host took delivered messages: %s", w)
	}
}

// A viewer may not read the replies meant for drivers: subscribing to
// every inbox, or to the drivers' ones, is refused by the server, and a
// driver's request outcome (here a refusal and its error text) and its
// confirmed writes reach the driver alone. A viewer's credentials in a
// driver's URL still read (the client takes the viewer's inboxes), and
// its writes get the server's refusal.
func TestViewerReadsNoDriverReplies(t *testing.T) {
	name := uniqueName("inbox")
	srv := startServer(t, natsipc.ServerOptions{Name: name})
	serveAt(t, srv.URL(), name, natsipc.Limits{}, nil)
	spy, v := roleConn(t, srv.URLFor(natsipc.RoleViewer))
	var subs []*nats.Subscription
	for _, subj := range []string{"_INBOX.>", "_INBOX.*.>", natsipc.DriverInbox + ".>"} {
		sub, err := spy.SubscribeSync(subj)
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, sub)
	}
	spy.Flush()

	dc, err := ipc.Dial(srv.URLFor(natsipc.RoleDriver) + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	const secret = "SECRET_TYPE_42"
	if _, err := dc.Request(`<element type="` + secret + `" name="X" insert_at="ROBOT"/>`); err == nil || !strings.Contains(err.Error(), secret) {
		t.Fatalf("the driver's refused request: %v", err)
	}
	yaw, err := dc.Param("R_POSE", "yaw")
	if err != nil {
		t.Fatal(err)
	}
	// nil: SetConfirmed waits through the Conn's Flush, for the cycle
	// that took the write (values of earlier cycles must not pass for it).
	if err := dc.SetConfirmed([]ipc.ValueWrite{{Index: yaw, Value: 12}}, 5*time.Second, nil); err != nil {
		t.Fatalf("the driver's confirmed write: %v", err)
	}
	spy.Flush()
	for i, sub := range subs {
		if m, err := sub.NextMsg(200 * time.Millisecond); err == nil {
			t.Errorf("the viewer's subscription %q read %s: %q", sub.Subject, m.Subject, m.Data)
		}
		if !v.has("Subscription", sub.Subject) {
			t.Errorf("subscription %d (%q) was not refused: %v", i, sub.Subject, v.errs)
		}
	}

	vc, err := ipc.Dial(srv.URLFor(natsipc.RoleViewer) + "/" + name)
	if err != nil {
		t.Fatalf("a viewer's credentials in a driver's URL: %v", err)
	}
	defer vc.Close()
	if got, err := vc.Get(yaw); err != nil || got != 12 {
		t.Errorf("the viewer reads yaw %v (%v), want 12", got, err)
	}
	if _, err := vc.Request(`<element type="pose" name="Y" insert_at="ROBOT"/>`); err == nil || !strings.Contains(err.Error(), "refuses this client's role") {
		t.Errorf("a viewer's request: %v, want the server's refusal", err)
	}
}
