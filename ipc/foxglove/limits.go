package foxglove

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"unicode/utf8"
)

// MaxEcho is the most bytes of a client's own input (a name, an op, an
// encoding, an origin) that an error message repeats; longer input is cut
// and its length given. MaxErrorText bounds a whole status or failure
// message (a host's refusal included).
const (
	MaxEcho      = 64
	MaxErrorText = 4096
)

// echo returns s for an error message: at most MaxEcho bytes of it, cut
// on a character boundary, with its length when cut.
func echo(s string) string {
	if len(s) <= MaxEcho {
		return s
	}
	cut := MaxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:cut], len(s))
}

// clip bounds a message sent to a client to MaxErrorText bytes.
func clip(s string) string {
	if len(s) <= MaxErrorText {
		return s
	}
	cut := MaxErrorText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes in all)", s[:cut], len(s))
}

// originAllowed reports whether a browser's Origin header names the
// server's own host (Host, case-insensitively) or matches one of the
// patterns.
func originAllowed(origin, host string, patterns []string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, host) {
		return true
	}
	for _, p := range patterns {
		if matchHost(p, u.Host) {
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

// matchHost matches an origin's host[:port] against a pattern: hosts
// compared case-insensitively, '*' in the pattern's host matching any
// characters (nothing else is special: "[::1]" is an IPv6 literal, not a
// character class), the pattern's port "*" any port, no port in the
// pattern only an origin without one.
func matchHost(pattern, hostport string) bool {
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

// fairQueue holds what each connection asked of the host, in order per
// connection, and hands it out a connection at a time in turn: one
// connection's backlog never delays another's next item by more than one
// item of each other connection.
type fairQueue[T any] struct {
	mu    sync.Mutex
	q     map[*client][]T
	ready []*client
	wake  chan struct{}
}

func (f *fairQueue[T]) init() {
	f.q = map[*client][]T{}
	f.wake = make(chan struct{}, 1)
}

// push queues v for c unless c has max items waiting already; it returns
// how many c had waiting.
func (f *fairQueue[T]) push(c *client, v T, max int) (int, bool) {
	f.mu.Lock()
	n := len(f.q[c])
	if n >= max {
		f.mu.Unlock()
		return n, false
	}
	if n == 0 {
		f.ready = append(f.ready, c)
	}
	f.q[c] = append(f.q[c], v)
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
	return n, true
}

// pop takes the next item: the first of the connection whose turn it is.
func (f *fairQueue[T]) pop() (T, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.ready) > 0 {
		c := f.ready[0]
		f.ready[0] = nil
		f.ready = f.ready[1:]
		l := f.q[c]
		if len(l) == 0 {
			delete(f.q, c)
			continue
		}
		v := l[0]
		var zero T
		l[0] = zero
		if len(l) == 1 {
			delete(f.q, c)
		} else {
			f.q[c] = l[1:]
			f.ready = append(f.ready, c)
		}
		return v, true
	}
	var zero T
	return zero, false
}

// drop forgets a disconnected client's items.
func (f *fairQueue[T]) drop(c *client) {
	f.mu.Lock()
	delete(f.q, c)
	f.mu.Unlock()
}

// run hands items to do until the server closes.
func (f *fairQueue[T]) run(done <-chan struct{}, do func(T)) {
	for {
		select {
		case <-done:
			return
		case <-f.wake:
		}
		for {
			v, ok := f.pop()
			if !ok {
				break
			}
			do(v)
		}
	}
}
