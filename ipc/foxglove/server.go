package foxglove

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/simvis/simvis/internal/webguard"
)

// Subprotocol is the WebSocket subprotocol the server speaks.
const Subprotocol = "foxglove.websocket.v1"

// Role is what a connection may do.
type Role int

// Roles, as on NATS: a viewer only subscribes and reads parameters; a
// driver also sets parameters and calls services.
const (
	RoleViewer Role = 1 + iota
	RoleDriver
)

// String names the role as serverInfo's metadata does: "viewer" or "driver".
func (r Role) String() string {
	if r == RoleDriver {
		return "driver"
	}
	return "viewer"
}

// DefaultOrigins are the browser origins accepted without --foxglove-origin:
// Foxglove's web app and pages served from this machine. Other pages a
// user's browser opens cannot reach the server (cross-site WebSocket
// hijacking), token or not.
var DefaultOrigins = []string{"app.foxglove.dev", "studio.foxglove.dev", "localhost", "localhost:*", "127.0.0.1", "127.0.0.1:*", "[::1]", "[::1]:*"}

// Options configure a server. Zero limits take the defaults in brackets.
type Options struct {
	Addr string // host:port to listen on (port 0: any free port)
	Name string // serverInfo name

	// DriverToken and ViewerToken: a client gives one as the query
	// parameter token=... or an "Authorization: Bearer ..." header. On a
	// loopback address without a viewer token, a client that gives no
	// token may watch (the viewer role), so that opening Foxglove just
	// works; driving needs the driver token. Off loopback every client
	// needs a token (Listen refuses to start without one).
	DriverToken, ViewerToken string
	// AnonymousDrivers makes clients without a token drivers (loopback
	// only): every local user then drives the host. Off by default.
	AnonymousDrivers bool
	// TLSCert and TLSKey (PEM files) serve wss:// instead of ws://.
	TLSCert, TLSKey string
	// Origins are the browser origins accepted besides the server's own
	// host [DefaultOrigins]: host patterns (HOST, HOST:PORT, HOST:* for
	// any port; "*" in a host matches any characters, "*" alone any
	// origin), compared case-insensitively, IPv6 literals in brackets
	// ("[::1]:*"). Clients that send no Origin header (not browsers) are
	// not affected.
	Origins []string

	MaxClients int // connected clients [16]; more are refused with 503
	// MaxQueue bounds the control messages (JSON replies, parameter and
	// advertise messages, service responses) queued for one client
	// [1024]; a client that lets more pile up is disconnected. Message
	// data never queue: one frame per channel waits, the latest.
	MaxQueue int
	// MaxQueueBytes bounds the bytes of those queued messages [64 MiB]: a
	// client sending requests whose answers echo them (refusals name
	// every parameter) without reading would otherwise hold MaxQueue
	// times MaxMessage.
	MaxQueueBytes int
	MaxMessage    int64         // largest message a client may send [1 MiB]
	WriteTimeout  time.Duration // a client that takes longer to take one message is disconnected [10 s]
	// MaxPending bounds, per connection, the setParameters messages and
	// the service calls waiting for the host [64 each]: connections are
	// served in turn, so one driver cannot starve the others.
	MaxPending int
	// MaxSetEntries bounds the entries of one setParameters message
	// [1024]; MaxPendingSets the parameter writes of all clients waiting
	// for the host to show them [4096].
	MaxSetEntries, MaxPendingSets int
	// MaxSceneBytes bounds the models kept encoded for the scene channel
	// (base64 binary glTF, one copy per distinct content) [256 MiB]; a
	// model that does not fit is not sent (its part's entity comes
	// without it) and a warning names the budget.
	MaxSceneBytes int64
	// Settle is how long, and at least two updates, a parameter write
	// waits for the value to show before it counts as refused [100 ms].
	Settle time.Duration
	// StyleInterval is the least time between two scene messages that only
	// a switch, color or foliage value changed [250 ms]: such a message
	// carries every part's model, so a client moving a color slider gets
	// the latest look at most this often (the last one always goes out).
	// Parts added or moved are sent at once.
	StyleInterval time.Duration

	// Warn reports drops, slow clients and refusals (rate-limited by the
	// caller per kind); nil: none.
	Warn func(kind, format string, args ...any)
}

