package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/simvis/simvis/internal/webguard"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/web/client"
)

// Bounds of one page's connection.
const (
	writeTimeout = 10 * time.Second // a page that takes longer for one message is dropped
	maxInFlight  = 4                // requests of one page waiting for the host
	recordBytes  = 1 << 20          // change-log XML in one state message, about
	repliesQueue = 16               // replies waiting for the writer; then the page's reads wait
)

// session is one page's WebSocket.
type session struct {
	s      *Server
	ws     *websocket.Conn
	role   client.Role
	remote string
	wake   chan struct{}
	out    chan []byte // replies (text) and file chunks (binary, kind 'F')
	slots  chan struct{}

	epoch    uint64            // the run the page was last sent
	sent     int               // records of that run sent
	elemGen  uint64            // element table last sent
	gen      uint64            // snapshot last sent
	retSent  map[string]uint64 // each sensor's returns last sent (sensorReturns.gen)
	sightGen uint64            // sights last sent
	insetMu  sync.Mutex
	insets   map[string]bool   // cameras whose pictures the page asked for
	imgSent  map[string]uint64 // each camera's picture last sent (the writer's)
	missed   uint64            // snapshots skipped for this page, told in its states

	shown      []float64 // the values the page has, as last sent
	shownEpoch uint64    // the run they are of
}

// skipped is how many snapshots a page whose last was sent will never
// get, now that now is published: a writer always sends the newest.
func skipped(now, sent uint64) uint64 {
	if sent == 0 || now <= sent+1 {
		return 0
	}
	return now - sent - 1
}

// role decides what a connection may do from its token.
func (s *Server) role(r *http.Request) (client.Role, bool) {
	t := webguard.Token(r)
	switch {
	case webguard.Same(t, s.opts.DriverToken):
		return client.Driver, true
	case webguard.Same(t, s.opts.ViewerToken):
		return client.Viewer, true
	case t == "" && s.anonymous:
		return client.Viewer, true
	}
	return "", false
}

// serveWS accepts a page's WebSocket: token, origin, client limit, then
// the subprotocol.
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	role, ok := s.role(r)
	if o := r.Header.Get("Origin"); o != "" && !webguard.OriginAllowed(o, r.Host, s.opts.Origins) {
		s.refused.Add(1)
		s.logLimited("origin", "web: refused %s: origin %.64q is not the server's own nor accepted", r.RemoteAddr, o)
		http.Error(w, "this origin is not accepted", http.StatusForbidden)
		return
	}
	if !ok {
		s.refused.Add(1)
		s.logLimited("token", "web: refused %s: missing or wrong token", r.RemoteAddr)
		http.Error(w, "a valid token is required (the page's address ends in #token=...)", http.StatusUnauthorized)
		return
	}
	s.mu.Lock()
	full := len(s.clients) >= s.opts.MaxClients
	s.mu.Unlock()
	if full {
		s.refused.Add(1)
		http.Error(w, fmt.Sprintf("the server takes at most %d pages", s.opts.MaxClients), http.StatusServiceUnavailable)
		return
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{client.Subprotocol},
		InsecureSkipVerify: true, CompressionMode: websocket.CompressionDisabled}) // the origin was checked above
	if err != nil {
		s.refused.Add(1)
		return
	}
	if ws.Subprotocol() != client.Subprotocol {
		s.refused.Add(1)
		ws.Close(websocket.StatusPolicyViolation, "the client must offer subprotocol "+client.Subprotocol)
		return
	}
	ws.SetReadLimit(client.MaxClientMessage)
	c := &session{s: s, ws: ws, role: role, remote: r.RemoteAddr, wake: make(chan struct{}, 1),
		out: make(chan []byte, repliesQueue), slots: make(chan struct{}, maxInFlight), insets: map[string]bool{}, imgSent: map[string]uint64{}}
	s.mu.Lock()
	select {
	case <-s.done:
		// Close has closed the pages it knew: one registered now would
		// hold its wait up until the page left.
		s.mu.Unlock()
		ws.Close(websocket.StatusGoingAway, "the server stopped")
		return
	default:
	}
	if len(s.clients) >= s.opts.MaxClients {
		s.mu.Unlock()
		s.refused.Add(1)
		ws.Close(websocket.StatusTryAgainLater, "too many pages")
		return
	}
	s.clients[c] = true
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	s.logLimited("connected", "web: %s connected as a %s", r.RemoteAddr, role)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		err := c.writeLoop(ctx)
		if errors.Is(err, context.DeadlineExceeded) {
			s.slow.Add(1)
			fmt.Fprintf(s.opts.Log, "web: dropped %s: it took over %v to take a message\n", c.remote, writeTimeout)
			ws.Close(websocket.StatusPolicyViolation, "too slow")
		}
		cancel()
	}()
	err = c.readLoop(ctx)
	cancel()
	ws.Close(websocket.StatusNormalClosure, "")
	// A page gone wants no pictures: the host stops rendering its cameras.
	c.insetMu.Lock()
	for name := range c.insets {
		s.wantInset(name, -1)
	}
	clear(c.insets)
	c.insetMu.Unlock()
	s.mu.Lock()
	delete(s.clients, c)
	gen := s.snap.Load().gen
	s.dropped.Add(skipped(gen, c.gen))
	c.gen = gen
	s.mu.Unlock()
	if err != nil && websocket.CloseStatus(err) == -1 && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(s.opts.Log, "web: %s: %v\n", c.remote, err)
	}
}

