package natsipc

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/simvis/simvis/internal/privfile"
	"github.com/simvis/simvis/internal/secretcmp"
	"github.com/simvis/simvis/ipc"
)

// Role is what a NATS user may do with the scenes on a server (NATS.md,
// "Roles"): the server, not simvis, enforces it.
type Role string

const (
	// RoleHost publishes values, the change log and sensor frames, answers
	// requests and manages the change-log stream. Only the host has it.
	RoleHost Role = "host"
	// RoleDriver reads everything and sets values and sends requests.
	RoleDriver Role = "driver"
	// RoleViewer reads everything: mirrors, dashboards.
	RoleViewer Role = "viewer"
)

// Inbox prefixes of the roles' clients (nats.CustomInboxPrefix; NATS.md,
// "Roles"). Another client library logging in as a viewer or driver must
// use its role's prefix (nats.js: the inboxPrefix option), or it gets no
// replies.
const (
	ViewerInbox = "_INBOX.v"
	DriverInbox = "_INBOX.d"
)

// InboxPrefix is the inbox prefix a client of role r uses.
func InboxPrefix(r Role) string {
	if r == RoleViewer {
		return ViewerInbox
	}
	return DriverInbox
}

// Subjects each role may publish and subscribe to. nats-server.conf in this
// directory holds the same lists for an external server; keep them equal.
var (
	readPublish = []string{
		"simvis.*.desc", "simvis.*.snapshot", "simvis.*.file",
		// Following the change log with an ordered (pull) consumer. NATS
		// wildcards match whole tokens, so these name any stream; a
		// server shared with other applications narrows them to
		// SIMVIS_NAME (nats-server.conf).
		"$JS.API.INFO",
		"$JS.API.STREAM.INFO.*",
		"$JS.API.CONSUMER.CREATE.*",
		"$JS.API.CONSUMER.CREATE.*.>",
		"$JS.API.CONSUMER.INFO.*.*",
		"$JS.API.CONSUMER.DELETE.*.*",
		"$JS.API.CONSUMER.MSG.NEXT.*.*",
		// The same in another JetStream domain (a robot's leaf node,
		// whose host keeps its log there: Domain).
		"$JS.*.API.INFO",
		"$JS.*.API.STREAM.INFO.*",
		"$JS.*.API.CONSUMER.CREATE.*",
		"$JS.*.API.CONSUMER.CREATE.*.>",
		"$JS.*.API.CONSUMER.INFO.*.*",
		"$JS.*.API.CONSUMER.DELETE.*.*",
		"$JS.*.API.CONSUMER.MSG.NEXT.*.*",
	}
	readSubscribe = []string{"simvis.*.values", "simvis.*.rejected", "simvis.*.sensor.>"}
	// Replies arrive in inboxes under the role's prefix (ViewerInbox,
	// DriverInbox): a viewer may read viewers' replies only, never a
	// driver's (its request outcomes), which "_INBOX.>" allowed. A driver
	// may read both: it may ask for everything a viewer may.
	viewerSubscribe = append(append([]string{}, readSubscribe...), ViewerInbox+".>")
	driverSubscribe = append(append([]string{}, viewerSubscribe...), DriverInbox+".>")
	drivePublish    = []string{"simvis.*.set", "simvis.*.request"}
	hostPublish     = []string{"simvis.>", "$JS.API.>", "_INBOX.>"}
	hostSubscribe   = []string{"simvis.>", "_INBOX.>"}
)

// Permissions returns the publish and subscribe permissions of a role, as
// the embedded server applies them.
func Permissions(r Role) *server.Permissions {
	allow := func(pub, sub []string) *server.Permissions {
		return &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: pub},
			Subscribe: &server.SubjectPermission{Allow: sub},
		}
	}
	switch r {
	case RoleHost:
		return allow(hostPublish, hostSubscribe)
	case RoleDriver:
		return allow(append(append([]string{}, drivePublish...), readPublish...), driverSubscribe)
	default:
		return allow(readPublish, viewerSubscribe)
	}
}

// credential is one way to log in, and the role it gives.
type credential struct {
	token, user, password string
	role                  Role
}

// roleAuth checks a connecting client's credentials and gives it its
// role's permissions.
type roleAuth struct{ creds []credential }

func same(a, b string) bool { return secretcmp.Equal(a, b) }

// Check implements server.Authentication.
func (a *roleAuth) Check(c server.ClientAuthentication) bool {
	o := c.GetOpts()
	for _, cr := range a.creds {
		ok := false
		if cr.token != "" {
			ok = same(o.Token, cr.token) && o.Username == ""
		} else {
			ok = same(o.Username, cr.user) && same(o.Password, cr.password)
		}
		if ok {
			c.RegisterUser(&server.User{Username: cr.user, Permissions: Permissions(cr.role)})
			return true
		}
	}
	return false
}

func secret() string {
	b := make([]byte, 24)
	if _, err := io.ReadFull(rand.Reader, b); err != nil {
		panic(err) // the system's random source failed: nothing safe to do
	}
	return hex.EncodeToString(b)
}

// SecretsPath is where a host whose embedded server serves scene name
// keeps the driver's and viewer's credentials for local clients:
// /dev/shm/simvis-NAME.nats, next to the region, readable by its owner
// only.
func SecretsPath(name string) string { return ipc.Path(name) + ".nats" }

// secrets is the JSON of a secrets file.
type secrets struct {
	Port   int         `json:"port"`
	Driver secretLogin `json:"driver"`
	Viewer secretLogin `json:"viewer"`
}

type secretLogin struct {
	User     string `json:"user"`
	Password string `json:"password"`
}

// writeSecrets creates the secrets file, owned by this process's user and
// mode 0600, never through a link or into a file another user made. A
// file left by a host of the same user that was killed is replaced.
func writeSecrets(path string, s secrets) (os.FileInfo, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	st, err := privfile.Write(path, data, "remove it, or pick another scene name (--name)")
	if err != nil {
		return nil, fmt.Errorf("natsipc: %w", err)
	}
	return st, nil
}

// localLogin returns the credentials of role r for scene name from the
// secrets file, for a URL on a loopback address without credentials: only
// from a regular file of this user that no one else may read, and only
// for the port it names.
func localLogin(u *url.URL, name string, r Role) (*url.Userinfo, bool) {
	if u.User != nil || !isLoopback(u.Hostname()) {
		return nil, false
	}
	port := 4222
	if p := u.Port(); p != "" {
		port, _ = strconv.Atoi(p)
	}
	var s secrets
	if err := privfile.ReadJSON(SecretsPath(name), &s); err != nil || s.Port != port {
		return nil, false
	}
	l := s.Driver
	if r == RoleViewer {
		l = s.Viewer
	}
	if l.User == "" {
		return nil, false
	}
	return url.UserPassword(l.User, l.Password), true
}

// roleURL is the server's address with the credentials of a role.
func roleURL(scheme, host string, port int, user *url.Userinfo) string {
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(host, strconv.Itoa(port)), User: user}
	return u.String()
}
