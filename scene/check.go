package scene

import (
	"fmt"

	"github.com/go-gl/mathgl/mgl64"
	"math"
	"strconv"
	"strings"
)

// World transforms are composed from finite inputs, yet can overflow: two
// offsets of 1.7e308 add up to infinity, and a scale multiplies everything
// below it. Every node therefore keeps its world transform as of the last
// check, and every change to the graph (a node inserted, a transform
// inserted above others, SetLocal) is recorded in Scene.moved. A check
// recomputes the subtrees below the recorded nodes only, from their
// parents' kept transforms, so the cost is what changed rather than the
// depth of the scene or its size.

var ident = mgl64.Ident4()

// check recomputes the world transforms below roots and returns a node
// whose local or world transform is out of range (nil if none). Roots may
// be given in any order, nested, or repeated: a node already recomputed in
// this check has its final value (its parent's can change only by a later
// walk of the parent, which walks it again), so it is skipped as a root,
// and a node found out of range counts only if its final value is.
func (s *Scene) check(roots []*Node) *Node {
	if len(roots) == 0 {
		return nil
	}
	s.checks++
	id := s.checks
	var bad []*Node
	stack := s.stack[:0]
	for _, r := range roots {
		if r.visit == id {
			continue
		}
		stack = append(stack, r)
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if n != r && n.local == ident {
				// Most nodes (insertion points, models, properties) do
				// not move: the parent's world, checked in this walk,
				// is theirs, and costs neither a product nor a check.
				n.world = n.parent.world
			} else {
				if n.parent == nil {
					n.world = n.local
				} else {
					n.world = n.parent.world.Mul4(n.local)
				}
				// A local transform needs a look only when it is new or
				// was set (then n is a root): others were checked before.
				if !inRange(&n.world) || (n == r || n.visit == 0) && !inRange(&n.local) {
					bad = append(bad, n)
				}
			}
			n.visit = id
			// Pushed in reverse so that nodes are visited in traversal
			// order and the first bad node is the outermost one.
			for i := len(n.children) - 1; i >= 0; i-- {
				stack = append(stack, n.children[i])
			}
		}
	}
	s.stack = stack[:0]
	for _, n := range bad {
		if !inRange(&n.world) || !inRange(&n.local) {
			return n
		}
	}
	return nil
}

// settle brings the kept world transforms up to date with changes made
// outside commands and Update (undone commands, SetLocal called directly).
func (s *Scene) settle() {
	s.check(s.moved)
	s.moved = s.moved[:0]
}

const rangeNote = "not finite, or beyond ±3.4e38 where the renderers' float32 overflows"

// describe names a node in errors.
func describe(n *Node) string {
	what := fmt.Sprintf("%s %q", strings.ReplaceAll(n.Kind.String(), "_", " "), n.Name)
	if n.Owner != "" && n.Owner != n.Name {
		what += fmt.Sprintf(" of %q", n.Owner)
	}
	return what
}

// outOfRange is the error of command c whose changes put bad's transform
// out of range. It names the attribute that brought the offending value:
// a part's model file for its model's nodes, else its pose_offset; a
// sensor's pose_offset; for an element, the attribute holding the largest
// number.
func outOfRange(c *Command, bad *Node) error {
	attr := ""
	switch c.Kind() {
	case "part":
		attr = "pose_offset"
		if bad.Kind == KindModelNode || bad.Kind == KindModel {
			attr = "file"
		}
	case "sensor":
		attr = "pose_offset"
	default:
		attr = largestNumber(c)
	}
	return c.Errorf(attr, "the composed world transform of %s is out of range (%s)", describe(bad), rangeNote)
}

// largestNumber returns the attribute of c holding the number of largest
// magnitude ("" if none holds a number).
func largestNumber(c *Command) string {
	attr, largest := "", -1.0
	for _, a := range c.Elem.Attr {
		for _, f := range splitNumbers(a.Value) {
			x, err := strconv.ParseFloat(f, 64)
			if err == nil && math.Abs(x) > largest {
				attr, largest = a.Key, math.Abs(x)
			}
		}
	}
	return attr
}

// outOfRangeValues is the rejection of an element's new values run (last:
// the values it had) that put bad's transform out of range. It names the
// changed parameter of largest magnitude.
func outOfRangeValues(e *ElementEntry, run, last []float64, bad *Node) error {
	culprit := -1
	for i := range run {
		if run[i] != last[i] && (culprit < 0 || math.Abs(run[i]) > math.Abs(run[culprit])) {
			culprit = i
		}
	}
	if culprit < 0 {
		return fmt.Errorf("the composed world transform of %s is out of range (%s)", describe(bad), rangeNote)
	}
	return fmt.Errorf("parameter %s = %g: the composed world transform of %s would be out of range (%s)",
		e.Params[culprit].Name, run[culprit], describe(bad), rangeNote)
}
