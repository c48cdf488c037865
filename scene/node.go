package scene

import (
	"math"

	"github.com/g3n/engine/core"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
)

// NodeKind tells what a node of the simvis scene graph is (paper Fig. 2).
type NodeKind int

const (
	// KindGroup is the scene's top group that holds the ROOT insertion point.
	KindGroup NodeKind = iota
	// KindSeparator scopes a part's (or sensor's) static offset and contents.
	KindSeparator
	// KindInsertionPoint is a named placeholder where commands attach things.
	KindInsertionPoint
	// KindTransform is a transformation inserted by an element; it applies to
	// everything after it in its separator.
	KindTransform
	// KindModel is the root of a part's loaded model.
	KindModel
	// KindModelNode is a node of a loaded model's own hierarchy.
	KindModelNode
	// KindSensor is a sensor's frame: the sensor looks along its +x, +z up.
	KindSensor
	// KindCustom is a node an element added for its own purposes.
	KindCustom
	// KindProperty is an element's scope for a property (a color, a switch):
	// like a transform it holds what follows it in its separator.
	KindProperty
)

var kindNames = [...]string{"group", "separator", "insertion_point", "transform", "model", "model_node", "sensor", "custom", "property"}

func (k NodeKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Node is one node of the scene graph. The graph keeps its own float64 local
// transforms (so frame queries keep millimeters far from the origin) and
// mirrors each node as a g3n node that renderers draw.
type Node struct {
	Kind  NodeKind
	Name  string
	Owner string // name of the part, element or sensor whose command made the node

	local    mgl64.Mat4
	parent   *Node
	children []*Node
	g3n      *core.Node

	color    *[4]float32 // color override for the model meshes below (color element)
	hidden   bool        // switched off: the subtree is not drawn
	unsensed bool        // sensed="false": drawn for viewers, not for sensors

	model   *models.Model // KindModel: the loaded model
	mesh    *models.Mesh  // KindModelNode: the node's mesh, if any
	meshG3N []core.INode  // the mesh's g3n graphics (children of g3n)

	scene *Scene     // the scene that made the node: SetLocal reports to it
	world mgl64.Mat4 // world transform as of the scene's last check (see Scene.check)
	visit uint64     // the check that last computed world
}

// newNode makes a node of s and counts it against the command's budget.
func (s *Scene) newNode(kind NodeKind, name, owner string, local mgl64.Mat4) *Node {
	n := &Node{Kind: kind, Name: name, Owner: owner, local: local, world: local, g3n: core.NewNode(), scene: s}
	n.g3n.SetName(name)
	n.g3n.SetUserData(n)
	// g3n forwards a "descendant added" event from every node to the top
	// of its tree on each Add, which makes every insertion cost the depth
	// of the tree (quadratic chains of parts and models). Nothing listens
	// to it, so the scene's own nodes do not forward it.
	n.g3n.UnsubscribeID(core.OnDescendant, nil)
	setG3NMatrix(n.g3n, local)
	s.spent.nodes++
	return n
}

func setG3NMatrix(g *core.Node, m mgl64.Mat4) {
	g.SetMatrix(toMath32(m))
}

// Parent returns the parent node (nil for the top group).
func (n *Node) Parent() *Node { return n.parent }

// Children returns the node's children in traversal order.
func (n *Node) Children() []*Node { return n.children }

// Local returns the node's transform relative to its parent.
func (n *Node) Local() mgl64.Mat4 { return n.local }

// SetLocal changes the node's transform relative to its parent. Elements use
// it on the transforms they inserted. The scene checks, when the element's
// command or Apply returns, that every world transform below stays in range
// (see Scene.Update), and refuses the values otherwise.
func (n *Node) SetLocal(m mgl64.Mat4) {
	n.local = m
	setG3NMatrix(n.g3n, m)
	if n.scene != nil {
		n.scene.moved = append(n.scene.moved, n)
		n.scene.touch()
	}
}

// World returns the node's transform relative to the world, computed in
// float64 from the chain of local transforms, top down like the scene's
// own checks and the renderers.
func (n *Node) World() mgl64.Mat4 {
	if n.parent == nil {
		return n.local
	}
	var buf [32]*Node
	chain := buf[:0]
	for p := n; p != nil; p = p.parent {
		chain = append(chain, p)
	}
	m := chain[len(chain)-1].local
	for i := len(chain) - 2; i >= 0; i-- {
		m = m.Mul4(chain[i].local)
	}
	return m
}

// worlds returns the world transforms of nodes (in their order), computed
// in one top-down pass over the graph, composed as World composes them:
// asking World of each frame of a deep chain would cost its depth each.
func (s *Scene) worlds(nodes []*Node) []mgl64.Mat4 {
	out := make([]mgl64.Mat4, len(nodes))
	if len(nodes) == 0 {
		return out
	}
	want := make(map[*Node][]int, len(nodes))
	for i, n := range nodes {
		want[n] = append(want[n], i)
	}
	type frame struct {
		n     *Node
		world mgl64.Mat4
	}
	stack := []frame{{s.top, s.top.local}}
	for len(stack) > 0 && len(want) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if is, ok := want[f.n]; ok {
			for _, i := range is {
				out[i] = f.world
			}
			delete(want, f.n)
		}
		for _, c := range f.n.children {
			stack = append(stack, frame{c, f.world.Mul4(c.local)})
		}
	}
	// Nodes not in the graph (none that a scene lists) compose their own.
	for n, is := range want {
		for _, i := range is {
			out[i] = n.World()
		}
	}
	return out
}

