package foxglove

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
)

// client is one connection. Its reader handles what the client sends; its
// writer sends, in order: control messages (bounded), coalesced parameter
// updates, then the latest frame of each subscribed channel. Publishing
// only swaps a pointer under the client's lock, so a slow client costs the
// host nothing but the frames it misses.
type client struct {
	s      *Server
	id     int
	role   Role
	conn   *websocket.Conn
	remote string

	mu        sync.Mutex
	subs      map[uint32]uint32 // subscription id -> channel id
	bySub     map[uint32]uint32 // channel id -> subscription id
	paramSubs map[string]bool
	control   []outMsg
	queued    int               // bytes in control
	frames    map[uint32]*frame // channel id -> the latest frame not yet sent
	order     []uint32          // channels with a waiting frame, oldest first
	params    map[string]float64
	closed    bool
	sceneSent map[string]string // scene entity id -> the key of its content as this client has it
	sceneOff  string            // the deletions last sent
	dropped   uint64            // frames replaced before this client took them
	told      uint64            // drops already told to the client
	toldAt    time.Time         // when it was last told

	wake   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
}

type outMsg struct {
	typ  websocket.MessageType
	data []byte
	// scene: the scene channel's turn (subscription sub): the writer sends
	// what this client lacks of the latest scene (writeScene).
	scene bool
	sub   uint32
}

func newClient(s *Server, conn *websocket.Conn, role Role, remote string) *client {
	c := &client{s: s, conn: conn, role: role, remote: remote,
		subs: map[uint32]uint32{}, bySub: map[uint32]uint32{}, paramSubs: map[string]bool{},
		frames: map[uint32]*frame{}, params: map[string]float64{}, wake: make(chan struct{}, 1)}
	c.ctx, c.cancel = s.ctx()
	return c
}

func (c *client) String() string { return fmt.Sprintf("client %d (%s, %s)", c.id, c.remote, c.role) }

func (c *client) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// send queues a control message; a client whose queue is full is too
// slow to keep and is disconnected.
func (c *client) send(typ websocket.MessageType, data []byte) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	if len(c.control) >= c.s.opts.MaxQueue || c.queued+len(data) > c.s.opts.MaxQueueBytes {
		n, b := len(c.control), c.queued
		c.mu.Unlock()
		c.s.slow.Add(1)
		c.s.opts.Warn("foxglove-slow", "foxglove: disconnected %s: %d messages (%d bytes) queued, limits %d messages, %d bytes", c, n, b, c.s.opts.MaxQueue, c.s.opts.MaxQueueBytes)
		c.close(websocket.StatusPolicyViolation, "too slow: message queue full")
		return
	}
	c.queued += len(data)
	c.control = append(c.control, outMsg{typ: typ, data: data})
	c.mu.Unlock()
	c.signal()
}

func (c *client) sendJSON(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return // only our own types are marshalled
	}
	c.send(websocket.MessageText, data)
}

func (c *client) status(level int, msg string) {
	c.sendJSON(map[string]any{"op": "status", "level": level, "message": clip(msg)})
}

// offer makes f the channel's waiting frame if the client subscribed to
// it; a frame it replaces is dropped and counted.
func (c *client) offer(ch uint32, f *frame) {
	c.mu.Lock()
	if _, ok := c.bySub[ch]; !ok || c.closed {
		c.mu.Unlock()
		return
	}
	if old, waiting := c.frames[ch]; waiting {
		if !old.scene { // the scene's turn covers every change since
			c.s.dropped.Add(1)
			c.dropped++
		}
	} else {
		c.order = append(c.order, ch)
	}
	c.frames[ch] = f
	c.mu.Unlock()
	c.signal()
}

// paramUpdate queues a parameter's new value if the client subscribed to
// it; values waiting are replaced by newer ones.
func (c *client) paramUpdate(name string, v float64) {
	c.mu.Lock()
	if !c.paramSubs[name] || c.closed {
		c.mu.Unlock()
		return
	}
	c.params[name] = v
	c.mu.Unlock()
	c.signal()
}

func (c *client) close(code websocket.StatusCode, reason string) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	go c.conn.Close(code, reason) // the close handshake waits for the peer
}