func (o *Options) defaults() {
	if o.Name == "" {
		o.Name = "simvis"
	}
	if o.MaxClients <= 0 {
		o.MaxClients = 16
	}
	if o.MaxQueue <= 0 {
		o.MaxQueue = 1024
	}
	if o.MaxQueueBytes <= 0 {
		o.MaxQueueBytes = 64 << 20
	}
	if o.MaxMessage <= 0 {
		o.MaxMessage = 1 << 20
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.MaxPending <= 0 {
		o.MaxPending = 64
	}
	if o.MaxSetEntries <= 0 {
		o.MaxSetEntries = 1024
	}
	if o.MaxPendingSets <= 0 {
		o.MaxPendingSets = 4096
	}
	if o.MaxSceneBytes <= 0 {
		o.MaxSceneBytes = 256 << 20
	}
	if o.Settle <= 0 {
		o.Settle = 100 * time.Millisecond
	}
	if o.StyleInterval <= 0 {
		o.StyleInterval = 250 * time.Millisecond
	}
	if o.Origins == nil {
		o.Origins = DefaultOrigins
	}
	if o.Warn == nil {
		o.Warn = func(string, string, ...any) {}
	}
	// Warnings come from every client's goroutines; the caller's printer
	// need not be safe for concurrent use.
	var mu sync.Mutex
	warn := o.Warn
	o.Warn = func(kind, format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		warn(kind, format, args...)
	}
}

// Driver is how drivers' parameter writes and change requests reach the
// host: an *ipc.Client (shared memory or NATS), as for every other client.
type Driver interface {
	Set(index int, v float64) error
	Request(xml string) (uint64, error)
}

// Channel is a topic the server advertises.
type Channel struct {
	Topic, Encoding, SchemaName, Schema, SchemaEncoding string
}

type channel struct {
	Channel
	id     uint32
	latest *frame // the last message, sent to each new subscriber
}

type frame struct {
	ts    uint64
	data  []byte
	scene bool // the scene channel's turn: the writer sends what the client lacks (writeScene)
}

// Stats counts what the server did since it started.
type Stats struct {
	Clients      int    // connected now
	Sent         uint64 // message data frames written to clients
	Dropped      uint64 // frames replaced by a newer one before a slow client took them
	SlowClosed   uint64 // clients disconnected for not taking their messages
	Refused      uint64 // connections refused (token, limit, subprotocol)
	SetsRefused  uint64 // parameter writes refused (role, name, type, host)
	CallsRefused uint64 // service calls that failed
}

// Server is a Foxglove WebSocket server for one scene.
type Server struct {
	opts  Options
	drv   Driver
	ln    net.Listener
	http  *http.Server
	url   string
	tls   bool
	epoch string // sessionId: a new one each run, so clients see a restart

	mu       sync.RWMutex
	clients  map[*client]bool
	channels []*channel
	services []*service
	nextID   int

	params    paramState
	scene     sceneState
	build     sceneBuilder
	snap      *sceneSnap    // the scene as the builder last made it (under mu)
	sceneChan atomic.Uint32 // the scene channel's id, once advertised

	anonymous bool // clients without a token are accepted (loopback, no viewer token)
	sets      fairQueue[setRequest]
	calls     fairQueue[callRequest]
	settle    chan struct{} // wakes the settle worker after an Update
	done      chan struct{}
	wg        sync.WaitGroup

	sent, dropped, slow, refused, setsRefused, callsRefused atomic.Uint64
	reported                                                uint64 // drops already warned about (Update's goroutine)
}

// ErrTokenRequired refuses a server off loopback without a token.
var ErrTokenRequired = webguard.ErrTokenRequired

// Listen starts a server on opts.Addr whose drivers act through drv (nil:
// parameters and services answer that the server cannot drive the host).
// Off loopback it requires a token.
func Listen(opts Options, drv Driver) (*Server, error) {
	opts.defaults()
	host, _, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("foxglove: address %q: %w", opts.Addr, err)
	}
	if !webguard.Loopback(host) && opts.DriverToken == "" && opts.ViewerToken == "" {
		return nil, fmt.Errorf("foxglove: address %q: %w", opts.Addr, ErrTokenRequired)
	}
	if opts.AnonymousDrivers && !webguard.Loopback(host) {
		return nil, fmt.Errorf("foxglove: address %q: drivers without a token are allowed on a loopback address only", opts.Addr)
	}
	if opts.DriverToken != "" && opts.DriverToken == opts.ViewerToken {
		return nil, errors.New("foxglove: the driver and viewer tokens must differ")
	}
	s := &Server{opts: opts, drv: drv, clients: map[*client]bool{},
		epoch:     fmt.Sprintf("%d", time.Now().UnixNano()),
		anonymous: webguard.Loopback(host) && opts.ViewerToken == "",
		settle:    make(chan struct{}, 1), done: make(chan struct{})}
	s.sets.init()
	s.calls.init()
	s.build.init()
	s.params.init()
	ln, hostPort, secure, err := webguard.Listen(opts.Addr, opts.TLSCert, opts.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("foxglove: %w", err)
	}
	s.ln, s.tls = ln, secure
	scheme := "ws"
	if s.tls {
		scheme = "wss"
	}
	s.url = scheme + "://" + hostPort
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.addServices()
	s.wg.Add(5)
	go func() {
		defer s.wg.Done()
		s.http.Serve(ln)
	}()
	go s.setWorker()
	go s.callWorker()
	go s.settleWorker()
	go s.sceneWorker()
	return s, nil
}

