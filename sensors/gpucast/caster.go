package gpucast

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/g3n/engine/gls"
	"github.com/simvis/simvis/internal/gpu"
	"github.com/simvis/simvis/sensors/raycast"
)

//go:embed cast.glsl
var shaderSource string

// groupSize is the shader's local_size_x. A cycle's batch is small for a
// wide GPU (one scan is 361 rays: 2 groups of 256 reach 2 multiprocessors,
// 6 of 64 would reach 6), so smaller groups might pay there; on llvmpipe
// 64 was no faster (alternated runs: medians 1.10 of 256's time for the
// 50 MARVINs, 0.97 for the cave). BenchmarkCycle's compute-group64
// measures it where a GPU is at hand.
const groupSize = 256

// The shader's storage-buffer bindings.
const (
	bufNodeD = iota
	bufNodeI
	bufInstD
	bufInstI
	bufPacks
	bufRayD
	bufRayI
	bufOut
	bufInstCut
	bufCutI
	bufCutD
	bufUVs
	bufAlpha
	nBufs
)

// textureUnits are the buffers the shader reads as buffer textures, on
// the units its samplers are bound to.
var textureUnits = []struct {
	buf    int
	unit   int
	format uint32
}{
	{bufNodeD, 12, gpu.TexelRGBA32UI},
	{bufNodeI, 13, gpu.TexelRGBA32I},
	{bufInstD, 14, gpu.TexelRGBA32UI},
	{bufPacks, 15, gpu.TexelRGBA32UI},
	{bufInstI, 11, gpu.TexelR32I},
}

// Caster casts rays on a GPU context against the hierarchy of a
// raycast.Caster (see Sync). It is used from one goroutine at a time; its
// GL work runs in the context's Do.
type Caster struct {
	ctx  *gpu.Context
	prog *gpu.ComputeProgram
	bufs []*gpu.StorageBuffer
	texs []gpu.TextureUnit

	flat    raycast.Flat
	src     *raycast.Caster
	builds  int // src.Builds() when last uploaded
	geomLen int // len(flat.GeomRefs) uploaded
	topRefs []int32
	topRoot int // the instance hierarchy's root, after the geometries' nodes
	rayD    []float64
	rayI    []int32
	out     []float64
	starts  []int    // each set's first ray in rayD, -1 if not cast
	alphaW  []uint32 // flat.Alpha, four bytes to a word
	div     division
	group   int // invocations to a work group
}

// New compiles the caster's shader on ctx. It fails (gpu.ErrNoCompute)
// where the context's OpenGL is older than 4.3, and where the compiler
// refuses the shader (no float64, say).
//
// New first divides samples on the device (see divisionSamples): where a
// quotient differs from Go's, the shader corrects the device's quotients
// (div.glsl), and where even those differ, New fails.
func New(ctx *gpu.Context) (*Caster, error) {
	return newCaster(ctx, nil, groupSize)
}

