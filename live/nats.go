package live

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/ipc/natsipc"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// NATSOptions configure a host's NATS side (ipc/natsipc/NATS.md).
type NATSOptions struct {
	Off bool // shared memory only
	// URL is a NATS server or cluster to publish through; "": an embedded
	// server listening on Listen.
	URL, Listen string
	Name        string // scene name on NATS (default: the region's name)
	// Driver credentials of the embedded server: a token, or a user and
	// password ($SIMVIS_NATS_TOKEN, $SIMVIS_NATS_PASSWORD when empty).
	Token, User, Password string
	TLSCert, TLSKey       string
	Consumers             int // change-log stream consumers at most (default 256)
	Replicas              int // servers of a cluster keeping the change log (0: natsipc's default)
}

// NATS publishes a host over NATS; as a Sink it publishes sensor frames on
// their subjects.
type NATS struct {
	Pub *natsipc.Publisher
	// ClientURL is what clients connect to (without secrets).
	ClientURL string
	h         *ipc.Host
	close     func()
}

// StartNATS publishes h over NATS: through an embedded server unless
// o.URL names one.
func StartNATS(h *ipc.Host, o NATSOptions) (*NATS, error) {
	if o.Off {
		return nil, optionf("NATS is off")
	}
	name := o.Name
	if name == "" {
		name = strings.TrimPrefix(filepath.Base(h.Region.Path()), "simvis-")
	}
	if o.Consumers == 0 {
		o.Consumers = 256
	}
	if o.Consumers < 0 {
		return nil, optionf("--max-consumers %d: want at least 1", o.Consumers)
	}
	if o.Replicas > 1 && o.URL == "" {
		return nil, optionf("--replicas %d: the embedded server is one server; replicas need a cluster (--nats)", o.Replicas)
	}
	if o.Replicas < 0 || o.Replicas > 5 {
		return nil, optionf("--replicas %d: want 1 to 5 (JetStream's limit), or 0 for the default", o.Replicas)
	}
	// Secrets from the environment are read here, not as flag defaults,
	// which help would print.
	if o.Token == "" {
		o.Token = os.Getenv("SIMVIS_NATS_TOKEN")
	}
	if o.Password == "" {
		o.Password = os.Getenv("SIMVIS_NATS_PASSWORD")
	}
	var srv *natsipc.Server
	serverURL := o.URL
	if serverURL == "" {
		var err error
		srv, err = natsipc.StartServer(natsipc.ServerOptions{Listen: o.Listen, Token: o.Token, User: o.User,
			Password: o.Password, TLSCert: o.TLSCert, TLSKey: o.TLSKey, Name: name})
		if err != nil {
			return nil, fmt.Errorf("%w (--no-nats serves over shared memory only)", err)
		}
		serverURL = srv.URL()
	}
	closeSrv := func() {
		if srv != nil {
			srv.Close()
		}
	}
	// A cluster's servers: the host moves to another one when its own
	// goes away (natsipc.Failover).
	nc, err := natsipc.ConnectHost(serverURL, name)
	if err != nil {
		closeSrv()
		return nil, fmt.Errorf("connecting to NATS: %w", err)
	}
	pub, err := natsipc.Publish(h, nc, name, natsipc.Limits{Consumers: o.Consumers, Replicas: o.Replicas})
	if err != nil {
		nc.Close()
		closeSrv()
		return nil, err
	}
	clientURL, _ := natsipc.ClientURL(serverURL, name) // without secrets
	return &NATS{Pub: pub, ClientURL: clientURL, h: h, close: func() {
		pub.Close()
		nc.Close()
		closeSrv()
	}}, nil
}

// Frame publishes a frame on the sensor's subject. A frame the server
// cannot take, or a connection that is down, is reported, not failed: the
// host goes on.
func (n *NATS) Frame(se *scene.SensorEntry, f *sensors.Frame, _ *sensors.Stamp) error {
	info, data, err := f.Encode()
	if err != nil {
		return err
	}
	if err := n.Pub.PublishSensor(se.Name, f.Kind, info, data); err != nil {
		n.h.Warn("publish "+se.Name, "sensor %q not published: %v", se.Name, err)
	}
	return nil
}

// Close stops publishing, and the embedded server if there is one.
func (n *NATS) Close() { n.close() }
