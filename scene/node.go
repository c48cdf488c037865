package scene

import (
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
}

func newNode(kind NodeKind, name, owner string, local mgl64.Mat4) *Node {
	n := &Node{Kind: kind, Name: name, Owner: owner, local: local, g3n: core.NewNode()}
	n.g3n.SetName(name)
	n.g3n.SetUserData(n)
	setG3NMatrix(n.g3n, local)
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
// it on the transforms they inserted.
func (n *Node) SetLocal(m mgl64.Mat4) {
	n.local = m
	setG3NMatrix(n.g3n, m)
}

// World returns the node's transform relative to the world, computed in
// float64 from the chain of local transforms.
func (n *Node) World() mgl64.Mat4 {
	m := n.local
	for p := n.parent; p != nil; p = p.parent {
		m = p.local.Mul4(m)
	}
	return m
}

// G3N returns the g3n node that mirrors this node. Elements may add their own
// g3n content under it; renderers draw the tree of these nodes.
func (n *Node) G3N() *core.Node { return n.g3n }

// Model returns the loaded model of a KindModel node (nil otherwise).
func (n *Node) Model() *models.Model { return n.model }

// Mesh returns the mesh of a KindModelNode node (nil otherwise).
func (n *Node) Mesh() *models.Mesh { return n.mesh }

func (n *Node) indexInParent() int {
	for i, c := range n.parent.children {
		if c == n {
			return i
		}
	}
	return -1
}

// insertAt adds child to n at index i, mirroring the change in g3n. Graph
// indices and g3n indices differ where a node also holds mesh graphics, so
// the g3n position is taken from the graph neighbour.
func (n *Node) insertAt(i int, child *Node) {
	n.children = append(n.children, nil)
	copy(n.children[i+1:], n.children[i:])
	n.children[i] = child
	child.parent = n
	if i+1 < len(n.children) {
		n.g3n.AddAt(n.g3n.ChildIndex(n.children[i+1].g3n), child.g3n)
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
	i := n.indexInParent()
	p.children = append(p.children[:i], p.children[i+1:]...)
	p.g3n.Remove(n.g3n)
	n.parent = nil
}

// Walk visits n and its descendants depth-first in traversal order.
func (n *Node) Walk(fn func(*Node) error) error {
	if err := fn(n); err != nil {
		return err
	}
	for _, c := range n.children {
		if err := c.Walk(fn); err != nil {
			return err
		}
	}
	return nil
}
