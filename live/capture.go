package live

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// CaptureOptions configure a headless capture of a scene's sensors
// (Capture).
type CaptureOptions struct {
	Scene     *scene.Scene
	SceneFile string // the scene's file, for the recording's metadata
	Out       string // write every sensor's output into this directory
	// Frames writes a sequence of this many frames, NAME_0000.png ...,
	// stamped frame / Rate; 0 captures once, without numbers.
	Frames int
	Rate   float64
	// Sweeps move parameters over the sequence; every frame's values are
	// checked before the first frame renders.
	Sweeps []Sweep
	Record RecordOptions
	// PackagePath is where the scene's URDF parts found their package://
	// files (the scene.Options.PackagePath it was loaded with), for the
	// recording to attach them.
	PackagePath []string
	Sinks       []Sink    // the caller's own, given every sensor frame
	Warnings    io.Writer // warnings (default standard error)
}

// Capture renders every sensor of the scene once, or Frames times, into
// Out, the recording and the sinks; it prints the files written (once) or
// a line a frame on w. A sensor that fails is reported and the others are
// still written, in every frame; the run fails at the end.
func Capture(o CaptureOptions, w io.Writer) error {
	if o.Warnings == nil {
		o.Warnings = os.Stderr
	}
	if o.Rate == 0 {
		o.Rate = 10
	}
	s := o.Scene
	if len(s.Sensors()) == 0 {
		return fmt.Errorf("%s has no sensors to capture", o.SceneFile)
	}
	if err := CheckSweeps(s, o.Sweeps, o.Frames); err != nil {
		return err
	}
	r, err := sensors.NewRenderer()
	if err != nil {
		return err
	}
	defer r.Close()
	var files *Files
	if o.Out != "" {
		if files, err = NewFiles(o.Out, false); err != nil {
			return err
		}
	}
	o.Record.PackagePath = o.PackagePath
	rec, err := OpenRecorder(o.Record, o.SceneFile, o.Rate)
	if err != nil {
		return err
	}
	defer rec.Close(w)
	fails := NewFailures(ipc.NewWarnings(o.Warnings, "simvis capture").Warn)
	// Files first: a sensor whose files fail is not recorded.
	var written []string
	var out sinks
	if files != nil {
		out = append(out, SinkFunc(func(se *scene.SensorEntry, f *sensors.Frame, st *sensors.Stamp) error {
			paths, err := f.WriteFiles(sensors.OutputBase(o.Out, se.Name, st))
			if err != nil {
				return err // a frame counts when all its files are written
			}
			written = append(written, paths...)
			return nil
		}))
	}
	recorded := 0
	if rec != nil {
		out = append(out, SinkFunc(func(se *scene.SensorEntry, f *sensors.Frame, st *sensors.Stamp) error {
			if err := rec.Frame(se, f, st); err != nil {
				return fmt.Errorf("recording: %w", err)
			}
			recorded++
			return nil
		}))
	}
	out = append(out, o.Sinks...)
	capture := func(st *sensors.Stamp) {
		written, recorded = written[:0], 0
		t := 0.0
		if st != nil {
			t = st.Time
		}
		err := rec.Cycle(s, t)
		if err == nil {
			err = sinks(o.Sinks).Cycle(s, t)
		}
		if err != nil {
			for _, se := range s.Sensors() {
				fails.Fail(se, err)
			}
			return
		}
		list := s.Sensors()
		stamps := make([]*sensors.Stamp, len(list))
		for i := range stamps {
			stamps[i] = st
		}
		frames, errs := sensors.RenderFrames(r, s, list, stamps)
		for i, se := range list {
			if errs[i] != nil {
				fails.Fail(se, errs[i])
				continue
			}
			for _, k := range out {
				if err := k.Frame(se, frames[i], st); err != nil {
					fails.Fail(se, fmt.Errorf("sensor %q: %w", se.Name, err))
					break
				}
			}
		}
	}
	if o.Frames == 0 {
		capture(nil)
		for _, p := range written {
			fmt.Fprintln(w, p)
		}
	} else {
		total := 0
		for i := 0; i < o.Frames; i++ {
			for _, x := range o.Sweeps {
				if err := s.Set(x.Element, x.Param, x.At(i, o.Frames)); err != nil {
					return fmt.Errorf("frame %d: %w", i, err)
				}
			}
			capture(&sensors.Stamp{Frame: i, Time: float64(i) / o.Rate})
			total += len(written)
			// Numbered from 0 like the files (NAME_0000.png) and the
			// errors, with the count beside.
			switch n := len(s.Sensors()); {
			case o.Out != "":
				fmt.Fprintf(w, "frame %d (%d of %d): %d files\n", i, i+1, o.Frames, len(written))
			case recorded == n:
				fmt.Fprintf(w, "frame %d (%d of %d): recorded\n", i, i+1, o.Frames)
			default: // only what was recorded is said to be
				fmt.Fprintf(w, "frame %d (%d of %d): %d of %d sensor frames recorded\n", i, i+1, o.Frames, recorded, n)
			}
		}
		if o.Out != "" {
			fmt.Fprintf(w, "%d files in %s\n", total, o.Out)
		}
	}
	if err := rec.Close(w); err != nil {
		return err
	}
	if fails.Total() > 0 {
		return errors.New(fails.String())
	}
	return nil
}
