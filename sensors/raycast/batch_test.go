package raycast_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-gl/mathgl/mgl64"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors/raycast"
)

// soupScene is two placed copies of a triangle soup and a caster synced
// to it.
func soupScene(t *testing.T) (*raycast.Caster, *scene.Scene, *rand.Rand) {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	dir := t.TempDir()
	writeModel(t, dir, "soup.glb", soup(2000, rng), mgl64.Ident4())
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="soup.glb" name="S1" pose_offset="0.5 -0.25 0.1 10 20 30"/>
  <part file="soup.glb" name="S2" pose_offset="-4 2 1 -30 0 90"/>
</scene>`)
	c := raycast.New()
	c.Sync(s)
	return c, s, rng
}

// randomSets makes sets of every size from empty to many chunks, some
// ending inside a piece (7, 9 beams), from different origins, with
// different limits.
func randomSets(rng *rand.Rand) []raycast.Rays {
	var sets []raycast.Rays
	for i, n := range []int{361, 0, 1, 31, 32, 33, 1000, 7, 361, 64, 9} {
		dirs := make([]mgl64.Vec3, n)
		for k := range dirs {
			dirs[k] = mgl64.Vec3{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}.Normalize()
		}
		tmax := math.Inf(1)
		if i%3 == 1 {
			tmax = 6
		}
		o := mgl64.Vec3{rng.Float64() - 0.5, rng.Float64() - 0.5, rng.Float64() - 0.5}
		sets = append(sets, raycast.Rays{Origin: o, Dirs: dirs, TMax: tmax, Out: make([]float64, n)})
	}
	return sets
}

// checkSets fails unless every set's distances are what Cast returns,
// beam by beam, to the bit.
func checkSets(t *testing.T, c *raycast.Caster, sets []raycast.Rays) {
	t.Helper()
	hits, beams := 0, 0
	for si, rs := range sets {
		if rs.Err != nil {
			t.Fatalf("set %d: %v", si, rs.Err)
		}
		for i, d := range rs.Dirs {
			want, ok := c.Cast(rs.Origin, d, rs.TMax)
			if math.Float64bits(rs.Out[i]) != math.Float64bits(want) {
				t.Fatalf("set %d, beam %d: CastBatch %v, Cast %v", si, i, rs.Out[i], want)
			}
			if ok {
				hits++
			}
			beams++
		}
	}
	if hits == 0 || hits == beams {
		t.Errorf("%d of %d beams hit: the test says nothing", hits, beams)
	}
}

// CastBatch writes exactly what Cast returns for every set, on two cores
// and on one, measures each set's work, and allocates nothing once warm.
func TestCastBatchMatchesCast(t *testing.T) {
	c, s, rng := soupScene(t)
	sets := randomSets(rng)
	for _, procs := range []int{2, 1} {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		for i := range sets {
			for k := range sets[i].Out {
				sets[i].Out[k] = -1
			}
		}
		c.CastBatch(sets)
		checkSets(t, c, sets)
		for i, rs := range sets {
			if (len(rs.Dirs) > 0) != (rs.Work > 0) {
				t.Errorf("GOMAXPROCS %d: set %d of %d beams: work %v", procs, i, len(rs.Dirs), rs.Work)
			}
		}
	}
	runtime.GOMAXPROCS(2)
	if n := testing.AllocsPerRun(20, func() { c.Sync(s); c.CastBatch(sets) }); n != 0 {
		t.Errorf("Sync and CastBatch of an unchanged scene allocate %v times, want 0", n)
	}
}

// A set with fewer outputs than directions gets an error and the others
// are cast; a panic while casting (here: no caster at all) becomes each
// set's error in CastBatch and a panic in CastAll's caller, whichever core
// it happened on, and the helpers go on serving later calls.
func TestCastBatchFailures(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	c, _, rng := soupScene(t)
	sets := randomSets(rng)
	bad := sets[6]
	bad.Out = make([]float64, len(bad.Dirs)-1)
	sets = append(sets, bad)
	c.CastBatch(sets)
	if err := sets[len(sets)-1].Err; err == nil || !strings.Contains(err.Error(), "1000 directions but room for 999") {
		t.Errorf("short set: error %v", err)
	}
	checkSets(t, c, sets[:len(sets)-1])

	var none *raycast.Caster
	none.CastBatch(sets[:len(sets)-1])
	for i, rs := range sets[:len(sets)-1] {
		if err := rs.Err; (err != nil) != (len(rs.Dirs) > 0) || err != nil && !strings.Contains(err.Error(), "ray caster failed") {
			t.Errorf("set %d of %d beams without a caster: error %v", i, len(rs.Dirs), err)
		}
	}
	for range 50 {
		func() {
			defer func() {
				p := recover()
				if err, ok := p.(error); !ok || !strings.Contains(err.Error(), "ray caster failed") {
					t.Fatalf("CastAll without a caster: panic %v", p)
				}
			}()
			none.CastAll(bad.Origin, bad.Dirs, bad.TMax, sets[6].Out)
			t.Fatal("CastAll without a caster returned")
		}()
	}
	c.CastBatch(sets[:len(sets)-1])
	checkSets(t, c, sets[:len(sets)-1])
}

// The helpers are started once and kept: however many calls, from however
// many goroutines, the number of goroutines stays put.
func TestCastBatchNoLeak(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	c, _, rng := soupScene(t)
	sets := randomSets(rng)
	c.CastBatch(sets) // starts the helpers
	before := runtime.NumGoroutine()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := randomSets(rand.New(rand.NewPCG(uint64(g), 7)))
			for range 20 {
				c.CastBatch(mine)
				c.CastAll(mine[0].Origin, mine[0].Dirs, mine[0].TMax, mine[0].Out)
			}
		}()
	}
	wg.Wait()
	// The test's own goroutines may take a moment to be gone.
	for wait := time.Millisecond; runtime.NumGoroutine() > before && wait < time.Second; wait *= 2 {
		time.Sleep(wait)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after 160 calls, %d before", n, before)
	}
}

// CastAll and CastSerial with fewer distances than directions panic with
// the call and both counts, before they write a distance.
func TestCastShortOut(t *testing.T) {
	c, _, rng := soupScene(t)
	rs := randomSets(rng)[6]
	for name, cast := range map[string]func([]float64){
		"CastAll":    func(out []float64) { c.CastAll(rs.Origin, rs.Dirs, rs.TMax, out) },
		"CastSerial": func(out []float64) { c.CastSerial(rs.Origin, rs.Dirs, rs.TMax, out) },
	} {
		out := make([]float64, len(rs.Dirs)-1)
		func() {
			defer func() {
				p := recover()
				if msg, _ := p.(string); msg != fmt.Sprintf("raycast: %s of %d directions into %d distances", name, len(rs.Dirs), len(out)) {
					t.Errorf("%s into too few distances: panic %v", name, p)
				}
			}()
			cast(out)
		}()
		for i, d := range out {
			if d != 0 {
				t.Fatalf("%s into too few distances wrote distance %d", name, i)
			}
		}
	}
}
