package sensors

import (
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
)

// edgeSet is the edges of a primitive that the ID render draws as lines:
// each edge once, and none between two triangles of one plane (a box
// face's diagonal), since a surface continues across those and never ends
// there in a sliver thinner than a pixel.
type edgeSet struct {
	indices []uint32   // vertex pairs, for GL_LINES
	tri     [][2]int32 // per line, the triangles it belongs to (second -1 if none or several)
}

// flatSine is the sine of the angle between two triangles' normals below
// which their shared edge is no crease (float32 vertices of one plane tilt
// by about 1e-7).
const flatSine = 1e-6

func newEdgeSet(p *models.Primitive) *edgeSet {
	// Edges are keyed by their corners' positions, not indices: meshes
	// repeat a vertex for each face's normal.
	type key [2][3]float32
	type use struct {
		a, b   uint32 // vertex indices, for drawing
		tri    [2]int32
		count  int
		crease bool
	}
	n := len(p.Indices) / 3
	normal := func(i int) mgl64.Vec3 {
		at := func(k uint32) mgl64.Vec3 {
			q := p.Positions[k]
			return mgl64.Vec3{float64(q[0]), float64(q[1]), float64(q[2])}
		}
		a, b, c := at(p.Indices[3*i]), at(p.Indices[3*i+1]), at(p.Indices[3*i+2])
		return b.Sub(a).Cross(c.Sub(a))
	}
	uses := make(map[key]*use, 3*n/2)
	var order []key
	for i := 0; i < n; i++ {
		v := p.Indices[3*i : 3*i+3]
		for k := 0; k < 3; k++ {
			a, b := v[k], v[(k+1)%3]
			pa, pb := p.Positions[a], p.Positions[b]
			if less(pb, pa) {
				pa, pb = pb, pa
			}
			e := key{pa, pb}
			u, ok := uses[e]
			if !ok {
				uses[e] = &use{a: a, b: b, tri: [2]int32{int32(i), -1}, count: 1}
				order = append(order, e)
				continue
			}
			u.count++
			if u.count == 2 {
				u.tri[1] = int32(i)
				n0, n1 := normal(int(u.tri[0])), normal(i)
				// Windings may differ: a plane is a plane either way. A
				// degenerate triangle has no plane: its edges stay.
				l0, l1 := n0.Len(), n1.Len()
				u.crease = l0 == 0 || l1 == 0 || n0.Cross(n1).Len() > flatSine*l0*l1
			}
		}
	}
	es := &edgeSet{}
	for _, e := range order {
		u := uses[e]
		// Boundary edges (one triangle), creases, and edges that three or
		// more triangles share are all where a surface may end.
		if u.count == 2 && !u.crease {
			continue
		}
		if u.count > 2 {
			u.tri[1] = -1
		}
		es.indices = append(es.indices, u.a, u.b)
		es.tri = append(es.tri, u.tri)
	}
	return es
}

func less(a, b [3]float32) bool {
	for k := 0; k < 3; k++ {
		if a[k] != b[k] {
			return a[k] < b[k]
		}
	}
	return false
}
