package cli

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/ipc/natsipc"
	"github.com/simvis/simvis/record"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
	"github.com/simvis/simvis/sensors/ros2"
)

// recordFlags are the recording flags of capture (--mcap), serve and
// mirror (--record).
type recordFlags struct {
	path, compression string
	realtime          bool
}

func (f *recordFlags) register(fs *flag.FlagSet, name string) {
	*f = recordFlags{}
	fs.StringVar(&f.path, name, "", "record every cycle and sensor frame into this MCAP file (ROS 2 profile, docs/recordings.md)")
	fs.StringVar(&f.compression, "record-compression", "zstd", "chunk compression of the recording: zstd or lz4")
	fs.BoolVar(&f.realtime, "realtime", false, "stamp the recording with the wall clock, not scene time")
}

// readFlags are the bounds of reading a recording (play, info):
// record.ReadOptions in MiB; zero keeps the default, a negative value
// lifts the bound.
type readFlags struct {
	record, change, values, labels, kept, attachments float64
	messages                                          int
}

func (f *readFlags) register(fs *flag.FlagSet) {
	*f = readFlags{}
	mib := func(v *float64, name string, def int64, what string) {
		fs.Float64Var(v, strings.TrimPrefix(name, "--"), 0, fmt.Sprintf("%s, MiB (default %g; <0: no limit)", what, float64(def)/(1<<20)))
	}
	mib(&f.record, record.FlagRecordMiB, record.MaxRecordBytes, "largest record of a recording read, a message that play republishes included")
	mib(&f.change, record.FlagChangeMiB, record.MaxChangeBytes, "largest recorded "+record.TopicChanges+" message (one command)")
	mib(&f.values, record.FlagValuesMiB, record.MaxValuesBytes, "largest recorded "+record.TopicValues+" message")
	mib(&f.labels, record.FlagLabelsMiB, record.MaxLabelsBytes, "largest recorded segmentation labels message")
	mib(&f.kept, record.FlagRecordingMiB, record.MaxKeptBytes, "most of a recording's change log, values, labels, schemas and channels held at once")
	mib(&f.attachments, record.FlagAttachmentsMiB, record.MaxAttachmentBytes, "most attachment bytes of a recording (its model files) read")
	fs.IntVar(&f.messages, strings.TrimPrefix(record.FlagMessages, "--"), 0, fmt.Sprintf("most change, values and labels messages of a recording held (default %d; <0: no limit)", record.MaxJSONMessages))
}

func (f *readFlags) options() (record.ReadOptions, error) {
	var o record.ReadOptions
	for _, b := range []struct {
		v   float64
		to  *int64
		flg string
	}{{f.record, &o.RecordBytes, record.FlagRecordMiB}, {f.change, &o.ChangeBytes, record.FlagChangeMiB},
		{f.values, &o.ValuesBytes, record.FlagValuesMiB}, {f.labels, &o.LabelsBytes, record.FlagLabelsMiB},
		{f.kept, &o.KeptBytes, record.FlagRecordingMiB}, {f.attachments, &o.AttachmentBytes, record.FlagAttachmentsMiB}} {
		switch {
		case math.IsNaN(b.v) || math.IsInf(b.v, 0) || b.v > 1<<40:
			return o, usagef("%s %v: want MiB (<0: no limit)", b.flg, b.v)
		case b.v < 0:
			*b.to = -1
		case b.v > 0:
			*b.to = max(1, int64(b.v*(1<<20)))
		}
	}
	o.Messages = f.messages
	return o, nil
}

// open starts the recording, or returns nil without a path.
func (f *recordFlags) open(sceneFile string, rate float64) (*recorder, error) {
	if f.path == "" {
		if f.realtime {
			return nil, usagef("--realtime needs a recording file")
		}
		return nil, nil
	}
	if f.compression != "zstd" && f.compression != "lz4" {
		return nil, usagef("--record-compression %q: want zstd or lz4", f.compression)
	}
	w, err := record.Create(f.path, record.Options{Compression: f.compression,
		Meta: record.Meta{Scene: sceneFile, Rate: rate, Realtime: f.realtime}})
	if err != nil {
		return nil, err
	}
	return &recorder{w: w, path: f.path}, nil
}

// recorder records a command's cycles and frames; a nil recorder records
// nothing.
type recorder struct {
	w      *record.Writer
	path   string
	t      float64 // scene time of the cycle being recorded
	frames int
	closed bool
	err    error // the recorder's first failure: the recording is abandoned
}

// cycle records the scene at scene time t: call it before the cycle's
// frames. After a failure the recording is abandoned: every later call
// returns that failure and close removes the file.
func (r *recorder) cycle(s *scene.Scene, t float64) error {
	if r == nil {
		return nil
	}
	if r.err != nil {
		return r.err
	}
	r.t = t
	r.err = r.w.Cycle(s, t)
	return r.err
}

// emit records a frame of the current cycle.
func (r *recorder) emit(_ *scene.SensorEntry, f *sensors.Frame, _ *sensors.Stamp) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if err := r.w.Frame(f, r.t); err != nil {
		r.err = err
		return 0, err
	}
	r.frames++
	return 0, nil
}

// close ends the recording (summary and index) and reports it on w; a
// recording that failed is removed instead (no half file is left behind)
// and its failure returned.
func (r *recorder) close(w io.Writer) error {
	if r == nil || r.closed {
		return nil
	}
	r.closed = true
	if r.err != nil {
		r.w.Abort()
		return fmt.Errorf("recording %s failed, the file was removed: %w", r.path, r.err)
	}
	if err := r.w.Close(); err != nil {
		r.w.Abort()
		return fmt.Errorf("recording %s failed, the file was removed: %w", r.path, err)
	}
	fmt.Fprintf(w, "recorded %d sensor frames into %s\n", r.frames, r.path)
	return nil
}

