package gpucast

import (
	_ "embed"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/g3n/engine/gls"
	"github.com/simvis/simvis/internal/gpu"
)

//go:embed div.glsl
var divSource string

// division is how the shader divides float64s.
type division struct {
	// corrected: divRN (div.glsl), the device's quotient as a first guess
	// corrected to Go's; else the device's own a/b, used where the probe
	// found it rounds as Go's on every sample (llvmpipe: x86's divsd).
	corrected bool
	// fma: divRN's remainder from the device's fused multiply-add (one
	// operation, where the probe found it exact); else from Dekker's
	// product (additions and multiplications alone).
	fma bool
	// perturbed (tests): divRN's guess moved up to 24 ulps off, as a
	// device whose division is not IEEE 754's might give it.
	perturbed bool
	// guessOnly (tests): the perturbed guess, uncorrected: what the
	// probe must refuse.
	guessOnly bool
}

// The divisions New tries, in this order.
var (
	divDevice = division{}
	divFMA    = division{corrected: true, fma: true}
	divDekker = division{corrected: true}
)

func (d division) String() string {
	s := "the device's"
	switch {
	case d.guessOnly:
		return "a perturbed guess's"
	case d.corrected && d.fma:
		s = "corrected (fma)"
	case d.corrected:
		s = "corrected (Dekker's product)"
	}
	if d.perturbed {
		s += " from a perturbed guess"
	}
	return s
}

// divisionSource is the GLSL that defines DIV(a, b) and DIV4(a, b, mask)
// for d (DIV4 divides the lanes of mask; the others' results are unused).
func divisionSource(d division) string {
	defs := "#define DIV_GUESS(a, b) ((a) / (b))\n#define DIV_STEPS 8\n"
	if d.perturbed || d.guessOnly {
		// Up to 24 ulps either way (48 below a power of two), by a hash
		// of the guess's bits and the invocation (the same quotient is
		// moved differently in different samples): enough to come from
		// above to a subnormal quotient halfway between two.
		defs = "double perturb(double q) {\n" +
			"\tuvec2 u = unpackDouble2x32(q);\n" +
			"\tint k = int((u.x ^ (u.y * 2654435761u) ^ gl_GlobalInvocationID.x) % 7u) - 3;\n" +
			"\tprecise double r = q + double(k) * pow2(expOf(q) - 49);\n" +
			"\treturn r;\n}\n" +
			"#define DIV_GUESS(a, b) perturb((a) / (b))\n#define DIV_STEPS 64\n"
	}
	if d.fma {
		defs += "#define DIV_FMA 1\n"
	}
	src := strings.Replace(divSource, "DIV_DEFINITIONS\n", defs, 1)
	switch {
	case d.guessOnly:
		return src + "#define DIV(a, b) DIV_GUESS(a, b)\n#define DIV4(a, b, m) dvec4(DIV_GUESS(a.x, b.x), DIV_GUESS(a.y, b.y), DIV_GUESS(a.z, b.z), DIV_GUESS(a.w, b.w))\n"
	case !d.corrected:
		return src + "#define DIV_NATIVE 1\n#define DIV(a, b) ((a) / (b))\n#define DIV4(a, b, m) ((a) / (b))\n"
	}
	return src + "#define DIV(a, b) divRN(a, b)\n#define DIV4(a, b, m) divRN4(a, b, m)\n"
}

// probeSource divides each pair of ab seven ways, in the forms the
// caster's shader uses: a/b, 1/b and a/255 (constant operands can take
// other paths in a compiler), and four lanes of a dvec4 division.
const probeSource = `#version 430
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer In { dvec2 ab[]; };
layout(std430, binding = 1) writeonly buffer Out { double q[]; };
uniform int n;
DIVISION
void main() {
	int i = int(gl_GlobalInvocationID.x);
	if (i >= n) {
		return;
	}
	double a = ab[i].x, b = ab[i].y;
	precise double q0 = DIV(a, b);
	precise double q1 = DIV(1.0LF, b);
	precise double q2 = DIV(a, 255.0LF);
	precise dvec4 q3 = DIV4(dvec4(a, b, 1.0LF, a), dvec4(b, a, b, 3.0LF), bvec4(true));
	q[8 * i] = q0;
	q[8 * i + 1] = q1;
	q[8 * i + 2] = q2;
	q[8 * i + 3] = q3.x;
	q[8 * i + 4] = q3.y;
	q[8 * i + 5] = q3.z;
	q[8 * i + 6] = q3.w;
	q[8 * i + 7] = 0.0LF;
}
`

// probeWant is what the probe must write for pairs ab: Go's quotients.
func probeWant(ab []float64) []float64 {
	want := make([]float64, 4*len(ab))
	for i := 0; i < len(ab); i += 2 {
		a, b := ab[i], ab[i+1]
		w := want[4*i : 4*i+8]
		w[0], w[1], w[2], w[3], w[4], w[5], w[6] = a/b, 1/b, a/255, a/b, b/a, 1/b, a/3
	}
	return want
}

// sameFloat reports whether x and y have the same bits, or are both NaN
// (whose bits IEEE 754 leaves open).
func sameFloat(x, y float64) bool {
	return math.Float64bits(x) == math.Float64bits(y) || math.IsNaN(x) && math.IsNaN(y)
}