// writeLoop sends the welcome, then replies as they come and the newest
// snapshot whenever the follower published one.
func (c *session) writeLoop(ctx context.Context) error {
	w := c.s.opts
	welcome, _ := json.Marshal(client.Welcome{Op: client.OpWelcome, Protocol: 1, Role: c.role, Scene: w.Scene,
		View: w.View(), Rate: w.Rate, Requests: w.Requests, SensorTypes: scene.SensorTypes()})
	if err := c.write(ctx, websocket.MessageText, welcome); err != nil {
		return err
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case msg := <-c.out:
			typ := websocket.MessageText
			if len(msg) > 0 && msg[0] == client.KindFile {
				typ = websocket.MessageBinary
			}
			if err := c.write(ctx, typ, msg); err != nil {
				return err
			}
		case <-c.wake:
			more, err := c.sendState(ctx)
			if err != nil {
				return err
			}
			if more {
				select { // the rest of the records next, after any reply
				case c.wake <- struct{}{}:
				default:
				}
			}
		}
	}
}

func (c *session) write(ctx context.Context, typ websocket.MessageType, msg []byte) error {
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	return c.ws.Write(ctx, typ, msg)
}

// sendState sends the newest snapshot: the records the page has not had
// (up to about recordBytes of them), the element table if it changed, and
// the values. It reports whether records are left for another message.
func (c *session) sendState(ctx context.Context) (more bool, err error) {
	c.s.mu.Lock() // Stats counts what a stuck page skipped from c.gen
	snap := c.s.snap.Load()
	n := skipped(snap.gen, c.gen)
	c.s.dropped.Add(n)
	c.gen = snap.gen
	c.s.mu.Unlock()
	c.missed += n
	if snap.epoch != c.epoch {
		c.epoch, c.sent, c.elemGen = snap.epoch, 0, 0
	}
	st := client.State{Epoch: snap.epoch, Status: snap.status, Cycle: snap.cycle, SentAt: time.Now().UnixMilli(), Dropped: c.missed}
	size := 0
	for c.sent < len(snap.records) && (size == 0 || size+len(snap.records[c.sent].XML) <= recordBytes) {
		size += len(snap.records[c.sent].XML) + 256
		st.Records = append(st.Records, snap.records[c.sent])
		c.sent++
	}
	st.Complete = c.sent == len(snap.records)
	if snap.elemGen != c.elemGen {
		st.Elements = snap.elements
		if st.Elements == nil {
			st.Elements = []client.Element{}
		}
		c.elemGen = snap.elemGen
	}
	if snap.sightGen != c.sightGen {
		st.Sights = snap.sights
		if st.Sights == nil {
			st.Sights = map[string]scene.FieldOfView{}
		}
		c.sightGen = snap.sightGen
		size += 256 * len(st.Sights) // at most maxSightElevations each
	}
	// Returns the page has not had, while they fit in half a message.
	var tail []byte
	for name, r := range snap.returns {
		if r.gen <= c.retSent[name] || size+len(tail)+len(r.points) > client.MaxServerMessage/2 {
			continue
		}
		if c.retSent == nil {
			c.retSent = map[string]uint64{}
		}
		c.retSent[name] = r.gen
		st.Returns = append(st.Returns, r.header)
		tail = append(tail, r.points...)
	}
	// The values the page lacks: the run of those that changed since its
	// last state (all of them for a new run or table), in as many messages
	// as they need: the first with the records, the element table and the
	// returns, the rest alone.
	lo, hi := changedRun(c.shown, snap.values, c.epoch == c.shownEpoch)
	c.shown, c.shownEpoch = append(c.shown[:0], snap.values...), c.epoch
	values := snap.values[lo:hi]
	st.ValuesFrom = lo
	room := max((client.MaxServerMessage-size-len(tail))/8-64, 1024)
	for {
		n := min(len(values), room)
		st.Values = n
		msg, err := client.EncodeBinary(client.KindState, st, append(client.PutValues(nil, values[:n]), tail...))
		if err != nil {
			return false, err
		}
		if err := c.write(ctx, websocket.MessageBinary, msg); err != nil {
			return false, err
		}
		values = values[n:]
		if len(values) == 0 {
			break
		}
		st = client.State{Epoch: st.Epoch, Status: st.Status, Cycle: st.Cycle, SentAt: st.SentAt, Complete: st.Complete,
			ValuesFrom: st.ValuesFrom + n, Dropped: st.Dropped}
		tail, room = nil, client.MaxServerMessage/8-1024
	}
	c.s.states.Add(1)
	// The pictures of the cameras the page asked for, each newer one once.
	for name, im := range c.s.currentImages() {
		c.insetMu.Lock()
		wanted := c.insets[name]
		c.insetMu.Unlock()
		if !wanted || im.gen <= c.imgSent[name] {
			continue
		}
		c.imgSent[name] = im.gen
		if err := c.write(ctx, websocket.MessageBinary, im.msg); err != nil {
			return false, err
		}
	}
	return !st.Complete, nil
}

