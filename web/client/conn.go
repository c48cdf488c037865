package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
)

// ErrViewer is the error of a set or request on a viewer's connection.
var ErrViewer = errors.New("web: this connection has the viewer role: it may watch, not set or request (a driver token drives)")

// Conn is an ipc.Conn over the web viewer's WebSocket: the browser's page
// mirrors the host through it with ipc.Mirror, as a desktop mirror does
// through shared memory or NATS. It keeps the newest state the server
// sent; the run it is attached to (Epoch) changes only by Reopen.
type Conn struct {
	ws      *websocket.Conn
	ctx     context.Context
	cancel  context.CancelFunc
	welcome Welcome

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced when a state arrives
	err      error         // why the connection ended
	attached uint64        // the run this Conn serves (Epoch)
	latest   runState      // the newest run the server told of
	states   uint64        // states received
	lastAt   int64         // SentAt of the newest state
	nextID   uint64
	waiting  map[uint64]chan reply
	returns  map[string]scene.Returns // arrived since TakeReturns, by sensor
	images   map[string][]byte        // JPEG pictures arrived since TakeImages, by camera
	sights   map[string]scene.FieldOfView
	sightGen uint64
	writeMu  sync.Mutex
	// OnError, when set before the first Set, hears the server's refusals
	// of sets (they have no caller waiting for them).
	OnError func(error)
}

// runState is what the server said of one run.
type runState struct {
	epoch    uint64
	status   string
	cycle    uint64
	records  []ipc.LogRecord
	elements []ipc.Descriptor
	values   []float64
	complete bool
}

type reply struct {
	r    Reply
	file FileReply
	data []byte
}

// Dial connects to a web viewer server at its WebSocket URL
// (ws://HOST:PORT/ws or wss://...), with a token (empty: none), and waits
// for its welcome and the host's first state.
func Dial(ctx context.Context, rawURL, token string) (*Conn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	if token != "" {
		q := u.Query()
		q.Set("token", token)
		u.RawQuery = q.Encode()
	}
	ws, _, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{Subprotocols: []string{Subprotocol}})
	if err != nil {
		return nil, fmt.Errorf("web: %s: %w", rawURL, err)
	}
	ws.SetReadLimit(MaxServerMessage + 1024)
	c := &Conn{ws: ws, changed: make(chan struct{}), waiting: map[uint64]chan reply{}}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	typ, msg, err := ws.Read(ctx)
	if err == nil && typ == websocket.MessageText {
		err = json.Unmarshal(msg, &c.welcome)
	}
	if err == nil && (c.welcome.Op != OpWelcome || c.welcome.Protocol != 1) {
		err = fmt.Errorf("web: the server's first message is not a protocol 1 welcome (%.80s)", msg)
	}
	if err != nil {
		ws.Close(websocket.StatusProtocolError, "")
		c.cancel()
		return nil, fmt.Errorf("web: %s: %w", rawURL, err)
	}
	go c.readLoop()
	if err := c.waitFor(ctx, func() bool { return c.latest.epoch != 0 && c.latest.complete }); err != nil {
		c.Close()
		return nil, err
	}
	c.attached = c.latest.epoch
	return c, nil
}

// Welcome is what the server said first: the role, the scene's name, the
// starting view.
func (c *Conn) Welcome() Welcome { return c.welcome }

// Stats are the states received, the host cycle of the newest and its
// age by this machine's clock (against the server's).
func (c *Conn) Stats() (states, cycle uint64, age time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.states, c.latest.cycle, time.Since(time.UnixMilli(c.lastAt))
}

// TakeReturns returns the range sensors' returns that arrived since the
// last call (the newest of each sensor), for the scan overlays of a
// replica: scene.PublishReturns hands them on.
func (c *Conn) TakeReturns() []scene.Returns {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]scene.Returns, 0, len(c.returns))
	for _, r := range c.returns {
		out = append(out, r)
	}
	clear(c.returns)
	return out
}

// Sights returns what each sensor sees as the server last told
// (scene.Sighted; the map is not to be changed), and a number that
// changes whenever it does.
func (c *Conn) Sights() (map[string]scene.FieldOfView, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sights, c.sightGen
}

