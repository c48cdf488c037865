package models

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"image"
	"math"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/go-gl/mathgl/mgl64"
)

// Model is one loaded model file, z-up.
type Model struct {
	Path      string  // absolute path it was loaded from ("" if built in memory)
	Name      string  // file name without extension, or as given to NewModel
	Roots     []*Node // the default scene's root nodes (or all parentless nodes if no scene)
	Meshes    []*Mesh // all meshes, each exactly once (nodes reference them)
	Materials []*Material
	Commands  []Command // embedded simvis commands, in order

	// Lookup sets for AddNode; rebuilt lazily, so literal Models work too.
	meshSet map[*Mesh]bool
	matSet  map[*Material]bool

	fileBytes, imagePixels int64    // what loading read and decoded (LoadCost)
	files                  []string // what loading read (Files)
}

// LoadCost returns what loading the model took, as its Limits count it:
// the bytes of the files read (the model file, its buffers and images) and
// the pixels of the images decoded. Both are zero for a model built in
// memory, and for a quantity loaded without a limit (not counted). Scenes
// sum it over the models one command loads.
func (m *Model) LoadCost() (fileBytes, imagePixels int64) { return m.fileBytes, m.imagePixels }

// Node is one node of a model's hierarchy.
type Node struct {
	Name           string
	Local          mgl64.Mat4 // local transform, z-up
	Mesh           *Mesh      // may be nil
	Children       []*Node
	InsertionPoint string // non-empty if the node is declared as a simvis insertion point

	Camera *Camera // a glTF camera at the node (Write only; looks along the node's +y, z-up)
	Light  *Light  // a KHR_lights_punctual light at the node (Write only; shines along +y, z-up)
}

// Mesh is a set of primitives drawn together; nodes may share it.
type Mesh struct {
	Name       string
	Primitives []*Primitive
}

// Primitive is one indexed triangle list with one material.
type Primitive struct {
	Positions []mgl32.Vec3
	Normals   []mgl32.Vec3 // same length as Positions
	TexCoords []mgl32.Vec2 // nil or same length as Positions
	Indices   []uint32     // triangles
	Material  *Material    // never nil for loaded models
	// Key is a hash of the geometry (see UpdateKey): identical geometry has
	// identical keys, so renderers can share GPU buffers between primitives.
	Key [32]byte
}

// AlphaMode tells how a material's alpha is used.
type AlphaMode int

// Alpha modes, as in glTF.
const (
	AlphaOpaque AlphaMode = iota // alpha ignored
	AlphaMask                    // alpha < AlphaCutoff is fully transparent, else opaque
	AlphaBlend                   // alpha blended
)

// String is the mode as glTF spells it (OPAQUE, MASK, BLEND).
func (a AlphaMode) String() string {
	switch a {
	case AlphaOpaque:
		return "OPAQUE"
	case AlphaMask:
		return "MASK"
	case AlphaBlend:
		return "BLEND"
	}
	return fmt.Sprintf("AlphaMode(%d)", int(a))
}

// Material is a glTF metallic-roughness material reduced to what simvis
// renders, plus the factors needed to write it back.
type Material struct {
	Name             string
	BaseColor        [4]float32  // linear RGBA factor
	BaseColorTexture image.Image // nil if none
	Sampler          Sampler     // how BaseColorTexture is sampled
	AlphaMode        AlphaMode
	AlphaCutoff      float32 // used with AlphaMask; default 0.5
	DoubleSided      bool
	Metallic         float32
	Roughness        float32
	// Emissive is the light the surface gives off itself, linear RGB
	// (glTF emissiveFactor; zero for most surfaces): cameras add it
	// whatever the lighting, shadows included.
	Emissive [3]float32
}

// Command is one simvis command embedded in a model file.
type Command struct {
	XML    string // one XML command element
	Source string // where it came from, for error messages
}

