package webguard

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/simvis/simvis/internal/secretcmp"
)

// Loopback reports whether host (a name or an address) is this machine
// by a loopback name or address.
func Loopback(host string) bool {
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true // host names are case-insensitive
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// LoopbackHost reports whether a Host header names this machine by a
// loopback name or address.
func LoopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	return Loopback(host)
}

// Token returns the token a request carries: the query parameter, else a
// bearer Authorization header.
func Token(r *http.Request) string {
	if t := r.URL.Query().Get("token"); t != "" {
		return t
	}
	if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer ") {
		return strings.TrimPrefix(a, "Bearer ")
	}
	return ""
}

// Same compares a token a client sent with one configured (empty: none).
func Same(a, b string) bool { return b != "" && secretcmp.Equal(a, b) }

// OriginAllowed reports whether a browser's Origin header names the
// server's own host (Host, case-insensitively) or matches one of the
// patterns.
func OriginAllowed(origin, host string, patterns []string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, host) {
		return true
	}
	for _, p := range patterns {
		if MatchHost(p, u.Host) {
			return true
		}
	}
	return false
}

// splitHostPort splits HOST, HOST:PORT, [V6] or [V6]:PORT; hasPort tells
// whether a port was given.
func splitHostPort(s string) (host, port string, hasPort bool) {
	if strings.HasPrefix(s, "[") {
		i := strings.IndexByte(s, ']')
		if i < 0 {
			return s, "", false
		}
		rest := s[i+1:]
		if strings.HasPrefix(rest, ":") {
			return s[:i+1], rest[1:], true
		}
		return s[:i+1], "", false
	}
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// MatchHost matches an origin's host[:port] against a pattern: hosts
// compared case-insensitively, '*' in the pattern's host matching any
// characters (nothing else is special: "[::1]" is an IPv6 literal, not a
// character class), the pattern's port "*" any port, no port in the
// pattern only an origin without one.
func MatchHost(pattern, hostport string) bool {
	pattern = strings.ToLower(strings.TrimSpace(pattern))
	if pattern == "*" {
		return true
	}
	ph, pp, pHas := splitHostPort(pattern)
	h, port, has := splitHostPort(strings.ToLower(hostport))
	switch {
	case pHas && pp == "*":
	case pHas != has || pp != port:
		return false
	}
	return wildcard(ph, h)
}

// wildcard matches s against p where '*' matches any run of characters.
func wildcard(p, s string) bool {
	if !strings.Contains(p, "*") {
		return p == s
	}
	parts := strings.Split(p, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for i, part := range parts[1:] {
		if i == len(parts)-2 {
			return strings.HasSuffix(s, part)
		}
		j := strings.Index(s, part)
		if j < 0 {
			return false
		}
		s = s[j+len(part):]
	}
	return true
}

// ErrTokenRequired refuses a server off loopback without a token.
var ErrTokenRequired = errors.New("not a loopback address: give a driver or viewer token")

// Listen listens on addr (HOST:PORT), with TLS when certFile and keyFile
// name a certificate and its key (both or neither). It returns the
// listener and the address clients reach it at: the host as given (a
// wildcard host stays 0.0.0.0 rather than Go's "[::]") with the port the
// listener got.
func Listen(addr, certFile, keyFile string) (ln net.Listener, hostPort string, secure bool, err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, "", false, err
	}
	if (certFile == "") != (keyFile == "") {
		return nil, "", false, errors.New("TLS needs both a certificate and a key file")
	}
	var conf *tls.Config
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, "", false, err
		}
		conf = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	if ln, err = net.Listen("tcp", addr); err != nil {
		return nil, "", false, err
	}
	if conf != nil {
		ln = tls.NewListener(ln, conf)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	if host == "" {
		host = "0.0.0.0"
	}
	return ln, net.JoinHostPort(host, port), conf != nil, nil
}