// URL is the address clients connect to (ws://HOST:PORT, wss:// with TLS).
func (s *Server) URL() string { return s.url }

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	s.mu.RLock()
	n := len(s.clients)
	s.mu.RUnlock()
	return Stats{Clients: n, Sent: s.sent.Load(), Dropped: s.dropped.Load(), SlowClosed: s.slow.Load(),
		Refused: s.refused.Load(), SetsRefused: s.setsRefused.Load(), CallsRefused: s.callsRefused.Load()}
}

// Close disconnects every client and stops the server.
func (s *Server) Close() error {
	select {
	case <-s.done:
		return nil
	default:
	}
	close(s.done)
	err := s.http.Close()
	s.mu.Lock()
	for c := range s.clients {
		c.close(websocket.StatusGoingAway, "the host stopped")
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

// role decides what a connection may do from its token; anonymous
// reports a connection without one.
func (s *Server) role(r *http.Request) (role Role, anonymous, ok bool) {
	t := webguard.Token(r)
	switch {
	case webguard.Same(t, s.opts.DriverToken):
		return RoleDriver, false, true
	case webguard.Same(t, s.opts.ViewerToken):
		return RoleViewer, false, true
	case t == "" && s.opts.AnonymousDrivers:
		return RoleDriver, true, true // asked for: loopback (Listen checked)
	case t == "" && s.anonymous:
		return RoleViewer, true, true
	}
	return 0, false, false
}

// ServeHTTP accepts a WebSocket connection: token, client limit, then the
// subprotocol.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	role, anonymous, ok := s.role(r)
	if ok && anonymous && !webguard.LoopbackHost(r.Host) {
		// Without a token only loopback names reach the server: a page
		// whose own name was rebound to 127.0.0.1 (DNS rebinding) passes
		// the origin check, but not this one.
		s.refused.Add(1)
		http.Error(w, "without a token the server answers loopback host names only", http.StatusForbidden)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !webguard.OriginAllowed(o, r.Host, s.opts.Origins) {
		s.refused.Add(1)
		s.opts.Warn("foxglove-origin", "foxglove: refused %s: origin %s is not among the accepted (--foxglove-origins)", r.RemoteAddr, echo(o))
		http.Error(w, fmt.Sprintf("origin %s is not accepted (the server's --foxglove-origins)", echo(o)), http.StatusForbidden)
		return
	}
	if !ok {
		s.refused.Add(1)
		s.opts.Warn("foxglove-auth", "foxglove: refused %s: missing or wrong token", r.RemoteAddr)
		http.Error(w, "a valid token is required (query parameter token=... or Authorization: Bearer ...)", http.StatusUnauthorized)
		return
	}
	s.mu.Lock()
	full := len(s.clients) >= s.opts.MaxClients
	s.mu.Unlock()
	if full {
		s.refused.Add(1)
		s.opts.Warn("foxglove-full", "foxglove: refused %s: %d clients connected, the limit", r.RemoteAddr, s.opts.MaxClients)
		http.Error(w, fmt.Sprintf("the server takes at most %d clients", s.opts.MaxClients), http.StatusServiceUnavailable)
		return
	}
	// The origin was checked above (originAllowed: hosts compared
	// case-insensitively, IPv6 literals as such, not as glob patterns).
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{Subprotocol},
		InsecureSkipVerify: true, CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		s.refused.Add(1)
		return // Accept answered the request
	}
	if conn.Subprotocol() != Subprotocol {
		s.refused.Add(1)
		conn.Close(websocket.StatusPolicyViolation, "the client must offer subprotocol "+Subprotocol)
		return
	}
	conn.SetReadLimit(s.opts.MaxMessage)
	c := newClient(s, conn, role, r.RemoteAddr)
	s.mu.Lock()
	if len(s.clients) >= s.opts.MaxClients { // raced with another accept
		s.mu.Unlock()
		s.refused.Add(1)
		conn.Close(websocket.StatusTryAgainLater, "too many clients")
		return
	}
	s.nextID++
	c.id = s.nextID
	s.clients[c] = true
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	s.hello(c)
	go c.writeLoop()
	c.readLoop()
	s.mu.Lock()
	delete(s.clients, c)
	s.mu.Unlock()
	s.sets.drop(c)
	s.calls.drop(c)
	c.close(websocket.StatusNormalClosure, "")
}

// hello sends a new client the server's info, channels, services and
// parameters it may subscribe to.
func (s *Server) hello(c *client) {
	c.sendJSON(map[string]any{
		"op": "serverInfo", "name": s.opts.Name,
		"capabilities":       []string{"parameters", "parametersSubscribe", "services"},
		"supportedEncodings": []string{"json"},
		"metadata":           map[string]string{"role": c.role.String()},
		"sessionId":          s.epoch,
	})
	s.mu.RLock()
	chans := make([]map[string]any, 0, len(s.channels))
	for _, ch := range s.channels {
		chans = append(chans, ch.advert())
	}
	svcs := make([]map[string]any, 0, len(s.services))
	for _, sv := range s.services {
		svcs = append(svcs, sv.advert())
	}
	s.mu.RUnlock()
	c.sendJSON(map[string]any{"op": "advertise", "channels": chans})
	c.sendJSON(map[string]any{"op": "advertiseServices", "services": svcs})
}

func (ch *channel) advert() map[string]any {
	m := map[string]any{"id": ch.id, "topic": ch.Topic, "encoding": ch.Encoding, "schemaName": ch.SchemaName, "schema": ch.Schema}
	if ch.SchemaEncoding != "" {
		m["schemaEncoding"] = ch.SchemaEncoding
	}
	return m
}

// Advertise adds a channel, tells connected clients about it and returns
// its id. Topics are unique: advertising a topic again returns its id.
func (s *Server) Advertise(ch Channel) uint32 {
	s.mu.Lock()
	for _, old := range s.channels {
		if old.Topic == ch.Topic {
			s.mu.Unlock()
			return old.id
		}
	}
	c := &channel{Channel: ch, id: uint32(len(s.channels) + 1)}
	s.channels = append(s.channels, c)
	msg, _ := json.Marshal(map[string]any{"op": "advertise", "channels": []any{c.advert()}})
	for cl := range s.clients {
		cl.send(websocket.MessageText, msg)
	}
	s.mu.Unlock()
	return c.id
}

// Channel returns the id of an advertised topic.
func (s *Server) Channel(topic string) (uint32, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, ch := range s.channels {
		if ch.Topic == topic {
			return ch.id, true
		}
	}
	return 0, false
}

// Publish offers one message to every client subscribed to the channel;
// it never blocks. ts is the message's log time in nanoseconds. data must
// not change afterwards (it is kept for new subscribers).
func (s *Server) Publish(id uint32, ts uint64, data []byte) {
	f := &frame{ts: ts, data: data}
	s.mu.Lock()
	if id == 0 || int(id) > len(s.channels) {
		s.mu.Unlock()
		return
	}
	s.channels[id-1].latest = f
	for c := range s.clients {
		c.offer(id, f)
	}
	s.mu.Unlock()
}

// latest returns a channel's last message (nil if none yet).
func (s *Server) latest(id uint32) (*frame, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if id == 0 || int(id) > len(s.channels) {
		return nil, false
	}
	return s.channels[id-1].latest, true
}

// reportDrops warns about frames dropped since the last report.
func (s *Server) reportDrops() {
	d := s.dropped.Load()
	if d > s.reported {
		s.opts.Warn("foxglove-drops", "foxglove: %d frames dropped for slow clients (%d in all; the latest frame per channel is kept)", d-s.reported, d)
		s.reported = d
	}
}

// ctx is a context that ends when the server closes.
func (s *Server) ctx() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
