package elements

import "math"

// ParamRange reports the joint's limits on its one parameter (degrees), for
// interfaces that offer a slider; ok is false without both limits.
func (r *rotation) ParamRange(i int) (lo, hi float64, ok bool) { return r.limits.paramRange(i) }

// ParamRange reports the joint's limits on its one parameter (meters), for
// interfaces that offer a slider; ok is false without both limits.
func (t *translation) ParamRange(i int) (lo, hi float64, ok bool) { return t.limits.paramRange(i) }

func (l limits) paramRange(i int) (lo, hi float64, ok bool) {
	if i != 0 || math.IsInf(l.min, 0) || math.IsInf(l.max, 0) {
		return 0, 0, false
	}
	return l.min, l.max, true
}

// ParamRange reports a URDF joint's limits on its position (radians or
// meters, as the URDF gives them), so that the window's panel offers a
// slider over them; a continuous joint has none.
func (j *joint) ParamRange(i int) (lo, hi float64, ok bool) { return j.limits.paramRange(i) }