// readLoop takes the page's commands until it goes.
func (c *session) readLoop(ctx context.Context) error {
	for {
		typ, msg, err := c.ws.Read(ctx)
		if err != nil {
			return err
		}
		if typ != websocket.MessageText {
			c.ws.Close(websocket.StatusUnsupportedData, "commands are JSON text messages")
			return nil
		}
		var cmd client.Command
		if err := json.Unmarshal(msg, &cmd); err != nil {
			c.reply(ctx, client.Reply{Error: "not a command: " + clip(err.Error())})
			continue
		}
		if err := c.command(ctx, cmd); err != nil {
			return err
		}
	}
}

// command carries out one command; sets and requests need the driver
// role.
func (c *session) command(ctx context.Context, cmd client.Command) error {
	deny := func(format string, args ...any) error {
		c.s.denied.Add(1)
		return c.reply(ctx, client.Reply{ID: cmd.ID, Error: fmt.Sprintf(format, args...)})
	}
	switch cmd.Op {
	case client.OpFile:
		return c.file(ctx, cmd)
	case client.OpInset: // watching: viewers may
		if !scene.ValidName(strings.ReplaceAll(cmd.Sensor, "/", "_")) {
			return deny("inset: %.64q is not a sensor's name", cmd.Sensor)
		}
		c.insetMu.Lock()
		full := cmd.On && !c.insets[cmd.Sensor] && len(c.insets) >= client.MaxInsets
		switch {
		case full || cmd.On == c.insets[cmd.Sensor]:
		case cmd.On:
			c.insets[cmd.Sensor] = true
			c.s.wantInset(cmd.Sensor, 1)
		default:
			delete(c.insets, cmd.Sensor)
			c.s.wantInset(cmd.Sensor, -1)
		}
		c.insetMu.Unlock() // before replying: the writer takes it too
		if full {
			return deny("inset: a page gets the pictures of %d cameras at most", client.MaxInsets)
		}
		return nil
	case client.OpSet, client.OpRequest:
		if c.role != client.Driver {
			return deny("%s: this page has the viewer role (a driver token drives)", cmd.Op)
		}
	default:
		return deny("unknown op %.32q", cmd.Op)
	}
	if cmd.Op == client.OpSet {
		snap := c.s.snap.Load()
		switch {
		case cmd.Epoch != snap.epoch:
			return deny("set: the host was restarted since the page last heard from it")
		case cmd.Index < 0 || cmd.Index >= len(snap.values):
			return deny("set: value index %d out of the %d the host has", cmd.Index, len(snap.values))
		case math.IsNaN(cmd.Value) || math.IsInf(cmd.Value, 0):
			return deny("set: %v is not a finite value", cmd.Value)
		}
		if err := c.s.drv.do(cmd.Epoch, func(h *ipc.Client) error { return h.Set(cmd.Index, cmd.Value) }); err != nil {
			return c.reply(ctx, client.Reply{ID: cmd.ID, Error: "set: " + clip(err.Error())})
		}
		return nil
	}
	if !c.s.opts.Requests {
		return deny("request: this host takes no requests")
	}
	select {
	case c.slots <- struct{}{}:
	default:
		return deny("request: %d requests of this page are waiting for the host already", maxInFlight)
	}
	go func() {
		defer func() { <-c.slots }()
		var seq uint64
		err := c.s.drv.do(0, func(h *ipc.Client) (err error) {
			seq, err = h.Request(cmd.XML)
			return err
		})
		r := client.Reply{ID: cmd.ID, Seq: seq}
		if err != nil {
			r.Error = clip(err.Error())
			var re *ipc.RequestError
			if errors.As(err, &re) {
				r.Refused, r.Seq, r.Error = true, re.Seq, clip(re.Msg)
			}
			r.NotExecuted = errors.Is(err, ipc.ErrNotExecuted)
		}
		c.reply(ctx, r)
	}()
	return nil
}

