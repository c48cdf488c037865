package scene

import "github.com/simvis/simvis/models"

// spent is what the running command (with the commands embedded in the
// models it loads) has added so far.
type spent struct {
	parts               int
	vertices, triangles int64
	nodes               int
	// What the models the command loaded (not found in the cache) read
	// and decoded: Limits.Model bounds each file, and also their sum, or
	// one command naming many distinct files would multiply it.
	fileBytes, imagePixels int64
}

func (sp *spent) addMesh(m *models.Mesh) {
	for _, p := range m.Primitives {
		sp.vertices += int64(len(p.Positions))
		sp.triangles += int64(len(p.Indices) / 3)
	}
}

// resolved returns l with zero fields replaced by DefaultLimits' values.
func (l Limits) resolved() Limits {
	d := DefaultLimits
	pick(&d.Model.FileBytes, l.Model.FileBytes)
	pick(&d.Model.ImagePixels, l.Model.ImagePixels)
	pick(&d.Model.Vertices, l.Model.Vertices)
	pick(&d.Model.Triangles, l.Model.Triangles)
	pick(&d.Model.Nodes, l.Model.Nodes)
	pick(&d.Parts, l.Parts)
	pick(&d.Vertices, l.Vertices)
	pick(&d.Triangles, l.Triangles)
	pick(&d.Nodes, l.Nodes)
	return d
}

func pick[T int | int64](dst *T, v T) {
	if v != 0 {
		*dst = v
	}
}

// Limits returns the scene's limits, defaults filled in.
func (s *Scene) Limits() Limits { return s.limits }

// over reports whether total exceeds limit (negative: no limit).
func over[T int | int64](total, limit T) bool { return limit >= 0 && total > limit }

// budgetError is the error of command c whose additions would pass a
// per-command budget.
func budgetError[T int | int64](c *Command, attr string, total, limit T, what, field, flag string) error {
	return c.Errorf(attr, "the command, with the commands embedded in its models, would add %d %s, over its budget of %d "+
		"(raise it with scene.Options.Limits.%s / %s)", total, what, limit, field, flag)
}

// charge counts instantiating lm once for part command c, before anything
// is built, and refuses it if that passes a budget.
func (s *Scene) charge(c *Command, lm *loadedModel) error {
	l, sp := &s.limits, &s.spent
	if over(sp.parts+1, l.Parts) {
		return budgetError(c, "file", sp.parts+1, l.Parts, "parts", "Parts", "--max-parts")
	}
	if over(sp.vertices+lm.vertices, l.Vertices) {
		return budgetError(c, "file", sp.vertices+lm.vertices, l.Vertices, "vertices", "Vertices", "--max-vertices")
	}
	if over(sp.triangles+lm.triangles, l.Triangles) {
		return budgetError(c, "file", sp.triangles+lm.triangles, l.Triangles, "triangles", "Triangles", "--max-triangles")
	}
	// The part's separator, insertion point and model root, the model's
	// nodes, their insertion points and their meshes' primitives.
	if nodes := sp.nodes + 3 + lm.modelNodes + lm.insertionPts + lm.meshes; over(nodes, l.Nodes) {
		return budgetError(c, "file", nodes, l.Nodes, "scene nodes", "Nodes", "--max-nodes")
	}
	sp.parts++
	sp.vertices += lm.vertices
	sp.triangles += lm.triangles
	return nil
}

// loaded counts a model the command loaded against the model budgets,
// summed over the command.
func (s *Scene) loaded(c *Command, m *models.Model) error {
	l, sp := &s.limits.Model, &s.spent
	b, p := m.LoadCost()
	sp.fileBytes += b
	sp.imagePixels += p
	if over(sp.fileBytes, l.FileBytes) {
		return budgetError(c, "file", sp.fileBytes, l.FileBytes, "bytes of model files", "Model.FileBytes", "--max-model-mib")
	}
	if over(sp.imagePixels, l.ImagePixels) {
		return budgetError(c, "file", sp.imagePixels, l.ImagePixels, "image pixels", "Model.ImagePixels", "--max-image-mpixels")
	}
	return nil
}

// overspent checks what an element or sensor constructor added (nodes,
// meshes) against the budgets.
func (s *Scene) overspent(c *Command, attr string) error {
	l, sp := &s.limits, &s.spent
	switch {
	case over(sp.nodes, l.Nodes):
		return budgetError(c, attr, sp.nodes, l.Nodes, "scene nodes", "Nodes", "--max-nodes")
	case over(sp.vertices, l.Vertices):
		return budgetError(c, attr, sp.vertices, l.Vertices, "vertices", "Vertices", "--max-vertices")
	case over(sp.triangles, l.Triangles):
		return budgetError(c, attr, sp.triangles, l.Triangles, "triangles", "Triangles", "--max-triangles")
	}
	return nil
}
