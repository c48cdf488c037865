package elements

import (
	"fmt"

	"github.com/simvis/simvis/scene"
)

func init() {
	scene.RegisterElement("color", newColor)
	scene.RegisterElement("switch", newSwitch)
}

// color overrides the base color of every model mesh that follows it in its
// separator: the part's model and whatever is attached at the insertion
// point afterwards. a is the opacity: 1 opaque, 0 fully transparent (the
// RAVON foliage-transparency element fades vegetation this way).
type color struct {
	scene *scene.Scene
	scope *scene.Node
}

func newColor(ctx *scene.Context) (scene.Element, error) {
	return &color{scene: ctx.Scene, scope: ctx.InsertProperty()}, nil
}

func (c *color) Params() []scene.Param {
	return []scene.Param{{Name: "r", Default: 1}, {Name: "g", Default: 1}, {Name: "b", Default: 1}, {Name: "a", Default: 1}}
}

func (c *color) Apply(v []float64) error {
	return c.scene.SetColor(c.scope, [4]float32{float32(v[0]), float32(v[1]), float32(v[2]), float32(v[3])})
}

// switch_ shows (on = 1) or hides (on = 0) what follows it in its separator.
type switch_ struct {
	scene *scene.Scene
	scope *scene.Node
}

func newSwitch(ctx *scene.Context) (scene.Element, error) {
	return &switch_{scene: ctx.Scene, scope: ctx.InsertProperty()}, nil
}

func (s *switch_) Params() []scene.Param { return []scene.Param{{Name: "on", Default: 1}} }

// Apply accepts exactly 0 and 1 so that a client writing 0.5 learns of its
// mistake instead of getting a guess.
func (s *switch_) Apply(v []float64) error {
	if v[0] != 0 && v[0] != 1 {
		return fmt.Errorf("on = %g: want 1 (shown) or 0 (hidden)", v[0])
	}
	s.scene.SetVisible(s.scope, v[0] == 1)
	return nil
}