// probeDivision divides the pairs ab (a, b, a, b...) on the device with d
// and returns the first quotient that differs from Go's, as an error.
// Must be called inside Do.
func probeDivision(gs *gls.GLS, d division, ab []float64) error {
	src := strings.Replace(probeSource, "DIVISION\n", divisionSource(d), 1)
	p, err := gpu.NewComputeProgram(gs, src)
	if err != nil {
		return err
	}
	defer p.Delete(gs)
	in, err := gpu.NewStorageBuffer(gs)
	if err != nil {
		return err
	}
	defer in.Delete(gs)
	out, err := gpu.NewStorageBuffer(gs)
	if err != nil {
		return err
	}
	defer out.Delete(gs)
	n := len(ab) / 2
	if err := gpu.Upload(gs, in, ab); err != nil {
		return err
	}
	if _, err := out.Reserve(gs, 8*8*n); err != nil {
		return err
	}
	if err := p.Dispatch(gs, (n+63)/64, []*gpu.StorageBuffer{in, out}, nil, gpu.Uniform{Name: "n", Value: int32(n)}); err != nil {
		return err
	}
	got := make([]float64, 8*n)
	if err := gpu.Read(gs, out, got); err != nil {
		return err
	}
	want := probeWant(ab)
	forms := [...]string{"a/b", "1/b", "a/255", "a/b in a dvec4", "b/a in a dvec4", "1/b in a dvec4", "a/3 in a dvec4"}
	for i := 0; i < n; i++ {
		for f, form := range forms {
			if g, w := got[8*i+f], want[8*i+f]; !sameFloat(g, w) {
				return fmt.Errorf("%s division: %s for a=%v (%#x), b=%v (%#x) is %v (%#x), not %v (%#x)",
					d, form, ab[2*i], math.Float64bits(ab[2*i]), ab[2*i+1], math.Float64bits(ab[2*i+1]),
					g, math.Float64bits(g), w, math.Float64bits(w))
			}
		}
	}
	return nil
}

// divisionSamples are the pairs (a, b, a, b...) on which New probes the
// device's division: IEEE 754's special values and edges in every
// combination, quotients near halfway between two doubles, quotients at
// the ends of the exponent range, near powers of two and exactly halfway
// between two subnormals, and random operands of every exponent
// and of the sizes a caster divides (directions, determinants). Seeded:
// the same samples every time.
func divisionSamples(random int) []float64 {
	edges := []float64{0, math.Copysign(0, -1), 1, -1, 3, 255, 0.1, 1.0 / 3,
		math.Inf(1), math.Inf(-1), math.NaN(),
		math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 0x1p-1022 - 0x1p-1074, 0x1p-1022,
		math.MaxFloat64, -math.MaxFloat64, math.Nextafter(1, 0), math.Nextafter(2, 0), math.Nextafter(1, 2),
		0x1p-600, 0x1p600, 1e-300, 1e300, 6e-17, 0.5}
	var ab []float64
	for _, a := range edges {
		for _, b := range edges {
			ab = append(ab, a, b)
		}
	}
	r := rand.New(rand.NewPCG(31, 2026))
	sig := func() float64 { return math.Float64frombits(0x3ff0000000000000 | r.Uint64()&(1<<52-1)) }
	for range random {
		// A quotient near halfway: b times the midpoint of two doubles,
		// rounded, and a few ulps around it.
		b := sig()
		m := sig() + 0x1p-53
		a := m * b
		for range r.IntN(4) {
			a = math.Nextafter(a, math.Inf(int(r.Int32N(2))*2-1))
		}
		ab = append(ab, a, b)
		// Any finite operands, of any exponent: overflow, underflow and
		// subnormal quotients.
		x, y := math.Float64frombits(r.Uint64()), math.Float64frombits(r.Uint64())
		if !math.IsNaN(x) && !math.IsInf(x, 0) && !math.IsNaN(y) && !math.IsInf(y, 0) {
			ab = append(ab, x, y)
		}
		// Quotients a few ulps either side of a power of two, where the
		// spacing below is half the spacing above.
		k := float64(r.IntN(4) + 1)
		ab = append(ab, b-k*0x1p-52, b, b+k*0x1p-52, b*2)
		// Quotients whose significand is all ones, just below a power of
		// two (a guess above it must step down by the smaller spacing).
		ab = append(ab, math.Ldexp(math.Nextafter(2, 0), r.IntN(200)-100), math.Ldexp(1, r.IntN(200)-100))
		// Exact halves, which arise among subnormal quotients alone.
		ab = append(ab, float64(r.IntN(1<<20))*math.SmallestNonzeroFloat64, float64(int(1)<<r.IntN(8)),
			float64(1<<51+r.Int64N(1<<51))*math.SmallestNonzeroFloat64, float64(int(1)<<r.IntN(3)))
		// A caster's sizes: direction components and their reciprocals,
		// distances over determinants.
		ab = append(ab, 1, 2*r.Float64()-1, r.NormFloat64()*10, r.NormFloat64()*r.Float64())
	}
	return ab
}

// pickDivision chooses the shader's division: the device's where it gives
// Go's quotient on every sample, else the first corrected one that does
// (the fused multiply-add's is cheaper). Must be called inside Do.
func pickDivision(gs *gls.GLS) (division, error) {
	ab := divisionSamples(4096)
	var err error
	for _, d := range []division{divDevice, divFMA, divDekker} {
		if err = probeDivision(gs, d, ab); err == nil {
			return d, nil
		}
	}
	return division{}, fmt.Errorf("the device's float64 arithmetic is not IEEE 754's: %w", err)
}
