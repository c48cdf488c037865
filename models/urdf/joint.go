package urdf

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
)

func (rd *reader) joint(e *elem, links map[string]*link) (*joint, error) {
	name, err := checkName(e, "joint")
	if err != nil {
		return nil, err
	}
	j := &joint{name: name, e: e, multiplier: 1}
	j.kind, _ = e.attr("type")
	switch j.kind {
	case "revolute", "continuous", "prismatic", "fixed":
	case "floating", "planar":
		return nil, located(e.line, "joint %q: type %q is not supported (place a robot with the part's pose_offset and pose elements; see docs/urdf.md)", name, j.kind)
	case "":
		return nil, located(e.line, "joint %q: no type (want revolute, continuous, prismatic or fixed)", name)
	default:
		return nil, located(e.line, "joint %q: unknown type %q (want revolute, continuous, prismatic or fixed)", name, clip(j.kind))
	}
	for _, end := range []struct {
		tag string
		l   **link
	}{{"parent", &j.parent}, {"child", &j.child}} {
		c := e.first(end.tag)
		if c == nil {
			return nil, located(e.line, "joint %q: no <%s>", name, end.tag)
		}
		ln, _ := c.attr("link")
		l, ok := links[ln]
		if !ok {
			return nil, located(c.line, "joint %q: %s link %q is not defined", name, end.tag, clip(ln))
		}
		*end.l = l
	}
	if j.parent == j.child {
		return nil, located(e.line, "joint %q: link %q is its own parent", name, j.child.name)
	}
	if j.origin, err = origin(e); err != nil {
		return nil, err
	}
	if j.kind == "fixed" {
		return j, nil
	}
	axis := []float64{1, 0, 0}
	if a := e.first("axis"); a != nil {
		if axis, err = numbers(a, "xyz", 3, axis); err != nil {
			return nil, err
		}
		if math.Sqrt(axis[0]*axis[0]+axis[1]*axis[1]+axis[2]*axis[2]) < 1e-9 {
			return nil, located(a.line, "joint %q: the axis has zero length", name)
		}
	}
	j.axis = mgl64.Vec3{axis[0], axis[1], axis[2]}
	if l := e.first("limit"); l != nil {
		j.hasLimit = true
		lim, err := numbers(l, "lower", 1, []float64{0})
		if err != nil {
			return nil, err
		}
		j.lower = lim[0]
		if lim, err = numbers(l, "upper", 1, []float64{0}); err != nil {
			return nil, err
		}
		j.upper = lim[0]
		if j.kind != "continuous" && j.lower > j.upper {
			return nil, located(l.line, "joint %q: lower limit %g above upper limit %g", name, j.lower, j.upper)
		}
	} else if j.kind != "continuous" {
		return nil, located(e.line, "joint %q: a %s joint needs <limit lower=... upper=...>", name, j.kind)
	}
	if mm := e.first("mimic"); mm != nil {
		j.mimic, _ = mm.attr("joint")
		j.mimicLine = mm.line
		if j.mimic == "" {
			return nil, located(mm.line, "joint %q: <mimic> names no joint", name)
		}
		v, err := numbers(mm, "multiplier", 1, []float64{1})
		if err != nil {
			return nil, err
		}
		j.multiplier = v[0]
		if v, err = numbers(mm, "offset", 1, []float64{0}); err != nil {
			return nil, err
		}
		j.offset = v[0]
	}
	return j, nil
}

// commands returns the joint elements, leaders before the joints that
// mimic them.
func (rd *reader) commands(order []*joint, byName map[string]*joint) ([]models.Command, error) {
	var out []models.Command
	done := map[*joint]bool{}
	var emit func(j *joint, chain []*joint) error
	emit = func(j *joint, chain []*joint) error {
		if done[j] || j.kind == "fixed" {
			return nil
		}
		if slices.Contains(chain, j) {
			var names []string
			for _, c := range chain {
				names = append(names, strconv.Quote(c.name))
			}
			return located(j.mimicLine, "joint %q: mimic joints %s follow each other in a cycle", j.name, strings.Join(names, " -> "))
		}
		if j.mimic != "" {
			leader, ok := byName[j.mimic]
			if !ok {
				return located(j.mimicLine, "joint %q: mimics joint %q, which is not defined", j.name, clip(j.mimic))
			}
			if leader.kind == "fixed" {
				return located(j.mimicLine, "joint %q: mimics fixed joint %q", j.name, leader.name)
			}
			if err := emit(leader, append(chain, j)); err != nil {
				return err
			}
		}
		done[j] = true
		out = append(out, models.Command{XML: elementXML(j), Source: fmt.Sprintf("%s:%d (joint %q)", rd.path, j.e.line, j.name)})
		return nil
	}
	for _, j := range order {
		if err := emit(j, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func elementXML(j *joint) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<element type="joint" name="%s" insert_at="%s" kind="%s" axis="%s %s %s"`,
		j.name, j.child.name, j.kind, num(j.axis[0]), num(j.axis[1]), num(j.axis[2]))
	if j.kind != "continuous" {
		fmt.Fprintf(&b, ` min="%s" max="%s"`, num(j.lower), num(j.upper))
	}
	if j.mimic != "" {
		fmt.Fprintf(&b, ` mimic="%s" multiplier="%s" offset="%s"`, j.mimic, num(j.multiplier), num(j.offset))
	} else if j.kind != "continuous" && (j.lower > 0 || j.upper < 0) {
		// Zero is outside the limits: start at the nearer one.
		fmt.Fprintf(&b, ` position="%s"`, num(math.Min(math.Max(0, j.lower), j.upper)))
	}
	b.WriteString("/>")
	return b.String()
}
