package natsipc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/simvis/simvis/ipc"
)

func init() {
	ipc.RegisterDialer("nats", func(u string) (ipc.Conn, error) { return Dial(u) })
	ipc.RegisterDialer("tls", func(u string) (ipc.Conn, error) { return Dial(u) })
}

// Conn is an ipc.Conn over NATS: what ipc.Dial returns for nats:// and
// tls:// URLs. It keeps the host's values as the host last published them
// and the change log as the stream delivered it.
type Conn struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	name    string
	timeout time.Duration

	mu       sync.Mutex
	epoch    uint64
	period   time.Duration
	values   []float64
	state    uint32
	cycle    uint64    // host cycle of the values last applied
	replaced bool      // a message of another host run arrived
	heard    time.Time // the host's last values message
	log      []ipc.LogRecord
	logErr   error
	valSub   *nats.Subscription
	rejSub   *nats.Subscription
	lastRej  ipc.Rejection // the host's last refusal of values heard (Cycle 0: none)

	followMu    sync.Mutex // guards consume
	consume     jetstream.ConsumeContext
	refollowing atomic.Bool
	snapping    atomic.Bool // a snapshot asked for after missed cycles
	logAt       time.Time   // when a record last arrived (guarded by mu)
	closed      atomic.Bool
	setSubj     string           // simvis.NAME.set
	denied      map[string]error // subjects the server refused this client
	deniedCh    chan struct{}    // closed (and replaced) when one is added
}

// onAsyncError records the server's refusals (a role's permissions), so
// that a request the server dropped fails at once instead of timing out.
func (c *Conn) onAsyncError(_ *nats.Conn, _ *nats.Subscription, err error) {
	msg := err.Error()
	i := strings.Index(msg, "Permissions Violation for Publish to \"")
	if i < 0 {
		return
	}
	subj, _, _ := strings.Cut(msg[i+len("Permissions Violation for Publish to \""):], "\"")
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.denied[subj] == nil {
		c.denied[subj] = fmt.Errorf("natsipc: the server refuses this client's role publishing to %s (a viewer may not set values or send requests)", subj)
		close(c.deniedCh)
		c.deniedCh = make(chan struct{})
	}
}

// refused returns a channel closed at the next refusal and the server's
// refusal of subj, if any.
func (c *Conn) refused(subj string) (chan struct{}, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deniedCh, c.denied[subj]
}

// Dial connects to the host serving a scene at nats://[user:pass@|token@]host:port/NAME
// (NAME defaults to "default"; tls:// for TLS, with SIMVIS_NATS_CA naming
// a CA file if the server's certificate needs one). A URL on a loopback
// address without credentials takes the driver's from the host's secrets
// file (SecretsPath), if this user can read it.
func Dial(rawURL string) (*Conn, error) { return DialAs(rawURL, RoleDriver) }

