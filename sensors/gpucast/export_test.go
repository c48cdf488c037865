package gpucast

import (
	"github.com/g3n/engine/gls"
	"github.com/simvis/simvis/internal/gpu"
)

// The divisions, for tests.
const (
	DivDevice    = divDevice
	DivCorrected = divCorrected
	DivPerturbed = divPerturbed
	DivGuessOnly = divGuessOnly
)

// Division is a shader's way of dividing.
type Division = division

// NewWithDivision is New with the shader's division given.
func NewWithDivision(ctx *gpu.Context, d Division) (*Caster, error) { return newCaster(ctx, d) }

// DivisionOf is the division g's shader uses.
func DivisionOf(g *Caster) Division { return g.div }

// DivisionSamples are New's samples, with random rounds of random pairs.
var DivisionSamples = divisionSamples

// ProbeDivision divides ab on ctx's device with d and returns the first
// quotient that is not Go's.
func ProbeDivision(ctx *gpu.Context, d Division, ab []float64) error {
	return ctx.Do(func(gs *gls.GLS) error { return probeDivision(gs, d, ab) })
}
