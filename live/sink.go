package live

import (
	"errors"
	"fmt"
	"os"

	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// Sink takes the sensor frames a loop renders. It runs on the loop's
// goroutine: a sink that may block (a network) queues or drops instead.
type Sink interface {
	// Frame hands on one frame of sensor se, stamped st (its frame
	// number and scene time). An error counts as the frame's failure and
	// is reported; the loop goes on.
	Frame(se *scene.SensorEntry, f *sensors.Frame, st *sensors.Stamp) error
}

// CycleSink is a sink that also takes the scene itself once a cycle,
// before that cycle's frames: its transforms, values and change log (a
// recording, Foxglove). t is the cycle's scene time in seconds.
type CycleSink interface {
	Sink
	Cycle(s *scene.Scene, t float64) error
}

// SinkFunc is a function used as a Sink.
type SinkFunc func(se *scene.SensorEntry, f *sensors.Frame, st *sensors.Stamp) error

// Frame calls fn.
func (fn SinkFunc) Frame(se *scene.SensorEntry, f *sensors.Frame, st *sensors.Stamp) error {
	return fn(se, f, st)
}

// OptionError is an option out of its range, or options that exclude
// each other: the caller's mistake, which the commands report with their
// usage line.
type OptionError struct{ Msg string }

func (e *OptionError) Error() string { return e.Msg }

func optionf(format string, args ...any) error { return &OptionError{fmt.Sprintf(format, args...)} }

// Files writes frames into a directory as capture names them
// (sensors.OutputBase): NAME_0000.png ..., or with Latest each sensor's
// newest frame as NAME.png.
type Files struct {
	Dir    string
	Latest bool
	// Written counts the files written.
	Written int
}

// NewFiles makes the directory and returns its sink.
func NewFiles(dir string, latest bool) (*Files, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &Files{Dir: dir, Latest: latest}, nil
}

// Frame writes the frame's files; a frame counts when all of them are
// written.
func (fw *Files) Frame(se *scene.SensorEntry, f *sensors.Frame, st *sensors.Stamp) error {
	if fw.Latest {
		st = nil
	}
	paths, err := f.WriteFiles(sensors.OutputBase(fw.Dir, se.Name, st))
	if err != nil {
		return err
	}
	fw.Written += len(paths)
	return nil
}

// Selective is a sink that takes the frames of some sensors only (the web
// viewer's: the returns its overlays draw, the pictures pages asked for).
// A loop whose sinks are all selective renders only the sensors one of
// them wants now.
type Selective interface {
	Wants(s *scene.Scene, sensor string) bool
}

// wanted is the sensors the sink wants, if it is selective: a Selective
// or a list of them.
func wanted(k Sink, s *scene.Scene) (map[string]bool, bool) {
	list, ok := k.(sinks)
	if !ok {
		list = sinks{k}
	}
	out := map[string]bool{}
	for _, se := range s.Sensors() {
		for _, k := range list {
			sel, ok := k.(Selective)
			if !ok {
				return nil, false
			}
			if sel.Wants(s, se.Name) {
				out[se.Name] = true
			}
		}
	}
	return out, true
}

// sinks hands each frame and cycle to every sink of a list.
type sinks []Sink

func (l sinks) Frame(se *scene.SensorEntry, f *sensors.Frame, st *sensors.Stamp) error {
	var errs []error
	for _, s := range l {
		errs = append(errs, s.Frame(se, f, st))
	}
	return errors.Join(errs...)
}

// Cycle gives the scene to the sinks that take it; the first failure
// stops the cycle (a recording that failed is abandoned).
func (l sinks) Cycle(s *scene.Scene, t float64) error {
	for _, k := range l {
		if c, ok := k.(CycleSink); ok {
			if err := c.Cycle(s, t); err != nil {
				return err
			}
		}
	}
	return nil
}