// maxCoordinate bounds every entry of local and world transforms: beyond
// it the float32 matrices that renderers use overflow to infinity.
const maxCoordinate = math.MaxFloat32

// inRange reports whether every entry of m is finite and within maxCoordinate.
func inRange(m *mgl64.Mat4) bool {
	for _, v := range m {
		if !(math.Abs(v) <= maxCoordinate) { // NaN fails too
			return false
		}
	}
	return true
}

// G3N returns the g3n node that mirrors this node. Elements may add their own
// g3n content under it; renderers draw the tree of these nodes.
func (n *Node) G3N() *core.Node { return n.g3n }

// Model returns the loaded model of a KindModel node (nil otherwise).
func (n *Node) Model() *models.Model { return n.model }

// Mesh returns the mesh of a KindModelNode node (nil otherwise).
func (n *Node) Mesh() *models.Mesh { return n.mesh }

// indexInParent searches from the end: insertion points, before which
// things are inserted, stay last in their parents as parts accumulate.
func (n *Node) indexInParent() int {
	return lastIndex(n.parent.children, n)
}

func lastIndex[E comparable](s []E, v E) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == v {
			return i
		}
	}
	return -1
}

// insertAt adds child to n at index i, mirroring the change in g3n. Graph
// indices and g3n indices differ where a node also holds mesh graphics, so
// the g3n position is taken from the graph neighbour.
func (n *Node) insertAt(i int, child *Node) {
	if n.scene != nil {
		n.scene.touch()
	}
	n.children = append(n.children, nil)
	copy(n.children[i+1:], n.children[i:])
	n.children[i] = child
	child.parent = n
	if i+1 < len(n.children) {
		n.g3n.AddAt(lastIndex(n.g3n.Children(), core.INode(n.children[i+1].g3n)), child.g3n)
	} else {
		n.g3n.Add(child.g3n)
	}
}

func (n *Node) appendChild(child *Node) { n.insertAt(len(n.children), child) }

// detach removes n from its parent.
func (n *Node) detach() {
	p := n.parent
	if p == nil {
		return
	}
	if p.scene != nil {
		p.scene.touch()
	}
	i := n.indexInParent()
	p.children = append(p.children[:i], p.children[i+1:]...)
	p.g3n.Remove(n.g3n)
	n.parent = nil
}

// Walk visits n and its descendants depth-first in traversal order.
func (n *Node) Walk(fn func(*Node) error) error {
	// Its own stack: a chain of parts is as deep as it is long.
	stack := []*Node{n}
	for len(stack) > 0 {
		m := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if err := fn(m); err != nil {
			return err
		}
		for i := len(m.children) - 1; i >= 0; i-- {
			stack = append(stack, m.children[i])
		}
	}
	return nil
}
