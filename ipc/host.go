package ipc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/simvis/simvis/scene"
)

// HostOptions configure a host.
type HostOptions struct {
	Sizes Sizes // zero: DefaultSizes
	// Rate is host cycles per second (default 30). Each cycle applies the
	// values clients wrote, executes pending requests and calls the render
	// function.
	Rate float64
	// Fast runs cycles back to back instead of in real time; the time the
	// render function gets still advances by 1/Rate a cycle.
	Fast bool
	// AbandonAfter is how long a claimed request may stay unwritten before
	// the host gives up on it and goes on, and how long a request slot may
	// hold anything but a pending request or an unread outcome before the
	// host frees it (default 1 s). Every slot found so is freed in the
	// same cycle.
	AbandonAfter time.Duration
	// KeepOutcomes is how long an outcome nobody read keeps its slot
	// (default 10 s); the host looks for its requester's process every
	// AbandonAfter from AbandonAfter on, and frees it once that is gone.
	KeepOutcomes time.Duration
	// Limits bound what one command (from the scene file or a request)
	// may add to the scene; zero fields take scene.DefaultLimits.
	Limits scene.Limits
	// PackagePath is where URDF parts find package://PKG/... files (nil:
	// models.DefaultPackagePath, $ROS_PACKAGE_PATH).
	PackagePath []string
	// RemoveInterval is the least time between two removals (default 1 s;
	// negative: none): a removal reloads the whole scene (a new run), so
	// removals in a loop would hold the host's cycles up.
	RemoveInterval time.Duration
	// Warnings receives overrun, rejected-value and repair reports, at
	// most one line of each kind a second (nil: standard error).
	Warnings io.Writer
	// Command names the program in warnings (default "simvis serve"):
	// play is a host too.
	Command string
	// Replace lets the host take the name of a host that another live
	// process runs (whose clients then learn it was replaced). Without it
	// NewHost refuses with a *HostRunningError.
	Replace bool
}

// Host runs a scene and serves it through a region: the paper's SimVis3D
// host process. It is not safe for concurrent use; one goroutine runs it.
type Host struct {
	Region *Region
	Scene  *scene.Scene
	dir    string // absolute directory requests' file paths resolve against
	opts   HostOptions

	requests requestLog // the host's own view of the request log
	rejected uint64     // values refused since the start
	// lastRejection is the last refusal, as the region's header shows it.
	lastRejection Rejection
	repairs       uint64           // damage to the region found and repaired
	cycles        uint64           // cycles completed
	now           func() time.Time // the clock (tests set their own)
	pub, seen     []uint64         // values as last published, and as read this cycle (bits)
	known         int              // values published in the region
	overruns      int              // cycles whose work took longer than the period
	warnings      *Warnings
	requested     func(LogRecord, error) // test hook: every executed request
	hooks         []CycleHook
	run           []ranCommand // the commands of this run's change log, in order
	lastRemoval   time.Time    // when the last removal was taken
	// next is the run a removal built, which takes over at the end of the
	// cycle (remove.go); a run being built lies at tmp until then.
	next *Host
	tmp  string
}

// CycleHook lets a transport take part in the host's cycles, on the host's
// goroutine: Before runs before the values are applied (a transport writes
// its clients' values into Scene.Values() and runs their requests through
// Execute), After once the cycle is done (it publishes what changed).
type CycleHook struct {
	Before, After func() error
}

// AddHook adds a transport's part in every cycle.
func (h *Host) AddHook(hook CycleHook) { h.hooks = append(h.hooks, hook) }

// Execute runs a request from a transport's client: one XML command under
// the same rules as shared-memory requests (files inside the scene's
// directory), logged on success. source names the client in errors and in
// the change log. Call it from a hook (the host's goroutine).
func (h *Host) Execute(xml, source string) (uint64, error) { return h.request(xml, source) }

// Warn reports a problem on the host's warning output, at most once a
// second for each kind, counting the rest.
func (h *Host) Warn(kind, format string, args ...any) { h.warn(kind, format, args...) }

