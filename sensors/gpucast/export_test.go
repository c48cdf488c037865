package gpucast

import (
	"github.com/g3n/engine/gls"
	"github.com/simvis/simvis/internal/gpu"
)

// Division is a shader's way of dividing, for tests.
type Division = division

// The divisions New tries, and variants that exercise the correction.
var (
	DivDevice = divDevice
	DivFMA    = divFMA
	DivDekker = divDekker
)

// Perturbed is d's correction from a guess up to 24 ulps off.
func Perturbed(d Division) Division { d.perturbed = true; return d }

// GuessOnly is the perturbed guess, uncorrected.
var GuessOnly = division{guessOnly: true}

// NewWithDivision is New with the shader's division given.
func NewWithDivision(ctx *gpu.Context, d Division) (*Caster, error) {
	return newCaster(ctx, &d, groupSize)
}

// NewWithGroup is New with n invocations to a work group.
func NewWithGroup(ctx *gpu.Context, n int) (*Caster, error) { return newCaster(ctx, nil, n) }

// DivisionOf is the division g's shader uses.
func DivisionOf(g *Caster) Division { return g.div }

// DivisionSamples are New's samples, with random rounds of random pairs.
var DivisionSamples = divisionSamples

// ProbeDivision divides ab on ctx's device with d and returns the first
// quotient that is not Go's.
func ProbeDivision(ctx *gpu.Context, d Division, ab []float64) error {
	return ctx.Do(func(gs *gls.GLS) error { return probeDivision(gs, d, ab) })
}

// CorrectedOn is the corrected division that passes the probe on ctx's
// device, the fused multiply-add's first (as New tries them), else
// Dekker's.
func CorrectedOn(ctx *gpu.Context) Division {
	if ProbeDivision(ctx, divFMA, divisionSamples(256)) == nil {
		return divFMA
	}
	return divDekker
}