// joinEmit hands each frame to every emitter, summing the files written.
func joinEmit(emitters ...emitFunc) emitFunc {
	return func(se *scene.SensorEntry, f *sensors.Frame, st *sensors.Stamp) (int, error) {
		total := 0
		var errs []error
		for _, e := range emitters {
			if e == nil {
				continue
			}
			n, err := e(se, f, st)
			total += n
			errs = append(errs, err)
		}
		return total, errors.Join(errs...)
	}
}

// captureRecorded is capture's frame with a recording: each sensor is
// rendered once, its files written into out (if any) and its messages
// recorded at the stamp's time (0 for a single capture).
func captureRecorded(r *sensors.Renderer, s *scene.Scene, out string, st *sensors.Stamp, rec *recorder, fails *sensorFailures) (written []string, recorded int) {
	t := 0.0
	if st != nil {
		t = st.Time
	}
	if err := rec.cycle(s, t); err != nil {
		for _, se := range s.Sensors() {
			fails.fail(se, err)
		}
		return nil, 0
	}
	list := s.Sensors()
	stamps := make([]*sensors.Stamp, len(list))
	for i := range stamps {
		stamps[i] = st
	}
	frames, errs := sensors.RenderFrames(r, s, list, stamps)
	for i, se := range list {
		f, err := frames[i], errs[i]
		if err != nil {
			fails.fail(se, err)
			continue
		}
		if out != "" {
			paths, err := f.WriteFiles(sensors.OutputBase(out, se.Name, st))
			if err != nil {
				fails.fail(se, fmt.Errorf("sensor %q: %w", se.Name, err))
				continue
			}
			written = append(written, paths...)
		}
		if _, err := rec.emit(se, f, st); err != nil {
			fails.fail(se, fmt.Errorf("sensor %q: recording: %w", se.Name, err))
			continue
		}
		recorded++
	}
	return written, recorded
}

// playShm is play's default region name: $SIMVIS_SHM, as for serve, else
// "play".
func playShm() string {
	if name := os.Getenv("SIMVIS_SHM"); name != "" {
		return name
	}
	return "play"
}

// playScene is the scene file play writes next to the attachments: the
// recording's first commands.
const playScene = ".simvis-play.xml"

// player applies a recording's change log and values to a host at the
// playback position. It runs on the host's goroutine (a cycle hook).
type player struct {
	h       *ipc.Host
	rec     *record.Recording
	start   int64         // log time of position 0
	pos     time.Duration // playback position
	end     time.Duration
	step    time.Duration // position advance per cycle
	paused  bool
	steps   int // cycles to advance while paused
	loop    bool
	done    bool // past the end, not looping
	changes int  // changes executed (the first ones ran from the scene file)
	values  int  // values messages applied
	index   map[string]int
	moved   bool // the position changed this cycle: render
	control chan string
	out     io.Writer
	warn    func(kind, format string, args ...any)
	started bool // the first cycle ran
	reopen  bool // the position jumped: recorded frames restart there
	// The recorded scene this host plays (docs/recordings.md, scenes
	// replaced): changes before segEnd, values logged from segFrom, up to
	// log time segTo, where the next scene replaces it.
	segEnd         int
	segDir         string // the directory (Change.Dir) of the scene's commands
	segFrom, segTo int64
	valuesFrom     int            // the first values message of the scene
	jump           *time.Duration // a position in another recorded scene: the host restarts there
	files          int            // files written (--rerender -o)
	jumped         bool           // this host took over from another recorded scene's
}

// Play controls, one a line on standard input (docs/recordings.md).
const playControls = "pause | resume | step [N] | seek T | rate X | status"

func (p *player) command(line string) {
	if line == controlTooLong {
		fmt.Fprintf(p.out, "play: a control line longer than %d bytes; ignored\n", maxControlLine)
		return
	}
	f := strings.Fields(line)
	if len(f) == 0 {
		return
	}
	arg := func() (float64, bool) {
		if len(f) < 2 {
			return 0, false
		}
		v, err := strconv.ParseFloat(f[1], 64)
		return v, err == nil && !math.IsNaN(v) && !math.IsInf(v, 0)
	}
	switch f[0] {
	case "pause", "p":
		p.paused = true
	case "resume", "r":
		p.paused = false
	case "step", "s":
		n := 1.0
		if len(f) > 1 {
			var ok bool
			if n, ok = arg(); !ok || n < 1 || n > 1e6 {
				fmt.Fprintf(p.out, "play: step %q: want a count 1 to 1000000\n", f[1])
				return
			}
		}
		p.paused = true
		p.steps += int(n)
	case "seek":
		t, ok := arg()
		if !ok || t < 0 {
			fmt.Fprintf(p.out, "play: seek: want a time in seconds >= 0\n")
			return
		}
		p.seek(seconds(t, p.end))
	case "rate":
		x, ok := arg()
		if !ok || x <= 0 || x > 1000 {
			fmt.Fprintf(p.out, "play: rate: want a factor in (0, 1000]\n")
			return
		}
		p.step = time.Duration(x * float64(p.h.Period()))
	case "status":
	default:
		fmt.Fprintf(p.out, "play: unknown control %q (%s)\n", line, playControls)
		return
	}
	p.status()
}

// Control lines longer than maxControlLine are skipped whole and reported
// by the sentinel controlTooLong (a line cannot hold a newline).
const (
	maxControlLine = 4096
	controlTooLong = "\ntoo long"
)