// file sends a chunk of a file the run's records list: read here, or
// (FetchFiles) fetched from the host and checked against its hash.
func (c *session) file(ctx context.Context, cmd client.Command) error {
	snap := c.s.snap.Load()
	fr := client.FileReply{ID: cmd.ID, Offset: cmd.Offset}
	var data []byte
	sum, listed := snap.files[fileKey{cmd.Dir, cmd.Path}]
	switch {
	case !listed:
		c.s.denied.Add(1)
		fr.Error = fmt.Sprintf("%.200s is not a file the scene's logged commands loaded", cmd.Path)
	case c.s.opts.FetchFiles:
		whole, err := c.s.fetched(snap.epoch, fileKey{cmd.Dir, cmd.Path}, sum)
		if err == nil && (cmd.Offset < 0 || cmd.Offset > int64(len(whole))) {
			err = fmt.Errorf("%s: offset %d out of %d bytes", cmd.Path, cmd.Offset, len(whole))
		}
		if err != nil {
			fr.Error = clip(err.Error())
			break
		}
		data, fr.Size = whole[cmd.Offset:min(int64(len(whole)), cmd.Offset+client.FileChunk)], int64(len(whole))
	default:
		d, size, err := ipc.ReadLoggedChunk(cmd.Dir, cmd.Path, cmd.Offset, client.FileChunk)
		if err != nil {
			fr.Error = clip(err.Error())
			break
		}
		data, fr.Size = d, size
	}
	msg, err := client.EncodeBinary(client.KindFile, fr, data)
	if err != nil {
		return err
	}
	return c.queue(ctx, msg)
}

func (c *session) reply(ctx context.Context, r client.Reply) error {
	r.Op = client.OpReply
	msg, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return c.queue(ctx, msg)
}

// queue hands a message to the writer; while its queue is full, the page's
// reads wait (its own commands back up, nobody else's).
func (c *session) queue(ctx context.Context, msg []byte) error {
	select {
	case c.out <- msg:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// clip bounds an error text sent to a page.
func clip(s string) string {
	if len(s) > 2048 {
		return s[:2048] + "..."
	}
	return s
}

// changedRun is the run [lo, hi) of now's values that differ from before's
// (bit for bit: a NaN the host keeps is no change); all of now when the
// table is new (another run, another length).
func changedRun(before, now []float64, sameRun bool) (lo, hi int) {
	if !sameRun || len(before) != len(now) {
		return 0, len(now)
	}
	lo, hi = len(now), 0
	for i := range now {
		if math.Float64bits(before[i]) != math.Float64bits(now[i]) {
			lo, hi = min(lo, i), i+1
		}
	}
	if hi == 0 {
		return 0, 0
	}
	return lo, hi
}
