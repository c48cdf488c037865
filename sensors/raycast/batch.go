package raycast

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-gl/mathgl/mgl64"
)

// Rays is one set of rays of a batch (CastBatch): rays from Origin along
// the unit directions Dirs, whose distances go into Out (+Inf where
// nothing is hit within TMax), as CastAll(Origin, Dirs, TMax, Out) writes
// them.
type Rays struct {
	Origin mgl64.Vec3
	Dirs   []mgl64.Vec3
	TMax   float64
	// Bounds, if not nil, holds a bound per ray in place of TMax: ray i
	// looks for a hit closer than Bounds[i] (a hit known already, which
	// prunes the search) and gets +Inf where there is none.
	Bounds []float64
	Out    []float64
	// Prepare, if not nil, fills Dirs[lo:hi] before those beams are cast,
	// on whichever core casts them: the caller's own per-beam work (a
	// sensor turning its beams into the world) then runs on all cores
	// too. It must write nothing else that another call reads.
	Prepare func(lo, hi int)
	// Work is set by CastBatch: the time the cores spent on this set's
	// beams, summed over the cores. Its share of the batch's total tells
	// what the set cost within the batch's wall time.
	Work time.Duration
	// Err is set by CastBatch when this set could not be cast: fewer Out
	// than Dirs, or a panic while casting its rays (a bug, reported for
	// the set, whichever core it happened on, instead of ending the
	// process). Out is then incomplete.
	Err error
}

// CastBatch casts every set, as CastAll would each, in one job over all
// cores (GOMAXPROCS): the calling goroutine and the helpers take runs of
// consecutive beams of one set at a time, of all sets, so that the many
// small scans of a simulation cycle (150 scanners of 361 beams) cost one
// hand-over to the helpers, not one each, and keep both cores busy to the
// end. The distances are the ones CastAll and CastSerial return, to the
// bit (the same packets of four beams go down the hierarchies), and
// Cast's to float64 rounding: where triangles overlap or meet at the hit
// point, the traversal's order may take one hit a rounding apart from the
// other (TestOverlappingTrianglesAcrossKernels).
func (c *Caster) CastBatch(sets []Rays) {
	j := newJob(c, sets, true)
	for i := range sets {
		sets[i].Work, sets[i].Err = 0, nil
		if len(sets[i].Out) < len(sets[i].Dirs) {
			sets[i].Err = fmt.Errorf("%d directions but room for %d distances", len(sets[i].Dirs), len(sets[i].Out))
		}
		if b := sets[i].Bounds; b != nil && len(b) < len(sets[i].Dirs) {
			sets[i].Err = fmt.Errorf("%d directions but %d bounds", len(sets[i].Dirs), len(b))
		}
	}
	j.plan()
	j.cast()
	for i := range sets {
		sets[i].Work = time.Duration(j.work[i])
		if err := j.errs[i]; err != nil && sets[i].Err == nil {
			sets[i].Err = err
		}
	}
	j.release()
}

// chunk is the most consecutive beams of one set cast in one go (and what
// CastSerial casts at a time): neighbours in a scan or an image row take
// the same way down the hierarchies, so their nodes stay in cache.
const chunk = 32

// piece is the unit the participants share out: two packets. Its beams
// start at a multiple of piece, so a set falls into the same packets of
// four however the pieces are taken.
const piece = 8

// The hand-over to the helpers. A helper that has just worked spins for
// spinFor, polling for the next job, before it blocks: a caller casting
// scan after scan (or a cycle's batch after a sensor's) then hands work
// over in well under a microsecond, where waking a blocked goroutine's
// thread costs tens of microseconds here (and more than a small scan takes
// when the woken goroutine waits behind the caller on its core). The spin
// is bounded: a host that casts nothing burns nothing, and one casting a
// batch per cycle burns at most spinFor per helper per cycle (50 µs a
// cycle, 0.15% of a core at 30 Hz). The caller likewise spins at most
// waitFor for the helpers' last pieces before it blocks.
const (
	spinFor = 50 * time.Microsecond
	waitFor = 200 * time.Microsecond
)