// readControls sends each line of r to controls until r ends.
func readControls(r io.Reader, controls chan<- string) {
	rd := bufio.NewReaderSize(r, maxControlLine)
	for {
		line, more, err := rd.ReadLine()
		if err != nil {
			return
		}
		if !more {
			controls <- string(line)
			continue
		}
		for more && err == nil {
			_, more, err = rd.ReadLine()
		}
		controls <- controlTooLong
	}
}

// seconds converts t (s, >= 0) to a position, at most end: a float too
// large for a Duration would wrap around to a negative one.
func seconds(t float64, end time.Duration) time.Duration {
	if t >= end.Seconds() {
		return end
	}
	return time.Duration(t * float64(time.Second))
}

func (p *player) status() {
	state := "playing"
	if p.paused {
		state = "paused"
	}
	if p.jump != nil {
		// The host restarts with the scene recorded there and reports.
		fmt.Fprintf(p.out, "play: %s, going to %.3f s of %.3f s, rate %g\n", state, p.jump.Seconds(), p.end.Seconds(),
			float64(p.step)/float64(p.h.Period()))
		return
	}
	fmt.Fprintf(p.out, "play: %s at %.3f s of %.3f s, change %d, rate %g\n", state, p.pos.Seconds(), p.end.Seconds(),
		p.changes, float64(p.step)/float64(p.h.Period()))
}

// seek moves to position t: values are those recorded last at or before t
// (replayed from the start), commands up to t run; commands already run
// stay (a scene cannot take a command back).
func (p *player) seek(t time.Duration) {
	t = min(t, p.end)
	if at := p.start + int64(t); at < p.segFrom || at >= p.segTo {
		p.jump = &t
		return
	}
	if t < p.pos {
		p.values = p.valuesFrom
	}
	p.pos, p.moved, p.done, p.reopen = t, true, false, true
	p.apply()
}

// apply runs the commands and sets the values recorded up to the position.
func (p *player) apply() {
	if p.jump != nil {
		return
	}
	limit := p.start + int64(p.pos)
	for p.changes < p.segEnd && p.rec.Changes[p.changes].Time <= limit {
		c := p.rec.Changes[p.changes].Msg
		p.changes++
		if c.Dir != p.segDir {
			p.warn("change", "recorded change %d (%s) resolves files in %s, not in the scene's directory %s; skipped", c.Seq, c.Source, c.Dir, p.segDir)
			continue
		}
		if _, err := p.h.Execute(c.XML, "recording "+c.Source); err != nil {
			p.warn("change", "recorded change %d (%s): %v", c.Seq, c.Source, err)
		}
		p.index = nil // new elements: parameter indexes change
	}
	if p.index == nil {
		p.index = map[string]int{}
		for _, e := range p.h.Scene.Elements() {
			for i, prm := range e.Params {
				p.index[e.Name+"."+prm.Name] = e.Start + i
			}
		}
	}
	tab := p.h.Scene.Values()
	for ; p.values < len(p.rec.Values) && p.rec.Values[p.values].Time <= limit; p.values++ {
		for name, v := range p.rec.Values[p.values].Msg.Values {
			i, ok := p.index[name]
			if !ok || i >= len(tab) {
				p.warn("values", "recorded value %s = %v at %.3f s: the rebuilt scene has no such parameter", name, v,
					float64(p.rec.Values[p.values].Time-p.start)/1e9)
				continue
			}
			tab[i] = v // checked by the host's Update like a client's value
		}
	}
}

// before is the host's cycle hook: controls, then the position advances
// and what was recorded up to it applies.
func (p *player) before() error {
	p.moved = false
	for {
		select {
		case line := <-p.control:
			p.command(line)
			continue
		default:
		}
		break
	}
	if p.done || p.jump != nil {
		return nil
	}
	if !p.started {
		p.apply()
		if p.paused && p.steps == 0 && !p.jumped {
			// Started paused: the scene is at the start position; its
			// frames come with the first step or resume (after a jump
			// into this scene, as after a seek, at once).
			return nil
		}
		// The first cycle plays the start position itself (a step
		// unless the step that reached it was counted before the jump).
		if p.steps > 0 && !p.jumped {
			p.steps--
		}
		p.started, p.moved = true, true
		return nil
	}
	if !p.paused || p.steps > 0 {
		if p.steps > 0 {
			p.steps--
		}
		p.pos += p.step
		p.moved = true
	}
	if p.pos > p.end {
		if !p.loop {
			p.pos, p.done, p.moved = p.end, true, false
			return nil
		}
		p.seek(0)
	} else if p.start+int64(p.pos) >= p.segTo {
		p.seek(p.pos) // the recorded scene was replaced here
	}
	p.apply()
	return nil
}