// TakeImages returns the cameras' pictures (JPEG) that arrived since the
// last call, the newest of each, by camera: the insets SetInset asked for.
func (c *Conn) TakeImages() map[string][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.images
	c.images = nil
	return out
}

// SetInset asks the server for a camera's pictures (on) or to stop them;
// at most MaxInsets at once. Viewers may: it changes nothing on the host.
func (c *Conn) SetInset(sensor string, on bool) error {
	_, err := c.send(Command{Op: OpInset, Sensor: sensor, On: on}, false)
	return err
}

// Changed returns a channel closed when the next state arrives.
func (c *Conn) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

func (c *Conn) readLoop() {
	var err error
	for {
		var typ websocket.MessageType
		var msg []byte
		typ, msg, err = c.ws.Read(c.ctx)
		if err != nil {
			break
		}
		if typ == websocket.MessageText {
			var r Reply
			if err = json.Unmarshal(msg, &r); err != nil || r.Op != OpReply {
				err = fmt.Errorf("web: unexpected message from the server (%.80s)", msg)
				break
			}
			c.deliver(r.ID, reply{r: r})
			continue
		}
		var kind byte
		var tail []byte
		var st State
		var fr FileReply
		if len(msg) > 0 && msg[0] == KindImage {
			var im Image
			if _, tail, err = DecodeBinary(msg, &im); err != nil {
				break
			}
			c.mu.Lock()
			if c.images == nil {
				c.images = map[string][]byte{}
			}
			c.images[im.Sensor] = tail
			c.mu.Unlock()
			continue
		}
		if len(msg) > 0 && msg[0] == KindFile {
			if _, tail, err = DecodeBinary(msg, &fr); err != nil {
				break
			}
			c.deliver(fr.ID, reply{file: fr, data: tail})
			continue
		}
		if kind, tail, err = DecodeBinary(msg, &st); err != nil {
			break
		}
		if kind != KindState {
			err = fmt.Errorf("web: binary message of unknown kind %q", kind)
			break
		}
		if err = c.apply(st, tail); err != nil {
			break
		}
	}
	c.mu.Lock()
	if c.err == nil {
		c.err = fmt.Errorf("web: connection to the server lost: %w", err)
	}
	for id, ch := range c.waiting {
		close(ch)
		delete(c.waiting, id)
	}
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// apply takes a state in: a new run starts afresh; records extend the
// run's log, values overwrite their range.
func (c *Conn) apply(st State, tail []byte) error {
	if st.Values < 0 || 8*st.Values > len(tail) {
		return fmt.Errorf("web: %d values in a tail of %d bytes", st.Values, len(tail))
	}
	vals, err := ReadValues(tail[:8*st.Values])
	if err != nil {
		return err
	}
	tail = tail[8*st.Values:]
	returns := make([]scene.Returns, len(st.Returns))
	for i, r := range st.Returns {
		if r.Points < 0 || 12*r.Points > len(tail) {
			return fmt.Errorf("web: %d points of %s in %d bytes", r.Points, r.Sensor, len(tail))
		}
		pts, err := ReadPoints(tail[:12*r.Points], r.Points)
		if err != nil {
			return err
		}
		tail = tail[12*r.Points:]
		returns[i] = scene.Returns{Sensor: r.Sensor, Origin: r.Origin, Points: pts}
	}
	if len(tail) != 0 {
		return fmt.Errorf("web: %d bytes left after a state's values and returns", len(tail))
	}
	if st.ValuesFrom < 0 || st.ValuesFrom > 1<<28 {
		return fmt.Errorf("web: values from index %d", st.ValuesFrom)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	l := &c.latest
	// Checked before anything changes: a bad state leaves the run as the
	// last good one left it.
	var last uint64
	if n := len(l.records); n > 0 && st.Epoch == l.epoch {
		last = l.records[n-1].Seq
	}
	for _, r := range st.Records {
		if r.Seq <= last {
			return fmt.Errorf("web: change-log record %d after %d", r.Seq, last)
		}
		last = r.Seq
	}
	if st.Epoch != l.epoch {
		*l = runState{epoch: st.Epoch}
	}
	l.status, l.cycle, l.complete = st.Status, st.Cycle, st.Complete
	for _, r := range st.Records {
		l.records = append(l.records, ipc.LogRecord{Seq: r.Seq, Source: r.Source, Dir: r.Dir, XML: r.XML, Files: r.Files})
	}
	if st.Elements != nil {
		l.elements = l.elements[:0]
		for _, e := range st.Elements {
			l.elements = append(l.elements, ipc.Descriptor{Name: e.Name, At: e.At, Type: e.Type, Start: e.Start, Params: e.Params})
		}
	}
	if end := st.ValuesFrom + len(vals); end > len(l.values) {
		l.values = append(l.values, make([]float64, end-len(l.values))...)
	}
	copy(l.values[st.ValuesFrom:], vals)
	if st.Sights != nil {
		c.sights = st.Sights // replaced, never changed: Sights hands it out
		c.sightGen++
	}
	for _, r := range returns {
		if c.returns == nil {
			c.returns = map[string]scene.Returns{}
		}
		c.returns[r.Sensor] = r
	}
	c.states++
	c.lastAt = st.SentAt
	close(c.changed)
	c.changed = make(chan struct{})
	return nil
}

func (c *Conn) deliver(id uint64, r reply) {
	c.mu.Lock()
	ch := c.waiting[id]
	delete(c.waiting, id)
	c.mu.Unlock()
	if ch != nil {
		ch <- r
		return
	}
	if r.r.Error != "" && c.OnError != nil {
		c.OnError(errors.New(r.r.Error))
	}
}

// waitFor waits until cond (called with c.mu held) holds.
func (c *Conn) waitFor(ctx context.Context, cond func() bool) error {
	for {
		c.mu.Lock()
		ok, err, ch := cond(), c.err, c.changed
		c.mu.Unlock()
		if err != nil { // a lost connection's last state may meet cond
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("web: waiting for the server: %w", ctx.Err())
		}
	}
}

// send writes a command; with a reply wanted, it returns the channel the
// reply comes on.
func (c *Conn) send(cmd Command, wantReply bool) (chan reply, error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, c.err
	}
	c.nextID++
	cmd.ID = c.nextID
	var ch chan reply
	if wantReply {
		ch = make(chan reply, 1)
		c.waiting[cmd.ID] = ch
	}
	c.mu.Unlock()
	msg, err := json.Marshal(cmd)
	if err != nil {
		return nil, err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	ctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, msg); err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	return ch, nil
}

// call sends a command and waits for its reply.
func (c *Conn) call(cmd Command, timeout time.Duration) (reply, error) {
	ch, err := c.send(cmd, true)
	if err != nil {
		return reply{}, err
	}
	select {
	case r, ok := <-ch:
		if !ok {
			c.mu.Lock()
			err := c.err
			c.mu.Unlock()
			return reply{}, err
		}
		return r, nil
	case <-time.After(timeout):
		c.mu.Lock()
		delete(c.waiting, cmd.ID)
		c.mu.Unlock()
		return reply{}, fmt.Errorf("web: no answer from the server in %v", timeout)
	}
}

// Epoch identifies the host run this Conn is attached to.
func (c *Conn) Epoch() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.attached
}