// castJob is one CastAll or CastBatch call shared with the helpers. The
// caller waits for the pieces, not for the helpers: a helper that comes
// late finds no piece left and lets go of the job, and the last
// participant to let go returns it to the pool.
type castJob struct {
	c      *Caster
	sets   []Rays
	one    [1]Rays // CastAll's set, so that it allocates nothing
	ends   []int   // per set, the piece number after its last piece
	work   []int64 // per set, nanoseconds spent on its pieces (timed jobs)
	errs   []error // per set, the first panic (under mu)
	timed  bool
	pieces int
	parts  int // participants wanted: the caller and the helpers asked for
	mu     sync.Mutex
	// next is alone on its cache line: every take writes it, and a
	// core that writes it should not also take away the line of what the
	// others only read (the sets, ends) or write once per job.
	_    [64]byte
	next atomic.Int64 // the next piece to take
	_    [56]byte
	done atomic.Int64 // pieces finished, added by each participant once, when it has no more
	// state is running, waiting (the caller blocks on finished) or over.
	state atomic.Int32
	// refs packs the participants that have not let go (low 32 bits) and
	// the seats left for helpers (high 32 bits): one compare-and-swap
	// lets a helper join only a job that is still alive and wants one.
	refs     atomic.Int64
	finished chan struct{} // one token, sent when the caller waits
}

const (
	running int32 = iota
	waiting
	over
)

// Jobs are kept for reuse: one in spare, which a caller casting one call
// after another always finds, the rest in jobPool (which the race
// detector empties at random).
var (
	spare   atomic.Pointer[castJob]
	jobPool = sync.Pool{New: func() any { return &castJob{finished: make(chan struct{}, 1)} }}
)

func newJob(c *Caster, sets []Rays, timed bool) *castJob {
	j := spare.Swap(nil)
	if j == nil {
		j = jobPool.Get().(*castJob)
	}
	j.c, j.sets, j.timed = c, sets, timed
	return j
}

// plan numbers the pieces of every set and sizes the per-set records.
func (j *castJob) plan() {
	j.ends, j.work, j.errs = j.ends[:0], j.work[:0], j.errs[:0]
	n := 0
	for i := range j.sets {
		if j.sets[i].Err == nil {
			n += (len(j.sets[i].Dirs) + piece - 1) / piece
		}
		j.ends = append(j.ends, n)
		j.work = append(j.work, 0)
		j.errs = append(j.errs, nil)
	}
	j.pieces = n
}

// cast runs the job on the calling goroutine and the helpers it can get,
// and returns when every piece is written.
func (j *castJob) cast() {
	j.next.Store(0)
	j.done.Store(0)
	j.state.Store(running)
	if j.pieces == 0 {
		j.refs.Store(1)
		return
	}
	// A helper only when each participant gets two chunks' beams or more:
	// less is not worth a hand-over.
	per := 2 * chunk / piece
	helpers := min(runtime.GOMAXPROCS(0), (j.pieces+per-1)/per) - 1
	helpers = max(helpers, 0)
	j.refs.Store(int64(helpers)<<32 | 1)
	j.parts = helpers + 1
	if helpers > 0 {
		crew.once.Do(startCrew)
		crew.offer.Store(j)
		if woken := helpers - int(crew.spinning.Load()); woken > 0 {
			for range woken {
				select {
				case crew.wake <- struct{}{}:
				default:
				}
			}
			// The woken helper is queued behind this goroutine on its
			// core, where no other core takes it for a millisecond or
			// more; yielding runs it at once and moves this goroutine to
			// the core that the wake-up started.
			runtime.Gosched()
		}
	}
	j.run()
	j.wait()
	if helpers > 0 {
		crew.offer.CompareAndSwap(j, nil)
	}
}

// run takes pieces until none is left. A participant's pieces come in
// increasing order, so its set cursor only moves forward. It counts its
// pieces and times its sets on its own and tells the job once (and each
// set's time once it moves past the set): one shared write per take
// (next), not three.
func (j *castJob) run() {
	var st traversal   // scratch stacks, this participant's
	set, first := 0, 0 // first: the first piece of set
	mine := int64(0)
	var last time.Time // since when set's time runs (timed jobs, cast only)
	cast := false      // whether this participant cast beams of set
	if j.timed {
		last = time.Now()
	}
	for {
		g, end := j.take()
		if g >= j.pieces {
			break
		}
		for g < end {
			for g >= j.ends[set] {
				if j.timed && cast {
					now := time.Now()
					atomic.AddInt64(&j.work[set], int64(now.Sub(last)))
					last = now
				}
				cast = false
				first = j.ends[set]
				set++
			}
			// This set's pieces of the take, a chunk's beams at a time.
			n := min(end, j.ends[set], g+chunk/piece) - g
			j.castChunk(set, (g-first)*piece, n*piece, &st)
			cast = true
			g += n
			mine += int64(n)
		}
	}
	if j.timed && cast {
		atomic.AddInt64(&j.work[set], int64(time.Since(last)))
	}
	if mine > 0 && j.done.Add(mine) == int64(j.pieces) {
		if j.state.Swap(over) == waiting {
			j.finished <- struct{}{}
		}
	}
}

