package web

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/simvis/simvis/internal/webguard"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/web/assets"
	"github.com/simvis/simvis/web/client"
)

// Options configure a web viewer server.
type Options struct {
	// Addr is where to listen, HOST:PORT. Off loopback a token is required.
	Addr string
	// Dial connects to the host the pages show (an ipc.Dial or ipc.Open
	// of its name). The server connects twice: to follow the host and to
	// drive it for the pages.
	Dial func() (*ipc.Client, error)
	// DriverToken lets a page set values and send requests; ViewerToken
	// lets it watch. Pages without a token are served on a loopback
	// address only, as viewers.
	DriverToken, ViewerToken string
	// TLSCert and TLSKey, both or neither, serve https:// and wss://.
	TLSCert, TLSKey string
	// Origins are browser origins accepted besides the server's own
	// (webguard host patterns).
	Origins []string
	// MaxClients bounds the pages connected at once (default 16).
	MaxClients int
	// Rate is how many states a second a page gets at most (default 30).
	// A page that cannot keep up gets the newest state when it can: states
	// in between are dropped, never queued.
	Rate float64
	// Scene names the scene in the page's title; View is where the page's
	// camera starts (called once per page).
	Scene string
	View  func() client.View
	// Requests tells pages whether the host takes XML requests.
	Requests bool
	// FetchFiles serves model files fetched from the host (its transport
	// must be an ipc.FileFetcher) instead of reading them here: for a
	// server on another machine than the host's files (a mirror).
	FetchFiles bool
	// Assets are the page's files (default: the embedded ones).
	Assets fs.FS
	// Log hears connections, refusals and host outages (default: nowhere).
	Log io.Writer
}

// Stats count what the server did.
type Stats struct {
	Clients                     int    // connected now
	States, Dropped             uint64 // states sent to pages, and skipped for slow ones
	Refused, SlowClosed, Denied uint64 // connections refused, dropped for being slow, commands refused
}

// Server is the web viewer's HTTP server: the page, its program and the
// WebSocket through which pages mirror the host.
type Server struct {
	opts      Options
	anonymous bool // pages without a token are served (as viewers)
	ln        net.Listener
	http      *http.Server
	url       string
	fol       follower
	drv       driver
	cache     fileCache

	snap      atomic.Pointer[snapshot]
	closeOnce sync.Once
	retMu     sync.Mutex
	returns   map[string]*sensorReturns // replaced, never changed: snapshots share it
	retGen    uint64
	sights    map[string]scene.FieldOfView // replaced, never changed
	sightGen  uint64

	logMu      sync.Mutex
	logAt      map[string]time.Time
	logSkipped map[string]int

	imgMu     sync.Mutex
	images    map[string]*sensorImage // replaced, never changed
	imgGen    uint64
	insetWant map[string]int       // pages asking for each camera
	encoding  map[string]bool      // a picture of the camera being encoded
	imgAt     map[string]time.Time // when the camera's last picture was taken
	mu        sync.Mutex
	clients   map[*session]bool
	done      chan struct{}
	wg        sync.WaitGroup

	states, dropped, refused, slow, denied atomic.Uint64
}

// ErrTokenRequired refuses a server off loopback without a token.
var ErrTokenRequired = webguard.ErrTokenRequired