// NewHost creates the region at path, loads the scene file into it, logs
// its commands as the start of the change log and publishes the elements.
// Requests may name model files inside the scene file's directory only.
func NewHost(path, sceneFile string, opts HostOptions) (*Host, error) {
	if opts.Sizes == (Sizes{}) {
		opts.Sizes = DefaultSizes
		// The descriptor table holds as many elements as the scene may
		// (scene.Limits.Elements, --max-elements).
		if n := opts.Limits.Elements; n > 0 {
			opts.Sizes.Elements = min(n, 1<<24)
		}
	} else if opts.Limits.Elements == 0 {
		// A table sized by hand bounds the elements itself: the budget
		// follows it rather than refusing what it would hold.
		opts.Limits.Elements = opts.Sizes.Elements
	}
	if opts.Rate == 0 {
		opts.Rate = 30
	}
	if !(opts.Rate > 0 && opts.Rate <= 100000) {
		return nil, fmt.Errorf("host rate %v Hz: want (0, 100000]", opts.Rate)
	}
	if opts.AbandonAfter <= 0 {
		opts.AbandonAfter = time.Second
	}
	if opts.RemoveInterval == 0 {
		opts.RemoveInterval = time.Second
	}
	if opts.KeepOutcomes <= 0 {
		opts.KeepOutcomes = 10 * time.Second
	}
	if opts.Warnings == nil {
		opts.Warnings = os.Stderr
	}
	if pid := RunningHost(path); pid != 0 && !opts.Replace {
		return nil, &HostRunningError{Path: path, PID: pid}
	}
	cmds, err := scene.ReadCommands(sceneFile)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(filepath.Dir(sceneFile))
	if err != nil {
		return nil, err
	}
	run := make([]ranCommand, len(cmds))
	for i, c := range cmds {
		run[i] = ranCommand{c, fmt.Sprintf("%s:%d", c.File, c.Line)}
	}
	h := &Host{dir: dir, opts: opts, now: time.Now, warnings: NewWarnings(opts.Warnings, cmp.Or(opts.Command, "simvis serve"))}
	n, err := h.buildRun(path, run, nil)
	if err != nil {
		return nil, err
	}
	if err := n.Region.takeName(n.tmp); err != nil {
		return nil, err
	}
	h.takeRun(n)
	return h, nil
}

// ranCommand is a command the host executed, as its change log has it.
type ranCommand struct {
	cmd    *scene.Command
	source string
}

// buildRun creates a region for path (a new epoch), not yet under that
// name (n.tmp: Region.takeName gives it the name and marks a region
// already there replaced), and a scene, and executes the commands into
// both: the run that takeRun gives the host. With dropped nil the first failure
// is returned; else a command that fails is left out and its failure
// appended to dropped (a removal rebuilds the scene without the commands
// that depended on what it removed).
func (h *Host) buildRun(path string, run []ranCommand, dropped *[]error) (*Host, error) {
	r, tmp, err := createUnnamed(path, h.opts.Sizes)
	if err != nil {
		return nil, err
	}
	n := &Host{Region: r, tmp: tmp, dir: h.dir, opts: h.opts, now: h.now, warnings: h.warnings,
		pub: make([]uint64, r.lay.valuesCap), seen: make([]uint64, r.lay.valuesCap)}
	r.hput64(offPeriod, uint64(float64(time.Second)/h.opts.Rate))
	r.hput64(offCycle, h.cycles)
	// The scene's parameter table is the host's own: values clients write
	// in the region are copied in every cycle and checked there, so none
	// can change between the check and its use.
	n.Scene = scene.New(scene.Options{ParamCapacity: r.lay.valuesCap, OnRejected: h.reject, Limits: h.opts.Limits, PackagePath: h.opts.PackagePath})
	for _, rc := range run {
		if err := n.execute(rc.cmd, rc.source); err != nil {
			if dropped == nil {
				n.Region.Close()
				os.Remove(tmp)
				return nil, err
			}
			*dropped = append(*dropped, err)
		}
	}
	return n, nil
}

// takeRun makes n's region and scene the host's.
func (h *Host) takeRun(n *Host) {
	h.Region, h.Scene, h.run, h.known, h.pub, h.seen, h.requests = n.Region, n.Scene, n.run, n.known, n.pub, n.seen, requestLog{}
}

// execute runs a command, publishes its elements and appends it to the
// change log. A command whose record would not fit the log is refused
// before it runs, one whose elements do not fit the descriptors is undone:
// the log, the descriptors and the scene always agree.
func (h *Host) execute(c *scene.Command, source string) error {
	dir, err := filepath.Abs(c.Dir)
	if err != nil {
		return err
	}
	text := c.String()
	lo := loadOpts{confined: c.Confined, limits: h.opts.Limits.Model,
		packages: strings.Join(h.opts.PackagePath, "\x00"), pathSet: h.opts.PackagePath != nil}
	if err := h.Region.logFits(source, dir, text, lo); err != nil {
		return err
	}
	publish := func() error {
		h.pushNew()
		return h.Region.Publish(h.Scene)
	}
	err = h.Scene.ExecVerified(c, publish)
	h.known = len(h.Scene.Values()) // a refused command was undone
	if err != nil {
		return err
	}
	if _, err = h.Region.appendLog(source, dir, text, lo); err == nil {
		h.run = append(h.run, ranCommand{c, source})
	}
	return err
}