// DialAs is Dial taking role r's credentials from the secrets file
// (RoleViewer for clients that only read).
func DialAs(rawURL string, r Role) (*Conn, error) {
	servers, name, domain, err := parseServers(rawURL)
	if err != nil {
		return nil, fmt.Errorf("natsipc: %w", err)
	}
	if name == "" {
		name = "default"
	}
	if !validName(name) {
		return nil, fmt.Errorf("natsipc: scene name %q in %s: want letters, digits, '_' and '-'", name, redactServers(servers))
	}
	local := false
	if len(servers) == 1 {
		if login, ok := localLogin(servers[0], name, r); ok {
			servers[0].User, local = login, true
		}
	}
	host, _ := os.Hostname()
	// A cluster's servers: the client moves to another one of the list,
	// or of those the cluster advertises, when its own goes away.
	opts := append([]nats.Option{nats.Name(fmt.Sprintf("simvis client %s:%d", host, os.Getpid()))}, Failover()...)
	if ca := os.Getenv("SIMVIS_NATS_CA"); ca != "" {
		opts = append(opts, nats.RootCAs(ca))
	}
	c := &Conn{name: name, timeout: 5 * time.Second, denied: map[string]error{}, deniedCh: make(chan struct{}), setSubj: subject(name, "set")}
	opts = append(opts, nats.ErrorHandler(c.onAsyncError))
	// Value updates sent while disconnected are lost to this client: a
	// snapshot after reconnecting replaces them. (The change log is a
	// stream; the ordered consumer resumes where it was.)
	opts = append(opts, nats.ReconnectHandler(func(*nats.Conn) {
		go c.resnapshot()
		go c.refollow()
	}))
	nc, err := connectInbox(joinServers(servers), r, opts)
	if err != nil {
		if errors.Is(err, nats.ErrAuthorization) && !local {
			return nil, fmt.Errorf("natsipc: connecting to %s: %w (give the driver's or viewer's credentials in the URL, USER:PASSWORD@HOST; a host on this machine keeps them in %s, readable by its user only)",
				redactServers(servers), err, SecretsPath(name))
		}
		return nil, fmt.Errorf("natsipc: connecting to %s: %w", redactServers(servers), err)
	}
	// The change log is in the JetStream of the client's servers, or in
	// the domain the URL names (a leaf node's, through its link).
	js, err := jetstream.New(nc)
	if domain != "" {
		js, err = jetstream.NewWithDomain(nc, domain)
	}
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("natsipc: %w", err)
	}
	c.nc, c.js = nc, js
	if err := c.start(); err != nil {
		nc.Close()
		return nil, err
	}
	go c.watchLog()
	return c, nil
}

// connectInbox connects with role r's inbox prefix. A driver's URL may
// carry a viewer's credentials (they read as well): the server then
// refuses the driver's inbox, and the client connects again with the
// viewer's, so that it reads and its writes get the server's refusal.
func connectInbox(servers string, r Role, opts []nats.Option) (*nats.Conn, error) {
	nc, err := nats.Connect(servers, append(opts, nats.CustomInboxPrefix(InboxPrefix(r)))...)
	if err != nil || r == RoleViewer {
		return nc, err
	}
	probe := DriverInbox + ".probe"
	sub, err := nc.SubscribeSync(probe)
	if err == nil {
		// The server answers the subscription before the flush's PONG:
		// a refusal is known once Flush returns.
		err = nc.Flush()
		sub.Unsubscribe()
	}
	if err != nil {
		nc.Close()
		return nil, err
	}
	if last := nc.LastError(); last == nil || !errors.Is(last, nats.ErrPermissionViolation) || !strings.Contains(last.Error(), probe) {
		return nc, nil
	}
	nc.Close()
	return nats.Connect(servers, append(opts, nats.CustomInboxPrefix(ViewerInbox))...)
}

// redact drops a URL's credentials for messages.
func redact(u *url.URL) string {
	v := *u
	v.User = nil
	return v.String()
}

