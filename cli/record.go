package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/simvis/simvis/ipc/record"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
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
}

// cycle records the scene at scene time t: call it before the cycle's
// frames.
func (r *recorder) cycle(s *scene.Scene, t float64) error {
	if r == nil {
		return nil
	}
	r.t = t
	return r.w.Cycle(s, t)
}

// emit records a frame of the current cycle.
func (r *recorder) emit(_ *scene.SensorEntry, f *sensors.Frame, _ *sensors.Stamp) (int, error) {
	if err := r.w.Frame(f, r.t); err != nil {
		return 0, err
	}
	r.frames++
	return 0, nil
}

// close ends the recording (summary and index) and reports it on w.
func (r *recorder) close(w io.Writer) error {
	if r == nil || r.closed {
		return nil
	}
	r.closed = true
	if err := r.w.Close(); err != nil {
		return fmt.Errorf("recording %s: %w", r.path, err)
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
func captureRecorded(r *sensors.Renderer, s *scene.Scene, out string, st *sensors.Stamp, rec *recorder, fails *sensorFailures) []string {
	t := 0.0
	if st != nil {
		t = st.Time
	}
	if err := rec.cycle(s, t); err != nil {
		for _, se := range s.Sensors() {
			fails.fail(se, err)
		}
		return nil
	}
	var written []string
	for _, se := range s.Sensors() {
		f, err := sensors.RenderFrame(r, s, se, st)
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
		}
	}
	return written
}
