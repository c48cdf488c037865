package live

import (
	"errors"
	"fmt"
	"strings"

	"github.com/simvis/simvis/scene"
)

// Sweep moves a parameter linearly over a sequence of frames: From at the
// first, To at the last (capture --sweep ELEMENT.PARAM=FROM:TO).
type Sweep struct {
	Element, Param string
	From, To       float64
}

// At is the sweep's value at frame i of n (numbered from 0): FROM at the
// first, TO at the last.
func (x Sweep) At(i, n int) float64 {
	if n <= 1 {
		return x.From
	}
	return x.From + (x.To-x.From)*float64(i)/float64(n-1)
}

// CheckSweeps applies every frame's sweep values to s without rendering, so
// that a value an element refuses (beyond a joint's limits) fails the
// command before any frame is written, naming the frame as the files and
// progress lines number it. s keeps its values.
func CheckSweeps(s *scene.Scene, sw []Sweep, frames int) error {
	if len(sw) == 0 {
		return nil
	}
	orig := make([]float64, len(sw))
	for k, x := range sw {
		v, err := s.Value(x.Element, x.Param)
		if err != nil {
			return fmt.Errorf("--sweep %s.%s: %w", x.Element, x.Param, err)
		}
		orig[k] = v
	}
	restore := func() error {
		for k, x := range sw {
			if err := s.Set(x.Element, x.Param, orig[k]); err != nil {
				return err
			}
		}
		return s.Update()
	}
	for i := 0; i < frames; i++ {
		for _, x := range sw {
			if err := s.Set(x.Element, x.Param, x.At(i, frames)); err != nil {
				return fmt.Errorf("--sweep %s.%s=%g:%g: frame %d: %w", x.Element, x.Param, x.From, x.To, i, err)
			}
		}
		if err := s.Update(); err != nil {
			var names []string
			for _, x := range sw {
				names = append(names, fmt.Sprintf("%s.%s=%g", x.Element, x.Param, x.At(i, frames)))
			}
			err = fmt.Errorf("--sweep: frame %d (%s) of %d is refused, nothing written: %w", i, strings.Join(names, " "), frames, err)
			if rerr := restore(); rerr != nil {
				return errors.Join(err, rerr)
			}
			return err
		}
	}
	return restore()
}
