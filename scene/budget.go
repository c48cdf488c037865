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
	sensors, elements      int
	samples                int64 // sensors' pixels and beams
}

// add counts what a command that succeeded added into the scene's total.
func (sp *spent) add(o *spent) {
	sp.parts += o.parts
	sp.vertices += o.vertices
	sp.triangles += o.triangles
	sp.nodes += o.nodes
	sp.fileBytes += o.fileBytes
	sp.imagePixels += o.imagePixels
	sp.sensors += o.sensors
	sp.elements += o.elements
	sp.samples += o.samples
}

// Totals is what a scene holds, as the whole-scene budgets count it.
type Totals struct {
	Parts, Nodes, Sensors, Elements int
	Vertices, Triangles             int64
	ModelBytes, ImagePixels         int64 // of the distinct model files loaded
	SensorSamples                   int64 // pixels and beams of all sensors
}

// Totals returns what the scene holds, as the whole-scene budgets of
// Limits count it.
func (s *Scene) Totals() Totals {
	t := &s.total
	return Totals{Parts: t.parts, Nodes: t.nodes, Sensors: t.sensors, Elements: t.elements,
		Vertices: t.vertices, Triangles: t.triangles, ModelBytes: t.fileBytes, ImagePixels: t.imagePixels,
		SensorSamples: t.samples}
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
	pick(&d.SceneParts, l.SceneParts)
	pick(&d.SceneNodes, l.SceneNodes)
	pick(&d.SceneVertices, l.SceneVertices)
	pick(&d.SceneTriangles, l.SceneTriangles)
	pick(&d.SceneModelBytes, l.SceneModelBytes)
	pick(&d.SceneImagePixels, l.SceneImagePixels)
	pick(&d.SceneSensors, l.SceneSensors)
	pick(&d.SensorSamples, l.SensorSamples)
	pick(&d.Elements, l.Elements)
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

// sceneBudgetError is the error of command c that would take the whole
// scene past a budget: held is what the scene holds before the command,
// adds what the command (embedded commands included) would add.
func sceneBudgetError[T int | int64](c *Command, attr string, held, adds, limit T, what, field, flag string) error {
	return c.Errorf(attr, "the scene holds %d %s and the command would add %d, over the whole-scene budget of %d "+
		"(raise it with scene.Options.Limits.%s / %s)", held, what, adds, limit, field, flag)
}

// sceneOver checks what the running command would add (adds, on top of
// what it added so far) against the whole-scene budgets of the graph.
func (s *Scene) sceneOver(c *Command, attr string, parts int, nodes int, vertices, triangles int64) error {
	l, sp, t := &s.limits, &s.spent, &s.total
	switch {
	case parts > 0 && over(t.parts+sp.parts+parts, l.SceneParts):
		return sceneBudgetError(c, attr, t.parts, sp.parts+parts, l.SceneParts, "parts", "SceneParts", "--max-scene-parts")
	case over(t.vertices+sp.vertices+vertices, l.SceneVertices):
		return sceneBudgetError(c, attr, t.vertices, sp.vertices+vertices, l.SceneVertices, "vertices", "SceneVertices", "--max-scene-vertices")
	case over(t.triangles+sp.triangles+triangles, l.SceneTriangles):
		return sceneBudgetError(c, attr, t.triangles, sp.triangles+triangles, l.SceneTriangles, "triangles", "SceneTriangles", "--max-scene-triangles")
	case over(t.nodes+sp.nodes+nodes, l.SceneNodes):
		return sceneBudgetError(c, attr, t.nodes, sp.nodes+nodes, l.SceneNodes, "scene nodes", "SceneNodes", "--max-scene-nodes")
	}
	return nil
}

// chargeElement refuses an element command before its constructor runs
// if the scene holds as many elements as it may.
func (s *Scene) chargeElement(c *Command) error {
	l, sp, t := &s.limits, &s.spent, &s.total
	if over(t.elements+sp.elements+1, l.Elements) {
		return c.Errorf("", "the scene holds %d elements and the command would add %d, over the budget of %d elements "+
			"(raise it with scene.Options.Limits.Elements / --max-elements)", t.elements, sp.elements+1, l.Elements)
	}
	return nil
}

// chargeSensor refuses a sensor command, before its constructor runs, if
// the scene holds as many sensors as it may or if the sensor's pixels or
// beams (from its type's SensorCost, read from the command's attributes)
// would take all sensors' together past Limits.SensorSamples.
func (s *Scene) chargeSensor(c *Command, typ string) (samples int64, err error) {
	l, sp, t := &s.limits, &s.spent, &s.total
	if over(t.sensors+sp.sensors+1, l.SceneSensors) {
		return 0, sceneBudgetError(c, "", t.sensors, sp.sensors+1, l.SceneSensors, "sensors", "SceneSensors", "--max-scene-sensors")
	}
	cost, ok := sensorCost(typ)
	if !ok {
		return 0, nil
	}
	samples, attr, err := cost(c)
	if err != nil {
		return 0, wrapCommandError(c, err)
	}
	if samples < 0 {
		samples = 0
	}
	if over(t.samples+sp.samples+samples, l.SensorSamples) {
		return 0, c.Errorf(attr, "the scene's sensors have %d pixels and beams and the command would add %d, over the budget of %d "+
			"for all sensors together (raise it with scene.Options.Limits.SensorSamples / --max-sensor-mpixels, in units of 2^20)",
			t.samples, sp.samples+samples, l.SensorSamples)
	}
	return samples, nil
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
	if err := s.sceneOver(c, "file", 1, 3+lm.modelNodes+lm.insertionPts+lm.meshes, lm.vertices, lm.triangles); err != nil {
		return err
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
	t, sl := &s.total, &s.limits
	if over(t.fileBytes+sp.fileBytes, sl.SceneModelBytes) {
		return sceneBudgetError(c, "file", t.fileBytes, sp.fileBytes, sl.SceneModelBytes, "bytes of model files",
			"SceneModelBytes", "--max-scene-model-mib")
	}
	if over(t.imagePixels+sp.imagePixels, sl.SceneImagePixels) {
		return sceneBudgetError(c, "file", t.imagePixels, sp.imagePixels, sl.SceneImagePixels, "image pixels of model files",
			"SceneImagePixels", "--max-scene-image-mpixels")
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
	return s.sceneOver(c, attr, 0, 0, 0, 0)
}