func init() {
	var shm, out string
	var rate, start float64
	var loop, paused, rerender, fast bool
	var nf natsFlags
	var ff foxgloveFlags
	var lf limitFlags
	var rf recordFlags
	var rdf readFlags
	commands = append(commands, &command{
		name: "play", args: "FILE.mcap [--rate X] [--start T] [--loop] [--paused] [--fast] [--rerender [-o DIR] [--record FILE.mcap]] [--shm NAME] [NATS flags] [--foxglove ADDR [Foxglove flags]] [budget flags] [recording bounds]",
		short: "run a recording as a host: its scene, values and change log at their times",
		summary: "Rebuild the scene of a simvis MCAP recording (its change log, model files from its\n" +
			"attachments written to a private temporary directory) and run it as a host, as serve\n" +
			"does: clients, mirrors and viewers attach to it as to a live host. Each cycle (at the\n" +
			"recording's host rate) the playback position advances by one period times --rate and\n" +
			"the values and commands recorded up to it apply. With --rerender the sensors render\n" +
			"anew (published on NATS, written with -o, recorded with --record; a run that writes\n" +
			"-o or --record starts NATS only when a NATS flag asks for it). It stops at the\n" +
			"end unless --loop. Controls, one a line on standard input: " + playControls + ".\n" +
			"docs/recordings.md describes the recording and the controls.",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&shm, "shm", playShm(), "region name (/dev/shm/simvis-NAME) or path; $SIMVIS_SHM sets the default (else play)")
			fs.Float64Var(&rate, "rate", 1, "playback speed factor")
			fs.Float64Var(&start, "start", 0, "start at this many seconds into the recording")
			fs.BoolVar(&loop, "loop", false, "start again at the end")
			fs.BoolVar(&paused, "paused", false, "start paused (resume or step on standard input)")
			fs.BoolVar(&fast, "fast", false, "run cycles as fast as possible")
			fs.BoolVar(&rerender, "rerender", false, "render the sensors anew")
			fs.StringVar(&out, "o", "", "with --rerender, write sensor outputs into DIR")
			nf.register(fs)
			ff.register(fs)
			lf.register(fs)
			rf.register(fs, "record")
			rdf.register(fs)
		},
		run: func(fs *flag.FlagSet, args []string, w io.Writer) error {
			if len(args) != 1 {
				return usagef("want one recording FILE.mcap")
			}
			if !(rate > 0 && rate <= 1000) {
				return usagef("--rate %v: want a speed factor in (0, 1000]", rate)
			}
			if !(start >= 0) || math.IsInf(start, 0) {
				return usagef("--start %v: want seconds >= 0", start)
			}
			if (out != "" || rf.path != "") && !rerender {
				return usagef("-o and --record need --rerender")
			}
			if rerender && (out != "" || rf.path != "") && !nf.off {
				// Re-rendering into files: NATS only where a flag asks for it.
				asked := false
				for _, name := range []string{"nats", "listen", "name", "token", "user", "password", "tls-cert", "tls-key", "max-consumers"} {
					asked = asked || flagGiven(fs, name)
				}
				nf.off = !asked
			}
			lim, err := lf.limits()
			if err != nil {
				return err
			}
			ropts, err := rdf.options()
			if err != nil {
				return err
			}
			rec, err := record.ReadWith(args[0], nil, ropts)
			if err != nil {
				return err
			}
			if !rec.HasMeta || len(rec.Changes) == 0 {
				return fmt.Errorf("%s: not a simvis recording (no %q metadata or no %s channel)", args[0], record.MetadataName, record.TopicChanges)
			}
			if !(rec.Meta.Rate > 0 && rec.Meta.Rate <= 100000) {
				return fmt.Errorf("%s: recorded rate %v: want (0, 100000] Hz", args[0], rec.Meta.Rate)
			}
			if rec.Truncation != "" {
				fmt.Fprintf(warnings, "simvis play: %s: %s\n", args[0], rec.Truncation)
			}
			dir, err := os.MkdirTemp("", "simvis-play-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			if err := writePlayAttachments(dir, rec); err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			rec.Attachments = nil // on disk now: not held while playing
			// Recorded scenes: a Reset change starts the next one.
			var bounds []int
			for i, c := range rec.Changes {
				if i == 0 || c.Msg.Reset {
					bounds = append(bounds, i)
				}
			}
			bounds = append(bounds, len(rec.Changes))
			ctx, stop := interrupted()
			defer stop()
			control := make(chan string, 16)
			go readControls(os.Stdin, control)
			// The recording made with --rerender --record spans the
			// scenes played (a replaced scene is recorded as replaced).
			var recOut *recorder
			if rerender {
				if recOut, err = rf.open(rec.Meta.Scene, rec.Meta.Rate); err != nil {
					return err
				}
				defer recOut.close(w)
			}
			end := time.Duration(rec.End - rec.Start)
			pos := seconds(start, end)
			step := time.Duration(0)
			steps := 0
			jumped := false
			cycles := uint64(0)
			// runScene runs the host of the recorded scene that holds
			// position pos until the recording ends or the position moves
			// into another scene (jump).
			runScene := func(pos time.Duration) (p *player, err error) {
				seg := 0
				for seg+2 < len(bounds) && rec.Changes[bounds[seg+1]].Time <= rec.Start+int64(pos) {
					seg++
				}
				b0, b1 := bounds[seg], bounds[seg+1]
				sceneFile, err := writePlayScene(dir, rec.Changes[b0:b1], lim)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", args[0], err)
				}
				h, err := newHost(ipc.Path(shm), sceneFile, ipc.HostOptions{Rate: rec.Meta.Rate, Fast: fast, Warnings: warnings, Limits: lim,
					Command: "simvis play"})
				if err != nil {
					return nil, withLimitHint(fmt.Errorf("%s: rebuilding the recorded scene: %w", args[0], err))
				}
				defer h.Close()
				first := b0
				for first < b1 && rec.Changes[first].Time == rec.Changes[b0].Time {
					first++
				}
				if step == 0 {
					step = time.Duration(rate * float64(h.Period()))
				}
				p = &player{h: h, rec: rec, start: rec.Start, end: end, changes: first, segEnd: b1, segDir: rec.Changes[b0].Msg.Dir,
					segFrom: math.MinInt64, segTo: math.MaxInt64,
					step: step, steps: steps, paused: paused, loop: loop, jumped: jumped, control: control, out: w, warn: h.Warn}
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
				var emitters []emitFunc
				var rp *republisher
				where := ipc.Path(shm)
				if !nf.off {
					pub, clientURL, cleanup, err := nf.start(h, shm)
					if err != nil {
						return nil, err
					}
					defer cleanup()
					where += " and " + clientURL
					if rerender {
						emitters = append(emitters, publisher(h, pub))
					} else {
						rp = newRepublisher(args[0], h, pub, rec)
						defer rp.close()
						p.reopen = true
					}
				}
				var foxRp *foxReplay
				if ff.addr != "" {
					// Stamps: re-rendered frames carry the position; recorded
					// ones their log time, which /tf then follows.
					clock := func() time.Duration { return p.pos }
					if !rerender {
						clock = func() time.Duration { return time.Duration(p.start) + p.pos }
					}
					fox, cleanup, err := ff.startHost(h, "simvis play", clock, ipc.NewWarnings(warnings, "simvis play").Warn)
					if err != nil {
						return nil, err
					}
					defer cleanup()
					where += " and " + fox.srv.URL()
					if rerender {
						emitters = append(emitters, fox.emit)
					} else {
						foxRp = fox.replay(args[0], rec.Complete, p.step)
						defer foxRp.close()
					}
				}
				var hs *hostSensors
				if rerender {
					if out != "" {
						if err := os.MkdirAll(out, 0o755); err != nil {
							return nil, err
						}
						emitters = append(emitters, fileWriter(out))
					}
					if recOut != nil {
						emitters = append(emitters, recOut.emit)
					}
					hs = &hostSensors{clock: newSensorClock(), fails: newSensorFailures(h.Warn), seen: map[string]bool{},
						hostRate: rec.Meta.Rate, emit: joinEmit(emitters...), warn: h.Warn}
					defer hs.close()
					if len(h.Scene.Sensors()) > 0 {
						if hs.r, err = sensors.NewRenderer(); err != nil {
							return nil, err
						}
					}
				}
				render := func(int, time.Duration) error {
					if p.jump != nil {
						scancel() // the host of another recorded scene takes over
						return nil
					}
					if p.done {
						if !loop {
							stop() // the end of the recording ends the host
						}
						return nil
					}
					if rp != nil && p.moved {
						if p.reopen {
							// Started, or seeked: republish from the position on.
							p.reopen = false
							if err := rp.seek(p.start + int64(p.pos)); err != nil {
								return fmt.Errorf("%s: %w", args[0], err)
							}
						}
						rp.upTo(p.start + int64(p.pos))
					}
					if foxRp != nil && p.moved {
						if err := foxRp.upTo(p.start + int64(p.pos)); err != nil {
							h.Warn("foxglove-replay", "%v", err)
						}
					}
					if hs == nil || !p.moved {
						return nil
					}
					t := p.pos.Seconds()
					if err := recOut.cycle(h.Scene, t); err != nil {
						return err
					}
					hs.cycle(h.Scene, t)
					return nil
				}
				fmt.Fprintf(w, "playing %s as %s: %d elements, %d sensors, %.3f s at %g x, %g Hz\n",
					args[0], where, len(h.Scene.Elements()), len(h.Scene.Sensors()), p.end.Seconds(), rate, rec.Meta.Rate)
				if p.jump == nil {
					err = h.Run(sctx, 0, render)
				}
				cycles += h.Region.Cycles()
				if hs != nil {
					p.files = hs.files
				}
				return p, err
			}
			files := 0
			for {
				p, err := runScene(pos)
				if p != nil {
					files += p.files
				}
				if err != nil || p.jump == nil || ctx.Err() != nil {
					if p != nil {
						fmt.Fprintf(w, "played to %.3f s: %d cycles, %d of %d changes, %d values messages, %d files written\n",
							p.pos.Seconds(), cycles, p.changes, len(rec.Changes), p.values, files)
					}
					return errors.Join(err, recOut.close(w))
				}
				// The next host starts as this one left off.
				pos, paused, step, steps, jumped = *p.jump, p.paused, p.step, p.steps, true
				fmt.Fprintf(w, "play: at %.3f s the recorded scene was replaced: restarting the host with the new scene\n", pos.Seconds())
			}
		},
	})
}