// take claims the pieces g to end-1 (g >= pieces: none left): a run of
// consecutive pieces, a quarter of what is left per participant and at
// least one (guided self-scheduling). Early runs are long, so each core
// casts a region of neighbouring beams (a band of a depth image) whose
// nodes stay in its own cache, rather than every other chunk of the same
// rows as its neighbour, and few runs are taken (each take moves next's
// cache line between the cores); the last are single pieces of two
// packets, so that the cores end within a fraction of a chunk of each
// other. The packets, and so the bits, are the same however the pieces
// are taken.
func (j *castJob) take() (g, end int) {
	for {
		n := j.next.Load()
		left := int64(j.pieces) - n
		if left <= 0 {
			return j.pieces, j.pieces
		}
		k := max(left/int64(4*j.parts), 1)
		if j.next.CompareAndSwap(n, n+k) {
			return int(n), int(n + k)
		}
	}
}

// castChunk casts n beams of set si from beam lo (n at most chunk; fewer
// where the set ends). A panic is kept as the set's error, and the beams
// count as done, so that the job still ends.
func (j *castJob) castChunk(si, lo, n int, st *traversal) {
	defer func() {
		if p := recover(); p != nil {
			j.mu.Lock()
			if j.errs[si] == nil {
				j.errs[si] = fmt.Errorf("the ray caster failed: %v", p)
			}
			j.mu.Unlock()
		}
	}()
	rs := &j.sets[si]
	hi := min(lo+n, len(rs.Dirs))
	if rs.Prepare != nil {
		rs.Prepare(lo, hi)
	}
	var bounds []float64
	if rs.Bounds != nil {
		bounds = rs.Bounds[lo:hi]
	}
	// The distances go to Out in one copy when the beams are done: the
	// pieces of a set meet inside cache lines of Out, and each packet
	// writing its four there had those lines bounce between the cores
	// that cast neighbouring beams.
	out := st.out[:hi-lo]
	j.c.castRun(rs.Origin, rs.Dirs[lo:hi], rs.TMax, bounds, out, st)
	copy(rs.Out[lo:hi], out)
}

// wait returns when every piece is written: it spins a while (the others'
// last pieces are short), then blocks.
func (j *castJob) wait() {
	start := time.Now()
	for j.state.Load() != over {
		if time.Since(start) > waitFor {
			if j.state.CompareAndSwap(running, waiting) {
				<-j.finished
			}
			return
		}
		runtime.Gosched()
	}
}

// join makes a helper a participant, if the job is still alive and wants
// one more.
func (j *castJob) join() bool {
	for {
		r := j.refs.Load()
		if r&0xffffffff == 0 || r>>32 == 0 {
			return false
		}
		if j.refs.CompareAndSwap(r, r-1<<32+1) {
			return true
		}
	}
}

// release lets go of the job; the last participant returns it to the pool.
func (j *castJob) release() {
	if j.refs.Add(-1)&0xffffffff == 0 {
		j.c, j.sets, j.one[0] = nil, nil, Rays{}
		clear(j.errs)
		if !spare.CompareAndSwap(nil, j) {
			jobPool.Put(j)
		}
	}
}

// crew is the helpers, started on first use and kept: a call then costs
// no goroutine start and no allocation. There are NumCPU-1 of them (the
// caller is the other participant); a job takes at most GOMAXPROCS-1.
var crew struct {
	once     sync.Once
	offer    atomic.Pointer[castJob] // the newest job that wants helpers
	spinning atomic.Int32            // helpers polling offer
	wake     chan struct{}           // a token wakes a blocked helper
	helpers  int
}

func startCrew() {
	crew.helpers = max(runtime.NumCPU()-1, 1)
	crew.wake = make(chan struct{}, crew.helpers)
	for range crew.helpers {
		go helper()
	}
}

func helper() {
	for {
		crew.spinning.Add(1)
		start := time.Now()
		for time.Since(start) < spinFor {
			if j := crew.offer.Load(); j != nil && j.join() {
				crew.spinning.Add(-1)
				j.run()
				j.release()
				crew.spinning.Add(1)
				start = time.Now()
				continue
			}
			runtime.Gosched()
		}
		crew.spinning.Add(-1)
		<-crew.wake
	}
}
