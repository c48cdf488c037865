package scene

import (
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
)

// Param declares one parameter an element exports: a named float whose
// initial value comes from the XML attribute of the same name, else Default.
type Param struct {
	Name    string
	Default float64
}

// Element is a plug-in that changes the scene graph its own way and exports
// named float parameters (paper III-D). The framework sees only the parameters.
type Element interface {
	// Params lists the element's parameters in table order.
	Params() []Param
	// Apply propagates the element's current values (its run of the
	// parameter table, in Params order) into the scene graph. An error
	// rejects the values; the element must then keep its previous state.
	Apply(values []float64) error
}

// Preparer is implemented by elements whose drawing depends on world state
// that other elements change, such as a directional light whose direction is
// its frame's world +x: the scene calls Prepare before every render, after
// changed parameters were applied.
type Preparer interface {
	Prepare()
}

// Sensor produces data from the scene (paper III-E). The scene package only
// mounts sensors and lists them; the sensors package renders them.
type Sensor interface {
	// Describe returns the sensor's settings for inspect output.
	Describe() map[string]any
}

// ElementEntry is an element in the scene: its command, its insertion point
// and its run of the parameter table.
type ElementEntry struct {
	Name    string
	Type    string
	At      string // insertion point name
	Command *Command
	Element Element
	Params  []Param
	Start   int    // index of the first parameter in the table
	Class   string // the class attribute ("" if none; see Scene.Class)
}

// SensorEntry is a sensor in the scene, mounted at Frame.
type SensorEntry struct {
	Name    string
	Type    string
	At      string
	Command *Command
	Frame   *Node
	Sensor  Sensor
	// Rate is the sensor's rate attribute in Hz: how often a running host
	// (simvis serve) renders it; 0, the default, means every host cycle.
	Rate float64
}

// PartEntry is a part in the scene.
type PartEntry struct {
	Name    string
	At      string
	File    string // resolved model path
	Command *Command
	Node    *Node  // the part's separator
	Class   string // the class attribute ("" if none; see Scene.Class)
}

// Context is what element and sensor constructors receive: the command, the
// insertion point and the means to change the graph there. Changes made
// through it are undone if the command fails.
type Context struct {
	Scene   *Scene
	Command *Command
	// Name is the element's or sensor's full name (commands embedded in a
	// model get the part's name as prefix, "ROBOT/TILT").
	Name string
	// At is the insertion point named by insert_at.
	At *Node
	// Frame is a sensor's own frame (nil for elements): the pose_offset
	// applied at the insertion point; the sensor looks along its +x, +z up.
	Frame *Node

	sensed bool
}

// Sensed reports the command's sensed attribute (default true). Nodes made
// with InsertSeparator and AddChild are marked accordingly; an element that
// draws elsewhere must call Scene.SetSensed itself.
func (c *Context) Sensed() bool { return c.sensed }

// OnUndo registers fn to run if the command fails after the constructor
// returned: for changes a constructor makes outside the graph (another
// element it registered with), which the scene cannot undo itself.
func (c *Context) OnUndo(fn func()) {
	c.Scene.undo = append(c.Scene.undo, fn)
}

// InsertTransform inserts a transformation right before the insertion point.
// Following Open Inventor traversal semantics it affects everything that
// comes after it in the enclosing separator: the insertion point, whatever is
// attached there afterwards, and the part's model.
func (c *Context) InsertTransform(local mgl64.Mat4) *Node {
	return c.Scene.insertTransform(c.At, KindTransform, c.Name, c.Name, local)
}

// InsertProperty inserts a property node right before the insertion point:
// it scopes exactly what a transformation there would move (the insertion
// point, what is attached there afterwards, the part's model) for
// Scene.SetColor and Scene.SetVisible.
func (c *Context) InsertProperty() *Node {
	return c.Scene.insertTransform(c.At, KindProperty, c.Name, c.Name, mgl64.Ident4())
}

// InsertSeparator inserts a separator with the given local transform right
// before the insertion point; what goes inside it affects nothing outside.
func (c *Context) InsertSeparator(local mgl64.Mat4) *Node {
	sep := c.Scene.newNode(KindSeparator, c.Name, c.Name, local)
	if !c.sensed {
		c.Scene.SetSensed(sep, false)
	}
	c.Scene.insertBefore(c.At, sep)
	return sep
}

// AddChild adds a node under parent (one the element inserted), undone if
// the command fails.
func (c *Context) AddChild(parent *Node, kind NodeKind, name string, local mgl64.Mat4) *Node {
	n := c.Scene.newNode(kind, name, c.Name, local)
	if !c.sensed {
		c.Scene.SetSensed(n, false)
	}
	c.Scene.appendChild(parent, n)
	return n
}

// AddMesh adds a node under parent (one the element inserted) that draws
// mesh like a model's meshes: identical geometry shares GPU buffers, color
// elements above it recolor it, and sensors see it unless the command says
// sensed="false". Undone if the command fails.
func (c *Context) AddMesh(parent *Node, name string, local mgl64.Mat4, mesh *models.Mesh) *Node {
	n := c.AddChild(parent, KindCustom, name, local)
	c.Scene.attachMesh(n, mesh)
	c.Scene.spent.addMesh(mesh)
	return n
}