// writePlayAttachments writes the recording's attachments into dir.
func writePlayAttachments(dir string, rec *record.Recording) error {
	for _, a := range rec.Attachments {
		if !filepath.IsLocal(filepath.FromSlash(a.Name)) || path.Base(a.Name) == playScene {
			return fmt.Errorf("attachment %q: not a relative path inside the recording", a.Name)
		}
		p := filepath.Join(dir, filepath.FromSlash(a.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(p, a.Data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// writePlayScene writes a recorded scene's first commands (those logged
// at the time of the first one: the scene file, or the replica a mirror
// rebuilt) as a scene file in dir (which holds the attachments), in their
// directory (Change.Dir: "." or, where the scene's models lie outside its
// folder, the scene's folder below the recording's base), and returns its
// path.
//
// The commands are the recording's, as hostile as a request: they follow
// the request rule (docs/trust.md), with everything they pull in. Before
// the host loads the scene file, each runs confined to dir, as a request
// runs (scene.Command.Confined: no absolute path, no .. or symbolic link
// leading out, models' buffer and image URIs and embedded commands
// likewise, only regular files), into a scene of its own that is then
// dropped: a command that names anything outside dir is refused, naming
// the command, before any file outside is opened. The host then loads the
// same files from dir, which play alone writes.
func writePlayScene(dir string, changes []record.Timed[record.Change], lim scene.Limits) (string, error) {
	var b strings.Builder
	b.WriteString("<scene>\n")
	check := scene.New(scene.Options{Limits: lim, NoDefaultLights: true})
	sceneDir := changes[0].Msg.Dir
	cdir := filepath.Join(dir, filepath.FromSlash(sceneDir))
	if !filepath.IsLocal(filepath.FromSlash(sceneDir)) && sceneDir != "." {
		return "", fmt.Errorf("recorded change %d (%s): dir %q is not inside the recording", changes[0].Msg.Seq, changes[0].Msg.Source, sceneDir)
	}
	for _, c := range changes {
		if c.Time != changes[0].Time {
			break
		}
		if c.Msg.Dir != sceneDir {
			return "", fmt.Errorf("recorded change %d (%s) resolves files in %s: play rebuilds scenes whose commands all resolve in the scene's directory %s", c.Msg.Seq, c.Msg.Source, c.Msg.Dir, sceneDir)
		}
		cmd, err := scene.ParseCommand(c.Msg.XML, fmt.Sprintf("recorded change %d (%s)", c.Msg.Seq, c.Msg.Source), cdir)
		if err != nil {
			return "", err // one command each, as recorded, or the file was altered
		}
		cmd.Confined, cmd.Root = true, dir
		if err := check.Exec(cmd); err != nil {
			return "", err // it names the recorded change, its attribute and why
		}
		// The text was one command when recorded; the scene parser checks it
		// again and names this file and line on error.
		b.WriteString(c.Msg.XML + "\n")
	}
	b.WriteString("</scene>\n")
	if err := os.MkdirAll(cdir, 0o700); err != nil {
		return "", err
	}
	file := filepath.Join(cdir, playScene)
	return file, os.WriteFile(file, []byte(b.String()), 0o600)
}

// printable returns s, quoted where it holds anything but printable
// characters: a recording's names are the file's, and control sequences
// would reach the user's terminal.
func printable(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

func init() {
	var asJSON bool
	var rdf readFlags
	commands = append(commands, &command{
		name: "info", args: "FILE.mcap [--json] [recording bounds]",
		short: "describe a recording: topics, message counts, duration",
		summary: "Read a recording (any MCAP file; a file cut short is read up to its last whole\n" +
			"chunk) and print its profile, duration, each topic with its schema, message count\n" +
			"and rate, the attachments and simvis's metadata.",
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&asJSON, "json", false, "print JSON instead of text")
			rdf.register(fs)
		},
		run: func(fs *flag.FlagSet, args []string, w io.Writer) error {
			if len(args) != 1 {
				return usagef("want one FILE.mcap")
			}
			ropts, err := rdf.options()
			if err != nil {
				return err
			}
			// Counted from the summary and message indexes, or read as a
			// stream: no message or attachment data is held.
			rec, err := record.Info(args[0], ropts)
			if err != nil {
				return err
			}
			type topic struct {
				Topic    string  `json:"topic"`
				Schema   string  `json:"schema"`
				Encoding string  `json:"encoding"`
				Messages int     `json:"messages"`
				Hz       float64 `json:"hz"`
			}
			type attachment struct {
				Name  string `json:"name"`
				Bytes int    `json:"bytes"`
			}
			info := struct {
				File        string       `json:"file"`
				Profile     string       `json:"profile"`
				Complete    bool         `json:"complete"`
				Truncation  string       `json:"truncation,omitempty"`
				Start       float64      `json:"start"`
				Duration    float64      `json:"duration"`
				Messages    int          `json:"messages"`
				Changes     int          `json:"changes"`
				Topics      []topic      `json:"topics"`
				Attachments []attachment `json:"attachments"`
				Meta        *record.Meta `json:"simvis,omitempty"`
			}{File: args[0], Profile: rec.Profile, Complete: rec.Complete, Truncation: rec.Truncation,
				Start: float64(rec.Start) / 1e9, Duration: float64(rec.End-rec.Start) / 1e9, Messages: rec.Messages, Changes: rec.ChangeMessages}
			if rec.HasMeta {
				info.Meta = &rec.Meta
			}
			for _, t := range rec.Topics {
				hz := 0.0
				if t.Messages > 1 && t.Last > t.First {
					hz = float64(t.Messages-1) / (float64(t.Last-t.First) / 1e9)
				}
				info.Topics = append(info.Topics, topic{t.Topic, t.Schema, t.Encoding, t.Messages, hz})
			}
			for _, a := range rec.Attachments {
				info.Attachments = append(info.Attachments, attachment{a.Name, int(a.Size)})
			}
			sort.Slice(info.Attachments, func(i, j int) bool { return info.Attachments[i].Name < info.Attachments[j].Name })
			if asJSON {
				data, err := json.MarshalIndent(info, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(w, "%s\n", data)
				return err
			}
			state := "complete (summary and index)"
			if !rec.Complete {
				state = "incomplete: " + rec.Truncation
			}
			fmt.Fprintf(w, "%s: profile %q, %s\n", args[0], rec.Profile, state)
			fmt.Fprintf(w, "start %.9f s, duration %.3f s, %d messages, %d change-log commands\n", info.Start, info.Duration, rec.Messages, rec.ChangeMessages)
			if info.Meta != nil {
				fmt.Fprintf(w, "simvis: scene %s, %g Hz, epoch %d ns, realtime %v\n", printable(info.Meta.Scene), info.Meta.Rate, info.Meta.EpochNs, info.Meta.Realtime)
			}
			for _, t := range info.Topics {
				fmt.Fprintf(w, "  %-32s %-34s %-4s %7d msgs %8.2f Hz\n", printable(t.Topic), printable(t.Schema), printable(t.Encoding), t.Messages, t.Hz)
			}
			for _, a := range info.Attachments {
				fmt.Fprintf(w, "  attachment %s (%d bytes)\n", printable(a.Name), a.Bytes)
			}
			return nil
		},
	})
}

// republisher publishes a recording's sensor messages to the play host's
// NATS clients as a live host publishes frames (ipc/natsipc/NATS.md), each
// when the playback position reaches its log time. Images, depth images,
// scans, PSD readings, clouds and segmentation frames (instance and class
// images with the labels recorded last at or before them) are republished.
type republisher struct {
	file    string
	h       *ipc.Host
	pub     *natsipc.Publisher
	rec     *record.Recording
	meta    record.Meta
	cur     *record.Cursor
	routes  map[string]*scene.SensorEntry
	sensors int // sensors the routes know
	frames  map[string]int
	// A segmentation frame is two messages (instance and class image) at
	// one log time: the one seen first waits here for the other.
	pending map[string]*segHalf
}

// segHalf is a segmentation frame's image seen first.
type segHalf struct {
	time  int64
	class bool // the class image, not the instance image
	msg   *ros2.Image
}

func newRepublisher(file string, h *ipc.Host, pub *natsipc.Publisher, rec *record.Recording) *republisher {
	return &republisher{file: file, h: h, pub: pub, rec: rec, meta: rec.Meta, cur: record.NewCursor(file, rec.Complete),
		frames: map[string]int{}, pending: map[string]*segHalf{}}
}

// seek restarts at log time from (ns).
func (rp *republisher) seek(from int64) error {
	clear(rp.pending)
	return rp.cur.SeekTo(from)
}

func (rp *republisher) close() { rp.cur.Close() }

// route maps the topics of the scene's sensors (recorded commands may
// add sensors) to them.
func (rp *republisher) route() {
	list := rp.h.Scene.Sensors()
	if rp.routes != nil && len(list) == rp.sensors {
		return
	}
	rp.routes, rp.sensors = map[string]*scene.SensorEntry{}, len(list)
	for _, se := range list {
		suffix := map[string]string{"laser": ros2.SuffixScan, "psd": ros2.SuffixRange, "laser3d": ros2.SuffixPoints,
			"camera": ros2.SuffixImage, "depth": ros2.SuffixDepthImage, "segmentation": ros2.SuffixInstanceImage}[se.Type]
		if suffix != "" {
			rp.routes[ros2.SensorTopic(se.Name)+suffix] = se
		}
		if se.Type == "segmentation" {
			rp.routes[ros2.SensorTopic(se.Name)+ros2.SuffixClassImage] = se
		}
	}
}

// upTo publishes the messages logged at or before limit (ns).
func (rp *republisher) upTo(limit int64) {
	rp.route()
	err := rp.cur.Until(limit, func(_ *mcap.Schema, ch *mcap.Channel, m *mcap.Message) {
		if se := rp.routes[ch.Topic]; se != nil {
			publish := rp.publish
			if se.Type == "segmentation" {
				publish = func(se *scene.SensorEntry, m *mcap.Message) error {
					return rp.segmentation(se, strings.HasSuffix(ch.Topic, ros2.SuffixClassImage), m)
				}
			}
			if err := publish(se, m); err != nil {
				rp.h.Warn("republish "+se.Name, "%s message %d: %v", ch.Topic, m.Sequence, err)
			}
		}
	})
	if err != nil {
		rp.h.Warn("republish", "reading %s: %v", rp.file, err)
	}
}

// publish turns one recorded message into the frame a live host publishes:
// info JSON and binary data as sensors.Frame.Encode lays them out, the
// sensor's pose from the rebuilt scene (at the recorded values).
func (rp *republisher) publish(se *scene.SensorEntry, m *mcap.Message) error {
	t := float64(int64(m.LogTime)-rp.meta.EpochNs) / 1e9
	st := &sensors.Stamp{Frame: rp.frames[se.Name], Time: t}
	rp.frames[se.Name]++
	world, err := rp.h.Scene.Transform(se.Name, scene.WorldFrame)
	if err != nil {
		return err
	}
	pose := scene.PoseFromMatrix(world)
	var kind string
	var info, data []byte
	switch se.Type {
	case "laser":
		msg, err := ros2.DecodeLaserScan(m.Data)
		if err != nil {
			return err
		}
		sc := &sensors.Scan{Sensor: se.Name, Stamp: st, AngleMin: float64(msg.AngleMin), AngleMax: float64(msg.AngleMax),
			AngleIncrement: float64(msg.AngleIncrement), RangeMin: float64(msg.RangeMin), RangeMax: float64(msg.RangeMax),
			Ranges: make([]float64, len(msg.Ranges)), Pose: pose}
		for i, r := range msg.Ranges {
			sc.Ranges[i] = float64(r)
		}
		kind = "scan"
		info, err = json.Marshal(sc)
		if err != nil {
			return err
		}
	case "psd":
		msg, err := ros2.DecodeRange(m.Data)
		if err != nil {
			return err
		}
		kind = "psd"
		if info, err = json.Marshal(&sensors.Reading{Sensor: se.Name, Stamp: st, Range: float64(msg.Range),
			RangeMin: float64(msg.MinRange), RangeMax: float64(msg.MaxRange), Pose: pose}); err != nil {
			return err
		}
	case "camera", "depth":
		msg, err := ros2.DecodeImage(m.Data)
		if err != nil {
			return err
		}
		in, ok := se.Sensor.(interface{ Intrinsics() sensors.Intrinsics })
		if !ok {
			return fmt.Errorf("sensor %q has no intrinsics", se.Name)
		}
		fi := sensors.FrameInfo{Sensor: se.Name, Stamp: st, Intrinsics: in.Intrinsics(), Pose: pose}
		if int(msg.Width) != fi.Intrinsics.Width || int(msg.Height) != fi.Intrinsics.Height {
			return fmt.Errorf("recorded image %dx%d, the sensor's is %dx%d", msg.Width, msg.Height, fi.Intrinsics.Width, fi.Intrinsics.Height)
		}
		// Clients read the data as a live host lays it out: rows packed,
		// rgb8 or little-endian 32FC1.
		enc, size := "rgb8", uint32(3)
		if se.Type == "depth" {
			enc, size = "32FC1", 4
		}
		if msg.Encoding != enc || msg.Step != size*msg.Width || msg.IsBigendian != 0 {
			return fmt.Errorf("recorded image encoding %q, step %d, big-endian %d: want %s, step %d, little-endian", msg.Encoding, msg.Step, msg.IsBigendian, enc, size*msg.Width)
		}
		kind, data = "image", msg.Data
		if se.Type == "depth" {
			kind = "depth"
		}
		if info, err = json.Marshal(fi); err != nil {
			return err
		}
	case "laser3d":
		msg, err := ros2.DecodePointCloud2(m.Data)
		if err != nil {
			return err
		}
		xyz := len(msg.Fields) >= 3 && !msg.IsBigendian
		for i, name := range []string{"x", "y", "z"} {
			xyz = xyz && msg.Fields[i].Name == name && msg.Fields[i].Offset == uint32(4*i) && msg.Fields[i].Datatype == ros2.Float32 && msg.Fields[i].Count == 1
		}
		if !xyz || msg.PointStep < 12 {
			return fmt.Errorf("point step %d, fields %v: want x y z float32 first, little-endian", msg.PointStep, msg.Fields)
		}
		n := int(msg.Width) * int(msg.Height)
		data = make([]byte, 0, 12*n)
		for y := 0; y < int(msg.Height) && n > 0; y++ {
			row := msg.Data[y*int(msg.RowStep):]
			for x := 0; x < int(msg.Width); x++ {
				data = append(data, row[x*int(msg.PointStep):x*int(msg.PointStep)+12]...)
			}
		}
		kind = "cloud"
		if info, err = json.Marshal(map[string]any{"sensor": se.Name, "stamp": st, "width": msg.Width, "height": msg.Height,
			"pose": pose}); err != nil {
			return err
		}
	default:
		return nil
	}
	return rp.pub.PublishSensor(se.Name, kind, info, data)
}

// segmentation republishes a segmentation frame when both its images (the
// class image if class, else the instance image) have been read: info and
// data as sensors.SegmentationImage.Encode lays them out, the labels those
// recorded last at or before the frame, each instance's pixels counted in
// the instance image as the live sensor counts them.
func (rp *republisher) segmentation(se *scene.SensorEntry, class bool, m *mcap.Message) error {
	in, ok := se.Sensor.(interface{ Intrinsics() sensors.Intrinsics })
	if !ok {
		return fmt.Errorf("sensor %q has no intrinsics", se.Name)
	}
	intr := in.Intrinsics()
	msg, err := ros2.DecodeImage(m.Data)
	if err != nil {
		return err
	}
	if int(msg.Width) != intr.Width || int(msg.Height) != intr.Height || msg.Encoding != "mono16" || msg.Step != 2*msg.Width || msg.IsBigendian != 0 {
		return fmt.Errorf("recorded id image %dx%d, encoding %q, step %d, big-endian %d: want %dx%d mono16, step %d, little-endian",
			msg.Width, msg.Height, msg.Encoding, msg.Step, msg.IsBigendian, intr.Width, intr.Height, 2*intr.Width)
	}
	t := int64(m.LogTime)
	half := rp.pending[se.Name]
	if half == nil || half.time != t || half.class == class {
		if half != nil {
			rp.h.Warn("republish "+se.Name, "a segmentation image at %.3f s without its pair; not republished", float64(half.time-rp.meta.EpochNs)/1e9)
		}
		rp.pending[se.Name] = &segHalf{time: t, class: class, msg: msg}
		return nil
	}
	delete(rp.pending, se.Name)
	instImg, classImg := half.msg, msg
	if half.class {
		instImg, classImg = msg, half.msg
	}
	topic := ros2.SensorTopic(se.Name) + record.SuffixLabels
	labels, ok := rp.rec.LabelsAt(topic, t)
	if !ok {
		return fmt.Errorf("no %s recorded at or before the frame at %.3f s", topic, float64(t-rp.meta.EpochNs)/1e9)
	}
	n := intr.Width * intr.Height
	im := &sensors.SegmentationImage{Instance: make([]uint16, n), Class: make([]uint16, n),
		Labels: sensors.Labels{Sensor: se.Name, Instances: map[string]sensors.Label{}, Classes: labels.Classes}}
	count := map[uint16]int{}
	for i := range n {
		im.Instance[i] = binary.LittleEndian.Uint16(instImg.Data[2*i:])
		im.Class[i] = binary.LittleEndian.Uint16(classImg.Data[2*i:])
		count[im.Instance[i]]++
	}
	for id, l := range labels.Instances {
		k, _ := strconv.Atoi(id) // checked by record.Read
		im.Labels.Instances[id] = sensors.Label{Name: l.Name, Class: l.Class, ClassID: l.ClassID, Pixels: count[uint16(k)]}
		delete(count, uint16(k))
	}
	delete(count, 0) // background
	for id := range count {
		return fmt.Errorf("the frame at %.3f s shows instance %d, which its labels do not name", float64(t-rp.meta.EpochNs)/1e9, id)
	}
	st := &sensors.Stamp{Frame: rp.frames[se.Name], Time: float64(t-rp.meta.EpochNs) / 1e9}
	rp.frames[se.Name]++
	world, err := rp.h.Scene.Transform(se.Name, scene.WorldFrame)
	if err != nil {
		return err
	}
	im.Info = sensors.FrameInfo{Sensor: se.Name, Stamp: st, Intrinsics: intr, Pose: scene.PoseFromMatrix(world)}
	d := se.Sensor.Describe()
	im.Info.Near, _ = d["near"].(float64)
	im.Info.Far, _ = d["far"].(float64)
	im.Labels.Stamp = st
	info, data, err := im.Encode()
	if err != nil {
		return err
	}
	return rp.pub.PublishSensor(se.Name, "segmentation", info, data)
}
