package natsipc

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// ServerOptions configure the NATS server a host embeds.
type ServerOptions struct {
	// Listen is host:port; "" means 127.0.0.1:4222. Port 0 picks a free one.
	Listen string
	// Token, or User and Password: required when Listen is not a loopback
	// address, so that a host is never exposed without authentication.
	Token, User, Password string
	// TLSCert and TLSKey, both or neither, make clients use TLS.
	TLSCert, TLSKey string
	// MaxPayload bounds a message (default 8 MiB: a 640x480 depth frame
	// is 1.2 MB); MaxPending what the server buffers for one client
	// (default 64 MiB).
	MaxPayload int32
	MaxPending int64
}

// Server is an embedded NATS server with JetStream (memory storage).
type Server struct {
	srv      *server.Server
	storeDir string
	url      string // for the host's own connection
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
	opts := &server.Options{
		Host: host, Port: port, NoSigs: true, NoLog: true,
		Authorization: o.Token, Username: o.User, Password: o.Password,
		MaxPayload: o.MaxPayload, MaxPending: o.MaxPending,
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
	u := url.URL{Scheme: "nats", Host: net.JoinHostPort(dialable(host), strconv.Itoa(addr.Port))}
	if o.TLSCert != "" {
		u.Scheme = "tls"
	}
	switch {
	case o.Token != "":
		u.User = url.User(o.Token)
	case o.User != "":
		u.User = url.UserPassword(o.User, o.Password)
	}
	return &Server{srv: srv, storeDir: store, url: u.String()}, nil
}

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

// URL is the server's address with credentials, for the host itself.
func (s *Server) URL() string { return s.url }

// Port is the port the server listens on.
func (s *Server) Port() int { return s.srv.Addr().(*net.TCPAddr).Port }

// Close shuts the server down.
func (s *Server) Close() {
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
	os.RemoveAll(s.storeDir)
}
