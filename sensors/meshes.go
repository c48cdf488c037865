package sensors

import (
	"fmt"
	"math"

	"github.com/g3n/engine/gls"
	"github.com/go-gl/mathgl/mgl32"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/internal/gpu"
	"github.com/simvis/simvis/models"
)

// primMesh is a primitive's triangles on the GL, uploaded once per
// renderer for every pass of its own that draws them (shadow maps, range,
// depth and segmentation renders), with its bounds in primitive
// coordinates for culling and fitting views.
type primMesh struct {
	*gpu.Mesh
	lo, hi mgl64.Vec3 // bounding box
	center mgl64.Vec3 // bounding sphere
	radius float64
}

// mesh returns a primitive's mesh, uploaded on first use, with its edge
// set's lines where edges is given (an upload for a depth camera or a
// shadow map has none yet). Texture coordinates go along for cut-outs;
// without them the attribute reads (0, 0), as the cut-out rule takes it.
func (r *Renderer) mesh(gs *gls.GLS, p *models.Primitive, edges *edgeSet) (*primMesh, error) {
	m, ok := r.meshes[p.Key]
	if !ok {
		var uv []mgl32.Vec2
		if len(p.TexCoords) == len(p.Positions) {
			uv = p.TexCoords
		}
		gm, err := gpu.NewMesh(gs, p.Positions, uv, p.Indices)
		if err != nil {
			return nil, fmt.Errorf("sensors: uploading a mesh: %w", err)
		}
		m = &primMesh{Mesh: gm}
		for i, q := range p.Positions {
			v := mgl64.Vec3{float64(q[0]), float64(q[1]), float64(q[2])}
			if i == 0 {
				m.lo, m.hi = v, v
			}
			for k := 0; k < 3; k++ {
				m.lo[k], m.hi[k] = math.Min(m.lo[k], v[k]), math.Max(m.hi[k], v[k])
			}
		}
		m.center = m.lo.Add(m.hi).Mul(0.5)
		m.radius = m.hi.Sub(m.lo).Len() / 2
		if r.meshes == nil {
			r.meshes = map[[32]byte]*primMesh{}
		}
		r.meshes[p.Key] = m
	}
	if edges != nil && !m.HasEdges() {
		if err := m.SetEdges(gs, edges.indices); err != nil {
			return nil, fmt.Errorf("sensors: uploading a mesh: %w", err)
		}
	}
	return m, nil
}
