package scene

import (
	"fmt"
	"strings"
)

// embeddedError is the failure of a command embedded in a model that a part
// loaded. However deep models nest, the part's own *Error (which wraps this)
// names the outer command in full, err names the innermost failing command
// in full (its file, line and attribute), and between them steps give the
// chain of embedded commands, one short step per level: repeating every
// level's full location made a 16-deep self-including model's error 2,100
// characters of near-identical text.
type embeddedError struct {
	steps []string // outermost first: `embedded command 2 (part "C")`; the last names no command (err does)
	err   error
}

func (e *embeddedError) Error() string {
	var b strings.Builder
	for i := 0; i < len(e.steps); {
		// A model that includes itself repeats one step at every level.
		n := 1
		for i+n < len(e.steps) && e.steps[i+n] == e.steps[i] {
			n++
		}
		if i > 0 {
			b.WriteString(" > ")
		}
		b.WriteString(e.steps[i])
		if n > 1 {
			fmt.Fprintf(&b, ", %d times", n)
		}
		i += n
	}
	b.WriteString(": ")
	b.WriteString(e.err.Error())
	return b.String()
}

func (e *embeddedError) Unwrap() error { return e.err }

// embeddedFailure is the error of part command c whose embedded command i
// (1-based) failed with err. When that command is a part that failed in its
// own embedded commands, its step joins the chain instead of nesting the
// whole error once more.
func embeddedFailure(c *Command, i int, err error) error {
	e := &embeddedError{steps: []string{fmt.Sprintf("embedded command %d", i)}, err: err}
	if ce, ok := err.(*Error); ok {
		if inner, ok := ce.Err.(*embeddedError); ok {
			e.steps = append([]string{fmt.Sprintf("embedded command %d (%s)", i, ce.What)}, inner.steps...)
			e.err = inner.err
		}
	}
	return &Error{File: c.File, Line: c.Line, What: c.what(), Attr: "file", Err: e}
}