// current returns the attached run's state, or why there is none.
// c.mu must be held.
func (c *Conn) current() (*runState, error) {
	if c.err != nil {
		return nil, c.err
	}
	if c.latest.epoch != c.attached {
		return nil, ipc.ErrHostReplaced
	}
	if c.latest.status == Stopped {
		return nil, fmt.Errorf("web: %w", ipc.ErrHostStopped)
	}
	return &c.latest, nil
}

// Check reports whether the host still serves the attached run.
func (c *Conn) Check() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.current()
	return err
}

// Reopen attaches to the run the server follows now, waiting up to ten
// seconds for the whole of its change log.
func (c *Conn) Reopen() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := c.waitFor(ctx, func() bool {
		return c.latest.epoch != 0 && c.latest.complete && c.latest.status == Running
	})
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.attached = c.latest.epoch
	c.mu.Unlock()
	return nil
}

// Close closes the connection.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.err == nil {
		c.err = errors.New("web: the connection was closed")
	}
	c.mu.Unlock()
	err := c.ws.Close(websocket.StatusNormalClosure, "")
	c.cancel()
	return err
}

// Elements returns the attached run's element table.
func (c *Conn) Elements() ([]ipc.Descriptor, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, err := c.current()
	if err != nil {
		return nil, err
	}
	return append([]ipc.Descriptor(nil), r.elements...), nil
}