// Listen starts a server on opts.Addr.
func Listen(opts Options) (*Server, error) {
	if opts.MaxClients == 0 {
		opts.MaxClients = 16
	}
	if opts.Rate == 0 {
		opts.Rate = 30
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Assets == nil {
		opts.Assets = assets.FS()
	}
	if opts.View == nil {
		opts.View = func() client.View {
			return client.View{X: -4, Y: -3, Z: 3, Pitch: 30, Yaw: 37, FOV: 60, Near: 0.05, Far: 500, Background: [3]float32{0.8, 0.82, 0.85}}
		}
	}
	host, _, err := net.SplitHostPort(opts.Addr)
	switch {
	case err != nil:
		return nil, fmt.Errorf("web: address %q: %w", opts.Addr, err)
	case opts.Dial == nil:
		return nil, errors.New("web: no host to show (Options.Dial)")
	case opts.MaxClients < 1 || opts.Rate <= 0 || opts.Rate > 1000:
		return nil, fmt.Errorf("web: %d clients at most, %g states a second: out of range", opts.MaxClients, opts.Rate)
	case !webguard.Loopback(host) && opts.DriverToken == "" && opts.ViewerToken == "":
		return nil, fmt.Errorf("web: address %q: %w", opts.Addr, ErrTokenRequired)
	case opts.DriverToken != "" && opts.DriverToken == opts.ViewerToken:
		return nil, errors.New("web: the driver and viewer tokens must differ")
	}
	s := &Server{opts: opts, anonymous: webguard.Loopback(host) && opts.ViewerToken == "",
		clients: map[*session]bool{}, done: make(chan struct{}),
		insetWant: map[string]int{}, encoding: map[string]bool{}, imgAt: map[string]time.Time{}}
	s.fol = follower{dial: opts.Dial, period: time.Duration(float64(time.Second) / opts.Rate)}
	s.drv = driver{dial: opts.Dial}
	ln, hostPort, secure, err := webguard.Listen(opts.Addr, opts.TLSCert, opts.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	s.ln = ln
	s.url = "http://" + hostPort + "/"
	if secure {
		s.url = "https://" + hostPort + "/"
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", s.serveWS)
	mux.Handle("/", s.pageHandler())
	s.http = &http.Server{Handler: s.guard(mux), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: log.New(opts.Log, "web: ", 0)} // failed TLS handshakes and the like, with the rest
	s.snap.Store(&snapshot{status: client.Stopped})
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		s.http.Serve(ln)
	}()
	go s.followLoop()
	return s, nil
}

// URL is the page's address (http://HOST:PORT/, https:// with TLS).
func (s *Server) URL() string { return s.url }

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	// A page whose writer is stuck (its TCP buffers full) has skipped
	// every state published since its last: they count before it takes
	// another (or is dropped).
	s.mu.Lock()
	n := len(s.clients)
	dropped := s.dropped.Load()
	gen := s.snap.Load().gen
	for c := range s.clients {
		dropped += skipped(gen, c.gen)
	}
	s.mu.Unlock()
	return Stats{Clients: n, States: s.states.Load(), Dropped: dropped, Refused: s.refused.Load(),
		SlowClosed: s.slow.Load(), Denied: s.denied.Load()}
}

// Pages is the number of pages connected now: a host renders for pages
// only while there are some.
func (s *Server) Pages() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.clients)
}

// Close disconnects every page and stops the server.
func (s *Server) Close() error {
	first := false
	s.closeOnce.Do(func() { first = true })
	if !first {
		return nil
	}
	close(s.done)
	err := s.http.Close()
	s.mu.Lock()
	for c := range s.clients {
		c.ws.Close(websocket.StatusGoingAway, "the server stopped")
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.fol.close()
	s.drv.close()
	return err
}

// followLoop publishes a snapshot of the host Rate times a second and
// wakes the pages' writers; outages and recoveries are logged once.
func (s *Server) followLoop() {
	defer s.wg.Done()
	tick := time.NewTicker(s.fol.period)
	defer tick.Stop()
	var gen uint64
	down := false
	for {
		snap, err := s.fol.step()
		if err != nil && !down {
			fmt.Fprintf(s.opts.Log, "web: the host is not available: %v\n", err)
		}
		if snap.status == client.Running && down {
			fmt.Fprintln(s.opts.Log, "web: the host is back")
		}
		down = snap.status != client.Running
		gen++
		snap.gen = gen
		s.retMu.Lock()
		snap.returns = s.returns
		snap.sights, snap.sightGen = s.sights, s.sightGen
		s.retMu.Unlock()
		s.snap.Store(snap)
		s.mu.Lock()
		for c := range s.clients {
			select {
			case c.wake <- struct{}{}:
			default: // it has not taken the last one yet: it will read this one
			}
		}
		s.mu.Unlock()
		select {
		case <-s.done:
			return
		case <-tick.C:
		}
	}
}

// guard refuses, before anything is served, requests that name this
// server by a non-loopback Host while tokenless pages are served (a page
// whose own name was rebound to 127.0.0.1, DNS rebinding, would otherwise
// read it), and sets the headers every answer carries.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.anonymous && !webguard.LoopbackHost(r.Host) && webguard.Token(r) == "" && r.URL.Path == "/ws" {
			s.refused.Add(1)
			http.Error(w, "without a token the server answers loopback host names only", http.StatusForbidden)
			return
		}
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		// 'wasm-unsafe-eval' lets the page compile its WebAssembly;
		// nothing is loaded from elsewhere.
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; "+
			"connect-src 'self'; img-src 'self' data: blob:; style-src 'self'; frame-ancestors 'none'")
		next.ServeHTTP(w, r)
	})
}