// start learns the host's epoch and values and follows its values and
// change log from the start.
func (c *Conn) start() error {
	var d describeReply
	if err := c.ask("desc", nil, &d); err != nil {
		return err
	}
	msg, err := c.nc.Request(subject(c.name, "snapshot"), nil, c.timeout)
	if err != nil {
		return c.noHost(err)
	}
	snap, err := decodeValues(msg.Data)
	if err != nil {
		return fmt.Errorf("natsipc: snapshot: %w", err)
	}
	c.mu.Lock()
	c.epoch, c.period, c.replaced, c.log, c.logErr = d.Epoch, time.Duration(d.PeriodNS), false, nil, nil
	c.values = nil
	c.apply(snap)
	c.mu.Unlock()
	if c.valSub, err = c.nc.Subscribe(subject(c.name, "values"), c.onValues); err != nil {
		return fmt.Errorf("natsipc: %w", err)
	}
	if c.rejSub, err = c.nc.Subscribe(subject(c.name, "rejected"), c.onRejected); err != nil {
		return fmt.Errorf("natsipc: %w", err)
	}
	// On a cluster that just lost a server, JetStream may take several
	// seconds to elect new leaders: creating the consumer times out
	// meanwhile, and is tried again.
	var info *jetstream.StreamInfo
	for deadline := time.Now().Add(JetStreamPatience); ; time.Sleep(200 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
		info, err = c.follow(ctx, 1)
		cancel()
		if err == nil {
			break
		}
		if !jsUnavailable(err) || time.Now().After(deadline) {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), JetStreamPatience)
	defer cancel()
	// Have the log as it was at connection time before returning, so that
	// a new client sees the whole scene at once.
	for {
		c.mu.Lock()
		n, lerr := uint64(len(c.log)), c.logErr
		c.mu.Unlock()
		switch {
		case lerr != nil:
			return lerr
		case n >= info.State.Msgs:
			return nil
		case ctx.Err() != nil:
			return fmt.Errorf("natsipc: the change log: %d of %d records arrived in %v", n, info.State.Msgs, JetStreamPatience)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// resnapshot reloads every value from the host (after a reconnection). A
// snapshot older than an update already applied would undo it: then it
// asks again.
func (c *Conn) resnapshot() {
	for try := 0; try < 5; try++ {
		msg, err := c.nc.Request(subject(c.name, "snapshot"), nil, c.timeout)
		if err != nil {
			continue
		}
		snap, err := decodeValues(msg.Data)
		if err != nil {
			return
		}
		c.mu.Lock()
		switch {
		case snap.epoch != c.epoch:
			c.replaced = true
		case snap.cycle >= c.cycle:
			c.values = nil
			c.apply(snap)
		default:
			c.mu.Unlock()
			continue
		}
		c.mu.Unlock()
		return
	}
}

func (c *Conn) noHost(err error) error {
	if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout) {
		return noHostError{c.name, err}
	}
	return fmt.Errorf("natsipc: %w", err)
}

// noHostError is ipc.ErrHostStopped for a scene nobody answers for.
type noHostError struct {
	name string
	err  error
}

func (e noHostError) Error() string {
	return fmt.Sprintf("natsipc: no host answers for scene %q on this server (%v; is 'simvis serve' running with --name %s?)", e.name, e.err, e.name)
}

func (e noHostError) Unwrap() error { return ipc.ErrHostStopped }

// ask sends a request and decodes its JSON reply.
func (c *Conn) ask(what string, data []byte, reply any) error {
	msg, err := c.nc.Request(subject(c.name, what), data, c.timeout)
	if err != nil {
		return c.noHost(err)
	}
	if err := json.Unmarshal(msg.Data, reply); err != nil {
		return fmt.Errorf("natsipc: reply to %s: %w", what, err)
	}
	return nil
}

func (c *Conn) onValues(m *nats.Msg) {
	if strings.HasPrefix(m.Reply, "$JS.") {
		return // a consumer's delivery, not the host (NATS.md, "Roles")
	}
	v, err := decodeValues(m.Data)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v.epoch != c.epoch {
		// Epochs are the host's start times: a later one is a new host run,
		// an earlier one a late message of the run left behind.
		c.replaced = c.replaced || v.epoch > c.epoch
		return
	}
	// The host publishes values every cycle, changed ones only: a cycle
	// missed (dropped on the way: a leaf node's link cut while this
	// client's own connection stayed up, a slow client) may have carried
	// changes no later message repeats. All values are asked for again.
	if c.cycle != 0 && v.cycle > c.cycle+1 && c.snapping.CompareAndSwap(false, true) {
		go func() {
			defer c.snapping.Store(false)
			c.resnapshot()
		}()
	}
	c.apply(v)
}

// apply takes a values message of the current epoch (an update, or a
// snapshot into emptied values) into the cache; c.mu is held.
func (c *Conn) apply(v valuesMsg) {
	c.heard, c.state, c.cycle = time.Now(), v.state, v.cycle
	if int(v.used) > len(c.values) {
		c.values = append(c.values, make([]float64, int(v.used)-len(c.values))...)
	}
	for _, p := range v.pairs {
		if int(p.index) < len(c.values) {
			c.values[p.index] = p.value
		}
	}
}

// Epoch identifies the host run.
func (c *Conn) Epoch() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.epoch
}

// Check reports a restarted host (a message of another run arrived), a
// stopped one (it said so) and a silent one (nothing for 2 s and ten
// cycles: stopped, killed or cut off).
func (c *Conn) Check() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.replaced:
		return ipc.ErrHostReplaced
	case c.state == stateStopped:
		return ipc.ErrHostStopped
	}
	if quiet := time.Since(c.heard); quiet > max(2*time.Second, 10*c.period) {
		// Connected, the host may be running on the other side of a
		// partition (this server's link cut): the error says so too.
		return fmt.Errorf("%w: no word from it for %v (%s): stopped or killed, or cut off from this client's server", ipc.ErrHostVanished, quiet.Round(time.Millisecond), c.nc.Status())
	}
	return nil
}

