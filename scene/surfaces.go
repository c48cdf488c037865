package scene

import (
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
)

// MeshInstance is one mesh placed in the world.
type MeshInstance struct {
	Mesh  *models.Mesh
	World mgl64.Mat4 // mesh coordinates -> world, float64
	Node  *Node
}

// SensedMeshes appends to dst every mesh that simulated range sensors see,
// with its world transform: the meshes of models and those elements add
// with AddMesh, unless switched off or under sensed="false". Geometry that
// elements draw otherwise (points, lines, labels) has no surface for a range
// sensor. Call Update first if parameters changed.
func (s *Scene) SensedMeshes(dst []MeshInstance) []MeshInstance {
	var walk func(n *Node, parent mgl64.Mat4)
	walk = func(n *Node, parent mgl64.Mat4) {
		if n.hidden || n.unsensed {
			return
		}
		world := parent.Mul4(n.local)
		if n.mesh != nil {
			dst = append(dst, MeshInstance{Mesh: n.mesh, World: world, Node: n})
		}
		for _, c := range n.children {
			walk(c, world)
		}
	}
	walk(s.top, mgl64.Ident4())
	return dst
}
