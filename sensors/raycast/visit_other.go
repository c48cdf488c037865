//go:build !amd64

package raycast

import "github.com/go-gl/mathgl/mgl64"

// visit tests the ray against the children of nd and returns those it
// enters before tmax, nearest first, with their entry distances (see
// visitScalar).
func (r *ray) visit(nd *node4, tmax float64, refs *[4]int32, ts *[4]float64) int {
	return r.visitScalar(nd, tmax, refs, ts)
}

// intersectAVX2 is never called where useAVX2 is false.
func intersectAVX2(nodes *node4, packs *triPack, r *ray, tmax float64, stack *stackEntry, depth int) (t float64, tri int32, ok bool) {
	return tmax, -1, false
}

// useAVX2 is false: no vector tests here.
var useAVX2 = false

// intersectPacketAVX2 is never called where useAVX2 is false.
func intersectPacketAVX2(nodes *node4, packs *triPack, p *packet, mask uint64, stack *packetEntry, depth int) (ok bool) {
	return false
}

// visitPacketAVX2 is never called where useAVX2 is false.
func visitPacketAVX2(nd *node4, p *packet, mask uint64, lanes *[4]int32, entry *[4]float64) {}

// mapPacketAVX2 is never called where useAVX2 is false.
func mapPacketAVX2(a *affine, src, dst *packet) {}

// worldPacketAVX2 is never called where useAVX2 is false.
func worldPacketAVX2(p *packet, dirs *mgl64.Vec3) {}

// intersectPacket8AVX2 is never called: no geometry has nodes8 here.
func intersectPacket8AVX2(nodes *node8f, packs *triPack, p *packet, mask uint64, stack *packetEntry, depth int) (ok bool) {
	return false
}

// visitPacket8AVX2 is never called where useAVX2 is false.
func visitPacket8AVX2(nd *node8f, p *packet, mask uint64, lanes *[8]uint32, entry *[8]float32) {}

// walkTopAVX2 is never called where useAVX2 is false.
func walkTopAVX2(nodes *node4, p *packet, stack *packetEntry, depth int, wk *topWalk) (status int) {
	return 0
}