// Reopen follows the host now serving the scene, after a restart.
func (c *Conn) Reopen() error {
	c.stopFollowing()
	return c.start()
}

func (c *Conn) stopFollowing() {
	c.followMu.Lock()
	if c.consume != nil {
		stopConsuming(c.consume)
		c.consume = nil
	}
	c.followMu.Unlock()
	if c.valSub != nil {
		c.valSub.Unsubscribe()
		c.valSub = nil
	}
	if c.rejSub != nil {
		c.rejSub.Unsubscribe()
		c.rejSub = nil
	}
}

// onRejected keeps the host's last refusal of values (NATS.md,
// simvis.NAME.rejected); a message that does not decode is dropped.
func (c *Conn) onRejected(m *nats.Msg) {
	if strings.HasPrefix(m.Reply, "$JS.") || len(m.Data) > 4*ipc.RejectionTextBytes {
		return
	}
	var x rejectedMsg
	if json.Unmarshal(m.Data, &x) != nil || x.Cycle == 0 || x.First < 0 || x.Count < 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if x.Cycle > c.lastRej.Cycle {
		c.lastRej = ipc.Rejection{Cycle: x.Cycle, First: x.First, Count: x.Count, Reason: strings.ToValidUTF8(x.Reason, "?")}
	}
}

// HostCycles is the host cycle of the values last heard.
func (c *Conn) HostCycles() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cycle
}

// LastRejection is the host's last refusal of values heard.
func (c *Conn) LastRejection() (ipc.Rejection, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastRej, c.lastRej.Cycle != 0
}

// Close disconnects.
func (c *Conn) Close() error {
	c.closed.Store(true)
	c.stopFollowing()
	c.nc.Close()
	return nil
}

// Elements asks the host for its elements.
func (c *Conn) Elements() ([]ipc.Descriptor, error) {
	var d describeReply
	if err := c.ask("desc", nil, &d); err != nil {
		return nil, err
	}
	if d.Epoch != c.Epoch() {
		return nil, ipc.ErrHostReplaced
	}
	out := make([]ipc.Descriptor, len(d.Elements))
	for i, e := range d.Elements {
		out[i] = ipc.Descriptor{Name: e.Name, At: e.At, Type: e.Type, Start: e.Start, Params: e.Params}
	}
	return out, nil
}

// Set publishes one value write; the host applies it at its next cycle.
func (c *Conn) Set(i int, v float64) error {
	c.mu.Lock()
	used, epoch, replaced, stopped, denied := len(c.values), c.epoch, c.replaced, c.state == stateStopped, c.denied[c.setSubj]
	c.mu.Unlock()
	switch {
	case replaced:
		return ipc.ErrHostReplaced
	case stopped:
		return ipc.ErrHostStopped
	case denied != nil:
		return denied
	case i < 0 || i >= used:
		return fmt.Errorf("value index %d: the host uses %d", i, used)
	}
	return c.nc.Publish(c.setSubj, encodeSet(epoch, []pair{{uint32(i), v}}))
}