// next takes the next message to write: control first, then parameter
// updates, then frames in the order their channels became ready.
func (c *client) next() (outMsg, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.control) > 0 {
		m := c.control[0]
		c.control[0] = outMsg{}
		c.control = c.control[1:]
		c.queued -= len(m.data)
		return m, true
	}
	if c.dropped > c.told && time.Since(c.toldAt) >= time.Second {
		// The client hears of its own losses, at most once a second: a
		// warning Foxglove shows among its problems.
		data, _ := json.Marshal(map[string]any{"op": "status", "level": 1, "id": "simvis-drops",
			"message": fmt.Sprintf("%d messages dropped since the last notice: this connection takes them slower than they come (the latest per channel is kept)", c.dropped-c.told)})
		c.told, c.toldAt = c.dropped, time.Now()
		return outMsg{typ: websocket.MessageText, data: data}, true
	}
	if len(c.params) > 0 {
		names := make([]string, 0, len(c.params))
		for n := range c.params {
			names = append(names, n)
		}
		sort.Strings(names)
		list := make([]parameter, len(names))
		for i, n := range names {
			list[i] = parameter{Name: n, Value: c.params[n], Type: "float64"}
		}
		clear(c.params)
		data, _ := json.Marshal(map[string]any{"op": "parameterValues", "parameters": list})
		return outMsg{typ: websocket.MessageText, data: data}, true
	}
	for len(c.order) > 0 {
		ch := c.order[0]
		c.order = c.order[1:]
		f, ok := c.frames[ch]
		sub, subscribed := c.bySub[ch]
		delete(c.frames, ch)
		if !ok || !subscribed {
			continue
		}
		if f.scene {
			return outMsg{scene: true, sub: sub}, true
		}
		hdr := make([]byte, 13, 13+len(f.data))
		hdr[0] = 1 // message data
		binary.LittleEndian.PutUint32(hdr[1:], sub)
		binary.LittleEndian.PutUint64(hdr[5:], f.ts)
		return outMsg{typ: websocket.MessageBinary, data: append(hdr, f.data...)}, true
	}
	return outMsg{}, false
}

func (c *client) writeLoop() {
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-c.wake:
		}
		for {
			m, ok := c.next()
			if !ok {
				break
			}
			if m.scene {
				if err := c.writeScene(m.sub); err != nil {
					c.close(websocket.StatusPolicyViolation, "too slow")
					return
				}
				continue
			}
			ctx, cancel := context.WithTimeout(c.ctx, c.s.opts.WriteTimeout)
			err := c.conn.Write(ctx, m.typ, m.data)
			stalled := errors.Is(ctx.Err(), context.DeadlineExceeded)
			cancel()
			if err != nil {
				if stalled {
					c.s.slow.Add(1)
					c.s.opts.Warn("foxglove-slow", "foxglove: disconnected %s: it took no message for %v", c, c.s.opts.WriteTimeout)
				}
				c.close(websocket.StatusPolicyViolation, "too slow")
				return
			}
			if m.typ == websocket.MessageBinary && len(m.data) > 0 && m.data[0] == 1 {
				c.s.sent.Add(1)
			}
		}
	}
}

func (c *client) readLoop() {
	for {
		typ, data, err := c.conn.Read(c.ctx)
		if err != nil {
			return
		}
		if typ == websocket.MessageBinary {
			c.binaryMessage(data)
			continue
		}
		if !utf8.Valid(data) {
			// RFC 6455 8.1: a text message must be UTF-8; the endpoint
			// fails the connection with 1007.
			c.s.opts.Warn("foxglove-utf8", "foxglove: disconnected %s: a text message of %d bytes is not valid UTF-8", c, len(data))
			c.mu.Lock()
			already := c.closed
			c.closed = true
			c.mu.Unlock()
			if !already {
				// The close handshake first: cancelling the context
				// would drop the connection without the code.
				c.conn.Close(websocket.StatusInvalidFramePayloadData, "text message is not valid UTF-8")
				c.cancel()
			}
			return
		}
		c.textMessage(data)
	}
}

// clientMsg holds the fields of every JSON op a client sends.
type clientMsg struct {
	Op            string `json:"op"`
	Subscriptions []struct {
		ID        *uint32 `json:"id"`
		ChannelID *uint32 `json:"channelId"`
	} `json:"subscriptions"`
	SubscriptionIDs []uint32        `json:"subscriptionIds"`
	ParameterNames  []string        `json:"parameterNames"`
	Parameters      []rawParameter  `json:"parameters"`
	ID              json.RawMessage `json:"id"`
}

