package natsipc_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/ipc/natsipc"
)

// A URL naming a cluster's servers: every server gets the first one's
// scheme and credentials, the scene name may follow any of them (once),
// and errors do not repeat the password.
func TestServersURL(t *testing.T) {
	for _, c := range []struct{ raw, want, name string }{
		{"nats://u:p@a:1,b:2,c:3/S", "nats://u:p@a:1 nats://u:p@b:2 nats://u:p@c:3", "S"},
		{"nats://u:p@a:1/S,nats://v:q@b:2/S", "nats://u:p@a:1 nats://v:q@b:2", "S"},
		{"tls://tok@a:1, b:2", "tls://tok@a:1 tls://tok@b:2", ""},
		{"nats://a:1", "nats://a:1", ""},
	} {
		servers, name, err := natsipc.Servers(c.raw)
		if err != nil {
			t.Errorf("%s: %v", c.raw, err)
			continue
		}
		var got []string
		for _, u := range servers {
			got = append(got, u.String())
		}
		if strings.Join(got, " ") != c.want || name != c.name {
			t.Errorf("%s: %v, name %q; want %s, %q", c.raw, got, name, c.want, c.name)
		}
	}
	for _, raw := range []string{"nats://u:s3cret@a:1/S,b:2/T", "nats://u:s3cret@a:1,tls://b:2", "", "nats://u:s3cret@a:1,%zz"} {
		if _, _, err := natsipc.Servers(raw); err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: %v", raw, err)
		}
	}
	if u, err := natsipc.ClientURL("nats://host:pw@a:1,b:2", "S"); err != nil || u != "nats://a:1,b:2/S" {
		t.Errorf("client URL %q, %v", u, err)
	}
}

// A client's URL may name the JetStream domain of the host's change log
// (a robot's leaf node), after any of its servers; the servers come out
// without it, and a host refuses one.
func TestServersDomain(t *testing.T) {
	for _, c := range []struct{ raw, domain string }{
		{"nats://u:p@a:1,b:2/S?domain=robot-1", "robot-1"},
		{"nats://u:p@a:1/S?domain=r,b:2?domain=r", "r"},
		{"nats://a:1/S", ""},
	} {
		d, err := natsipc.Domain(c.raw)
		servers, _, serr := natsipc.Servers(c.raw)
		if err != nil || serr != nil || d != c.domain {
			t.Errorf("%s: domain %q, %v, %v; want %q", c.raw, d, err, serr, c.domain)
			continue
		}
		for _, u := range servers {
			if u.RawQuery != "" {
				t.Errorf("%s: server %s keeps the parameter", c.raw, u)
			}
		}
	}
	for _, raw := range []string{"nats://u:s3cret@a:1/S?domain=a.b", "nats://u:s3cret@a:1/S?domain=r&x=1", "nats://u:s3cret@a:1/S?domain=r,b:2?domain=q", "nats://u:s3cret@a:1/S?name=x"} {
		if _, err := natsipc.Domain(raw); err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: %v", raw, err)
		}
	}
	if _, err := natsipc.ConnectHost("nats://u:s3cret@127.0.0.1:1?domain=robot", "S"); err == nil || !strings.Contains(err.Error(), "domain") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("a host's URL with a domain: %v", err)
	}
}

// A request sent again with the same Simvis-Request-Id (a client that had
// no outcome in time) is executed once: every copy gets the outcome of
// the first, and the change log holds it once.
func TestRequestRetriedOnce(t *testing.T) {
	srv := startServer(t, natsipc.ServerOptions{})
	s := serve(t, srv, natsipc.Limits{}, nil)
	nc, _ := roleConn(t, srv.URLFor(natsipc.RoleDriver))
	send := func(id, xml string) map[string]any {
		m := nats.NewMsg("simvis.test.request")
		m.Header.Set("Simvis-Request-Id", id)
		m.Data = []byte(xml)
		r, err := nc.RequestMsg(m, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		json.Unmarshal(r.Data, &out)
		return out
	}
	add := `<element type="pose" name="ONCE" insert_at="ROOT"/>`
	first := send("id-1", add)
	again := send("id-1", add)
	if first["seq"] == nil || again["seq"] != first["seq"] {
		t.Fatalf("first %v, again %v: want the same change", first, again)
	}
	// Another id is another request: the host refuses the same name twice.
	if other := send("id-2", add); other["error"] == nil {
		t.Errorf("a second request with another id: %v", other)
	}
	c, err := ipc.Dial(srv.URLFor(natsipc.RoleViewer) + "/test")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	recs, err := c.Follow(1).Poll()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range recs {
		if strings.Contains(r.XML, `name="ONCE"`) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the request is in the log %d times", n)
	}
	s.pause()
}