// Flush waits until the host has taken every value write sent so far and
// this client holds the values message of the cycle that applied them
// (and its refusal, if that cycle refused values), so that Get shows
// what became of them; it reports writes the server refused this
// client's role (a viewer's): those never reach the host. A host that
// does not answer within the client's timeout (it lost its server, and
// the writes with it) leaves the outcome to the values as they are.
func (c *Conn) Flush() error {
	c.mu.Lock()
	epoch := c.epoch
	c.mu.Unlock()
	// A set message with a reply subject and no writes: the host answers
	// it after the cycle that applied the writes before it (the same
	// subject: they reach the host in order).
	sub, err := c.nc.SubscribeSync(c.nc.NewInbox())
	if err != nil {
		return fmt.Errorf("natsipc: waiting for the host to take the values: %w", err)
	}
	defer sub.Unsubscribe()
	if err := c.nc.PublishRequest(c.setSubj, sub.Subject, encodeSet(epoch, nil)); err != nil {
		return fmt.Errorf("natsipc: %w", err)
	}
	if err := c.nc.FlushTimeout(c.timeout); err != nil {
		return fmt.Errorf("natsipc: %w", err)
	}
	// The server's refusal comes before its answer to the flush, and the
	// connection records it before the flush returns.
	if err := c.nc.LastError(); errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), `"`+c.setSubj+`"`) {
		c.onAsyncError(c.nc, nil, err)
	}
	if _, err := c.refused(c.setSubj); err != nil {
		return err
	}
	deadline := time.Now().Add(c.timeout)
	m, err := sub.NextMsg(c.timeout)
	var r syncReply
	if err != nil || json.Unmarshal(m.Data, &r) != nil {
		return nil
	}
	// The values message and the refusal came before the reply, on
	// subscriptions of their own: wait for this client to have read them.
	for time.Now().Before(deadline) {
		c.mu.Lock()
		done := c.epoch != epoch || c.cycle >= r.Cycle && (!r.Rejected || c.lastRej.Cycle >= r.Cycle)
		c.mu.Unlock()
		if done {
			break
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// Get returns value i as the host last published it.
func (c *Conn) Get(i int) (float64, error) {
	var v [1]float64
	err := c.ReadValues(i, v[:])
	return v[0], err
}

// ReadValues copies values as the host last published them.
func (c *Conn) ReadValues(start int, dst []float64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if start < 0 || start+len(dst) > len(c.values) {
		return fmt.Errorf("value index %d: the host uses %d", start+len(dst)-1, len(c.values))
	}
	copy(dst, c.values[start:])
	return nil
}

// Request has the host execute one command and waits for its outcome.
// The request carries an id (Simvis-Request-Id): when no outcome comes
// in time (its server died with the request or the reply in flight, the
// host is moving to another server of its cluster) it is sent again,
// until timeout, and the host executes it once and answers every copy.
// A request without an outcome within timeout fails with an error that
// says it may yet be executed.
func (c *Conn) Request(xml string, timeout time.Duration) (uint64, error) {
	m := nats.NewMsg(subject(c.name, "request"))
	host, _ := os.Hostname()
	m.Header.Set(hdrClient, fmt.Sprintf("%s pid %d", host, os.Getpid()))
	m.Header.Set(hdrRequestID, secret()[:24])
	m.Data = []byte(xml)
	next, denied := c.refused(m.Subject)
	if denied != nil {
		return 0, denied
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	go func() {
		select {
		case <-next:
			cancel()
		case <-ctx.Done():
		}
	}()
	var resp *nats.Msg
	var err error
	sent := 0
	for wait := time.Second; ; wait = min(2*wait, 5*time.Second) {
		try, stop := context.WithTimeout(ctx, wait)
		resp, err = c.nc.RequestMsgWithContext(try, m)
		stop()
		sent++
		if err == nil || ctx.Err() != nil {
			break
		}
		if _, denied := c.refused(m.Subject); denied != nil {
			return 0, denied
		}
		if errors.Is(err, nats.ErrNoResponders) {
			// Nobody subscribed: a host between two servers of its
			// cluster, or none at all (silent for 2 s: Check says so).
			if cerr := c.Check(); cerr != nil {
				return 0, c.noHost(err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, nats.ErrTimeout) {
			break
		}
		if cerr := c.Check(); errors.Is(cerr, ipc.ErrHostStopped) || errors.Is(cerr, ipc.ErrHostReplaced) {
			return 0, cerr
		}
	}
	if err != nil {
		if _, denied := c.refused(m.Subject); denied != nil {
			return 0, denied
		}
		if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
			if sent > 1 && c.Check() == nil {
				// The host is alive (its values arrive): it holds the
				// outcome back until the command is in the change log.
				return 0, c.unanswered(sent, timeout)
			}
			if sent > 1 {
				return 0, fmt.Errorf("%w (sent %d times in %v; the host executes it at most once and may yet do so)", c.noHost(nats.ErrTimeout), sent, timeout)
			}
			err = nats.ErrTimeout
		}
		return 0, c.noHost(err)
	}
	var r requestReply
	if err := json.Unmarshal(resp.Data, &r); err != nil {
		return 0, fmt.Errorf("natsipc: request outcome: %w", err)
	}
	switch {
	case r.Full:
		return 0, fmt.Errorf("%w: %s", ipc.ErrRequestLogFull, r.Error)
	case r.Error != "":
		return 0, &ipc.RequestError{Msg: r.Error}
	}
	return r.Seq, nil
}

// unanswered is the error of a request a running host sent no outcome
// for: it sends an outcome once the command is stored in the change log,
// which a cluster cannot do without a majority of the stream's servers
// (or while it elects the stream's leader). It says whether the stream
// answers, and wraps nats.ErrTimeout, not ipc.ErrHostStopped.
func (c *Conn) unanswered(sent int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	why := "the host sends it once the command is stored in its change log"
	if _, err := c.js.Stream(ctx, streamName(c.name)); err != nil {
		why = fmt.Sprintf("its change log cannot be stored now (the stream does not answer: %v; a cluster with fewer than a majority of its servers up, or electing the stream's leader), and the host sends the outcome once it is", err)
	}
	return fmt.Errorf("natsipc: the host is running but sent no outcome (sent %d times in %v): %s; it executes the request at most once and may yet do so (%w)", sent, timeout, why, nats.ErrTimeout)
}

// ReadLog returns the change-log records received after cur.
func (c *Conn) ReadLog(cur *ipc.LogCursor) ([]ipc.LogRecord, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.logErr != nil {
		return nil, c.logErr
	}
	if cur.Seq >= uint64(len(c.log)) {
		return nil, nil
	}
	out := append([]ipc.LogRecord(nil), c.log[cur.Seq:]...)
	cur.Seq = uint64(len(c.log))
	return out, nil
}

// FetchFile fetches a file from one of the host's scene directories (for
// mirrors on machines without it), in chunks.
func (c *Conn) FetchFile(dir, path string) ([]byte, error) {
	var out []byte
	for {
		req, _ := json.Marshal(fileRequest{Dir: dir, Path: path, Offset: int64(len(out))})
		msg, err := c.nc.Request(subject(c.name, "file"), req, c.timeout)
		if err != nil {
			return nil, c.noHost(err)
		}
		if e := msg.Header.Get(hdrError); e != "" {
			return nil, errors.New(e)
		}
		size, err := strconv.ParseInt(msg.Header.Get(hdrSize), 10, 64)
		if err != nil || size > 1<<30 {
			return nil, fmt.Errorf("file %s: bad size %q", path, msg.Header.Get(hdrSize))
		}
		out = append(out, msg.Data...)
		if int64(len(out)) >= size || len(msg.Data) == 0 {
			return out, nil
		}
	}
}