// maxReturnPoints bounds one sensor's returns sent to pages (half a
// message; a 128 x 2048 lidar's 262,144 fit): larger ones are left out,
// and the page's overlay keeps the last it had.
const maxReturnPoints = client.MaxServerMessage / 2 / 12

// PublishReturns hands a range sensor's newest returns (a rendered frame's)
// to the pages, whose scan overlays draw them: a host's frame sink calls it
// as frames are rendered. Safe from any goroutine.
func (s *Server) PublishReturns(r *scene.Returns) {
	if r == nil || len(r.Points) > maxReturnPoints {
		return
	}
	sr := &sensorReturns{header: client.Returns{Sensor: r.Sensor, Origin: r.Origin, Points: len(r.Points)},
		points: client.PutPoints(make([]byte, 0, 12*len(r.Points)), r.Points)}
	s.retMu.Lock()
	defer s.retMu.Unlock()
	s.retGen++
	sr.gen = s.retGen
	next := make(map[string]*sensorReturns, len(s.returns)+1)
	for k, v := range s.returns {
		next[k] = v
	}
	next[r.Sensor] = sr
	s.returns = next
}

// maxSights bounds the sensors whose fields of view pages are told of,
// maxSightElevations the layers of each (what the page draws: see
// helpers.MaxElevations): a state's header stays well under its bound.
const (
	maxSights          = 4096
	maxSightElevations = 8
)

// PublishSights hands pages what each sensor of the scene sees
// (scene.Sighted), for their field-of-view lines: a host's frame sink calls
// it when the scene's sensors change. Sensors beyond maxSights are left
// out. Safe from any goroutine.
func (s *Server) PublishSights(sights map[string]scene.FieldOfView) {
	next := make(map[string]scene.FieldOfView, min(len(sights), maxSights))
	for name, f := range sights {
		if len(next) == maxSights {
			break
		}
		next[name] = f.Thin(maxSightElevations)
	}
	s.retMu.Lock()
	defer s.retMu.Unlock()
	s.sights = next
	s.sightGen++
}

// logLimited writes a line to the log, at most one a second of each kind
// (a flood of refused connections does not flood the log); how many were
// left out is said with the next.
func (s *Server) logLimited(kind, format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	if s.logAt == nil {
		s.logAt, s.logSkipped = map[string]time.Time{}, map[string]int{}
	}
	if time.Since(s.logAt[kind]) < time.Second {
		s.logSkipped[kind]++
		return
	}
	s.logAt[kind] = time.Now()
	line := fmt.Sprintf(format, args...)
	if n := s.logSkipped[kind]; n > 0 {
		line += fmt.Sprintf(" (and %d more like it in the last second)", n)
		s.logSkipped[kind] = 0
	}
	fmt.Fprintln(s.opts.Log, line)
}
