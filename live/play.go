package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/ipc/natsipc"
	"github.com/simvis/simvis/record"
	"github.com/simvis/simvis/scene"
)

// PlayOptions configure the playback of a recording as a host (Play).
type PlayOptions struct {
	File   string  // the recording (MCAP)
	Shm    string  // region name or path (default "play")
	Rate   float64 // playback speed factor (default 1)
	Start  float64 // seconds into the recording
	Loop   bool    // start again at the end
	Paused bool    // start paused (Controls resume or step)
	Fast   bool    // cycles back to back
	// Rerender renders the sensors anew (into NATS, Out, Record and
	// Sinks) instead of republishing the recorded frames.
	Rerender bool
	Out      string
	Limits   scene.Limits
	Read     record.ReadOptions
	NATS     NATSOptions
	Foxglove FoxgloveOptions
	Web      WebOptions
	Record   RecordOptions // with Rerender
	// Controls gives play's controls (PlayControls), one a line; nil: none.
	Controls io.Reader
	Sinks    []Sink    // the caller's own, given re-rendered frames
	Warnings io.Writer // warnings (default standard error)
	// NewHost is ipc.NewHost unless set (tests see what a host asks for).
	NewHost func(path, sceneFile string, o ipc.HostOptions) (*ipc.Host, error)
}

