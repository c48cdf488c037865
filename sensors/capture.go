package sensors

import (
	"fmt"
	"os"

	"github.com/simvis/simvis/scene"
)

// Capturer is a sensor that can write its output files.
type Capturer interface {
	// Capture renders the sensor's data and writes it into dir, returning
	// the paths written.
	Capture(r *Renderer, s *scene.Scene, dir string) ([]string, error)
}

// CaptureAll writes every sensor's output into dir, creating it if needed.
func CaptureAll(r *Renderer, s *scene.Scene, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	for _, se := range s.Sensors() {
		c, ok := se.Sensor.(Capturer)
		if !ok {
			return written, fmt.Errorf("sensor %q (%s) cannot be captured", se.Name, se.Type)
		}
		paths, err := c.Capture(r, s, dir)
		written = append(written, paths...)
		if err != nil {
			return written, fmt.Errorf("sensor %q: %w", se.Name, err)
		}
	}
	return written, nil
}