func (h *Host) reject(e *scene.RejectedError) {
	h.rejected += uint64(e.Values)
	h.warn("rejected", "rejected %d value(s) of element %q: %v", e.Values, e.Element, e.Err)
	x := Rejection{Cycle: h.cycles + 1, Reason: e.Error()}
	if el, ok := h.Scene.Element(e.Element); ok {
		x.First, x.Count = el.Start, len(el.Params)
	}
	h.lastRejection = x
	h.Region.putRejection(x)
}

// LastRejection returns the last values the host refused (Cycle 0: none
// yet), for transports to tell their clients.
func (h *Host) LastRejection() Rejection { return h.lastRejection }

// warn prints a report at most once a second per kind, counting the rest.
func (h *Host) warn(kind, format string, args ...any) { h.warnings.Warn(kind, format, args...) }

// Cycle applies the values clients wrote and executes the requests pending
// now, then counts the cycle. Bad values and requests never stop the host:
// values are reset and counted, requests get their error as outcome. It
// first re-asserts what the host owns in the region (header, descriptors,
// names, change log), counting and reporting what it had to repair.
func (h *Host) Cycle() error {
	now := h.now()
	r := h.Region
	if fixed := r.reassert(); len(fixed) > 0 {
		h.repaired(fixed...)
	}
	r.hput64(offCycleAt, uint64(now.UnixNano()))
	for _, hook := range h.hooks {
		if hook.Before != nil {
			if err := hook.Before(); err != nil {
				return err
			}
		}
	}
	h.pullValues()
	if err := h.Scene.Update(); err != nil {
		return err // only without OnRejected, which NewHost always sets
	}
	r.serveRequests(&h.requests, now, h.opts.AbandonAfter, h.opts.KeepOutcomes, h.serveRequest, h.requestEvent)
	if h.next != nil {
		h.takeNext() // a removal's new run
		r = h.Region
	} else {
		h.pushValues()
	}
	r.hput64(offRejected, h.rejected)
	h.cycles++
	r.hput64(offCycle, h.cycles)
	for _, hook := range h.hooks {
		if hook.After != nil {
			if err := hook.After(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Repairs is the number of times the host found something it owns in the
// region damaged (a header field, descriptors, change-log bytes, a request
// slot in an impossible state) and repaired it.
func (h *Host) Repairs() uint64 { return h.repairs }

func (h *Host) repaired(what ...string) {
	h.repairs += uint64(len(what))
	h.warn("repair", "repaired the region %s (a client wrote where only the host may): %s", h.Region.path, strings.Join(what, "; "))
}

func (h *Host) requestEvent(e requestEvent) {
	switch e.kind {
	case "repair":
		h.repaired(e.msg)
	case "abandoned":
		h.warn("abandoned", "%s", e.msg)
		h.report(LogRecord{Source: fmt.Sprintf("request %d", e.seq)}, errors.New(e.msg))
	default:
		h.report(LogRecord{Source: fmt.Sprintf("request %d", e.seq)}, fmt.Errorf("%w: %s", ErrRequestCancelled, e.msg))
	}
}

// pullValues copies the values clients changed in the region since the
// host last published them into the scene's table.
func (h *Host) pullValues() {
	shared := h.Region.Values()
	tab := h.Scene.Values()
	for i := range tab[:h.known] {
		b := atomic.LoadUint64((*uint64)(unsafe.Pointer(&shared[i])))
		h.seen[i] = b
		if b != h.pub[i] {
			tab[i] = math.Float64frombits(b)
		}
	}
}

// pushValues publishes the scene's values: the ones it reset after
// refusing them, and the ones transports set. A compare-and-swap against
// the value read this cycle keeps a client's newer write, for the next
// cycle.
func (h *Host) pushValues() {
	shared := h.Region.Values()
	for i, v := range h.Scene.Values()[:h.known] {
		want := math.Float64bits(v)
		if want != h.seen[i] {
			atomic.CompareAndSwapUint64((*uint64)(unsafe.Pointer(&shared[i])), h.seen[i], want)
		}
		h.pub[i] = want
	}
}

// pushNew publishes the values of elements a command added, before their
// descriptors say they exist.
func (h *Host) pushNew() {
	shared := h.Region.Values()
	tab := h.Scene.Values()
	for i := h.known; i < len(tab); i++ {
		b := math.Float64bits(tab[i])
		atomic.StoreUint64((*uint64)(unsafe.Pointer(&shared[i])), b)
		h.pub[i], h.seen[i] = b, b
	}
	h.known = len(tab)
}

// serveRequest executes a request the host took from its slot and
// returns its change-log sequence, or the error text of its outcome.
func (h *Host) serveRequest(p pendingRequest) (uint64, string) {
	source := requestSource(p.seq, p.pid)
	if p.bad != "" {
		msg := source + ": " + p.bad
		h.report(LogRecord{Source: source}, errors.New(msg))
		return 0, msg
	}
	logSeq, err := h.Execute(p.text, source)
	h.report(LogRecord{Seq: logSeq, Source: source, XML: p.text}, err)
	if err != nil {
		return 0, err.Error()
	}
	return logSeq, ""
}

func (h *Host) report(rec LogRecord, err error) {
	if h.requested != nil {
		h.requested(rec, err)
	}
}

// request parses and executes a request's text: exactly one command, whose
// file paths must stay inside the scene's directory.
func (h *Host) request(text, source string) (uint64, error) {
	if h.next != nil {
		return 0, ErrRunRestarted
	}
	c, err := scene.ParseCommand(text, source, h.dir)
	if err != nil {
		return 0, err
	}
	if c.Kind() == "remove" {
		return h.remove(c)
	}
	c.Confined = true
	if err := h.execute(c, source); err != nil {
		return 0, err
	}
	return h.Region.hget64(offLogCount), nil
}

// Run cycles until ctx ends or, if cycles > 0, that many cycles ran. After
// each cycle it calls render (may be nil) with the cycle number and the
// scene time, cycle/Rate. In real time a cycle whose work overruns its
// period is reported (but for the first, which pays one-time costs); a schedule more than a period behind restarts from
// now rather than bursting to catch up.
func (h *Host) Run(ctx context.Context, cycles int, render func(cycle int, t time.Duration) error) error {
	period := time.Duration(float64(time.Second) / h.opts.Rate)
	next := time.Now()
	for i := 0; cycles <= 0 || i < cycles; i++ {
		if err := ctx.Err(); err != nil {
			return nil
		}
		start := time.Now()
		if err := h.Cycle(); err != nil {
			return err
		}
		if render != nil {
			if err := render(i, time.Duration(i)*period); err != nil {
				return err
			}
		}
		if h.opts.Fast {
			continue
		}
		if i == 0 {
			// The first cycle pays what only happens once: the renderer
			// compiles its shaders and uploads every mesh, the first
			// publication carries the whole change log. It is no overrun;
			// the schedule starts when it ends.
			next = time.Now()
		}
		next = next.Add(period)
		wait := time.Until(next)
		if work := time.Since(start); work > period && i > 0 {
			h.overruns++
			h.warn("overrun", "cycle %d took %v, over its %v period", i, work.Round(time.Microsecond), period)
		}
		if wait < -period {
			// Woken too late (an overrun, or the machine was busy): start
			// the schedule again from now rather than burst to catch up.
			next = time.Now()
			continue
		}
		if wait <= 0 {
			continue
		}
		if !waitUntil(ctx, next) {
			return nil
		}
	}
	return nil
}

// waitUntil waits for t, or returns false when ctx ends first. Go's
// timers fire up to a few milliseconds late on Linux, and a goroutine
// sleeping in a system call holds its processor until the runtime takes
// it back: it sleeps on a Go timer until 2 ms before t, then with the
// kernel's precise timer for the rest.
func waitUntil(ctx context.Context, t time.Time) bool {
	if d := time.Until(t) - 2*time.Millisecond; d > 0 {
		timer := time.NewTimer(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			return false
		case <-timer.C:
		}
	}
	if ctx.Err() != nil {
		return false
	}
	if d := time.Until(t); d > 0 {
		sleepPrecise(d)
	}
	return true
}

// Period is the host's cycle period.
func (h *Host) Period() time.Duration { return time.Duration(float64(time.Second) / h.opts.Rate) }

// Overruns is the number of real-time cycles whose work took longer than
// their period (warnings about them are limited to one a second).
func (h *Host) Overruns() int { return h.overruns }

// Close marks the region stopped, removes its file (clients still mapping
// it see the host stopped) and unmaps it. The Scene stays usable.
func (h *Host) Close() error {
	if h.Region == nil {
		return nil
	}
	path := h.Region.path
	ours := h.Region.isFileAt(path)
	err := h.Region.Close()
	if ours {
		if rmErr := os.Remove(path); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) && err == nil {
			err = rmErr
		}
	}
	h.Region = nil
	return err
}
