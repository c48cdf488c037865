package natsipc

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/simvis/simvis/internal/privfile"
)

// ServerOptions configure the NATS server a host embeds.
type ServerOptions struct {
	// Listen is host:port; "" means 127.0.0.1:4222. Port 0 picks a free one.
	Listen string
	// Token, or User and Password: credentials with the driver role, for
	// remote clients; required when Listen is not a loopback address, so
	// that a host is never exposed without authentication. The host,
	// driver and viewer roles always have random credentials of their own
	// (URLFor).
	Token, User, Password string
	// Name, when set, is the scene the server is for: its driver and viewer
	// credentials are written to SecretsPath(Name), where local clients
	// find them, and removed by Close.
	Name string
	// TLSCert and TLSKey, both or neither, make clients use TLS.
	TLSCert, TLSKey string
	// MaxPayload bounds a message (default 8 MiB: a 640x480 depth frame
	// is 1.2 MB); MaxPending what the server buffers for one client
	// (default 64 MiB).
	MaxPayload int32
	MaxPending int64
}

// Server is an embedded NATS server with JetStream that enforces the
// host, driver and viewer roles (Permissions).
type Server struct {
	srv      *server.Server
	storeDir string
	url      string // for the host's own connection
	urls     map[Role]string
	secrets  string      // the secrets file, "" if none
	written  os.FileInfo // it as written, to remove only that file
}

// StartServer runs an embedded NATS server.
func StartServer(o ServerOptions) (*Server, error) {
	if o.Listen == "" {
		o.Listen = "127.0.0.1:4222"
	}
	host, portText, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return nil, fmt.Errorf("natsipc: listen address %q: %w", o.Listen, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("natsipc: listen address %q: bad port", o.Listen)
	}
	if (o.User == "") != (o.Password == "") {
		return nil, errors.New("natsipc: a user needs a password and a password a user")
	}
	if o.User == string(RoleHost) || o.User == string(RoleDriver) || o.User == string(RoleViewer) {
		return nil, fmt.Errorf("natsipc: user name %q is taken by a role", o.User)
	}
	if o.Name != "" && !validName(o.Name) {
		return nil, fmt.Errorf("natsipc: scene name %q: want letters, digits, '_' and '-'", o.Name)
	}
	if o.Token != "" && o.User != "" {
		return nil, errors.New("natsipc: give a token or a user and password, not both")
	}
	if !isLoopback(host) && o.Token == "" && o.User == "" {
		return nil, fmt.Errorf("natsipc: listening on %s exposes the host to the network: give a token or a user and password", o.Listen)
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return nil, errors.New("natsipc: TLS needs both a certificate and a key file")
	}
	if o.MaxPayload <= 0 {
		o.MaxPayload = 8 << 20
	}
	if o.MaxPending <= 0 {
		o.MaxPending = 64 << 20
	}
	store, err := os.MkdirTemp("", "simvis-nats")
	if err != nil {
		return nil, err
	}
	if port == 0 {
		port = server.RANDOM_PORT // the server's own 0 means its default port
	}
	logins := map[Role]*url.Userinfo{}
	auth := &roleAuth{}
	for _, r := range []Role{RoleHost, RoleDriver, RoleViewer} {
		pw := secret()
		logins[r] = url.UserPassword(string(r), pw)
		auth.creds = append(auth.creds, credential{user: string(r), password: pw, role: r})
	}
	if o.Token != "" || o.User != "" {
		auth.creds = append(auth.creds, credential{token: o.Token, user: o.User, password: o.Password, role: RoleDriver})
	}
	opts := &server.Options{
		Host: host, Port: port, NoSigs: true, NoLog: true,
		CustomClientAuthentication: auth,
		MaxPayload:                 o.MaxPayload, MaxPending: o.MaxPending,
		JetStream: true, StoreDir: store, JetStreamMaxMemory: 256 << 20,
	}
	if o.TLSCert != "" {
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: o.TLSCert, KeyFile: o.TLSKey})
		if err != nil {
			os.RemoveAll(store)
			return nil, fmt.Errorf("natsipc: TLS: %w", err)
		}
		opts.TLS, opts.TLSConfig = true, tc
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		os.RemoveAll(store)
		return nil, fmt.Errorf("natsipc: %w", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		os.RemoveAll(store)
		return nil, fmt.Errorf("natsipc: the NATS server did not start on %s (port in use?)", o.Listen)
	}
	addr := srv.Addr().(*net.TCPAddr)
	scheme := "nats"
	if o.TLSCert != "" {
		scheme = "tls"
	}
	s := &Server{srv: srv, storeDir: store, urls: map[Role]string{}}
	embedded.Store(srv.ID(), true)
	for r, l := range logins {
		s.urls[r] = roleURL(scheme, dialable(host), addr.Port, l)
	}
	s.url = s.urls[RoleHost]
	if o.Name != "" {
		s.secrets = SecretsPath(o.Name)
		pw := func(r Role) string { p, _ := logins[r].Password(); return p }
		s.written, err = writeSecrets(s.secrets, secrets{Port: addr.Port,
			Driver: secretLogin{string(RoleDriver), pw(RoleDriver)}, Viewer: secretLogin{string(RoleViewer), pw(RoleViewer)}})
		if err != nil {
			s.secrets = ""
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// URLFor is the server's address with the credentials of a role.
func (s *Server) URLFor(r Role) string { return s.urls[r] }

// SecretsFile is where the driver's and viewer's credentials were written
// for local clients ("" without ServerOptions.Name).
func (s *Server) SecretsFile() string { return s.secrets }

// embedded holds the ids of the servers this process runs: a host
// publishing through one keeps its change log in memory, since the server
// cannot outlive it.
var embedded sync.Map

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// dialable turns a wildcard listen address into one to connect to.
func dialable(host string) string {
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		return "127.0.0.1"
	}
	return host
}

// URL is the server's address with the host role's credentials, for the
// host itself.
func (s *Server) URL() string { return s.url }

// Port is the port the server listens on.
func (s *Server) Port() int { return s.srv.Addr().(*net.TCPAddr).Port }

// Close shuts the server down.
func (s *Server) Close() {
	if s.secrets != "" {
		// Only the file this server wrote: a later host's stays.
		privfile.RemoveIfSame(s.secrets, s.written)
		s.secrets = ""
	}
	embedded.Delete(s.srv.ID())
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
	os.RemoveAll(s.storeDir)
}