// Set asks the server to write value index i (drivers only). It does not
// wait: a refusal reaches OnError.
func (c *Conn) Set(i int, v float64) error {
	if c.welcome.Role != Driver {
		return ErrViewer
	}
	_, err := c.send(Command{Op: OpSet, Epoch: c.Epoch(), Index: i, Value: v}, false)
	return err
}

// Get reads value index i of the newest state.
func (c *Conn) Get(i int) (float64, error) {
	var v [1]float64
	err := c.ReadValues(i, v[:])
	return v[0], err
}

// ReadValues reads len(dst) values from index start of the newest state.
func (c *Conn) ReadValues(start int, dst []float64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, err := c.current()
	if err != nil {
		return err
	}
	if start < 0 || start+len(dst) > len(r.values) {
		return fmt.Errorf("web: values [%d,%d) out of the %d the server sent", start, start+len(dst), len(r.values))
	}
	copy(dst, r.values[start:])
	return nil
}

// Request has the host execute one XML command (drivers only).
func (c *Conn) Request(xml string, timeout time.Duration) (uint64, error) {
	if c.welcome.Role != Driver {
		return 0, ErrViewer
	}
	r, err := c.call(Command{Op: OpRequest, XML: xml}, timeout+5*time.Second)
	if err != nil {
		return 0, err
	}
	switch {
	case r.r.Refused:
		return 0, &ipc.RequestError{Seq: r.r.Seq, Msg: r.r.Error}
	case r.r.NotExecuted:
		return 0, fmt.Errorf("%s: %w", r.r.Error, ipc.ErrNotExecuted)
	case r.r.Error != "":
		return 0, errors.New(r.r.Error)
	}
	return r.r.Seq, nil
}

// ReadLog returns the attached run's records after cur.
func (c *Conn) ReadLog(cur *ipc.LogCursor) ([]ipc.LogRecord, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, err := c.current()
	if err != nil {
		return nil, err
	}
	var out []ipc.LogRecord
	for _, rec := range r.records {
		if rec.Seq > cur.Seq {
			out = append(out, rec)
		}
	}
	if n := len(out); n > 0 {
		cur.Seq = out[n-1].Seq
	}
	return out, nil
}

// FetchFile fetches a model file the change log names, in chunks.
func (c *Conn) FetchFile(dir, path string) ([]byte, error) {
	var data []byte
	for {
		r, err := c.call(Command{Op: OpFile, Dir: dir, Path: path, Offset: int64(len(data))}, 30*time.Second)
		if err != nil {
			return nil, err
		}
		f := r.file
		if f.Error != "" {
			return nil, errors.New(f.Error)
		}
		if f.Offset != int64(len(data)) || f.Size < 0 || f.Size > 1<<40 || int64(len(data)+len(r.data)) > f.Size {
			return nil, fmt.Errorf("web: %s: a chunk at %d of %d bytes does not continue the %d read", path, f.Offset, f.Size, len(data))
		}
		data = append(data, r.data...)
		if int64(len(data)) == f.Size {
			return data, nil
		}
		if len(r.data) == 0 {
			return nil, fmt.Errorf("web: %s: an empty chunk at %d of %d bytes", path, len(data), f.Size)
		}
	}
}

// WebSocketURL is the WebSocket URL of a page's address: http(s)://HOST/...
// becomes ws(s)://HOST/ws.
func WebSocketURL(page string) (string, error) {
	u, err := url.Parse(page)
	if err != nil {
		return "", err
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "ws":
		u.Scheme = "ws"
	case "https", "wss":
		u.Scheme = "wss"
	default:
		return "", fmt.Errorf("web: %s: not an http or https address", page)
	}
	u.Path, u.RawQuery, u.Fragment = "/ws", "", ""
	return u.String(), nil
}