// Play rebuilds the scene of a simvis recording (its change log, model
// files from its attachments written to a private temporary directory)
// and runs it as a host, as Serve does, until the recording ends (unless
// Loop) or ctx ends. Each cycle the playback position advances by one
// period times Rate, and the values and commands recorded up to it apply.
func Play(ctx context.Context, o PlayOptions, w io.Writer) error {
	if o.Warnings == nil {
		o.Warnings = os.Stderr
	}
	if o.Shm == "" {
		o.Shm = "play"
	}
	if o.Rate == 0 {
		o.Rate = 1
	}
	if o.NewHost == nil {
		o.NewHost = ipc.NewHost
	}
	switch {
	case !(o.Rate > 0 && o.Rate <= 1000):
		return optionf("--rate %v: want a speed factor in (0, 1000]", o.Rate)
	case !(o.Start >= 0) || math.IsInf(o.Start, 0):
		return optionf("--start %v: want seconds >= 0", o.Start)
	case (o.Out != "" || o.Record.Path != "" || len(o.Sinks) > 0) && !o.Rerender:
		return optionf("-o and --record need --rerender")
	}
	rec, err := record.ReadWith(o.File, nil, o.Read)
	if err != nil {
		return err
	}
	if !rec.HasMeta || len(rec.Changes) == 0 {
		return fmt.Errorf("%s: not a simvis recording (no %q metadata or no %s channel)", o.File, record.MetadataName, record.TopicChanges)
	}
	if !(rec.Meta.Rate > 0 && rec.Meta.Rate <= 100000) {
		return fmt.Errorf("%s: recorded rate %v: want (0, 100000] Hz", o.File, rec.Meta.Rate)
	}
	if rec.Truncation != "" {
		fmt.Fprintf(o.Warnings, "simvis play: %s: %s\n", o.File, rec.Truncation)
	}
	dir, err := os.MkdirTemp("", "simvis-play-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := writePlayAttachments(dir, rec); err != nil {
		return fmt.Errorf("%s: %w", o.File, err)
	}
	rec.Attachments = nil // on disk now: not held while playing
	// URDF parts find their packages where the recording put them, and
	// nowhere else: recorded commands, as requests, load only files the
	// recording holds (docs/trust.md). An empty list still means none.
	packages := []string{}
	for _, p := range rec.PackagePath {
		packages = append(packages, filepath.Join(dir, filepath.FromSlash(p)))
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	control := make(chan string, 16)
	if o.Controls != nil {
		go readControls(o.Controls, control)
	}
	// The recording made with Rerender and Record spans the scenes played
	// (a replaced scene is recorded as replaced).
	var recOut *Recorder
	if o.Rerender {
		o.Record.PackagePath = packages
		if recOut, err = OpenRecorder(o.Record, rec.Meta.Scene, rec.Meta.Rate); err != nil {
			return err
		}
		defer recOut.Close(w)
	}
	ps := &playback{o: &o, rec: rec, dir: dir, packages: packages, control: control, recOut: recOut, stop: stop, w: w}
	// Recorded scenes: a Reset change starts the next one.
	for i, c := range rec.Changes {
		if i == 0 || c.Msg.Reset {
			ps.bounds = append(ps.bounds, i)
		}
	}
	ps.bounds = append(ps.bounds, len(rec.Changes))
	end := time.Duration(rec.End - rec.Start)
	pos, paused := seconds(o.Start, end), o.Paused
	var step time.Duration
	steps, jumped, files := 0, false, 0
	for {
		p, err := ps.runScene(ctx, pos, paused, step, steps, jumped)
		if p != nil {
			files += p.files
		}
		if err != nil || p.jump == nil || ctx.Err() != nil {
			if p != nil {
				fmt.Fprintf(w, "played to %.3f s: %d cycles, %d of %d changes, %d values messages, %d files written\n",
					p.pos.Seconds(), ps.cycles, p.changes, len(rec.Changes), p.values, files)
			}
			return errors.Join(err, recOut.Close(w))
		}
		// The next host starts as this one left off.
		pos, paused, step, steps, jumped = *p.jump, p.paused, p.step, p.steps, true
		fmt.Fprintf(w, "play: at %.3f s the recorded scene was replaced: restarting the host with the new scene\n", pos.Seconds())
	}
}

// playback is one run of Play: the recording and what its scenes' hosts
// share.
type playback struct {
	o   *PlayOptions
	rec *record.Recording
	dir string // the attachments, and the scene files written for the hosts
	// packages is the package search path of the recorded URDF parts,
	// inside dir.
	packages []string
	bounds   []int // the first change of each recorded scene, and the number of changes
	control  chan string
	recOut   *Recorder
	stop     context.CancelFunc // ends the whole playback
	cycles   uint64
	w        io.Writer
}

// runScene runs the host of the recorded scene that holds position pos
// until the recording ends or the position moves into another scene
// (the player's jump).
func (ps *playback) runScene(ctx context.Context, pos time.Duration, paused bool, step time.Duration, steps int, jumped bool) (p *player, err error) {
	o, rec := ps.o, ps.rec
	seg := 0
	for seg+2 < len(ps.bounds) && rec.Changes[ps.bounds[seg+1]].Time <= rec.Start+int64(pos) {
		seg++
	}
	b0, b1 := ps.bounds[seg], ps.bounds[seg+1]
	sceneFile, err := writePlayScene(ps.dir, rec.Changes[b0:b1], o.Limits, ps.packages)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.File, err)
	}
	h, err := o.NewHost(ipc.Path(o.Shm), sceneFile, ipc.HostOptions{Rate: rec.Meta.Rate, Fast: o.Fast, Warnings: o.Warnings, Limits: o.Limits,
		PackagePath: ps.packages, Command: "simvis play"})
	if err != nil {
		return nil, fmt.Errorf("%s: rebuilding the recorded scene: %w", o.File, err)
	}
	defer h.Close()
	first := b0
	for first < b1 && rec.Changes[first].Time == rec.Changes[b0].Time {
		first++
	}
	if step == 0 {
		step = time.Duration(o.Rate * float64(h.Period()))
	}
	end := time.Duration(rec.End - rec.Start)
	p = &player{h: h, rec: rec, start: rec.Start, end: end, changes: first, segEnd: b1, segDir: rec.Changes[b0].Msg.Dir,
		segFrom: math.MinInt64, segTo: math.MaxInt64,
		step: step, steps: steps, paused: paused, loop: o.Loop, jumped: jumped, control: ps.control, out: ps.w, warn: h.Warn}
	if seg > 0 {
		p.segFrom = rec.Changes[b0].Time
	}
	if b1 < len(rec.Changes) {
		p.segTo = rec.Changes[b1].Time
	}
	for p.valuesFrom < len(rec.Values) && rec.Values[p.valuesFrom].Time < p.segFrom {
		p.valuesFrom++
	}
	p.values = p.valuesFrom
	if pos > 0 {
		p.seek(pos)
	}
	sctx, scancel := context.WithCancel(ctx)
	defer scancel()
	h.AddHook(ipc.CycleHook{Before: p.before})
	out := sinks(o.Sinks)
	var rp *republisher
	where := ipc.Path(o.Shm)
	if !o.NATS.Off {
		n, err := StartNATS(h, o.NATS)
		if err != nil {
			return nil, err
		}
		defer n.Close()
		where += " and " + n.ClientURL
		if o.Rerender {
			out = append(out, n)
		} else {
			rp = newRepublisher(o.File, h, n.Pub, rec)
			defer rp.close()
			p.reopen = true
		}
	}
	var foxRp *foxReplay
	var loop *Loop
	if o.Foxglove.Addr != "" {
		// Stamps: re-rendered frames carry the position; recorded ones
		// their log time, which /tf then follows.
		clock := func() time.Duration { return p.pos }
		if !o.Rerender {
			clock = func() time.Duration { return time.Duration(p.start) + p.pos }
		}
		fox, err := o.Foxglove.startHost(h, "simvis play", clock, ipc.NewWarnings(o.Warnings, "simvis play").Warn)
		if err != nil {
			return nil, err
		}
		defer fox.Close()
		where += " and " + fox.srv.URL()
		if o.Rerender {
			out = append(out, fox)
		} else {
			foxRp = fox.replay(o.File, rec.Complete, p.step)
			defer foxRp.close()
		}
	}
	if o.Web.Addr != "" {
		// The recording drives the scene: pages watch (a driver's values
		// last until the recording's next ones).
		ws, err := o.Web.start(webHost{dial: func() (*ipc.Client, error) { return ipc.Open(ipc.Path(o.Shm)) }, title: o.File, scene: h.Scene, log: o.Warnings}, ps.w)
		if err != nil {
			return nil, err
		}
		defer ws.srv.Close()
		where += " and " + ws.srv.URL()
		wf := &webFrames{srv: ws.srv}
		if !o.Rerender {
			// Pages see the frames the recording holds, as NATS and
			// Foxglove clients do; a sensor it lacks renders from the
			// replayed scene when a page wants it, and so does one
			// while the position is outside the span of its recorded
			// frames (it has none to show there). Asked on the host's
			// goroutine, which moves the position.
			wf.recorded = func(se *scene.SensorEntry) bool {
				first, last, ok := rec.FrameSpan(se)
				t := p.start + int64(p.pos)
				return ok && first <= t && t <= last
			}
			if rp == nil {
				rp = newRepublisher(o.File, h, nil, rec)
				defer rp.close()
				p.reopen = true
			}
			rp.web = wf
			loop = &Loop{Clock: NewClock(), Fails: NewFailures(h.Warn), HostRate: rec.Meta.Rate, Warn: h.Warn}
			defer loop.Close()
		}
		out = append(out, wf)
	}
	var files *Files
	if o.Rerender {
		if o.Out != "" {
			if files, err = NewFiles(o.Out, false); err != nil {
				return nil, err
			}
			out = append(out, files)
		}
		if ps.recOut != nil {
			out = append(out, ps.recOut)
		}
		if loop, err = NewLoop(h.Scene, out, rec.Meta.Rate, h.Warn); err != nil {
			return nil, err
		}
		defer loop.Close()
	}
	if loop != nil && loop.Sink == nil {
		loop.Sink = out // the web viewer's alone: selective
	}
	render := func(int, time.Duration) error {
		if p.jump != nil {
			scancel() // the host of another recorded scene takes over
			return nil
		}
		if p.done {
			if !o.Loop {
				ps.stop() // the end of the recording ends the host
			}
			return nil
		}
		if rp != nil && p.moved {
			if !rp.wanted() {
				// Only pages take the frames, and they want none of
				// those recorded now: none are read until they do.
				p.reopen = true
			} else {
				if p.reopen {
					// Started, or seeked: republish from the position on.
					p.reopen = false
					if err := rp.seek(p.start + int64(p.pos)); err != nil {
						return fmt.Errorf("%s: %w", o.File, err)
					}
				}
				rp.upTo(p.start + int64(p.pos))
			}
		}
		if foxRp != nil && p.moved {
			if err := foxRp.upTo(p.start + int64(p.pos)); err != nil {
				h.Warn("foxglove-replay", "%v", err)
			}
		}
		if loop == nil || !p.moved {
			return nil
		}
		t := p.pos.Seconds()
		if err := out.Cycle(h.Scene, t); err != nil {
			return err
		}
		loop.Cycle(h.Scene, t)
		return nil
	}
	fmt.Fprintf(ps.w, "playing %s as %s: %d elements, %d sensors, %.3f s at %g x, %g Hz\n",
		o.File, where, len(h.Scene.Elements()), len(h.Scene.Sensors()), p.end.Seconds(), o.Rate, rec.Meta.Rate)
	if p.jump == nil {
		err = h.Run(sctx, 0, render)
	}
	ps.cycles += h.Region.Cycles()
	if files != nil {
		p.files = files.Written
	}
	return p, err
}

