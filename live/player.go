package live

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/record"
	"github.com/simvis/simvis/scene"
)

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

// PlayControls are play's controls, one a line on standard input (docs/recordings.md).
const PlayControls = "pause | resume | step [N] | seek T | rate X | status"

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
		fmt.Fprintf(p.out, "play: unknown control %q (%s)\n", line, PlayControls)
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
func writePlayScene(dir string, changes []record.Timed[record.Change], lim scene.Limits, packages []string) (string, error) {
	var b strings.Builder
	b.WriteString("<scene>\n")
	check := scene.New(scene.Options{Limits: lim, NoDefaultLights: true, PackagePath: packages})
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
