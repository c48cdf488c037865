package scene

import "github.com/simvis/simvis/models"

// Export returns the composed scene as one model with the current element
// values applied: every node keeps its name and local transform, meshes are
// shared as in the scene, so other tools can check what simvis built.
func (s *Scene) Export() (*models.Model, error) {
	if err := s.Update(); err != nil {
		return nil, err
	}
	out := models.NewModel("simvis scene")
	var walk func(n *Node, parent *models.Node)
	walk = func(n *Node, parent *models.Node) {
		name := n.Name
		if n.Kind == KindGroup {
			name = "scene"
		}
		mn := out.AddNode(parent, name, n.local, n.mesh)
		for _, c := range n.children {
			walk(c, mn)
		}
	}
	walk(s.top, nil)
	return out, nil
}
