package raycast

import (
	"github.com/go-gl/mathgl/mgl64"
	"golang.org/x/sys/cpu"
)

// useAVX2 selects the vector tests (traverse_amd64.s); without AVX2 the
// Go loops and scalar tests run.
var useAVX2 = cpu.X86.HasAVX2

// visitAVX2 is visitScalar's box tests for the four children at once: it
// writes each child's entry distance into ts and returns the bit set of the
// children entered before tmax (bit k for child k). The arithmetic is the
// scalar test's, operation for operation, so that both enter the same
// children.
//
//go:noescape
func visitAVX2(r *ray, nd *node4, tmax float64, ts *[4]float64) uint64

// visit tests the ray against the children of nd and returns those it
// enters before tmax, nearest first, with their entry distances (see
// visitScalar).
func (r *ray) visit(nd *node4, tmax float64, refs *[4]int32, ts *[4]float64) int {
	if !useAVX2 {
		return r.visitScalar(nd, tmax, refs, ts)
	}
	var t [4]float64
	bits := visitAVX2(r, nd, tmax, &t)
	return sortEntered(bits, &t, nd, refs, ts)
}

// intersectAVX2 is Geometry.intersectGo's loop with visitAVX2's node test
// and triangle.hit four lanes at a time, on a stack of depth entries; ok
// is false where that stack would overflow (see traverse_amd64.s).
//
//go:noescape
func intersectAVX2(nodes *node4, packs *triPack, r *ray, tmax float64, stack *stackEntry, depth int) (t float64, tri int32, ok bool)

// intersectPacketAVX2 is Geometry.intersect for the lanes in mask of a
// packet of rays from one origin, traversing the hierarchy once for them
// all (see traverse_amd64.s). ok is false where its stack of depth
// entries would overflow.
//
//go:noescape
func intersectPacketAVX2(nodes *node4, packs *triPack, p *packet, mask uint64, stack *packetEntry, depth int) (ok bool)

// intersectPacket8AVX2 is intersectPacketAVX2 on the 8-wide float32
// hierarchy of a large geometry (node8f; see traverse_amd64.s): the same
// hits, to the bit.
//
//go:noescape
func intersectPacket8AVX2(nodes *node8f, packs *triPack, p *packet, mask uint64, stack *packetEntry, depth int) (ok bool)

// visitPacket8AVX2 is intersectPacket8AVX2's node test on its own, for
// tests: lanes[k] is the set of the lanes in mask (those at hand) that
// enter child k of nd before their p.tmax (children not in use included),
// entry[k] a lower bound of their least entry distance. A mask of one
// lane takes the traversal's one-lane test.
//
//go:noescape
func visitPacket8AVX2(nd *node8f, p *packet, mask uint64, lanes *[8]uint32, entry *[8]float32)

// visitPacketAVX2 tests the lanes in mask of a packet against the
// children of nd: lanes[k] is the set of lanes that enter child k before
// their tmax, entry[k] the least of their entry distances.
//
//go:noescape
func visitPacketAVX2(nd *node4, p *packet, mask uint64, lanes *[4]int32, entry *[4]float64)

// mapPacketAVX2 is setRays(a, src.o, src's directions) for dst: its
// origin and directions src's mapped by a (affine.point and
// affine.vector, the same operations in the same order, so the same
// bits), their inverses (1/d, as setRays divides) and dst's signs as
// setSigns sets them; dst's tmax and tri are left alone. Most of a
// packet's time in a scene of many placed parts (50 MARVINs) went to
// mapping it into each part's frame one lane at a time.
//
//go:noescape
func mapPacketAVX2(a *affine, src, dst *packet)

// worldPacketAVX2 sets p's directions to the four at dirs (gathered into
// lanes where the rays' Vec3s lie side by side), their inverses (1/d lane
// by lane, the same bits as setRays's divisions) and its signs
// (setSigns); the origin and the rest are left alone.
//
//go:noescape
func worldPacketAVX2(p *packet, dirs *mgl64.Vec3)

// walkTopAVX2 walks castPacket's hierarchy over instances from wk to the
// next leaf (1), the end (0), or a node whose entered children would not
// fit on the stack of depth entries (2; see traverse_amd64.s).
//
//go:noescape
func walkTopAVX2(nodes *node4, p *packet, stack *packetEntry, depth int, wk *topWalk) (status int)