func (c *client) textMessage(data []byte) {
	var m clientMsg
	if err := json.Unmarshal(data, &m); err != nil {
		c.status(2, fmt.Sprintf("malformed message: %v", err))
		return
	}
	var id string
	if len(m.ID) > 0 && json.Unmarshal(m.ID, &id) != nil {
		c.status(2, fmt.Sprintf("%s: id must be a string", echo(m.Op)))
		return
	}
	switch m.Op {
	case "subscribe":
		c.subscribe(m)
	case "unsubscribe":
		var unknown []uint32
		c.mu.Lock()
		for _, sid := range m.SubscriptionIDs {
			if ch, ok := c.subs[sid]; ok {
				delete(c.subs, sid)
				delete(c.bySub, ch)
				delete(c.frames, ch)
				if ch == c.s.sceneChan.Load() {
					c.sceneSent, c.sceneOff = nil, "" // a new subscription gets the whole scene
				}
			} else {
				unknown = append(unknown, sid)
			}
		}
		c.mu.Unlock()
		if len(unknown) > 0 {
			if len(unknown) > 8 {
				c.status(1, fmt.Sprintf("unsubscribe: no subscription %v ... (%d ids)", unknown[:8], len(unknown)))
			} else {
				c.status(1, fmt.Sprintf("unsubscribe: no subscription %v", unknown))
			}
		}
	case "getParameters":
		c.s.getParameters(c, m.ParameterNames, id)
	case "setParameters":
		c.s.setParameters(c, m.Parameters, id)
	case "subscribeParameterUpdates":
		c.s.subscribeParameters(c, m.ParameterNames, true)
	case "unsubscribeParameterUpdates":
		c.s.subscribeParameters(c, m.ParameterNames, false)
	case "advertise", "unadvertise":
		c.status(2, "this server does not take client publications (no clientPublish capability)")
	default:
		c.status(1, fmt.Sprintf("unsupported op %q", echo(m.Op)))
	}
}

func (c *client) subscribe(m clientMsg) {
	var fresh []uint32
	for _, sub := range m.Subscriptions {
		if sub.ID == nil || sub.ChannelID == nil {
			c.status(2, "subscribe: every subscription needs an id and a channelId")
			continue
		}
		sid, ch := *sub.ID, *sub.ChannelID
		if _, ok := c.s.latest(ch); !ok {
			c.status(2, fmt.Sprintf("subscribe: no channel %d", ch))
			continue
		}
		c.mu.Lock()
		_, reused := c.subs[sid]
		_, twice := c.bySub[ch]
		if !reused && !twice {
			c.subs[sid] = ch
			c.bySub[ch] = sid
			fresh = append(fresh, ch)
		}
		c.mu.Unlock()
		if reused {
			c.status(2, fmt.Sprintf("subscribe: subscription id %d is in use", sid))
		} else if twice {
			c.status(2, fmt.Sprintf("subscribe: already subscribed to channel %d", ch))
		}
	}
	// A new subscriber gets the channel's last message at once: the scene
	// and static transforms change rarely.
	for _, ch := range fresh {
		if f, _ := c.s.latest(ch); f != nil {
			c.offer(ch, f)
		}
	}
}

func (c *client) binaryMessage(data []byte) {
	if len(data) == 0 {
		return
	}
	switch data[0] {
	case 2:
		if len(data) < 13 {
			c.status(2, "service call request shorter than its header")
			return
		}
		svc := binary.LittleEndian.Uint32(data[1:])
		call := binary.LittleEndian.Uint32(data[5:])
		n := binary.LittleEndian.Uint32(data[9:])
		if uint64(n) > uint64(len(data)-13) {
			c.status(2, "service call request: encoding longer than the message")
			return
		}
		enc := string(data[13 : 13+n])
		c.s.callService(c, svc, call, enc, data[13+n:])
	case 1:
		c.status(2, "this server does not take client publications (no clientPublish capability)")
	default:
		c.status(2, fmt.Sprintf("unknown binary opcode %d", data[0]))
	}
}