// republisher publishes a recording's sensor frames to the play host's
// NATS clients as the live host published them (record.Frames), and to
// its web pages, each when the playback position reaches its log time.
type republisher struct {
	file   string
	h      *ipc.Host
	pub    *natsipc.Publisher // nil: no NATS
	web    *webFrames         // nil: no web viewer
	cur    *record.Cursor
	frames *record.Frames
}

// wanted reports whether anything takes the recorded frames now.
func (rp *republisher) wanted() bool {
	return rp.pub != nil || rp.web != nil && rp.web.wantsRecorded(rp.h.Scene)
}

func newRepublisher(file string, h *ipc.Host, pub *natsipc.Publisher, rec *record.Recording) *republisher {
	return &republisher{file: file, h: h, pub: pub, cur: record.NewCursor(file, rec.Complete), frames: record.NewFrames(rec, h.Scene)}
}

// seek restarts at log time from (ns).
func (rp *republisher) seek(from int64) error {
	rp.frames.Reset()
	return rp.cur.SeekTo(from)
}

func (rp *republisher) close() { rp.cur.Close() }

// upTo publishes the frames logged at or before limit (ns).
func (rp *republisher) upTo(limit int64) {
	err := rp.cur.Until(limit, func(_ *mcap.Schema, ch *mcap.Channel, m *mcap.Message) {
		f, err := rp.frames.Add(ch.Topic, m)
		if err != nil {
			rp.h.Warn("republish "+ch.Topic, "%s message %d: %v", ch.Topic, m.Sequence, err)
			return
		}
		if f == nil {
			return
		}
		if rp.web != nil {
			if err := rp.web.recordedFrame(rp.h.Scene, f); err != nil {
				rp.h.Warn("web "+f.Sensor, "sensor %q not shown to pages: %v", f.Sensor, err)
			}
		}
		if rp.pub == nil {
			return
		}
		info, data, err := f.Encode()
		if err == nil {
			err = rp.pub.PublishSensor(f.Sensor, f.Kind, info, data)
		}
		if err != nil {
			rp.h.Warn("republish "+f.Sensor, "sensor %q not republished: %v", f.Sensor, err)
		}
	})
	if err != nil {
		rp.h.Warn("republish", "reading %s: %v", rp.file, err)
	}
}