// DefaultMaterial returns a new copy of glTF's default material (opaque
// white, single-sided, metallic and roughness 1), used for primitives that
// name no material.
func DefaultMaterial() *Material {
	return &Material{Name: "default", BaseColor: [4]float32{1, 1, 1, 1}, AlphaCutoff: 0.5, Metallic: 1, Roughness: 1}
}

// NewModel returns an empty in-memory model.
func NewModel(name string) *Model { return &Model{Name: name} }

// AddNode appends a node under parent (a root if parent is nil) and registers
// its mesh and the mesh's materials in m.Meshes and m.Materials unless they
// are there already. It returns the new node.
func (m *Model) AddNode(parent *Node, name string, local mgl64.Mat4, mesh *Mesh) *Node {
	n := &Node{Name: name, Local: local, Mesh: mesh}
	if parent == nil {
		m.Roots = append(m.Roots, n)
	} else {
		parent.Children = append(parent.Children, n)
	}
	if mesh == nil {
		return n
	}
	m.meshSet = register(m.meshSet, &m.Meshes, mesh)
	for _, p := range mesh.Primitives {
		if p != nil && p.Material != nil {
			m.matSet = register(m.matSet, &m.Materials, p.Material)
		}
	}
	return n
}

// register appends v to *list unless it is in it. The set makes repeated
// registrations cheap; the slice scan on a miss catches entries appended to
// the exported slice directly.
func register[T comparable](set map[T]bool, list *[]T, v T) map[T]bool {
	if set == nil {
		set = map[T]bool{}
	}
	if set[v] {
		return set
	}
	set[v] = true
	for _, e := range *list {
		if e == v {
			return set
		}
	}
	*list = append(*list, v)
	return set
}

// Walk calls fn for every node reachable from m.Roots, depth-first with
// parents before children, passing the node's model-space transform. It
// stops at and returns the first error fn returns. It keeps its own stack,
// so a deep hierarchy cannot exhaust the goroutine's.
func (m *Model) Walk(fn func(n *Node, world mgl64.Mat4) error) error {
	type item struct {
		n      *Node
		parent mgl64.Mat4
	}
	var stack []item
	push := func(nodes []*Node, parent mgl64.Mat4) {
		// Reversed, so that siblings come off the stack in order.
		for i := len(nodes) - 1; i >= 0; i-- {
			if nodes[i] != nil {
				stack = append(stack, item{nodes[i], parent})
			}
		}
	}
	push(m.Roots, mgl64.Ident4())
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		world := it.parent.Mul4(it.n.Local)
		if err := fn(it.n, world); err != nil {
			return err
		}
		push(it.n.Children, world)
	}
	return nil
}

// TriangleCount returns the number of triangles the model draws: every node
// counts its mesh's triangles, so a mesh used by two nodes counts twice.
func (m *Model) TriangleCount() int {
	_, t, _ := m.Counts()
	return int(t)
}

// UpdateKey sets p.Key to the SHA-256 of p's geometry (positions, normals,
// texture coordinates and indices). Call it after changing the geometry of a
// primitive built by hand; Load and the shape helpers set it already.
func (p *Primitive) UpdateKey() {
	h := sha256.New()
	buf := make([]byte, 0, 4096)
	// Flushing in chunks keeps memory flat for big meshes.
	put := func(v uint32) {
		buf = binary.LittleEndian.AppendUint32(buf, v)
		if len(buf) >= 4096-4 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	putFloats := func(fs ...float32) {
		for _, f := range fs {
			put(math.Float32bits(f))
		}
	}
	// Lengths first, so the same numbers split differently hash differently.
	put(uint32(len(p.Positions)))
	for _, v := range p.Positions {
		putFloats(v[:]...)
	}
	put(uint32(len(p.Normals)))
	for _, v := range p.Normals {
		putFloats(v[:]...)
	}
	put(uint32(len(p.TexCoords)))
	for _, v := range p.TexCoords {
		putFloats(v[:]...)
	}
	put(uint32(len(p.Indices)))
	for _, i := range p.Indices {
		put(i)
	}
	h.Write(buf)
	h.Sum(p.Key[:0])
}
