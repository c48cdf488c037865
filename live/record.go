package live

import (
	"fmt"
	"io"

	"github.com/simvis/simvis/record"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// RecordOptions describe an MCAP recording of a run (docs/recordings.md).
type RecordOptions struct {
	Path        string // "": no recording
	Compression string // zstd (default) or lz4
	Realtime    bool   // stamp with the wall clock, not scene time
	// PackagePath is where the recorded scene's URDF parts found their
	// package:// files, for attaching them (the run sets it from its own).
	PackagePath []string
}

// Recorder records a run's cycles and frames into an MCAP file: a
// CycleSink. A nil *Recorder records nothing.
type Recorder struct {
	w      *record.Writer
	path   string
	t      float64 // scene time of the cycle being recorded
	frames int
	closed bool
	err    error // the recorder's first failure: the recording is abandoned
}

// OpenRecorder starts the recording of a run of sceneFile at rate cycles
// per second; without a path it returns nil.
func OpenRecorder(o RecordOptions, sceneFile string, rate float64) (*Recorder, error) {
	if o.Path == "" {
		if o.Realtime {
			return nil, optionf("--realtime needs a recording file")
		}
		return nil, nil
	}
	if o.Compression == "" {
		o.Compression = "zstd"
	}
	if o.Compression != "zstd" && o.Compression != "lz4" {
		return nil, optionf("--record-compression %q: want zstd or lz4", o.Compression)
	}
	w, err := record.Create(o.Path, record.Options{Compression: o.Compression,
		Meta: record.Meta{Scene: sceneFile, Rate: rate, Realtime: o.Realtime}, Descriptions: true, PackagePath: o.PackagePath})
	if err != nil {
		return nil, err
	}
	return &Recorder{w: w, path: o.Path}, nil
}

// Cycle records the scene at scene time t: call it before the cycle's
// frames. After a failure the recording is abandoned: every later call
// returns that failure and Close removes the file.
func (r *Recorder) Cycle(s *scene.Scene, t float64) error {
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

// Frame records a frame of the current cycle.
func (r *Recorder) Frame(_ *scene.SensorEntry, f *sensors.Frame, _ *sensors.Stamp) error {
	if r.err != nil {
		return r.err
	}
	if err := r.w.Frame(f, r.t); err != nil {
		r.err = err
		return err
	}
	r.frames++
	return nil
}

// Close ends the recording (summary and index) and reports it on w; a
// recording that failed is removed instead (no half file is left behind)
// and its failure returned. Later calls do nothing.
func (r *Recorder) Close(w io.Writer) error {
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