// newCaster is New with the division given (tests), or picked where div
// is nil, and group invocations to a work group.
func newCaster(ctx *gpu.Context, div *division, group int) (*Caster, error) {
	g := &Caster{ctx: ctx, group: group}
	err := ctx.Do(func(gs *gls.GLS) error {
		if div != nil {
			g.div = *div
		} else {
			d, err := pickDivision(gs)
			if err != nil {
				return err
			}
			g.div = d
		}
		div := g.div
		src := strings.Replace(shaderSource, "ROBUST_VALUE", doubleLiteral(raycast.Robust), 1)
		src = strings.Replace(src, "DIVISION\n", divisionSource(div), 1)
		src = strings.Replace(src, "LOCAL_SIZE", fmt.Sprint(group), 1)
		p, err := gpu.NewComputeProgram(gs, src)
		if err != nil {
			return err
		}
		g.prog = p
		for range nBufs {
			b, err := gpu.NewStorageBuffer(gs)
			if err != nil {
				g.free(gs)
				return err
			}
			g.bufs = append(g.bufs, b)
		}
		// The hierarchy is read through texture views (see cast.glsl).
		for i, tu := range textureUnits {
			if err := g.bufs[tu.buf].Texture(gs, tu.format); err != nil {
				g.free(gs)
				return err
			}
			g.texs = append(g.texs, gpu.TextureUnit{Unit: tu.unit, Buffer: g.bufs[textureUnits[i].buf]})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("gpucast: %w", err)
	}
	return g, nil
}

// Division names the float64 division the shader uses: "the device's",
// where New found it rounds as Go's does, or "corrected (fma)" or
// "corrected (Dekker's product)" (see New).
func (g *Caster) Division() string { return g.div.String() }

// doubleLiteral writes v as a GLSL expression of its exact bits (a
// decimal literal would rest on the compiler's rounding).
func doubleLiteral(v float64) string {
	b := math.Float64bits(v)
	return fmt.Sprintf("packDouble2x32(uvec2(0x%08xu, 0x%08xu))", uint32(b), uint32(b>>32))
}

func (g *Caster) free(gs *gls.GLS) {
	for _, b := range g.bufs {
		b.Delete(gs)
	}
	g.bufs = nil
	if g.prog != nil {
		g.prog.Delete(gs)
		g.prog = nil
	}
}

// Close frees the caster's GL objects.
func (g *Caster) Close() error {
	return g.ctx.Do(func(gs *gls.GLS) error {
		g.free(gs)
		return nil
	})
}

// Sync makes the GPU cast against what c holds after its last Sync or
// Place: the hierarchy is exported and sent when c built a new one since
// (the geometries, with their cut-outs, only when new ones came), nothing
// otherwise.
func (g *Caster) Sync(c *raycast.Caster) error {
	if g.prog == nil {
		return errors.New("gpucast: Sync on a closed caster")
	}
	if c == g.src && c.Builds() == g.builds {
		return nil
	}
	g.src = nil // until the upload succeeded
	if err := c.Export(&g.flat); err != nil {
		return err
	}
	f := &g.flat
	// The instance hierarchy's nodes go after the geometries' (which are
	// sent again only when new ones came), its inner references rebased.
	g.topRoot = len(f.GeomRefs) / raycast.NodeInts
	g.topRefs = g.topRefs[:0]
	for _, r := range f.TopRefs {
		if r > 0 {
			r += int32(g.topRoot)
		}
		g.topRefs = append(g.topRefs, r)
	}
	err := g.ctx.Do(func(gs *gls.GLS) error {
		nd, ni := g.bufs[bufNodeD], g.bufs[bufNodeI]
		growD, err := nd.Reserve(gs, 8*(len(f.GeomNodes)+len(f.TopNodes)))
		if err != nil {
			return err
		}
		growI, err := ni.Reserve(gs, 4*(len(f.GeomRefs)+len(f.TopRefs)))
		if err != nil {
			return err
		}
		if growD || growI || len(f.GeomRefs) != g.geomLen {
			if err := gpu.UploadAt(gs, nd, 0, f.GeomNodes); err != nil {
				return err
			}
			if err := gpu.UploadAt(gs, ni, 0, f.GeomRefs); err != nil {
				return err
			}
			if err := gpu.Upload(gs, g.bufs[bufPacks], f.Packs); err != nil {
				return err
			}
			if err := g.uploadCuts(gs); err != nil {
				return err
			}
		}
		if err := gpu.UploadAt(gs, nd, len(f.GeomNodes), f.TopNodes); err != nil {
			return err
		}
		if err := gpu.UploadAt(gs, ni, len(f.GeomRefs), g.topRefs); err != nil {
			return err
		}
		if err := gpu.Upload(gs, g.bufs[bufInstD], f.ToLocal); err != nil {
			return err
		}
		if err := gpu.Upload(gs, g.bufs[bufInstCut], f.InstCuts); err != nil {
			return err
		}
		return gpu.Upload(gs, g.bufs[bufInstI], f.Roots)
	})
	if err != nil {
		return fmt.Errorf("gpucast: sending the hierarchy: %w", err)
	}
	g.src, g.builds, g.geomLen = c, c.Builds(), len(f.GeomRefs)
	return nil
}

// uploadCuts sends the geometries' cut-outs (see raycast.Flat). Must be
// called inside Do.
func (g *Caster) uploadCuts(gs *gls.GLS) error {
	f := &g.flat
	g.alphaW = g.alphaW[:0]
	for i := 0; i < len(f.Alpha); i += 4 {
		var w uint32
		for k := 0; k < 4 && i+k < len(f.Alpha); k++ {
			w |= uint32(f.Alpha[i+k]) << (8 * k)
		}
		g.alphaW = append(g.alphaW, w)
	}
	if err := gpu.Upload(gs, g.bufs[bufCutI], f.CutInts); err != nil {
		return err
	}
	if err := gpu.Upload(gs, g.bufs[bufCutD], f.CutDoubles); err != nil {
		return err
	}
	if err := gpu.Upload(gs, g.bufs[bufUVs], f.UVs); err != nil {
		return err
	}
	return gpu.Upload(gs, g.bufs[bufAlpha], g.alphaW)
}

// CastBatch casts every set of rays in one dispatch, writing into each
// set's Out what raycast's CastBatch writes there (the same bits): the
// distance to the nearest surface closer than the ray's bound (Bounds[i],
// or TMax), +Inf where there is none. A set's Prepare runs first, on
// whichever core lays out those rays for the GPU (all cores for a large
// batch, as raycast's CastBatch does). A set with fewer Out or Bounds than
// Dirs gets an Err and is not cast, as does one whose Prepare panics; the
// error returned is for the GPU work as a whole.
func (g *Caster) CastBatch(sets []raycast.Rays) error {
	if g.src == nil || g.prog == nil {
		return errors.New("gpucast: CastBatch before a successful Sync")
	}
	// Where each set's rays go (-1: not cast), and the origins.
	g.starts = g.starts[:0]
	var origins []float64
	n := 0
	for si := range sets {
		rs := &sets[si]
		rs.Err, rs.Work = nil, 0
		switch {
		case len(rs.Out) < len(rs.Dirs):
			rs.Err = fmt.Errorf("%d directions but room for %d distances", len(rs.Dirs), len(rs.Out))
		case rs.Bounds != nil && len(rs.Bounds) < len(rs.Dirs):
			rs.Err = fmt.Errorf("%d directions but %d bounds", len(rs.Dirs), len(rs.Bounds))
		}
		if rs.Err != nil || len(rs.Dirs) == 0 {
			g.starts = append(g.starts, -1)
			continue
		}
		g.starts = append(g.starts, n)
		origins = append(origins, rs.Origin[0], rs.Origin[1], rs.Origin[2], 0)
		n += len(rs.Dirs)
	}
	if n == 0 {
		return nil
	}
	if n > math.MaxInt32/4 {
		return fmt.Errorf("gpucast: %d rays in one batch are too many", n)
	}
	g.rayD = slices.Grow(g.rayD[:0], 4*n+len(origins))[:4*n]
	g.rayI = slices.Grow(g.rayI[:0], n)[:n]
	g.layOut(sets)
	originsAt := n // in dvec4
	g.rayD = append(g.rayD, origins...)
	if cap(g.out) < n {
		g.out = make([]float64, n)
	}
	g.out = g.out[:n]
	err := g.ctx.Do(func(gs *gls.GLS) error {
		if err := gpu.Upload(gs, g.bufs[bufRayD], g.rayD); err != nil {
			return err
		}
		if err := gpu.Upload(gs, g.bufs[bufRayI], g.rayI); err != nil {
			return err
		}
		// Room for the results, not sent: the shader writes every ray's.
		if _, err := g.bufs[bufOut].Reserve(gs, 8*n); err != nil {
			return err
		}
		err := g.prog.Dispatch(gs, (n+g.group-1)/g.group, g.bufs, g.texs,
			gpu.Uniform{Name: "nRays", Value: int32(n)},
			gpu.Uniform{Name: "topRoot", Value: int32(g.topRoot)},
			gpu.Uniform{Name: "originsAt", Value: int32(originsAt)})
		if err != nil {
			return err
		}
		return gpu.Read(gs, g.bufs[bufOut], g.out)
	})
	if err != nil {
		return fmt.Errorf("gpucast: casting %d rays: %w", n, err)
	}
	for si := range sets {
		rs := &sets[si]
		k := g.starts[si]
		if k < 0 || rs.Err != nil {
			continue
		}
		copy(rs.Out, g.out[k:k+len(rs.Dirs)])
		for i, t := range rs.Out[:len(rs.Dirs)] {
			if math.IsNaN(t) {
				// The shader's stack overflowed on this ray (a hierarchy
				// deeper than any sane one): the CPU casts it.
				g.recast(rs, i)
			}
		}
	}
	return nil
}

// layOutChunk is the most rays of one set a core prepares and lays out at
// a time; layOutAlone, the fewest rays in a batch for which helpers start.
const layOutChunk, layOutAlone = 1024, 8192

// layOut runs each set's Prepare and writes its rays, bounds and set
// numbers where g.starts puts them, in chunks over all cores for a large
// batch (sensors turn their beams into the world in Prepare). A Prepare
// that panics leaves its set an Err.
func (g *Caster) layOut(sets []raycast.Rays) {
	// A piece of set si, which is set number set among those cast.
	type piece struct {
		si, lo, hi int
		set        int32
	}
	var pieces []piece
	set := int32(0)
	for si := range sets {
		if g.starts[si] < 0 {
			continue
		}
		for lo := 0; lo < len(sets[si].Dirs); lo += layOutChunk {
			pieces = append(pieces, piece{si, lo, min(lo+layOutChunk, len(sets[si].Dirs)), set})
		}
		set++
	}
	var mu sync.Mutex
	do := func(p piece) {
		rs := &sets[p.si]
		defer func() {
			if e := recover(); e != nil {
				mu.Lock()
				if rs.Err == nil {
					rs.Err = fmt.Errorf("preparing rays %d-%d: %v", p.lo, p.hi, e)
				}
				mu.Unlock()
			}
		}()
		if rs.Prepare != nil {
			rs.Prepare(p.lo, p.hi)
		}
		at := g.starts[p.si]
		d, ri := g.rayD[4*(at+p.lo):4*(at+p.hi)], g.rayI[at+p.lo:at+p.hi]
		for i, v := range rs.Dirs[p.lo:p.hi] {
			b := rs.TMax
			if rs.Bounds != nil {
				b = rs.Bounds[p.lo+i]
			}
			d[4*i], d[4*i+1], d[4*i+2], d[4*i+3] = v[0], v[1], v[2], b
			ri[i] = p.set
		}
	}
	helpers := min(runtime.GOMAXPROCS(0), len(pieces)) - 1
	if len(g.rayI) < layOutAlone {
		helpers = 0
	}
	var next atomic.Int64
	work := func() {
		for k := next.Add(1) - 1; k < int64(len(pieces)); k = next.Add(1) - 1 {
			do(pieces[k])
		}
	}
	var wg sync.WaitGroup
	for range helpers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
}

// recast casts ray i of rs with the CPU caster.
func (g *Caster) recast(rs *raycast.Rays, i int) {
	b := rs.TMax
	if rs.Bounds != nil {
		b = rs.Bounds[i]
	}
	one := []raycast.Rays{{Origin: rs.Origin, Dirs: rs.Dirs[i : i+1], Bounds: []float64{b}, Out: rs.Out[i : i+1]}}
	g.src.CastBatch(one)
	if one[0].Err != nil {
		rs.Err = one[0].Err
	}
}
