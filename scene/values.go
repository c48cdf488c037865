package scene

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// RejectedError reports parameter values Update refused and put back to the
// element's last accepted values.
type RejectedError struct {
	Element string
	Values  int // how many of the element's values had changed
	Err     error
}

func (e *RejectedError) Error() string { return fmt.Sprintf("element %q: %v", e.Element, e.Err) }

func (e *RejectedError) Unwrap() error { return e.Err }

// Values returns the parameter table: every element's run of values, in
// element order (ElementEntry.Start), float64. Its backing array has a fixed
// capacity and never moves, so it may be shared as is; adding elements only
// extends it. Values written here directly (not through Set) take effect at
// the next Update, which also rejects non-finite ones.
func (s *Scene) Values() []float64 { return s.values }

// Value returns the current value of element.param.
func (s *Scene) Value(element, param string) (float64, error) {
	e, i, err := s.param(element, param)
	if err != nil {
		return 0, err
	}
	return s.values[e.Start+i], nil
}

func (s *Scene) param(element, param string) (*ElementEntry, int, error) {
	e, ok := s.byName[element]
	if !ok {
		return nil, 0, fmt.Errorf("no element %q", element)
	}
	names := make([]string, len(e.Params))
	for i, p := range e.Params {
		if p.Name == param {
			return e, i, nil
		}
		names[i] = p.Name
	}
	return nil, 0, fmt.Errorf("element %q (%s) has no parameter %q (has %s)", element, e.Type, param, strings.Join(names, ", "))
}

// Set changes element.param; the change reaches the scene graph at the next
// Update (renderers call it before drawing).
func (s *Scene) Set(element, param string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%s.%s: value %v is not finite", element, param, v)
	}
	e, i, err := s.param(element, param)
	if err != nil {
		return err
	}
	s.values[e.Start+i] = v
	return nil
}

// Update propagates changed parameter values into the scene graph: every
// element whose run of the table differs from what it last accepted gets
// Apply. Values may have been written straight into the table (Values, the
// shared-array interface), so changes are found by comparison, not by
// bookkeeping in Set. Rejected values (non-finite, refused by the element,
// or moving a world transform out of range: see Scene.Exec) are reported
// (as *RejectedError, or to Options.OnRejected) and reset in the table to
// the element's last accepted values, so the table always shows the
// scene's state. Only the subtrees below the nodes an element moved are
// checked.
func (s *Scene) Update() error {
	if s.execs == 0 {
		s.settle()
	}
	var errs []error
	for _, e := range s.elements {
		run := s.values[e.Start : e.Start+len(e.Params)]
		last := s.applied[e.Start : e.Start+len(e.Params)]
		if slices.Equal(run, last) {
			continue
		}
		err := finiteValues(e, run)
		if err == nil {
			// Whatever Apply changes (transforms, switches, colors, or
			// what the element draws), the scene is taken as changed.
			s.touch()
			start := len(s.moved)
			err = e.Element.Apply(run)
			if err == nil {
				if bad := s.check(s.moved[start:]); bad != nil {
					err = outOfRangeValues(e, run, last, bad)
				}
			}
			// Refused values that moved nodes (out of range, or an
			// element that moved nodes before failing, against Element's
			// contract) are taken back with the last accepted ones, and
			// the worlds below recomputed: the graph must match the table,
			// and later checks compose from the kept worlds.
			if err != nil && len(s.moved) > start {
				if aerr := e.Element.Apply(last); aerr != nil {
					err = errors.Join(err, fmt.Errorf("restoring the last accepted values: %w", aerr))
				}
				s.check(s.moved[start:])
			}
			s.moved = s.moved[:start]
		}
		if err != nil {
			changed := 0
			for i := range run {
				if run[i] != last[i] { // NaN differs from everything
					changed++
				}
			}
			rej := &RejectedError{Element: e.Name, Values: changed, Err: err}
			copy(run, last)
			if s.onRejected != nil {
				s.onRejected(rej)
				continue
			}
			errs = append(errs, rej)
			continue
		}
		copy(last, run)
	}
	return errors.Join(errs...)
}

func finiteValues(e *ElementEntry, v []float64) error {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("parameter %s: value %v is not finite", e.Params[i].Name, x)
		}
	}
	return nil
}
