package elements

import (
	"fmt"
	"math"

	"github.com/simvis/simvis/scene"
)

func init() { scene.RegisterElement("foliage", newFoliage) }

// foliage sets the opacity of the vegetation that follows it in its
// separator (the RAVON scenario's foliage-transparency element, paper
// IV-B): opacity 1 draws the leaves as modeled (their texture's alpha
// mask cuts them out), values in between blend them over what lies
// behind, 0 removes them. At 0 they are switched off for every sensor,
// range sensors and depth cameras included, which otherwise see the leaf
// cards' whole triangles (see the sensors package doc). The leaves' own
// colors are kept: only the opacity changes.
type foliage struct {
	scene *scene.Scene
	scope *scene.Node
}

func newFoliage(ctx *scene.Context) (scene.Element, error) {
	return &foliage{scene: ctx.Scene, scope: ctx.InsertProperty()}, nil
}

func (f *foliage) Params() []scene.Param { return []scene.Param{{Name: "opacity", Default: 1}} }

func (f *foliage) Apply(v []float64) error {
	a := v[0]
	if math.IsNaN(a) || a < 0 || a > 1 {
		return fmt.Errorf("opacity = %g: want 0 (no leaves) .. 1 (leaves as modeled)", a)
	}
	f.scene.SetVisible(f.scope, a > 0)
	if a == 1 {
		// No override: the model's alpha-masked material, unchanged.
		f.scene.ClearColor(f.scope)
		return nil
	}
	return f.scene.SetColor(f.scope, [4]float32{1, 1, 1, float32(a)})
}
