package raycast

import (
	"math"

	"github.com/go-gl/mathgl/mgl64"
)

// packet is up to four rays from one origin, lane by lane, as the packet
// traversal (intersectPacketAVX2) reads them: TestAssemblyLayout holds the
// two to the same layout. A sensor's beams share their origin, and
// neighbouring beams take the same way down a hierarchy: traversing it
// once for four shares the wait for each node among them.
type packet struct {
	o    [3]float64
	_    float64
	d    [3][packLanes]float64 // d[axis][lane]
	inv  [3][packLanes]float64
	tmax [packLanes]float64
	tri  [packLanes]int64 // the triangle hit, in leaf order; -1 for none
	// mixed is 0 where the lanes' inverse directions share their sign on
	// every axis; near and far are then each axis' near and far planes
	// by that sign, as offsets into a node4 (setSigns). The node tests
	// pick no planes per lane for such a packet.
	mixed     int64
	near, far [3]int64
}

// packetEntry is a node left for later by a packet: the lanes that enter
// it and the least of their entry distances.
type packetEntry struct {
	node, mask int32
	t          float64
}

// topWalk is where castPacket's traversal of the hierarchy over
// instances stands between walkTopAVX2's calls: the node to test next or
// the leaf reached (a ref), its lanes, and the entries on the stack.
type topWalk struct {
	cur, mask int32
	sp        int
}

// setRays sets the packet's rays: origin o along dirs (at most four;
// lanes from len(dirs) on repeat the last ray, and their results are not
// read), mapped by a where a is not nil.
func (p *packet) setRays(a *affine, o [3]float64, dirs []mgl64.Vec3) {
	if a != nil {
		o = a.point(o)
	}
	p.o = o
	for l := 0; l < packLanes; l++ {
		d := [3]float64(dirs[min(l, len(dirs)-1)])
		if a != nil {
			d = a.vector(d)
		}
		p.d[0][l], p.d[1][l], p.d[2][l] = d[0], d[1], d[2]
		p.inv[0][l], p.inv[1][l], p.inv[2][l] = 1/d[0], 1/d[1], 1/d[2]
	}
	p.setSigns()
}

// setSigns sets mixed, near and far from inv, as the assembly does for
// the packets it fills (mapPacketAVX2, worldPacketAVX2; traverse_amd64.s).
func (p *packet) setSigns() {
	p.mixed = 0
	for a := 0; a < 3; a++ {
		bits := int64(0) // the lanes' sign bits, as VMOVMSKPD has them
		for l := 0; l < packLanes; l++ {
			if math.Signbit(p.inv[a][l]) {
				bits |= 1 << l
			}
		}
		p.mixed |= (bits + 1) & 14 // 0 for none or all
		lo, hi := int64(nodeLoOffset+32*a), int64(nodeHiOffset+32*a)
		if bits&1 != 0 {
			lo, hi = hi, lo
		}
		p.near[a], p.far[a] = lo, hi
	}
}

// setWorldRays is setRays(nil, o, dirs), the directions gathered into
// lanes and inverted four at a time (worldPacketAVX2): the same bits. The
// assembly reads the Vec3s where they lie: lanes filled here one by one
// and then read as rows made each packet wait for its own stores.
func (p *packet) setWorldRays(o [3]float64, dirs []mgl64.Vec3) {
	p.o = o
	if len(dirs) >= packLanes {
		worldPacketAVX2(p, &dirs[0])
		return
	}
	var four [packLanes]mgl64.Vec3
	for l := range four {
		four[l] = dirs[min(l, len(dirs)-1)]
	}
	worldPacketAVX2(p, &four[0])
}

