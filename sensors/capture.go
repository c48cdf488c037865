package sensors

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/simvis/simvis/scene"
)

// Stamp identifies one frame of a captured sequence.
type Stamp struct {
	Frame int     `json:"frame"`
	Time  float64 `json:"time"` // seconds since the sequence's start
}

// Output says where one capture goes: the sensor writes Base plus its own
// extensions (".png", ".scan.json", ...). Stamp, set in sequences, is
// recorded in the sensor's JSON output.
type Output struct {
	Base  string
	Stamp *Stamp
}

// Capturer is a sensor that can write its output files.
type Capturer interface {
	// Capture renders the sensor's data and writes it, returning the paths
	// written.
	Capture(r *Renderer, s *scene.Scene, out Output) ([]string, error)
}

// CaptureAll writes every sensor's output into dir, creating it if
// needed: files named after the sensors (embedded sensors' PART/NAME as
// PART__NAME).
func CaptureAll(r *Renderer, s *scene.Scene, dir string) ([]string, error) {
	return CaptureFrame(r, s, dir, nil)
}

// CaptureFrame is CaptureAll for frame st of a sequence (nil: not one):
// file names get the frame number, NAME_0042.png.
func CaptureFrame(r *Renderer, s *scene.Scene, dir string, st *Stamp) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	for _, se := range s.Sensors() {
		paths, err := CaptureSensor(r, s, se, dir, st)
		written = append(written, paths...)
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// OutputBase is where a sensor's files go in dir: named after the sensor
// (embedded sensors' PART/NAME as PART__NAME), with the frame number in a
// sequence (st not nil), NAME_0042.
func OutputBase(dir, sensor string, st *Stamp) string {
	base := filepath.Join(dir, fileName(sensor))
	if st != nil {
		base = fmt.Sprintf("%s_%04d", base, st.Frame)
	}
	return base
}

// CaptureSensor writes one sensor's output into dir (which must exist),
// named as CaptureFrame names it.
func CaptureSensor(r *Renderer, s *scene.Scene, se *scene.SensorEntry, dir string, st *Stamp) (paths []string, err error) {
	defer recovered(se.Name, &err)
	c, ok := se.Sensor.(Capturer)
	if !ok {
		return nil, fmt.Errorf("sensor %q (%s) cannot be captured", se.Name, se.Type)
	}
	paths, err = c.Capture(r, s, Output{Base: OutputBase(dir, se.Name, st), Stamp: st})
	if err != nil {
		return paths, fmt.Errorf("sensor %q: %w", se.Name, err)
	}
	return paths, nil
}

// writeAtomic writes a file through a temporary file in the same directory
// renamed over path, so that a reader (a viewer polling the latest frame of
// simvis serve --latest) never sees a half-written file. The temporary
// file is created exclusively under an unpredictable name (os.CreateTemp:
// O_EXCL, which never follows a link) and changed only through its open
// descriptor; the rename replaces whatever is at path, a symbolic link
// included, and never writes through it.
func writeAtomic(path string, write func(w io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	err = write(f)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