// intersectPacket lowers p.tmax and sets p.tri in the lanes in mask where
// a triangle of g is hit before p.tmax.
func (g *Geometry) intersectPacket(p *packet, mask int32, st *traversal) {
	if len(g.packs) == 0 {
		return
	}
	if g.nodes8 != nil {
		if intersectPacket8AVX2(&g.nodes8[0], &g.packs[0], p, uint64(mask), &st.pgeom[0], len(st.pgeom)) {
			return
		}
	} else if g.cut == nil && intersectPacketAVX2(&g.nodes[0], &g.packs[0], p, uint64(mask), &st.pgeom[0], len(st.pgeom)) {
		return
	}
	// Cut-outs, which the assembly does not know, or deeper than the
	// scratch stack: lane by lane (the packet's tmax is as it was; hits it
	// wrote are found again).
	for l := 0; l < packLanes; l++ {
		if mask&(1<<l) == 0 {
			continue
		}
		p.tri[l] = -1
		var r ray
		r.set(p.o, [3]float64{p.d[0][l], p.d[1][l], p.d[2][l]})
		if t, tri := g.intersect(&r, p.tmax[l], st); tri >= 0 {
			p.tmax[l], p.tri[l] = t, int64(tri)
		}
	}
}

// castPacket writes into out[l] the distance along dirs[l] from origin to
// the nearest surface closer than tmax[l] (tmax[l] if none), for up to four rays
// traversing the hierarchies together: a node is entered by the lanes that
// enter its box, each instance's geometry with intersectPacket. Its
// distances are the nearest hits that Cast finds, to float64 rounding:
// where several triangles meet a ray at one point (a shared edge), the one
// found first may differ.
func (c *Caster) castPacket(origin [3]float64, dirs []mgl64.Vec3, tmax [packLanes]float64, out []float64, st *traversal) {
	c.castPacketOn(st.ptop[:], origin, dirs, tmax, out, st)
}

// castPacketOn is castPacket with stack for the hierarchy over instances
// (grown where it is too small).
func (c *Caster) castPacketOn(stack []packetEntry, origin [3]float64, dirs []mgl64.Vec3, tmax [packLanes]float64, out []float64, st *traversal) {
	n := len(dirs)
	top := c.top
	if len(top) == 0 || len(c.instances) == 0 {
		copy(out[:n], tmax[:n])
		return
	}
	// The rays in the world, and in the placement mapped last: every
	// field is set before it is read.
	w, p := &st.w, &st.p
	w.setWorldRays(origin, dirs)
	w.tmax = tmax
	mapped := int32(-1)
	wk := topWalk{mask: int32(1)<<n - 1}
	for {
		switch walkTopAVX2(&top[0], w, &stack[0], len(stack), &wk) {
		case 0:
			copy(out[:n], w.tmax[:n])
			return
		case 2:
			// Deeper than the stack: this node here, the stack grown.
			if stack = topStep(top, w, stack, &wk); wk.cur >= 0 {
				continue
			}
		}
		l := ^wk.cur
		for i := l >> 3; i < l>>3+l&7; i++ {
			in := &c.instances[i]
			if in.placement != mapped {
				mapPacketAVX2(&in.toLocal, w, p)
				mapped = in.placement
			}
			p.tmax = w.tmax
			p.tri = [packLanes]int64{-1, -1, -1, -1}
			in.geom.intersectPacket(p, wk.mask, st)
			for k := 0; k < n; k++ {
				if wk.mask&(1<<k) != 0 && p.tri[k] >= 0 {
					w.tmax[k] = p.tmax[k]
				}
			}
		}
	}
}

// topStep is walkTopAVX2's step from node wk.cur, for a stack that must
// grow: the node's entered children (it enters some) pushed but the
// nearest, farthest first, and wk moved to the nearest.
func topStep(top []node4, w *packet, stack []packetEntry, wk *topWalk) []packetEntry {
	nd := &top[wk.cur]
	var lanes [4]int32
	var entry [4]float64
	visitPacketAVX2(nd, w, uint64(wk.mask), &lanes, &entry)
	// The entered children nearest first (insertion, the earlier child
	// first among equals).
	var order [4]int
	m := 0
	for k := 0; k < 4; k++ {
		if lanes[k] == 0 {
			continue
		}
		j := m
		for j > 0 && entry[order[j-1]] > entry[k] {
			order[j] = order[j-1]
			j--
		}
		order[j] = k
		m++
	}
	for i := m - 1; i > 0; i-- {
		k := order[i]
		if wk.sp == len(stack) {
			stack = append(stack, packetEntry{})
		}
		stack[wk.sp] = packetEntry{node: nd.child[k], mask: lanes[k], t: entry[k]}
		wk.sp++
	}
	wk.cur, wk.mask = nd.child[order[0]], lanes[order[0]]
	return stack
}
