package scene

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
)

func (s *Scene) execPart(c *Command, prefix string, start int) error {
	name, at, err := s.common(c, prefix)
	if err != nil {
		return err
	}
	offset, err := c.Pose("pose_offset")
	if err != nil {
		return err
	}
	path, err := c.Path("file")
	if err != nil {
		return err
	}
	sensed, err := c.Bool("sensed", true)
	if err != nil {
		return err
	}
	collision := false
	if g, ok := c.Attr("geometry"); ok {
		switch {
		case !strings.EqualFold(filepath.Ext(path), ".urdf"):
			return c.Errorf("geometry", "only URDF parts choose their geometry")
		case g == "collision":
			collision = true
		case g != "visual":
			return c.Errorf("geometry", "%q: want visual or collision", g)
		}
	}
	class, err := s.readClass(c, prefix)
	if err != nil {
		return err
	}
	if err := c.unused(); err != nil {
		return err
	}
	if s.nesting >= maxNesting {
		return c.Errorf("file", "parts nested more than %d deep (does a model include itself?)", maxNesting)
	}
	root := c.root()
	lm, fresh, err := s.loadModel(path, root, collision)
	if err != nil {
		return c.Errorf("file", "%w", err)
	}
	if fresh {
		if err := s.loaded(c, lm.model); err != nil {
			return err
		}
	}
	model := lm.model
	// The budget is checked before anything is built: a model that embeds
	// parts of itself grows exponentially and must stop at the limit.
	if err := s.charge(c, lm); err != nil {
		return err
	}

	sep := s.newNode(KindSeparator, name, name, offset.Matrix())
	if !sensed {
		s.SetSensed(sep, false)
	}
	ip := s.newNode(KindInsertionPoint, name, name, mgl64.Ident4())
	sep.appendChild(ip)
	modelNode := s.newNode(KindModel, filepath.Base(path), name, mgl64.Ident4())
	modelNode.model = model
	var modelPoints []*Node
	for _, r := range model.Roots {
		modelPoints = s.buildModelNode(modelNode, r, name, modelPoints)
	}
	sep.appendChild(modelNode)
	// Check every name before changing the graph.
	s.claim(name, "part "+quote(name))
	for _, p := range modelPoints {
		if owner, dup := s.names[p.Name]; dup {
			return c.Errorf("file", "model insertion point %q clashes with %s", p.Name, owner)
		}
		s.claim(p.Name, "insertion point of part "+quote(name))
	}
	s.insertBefore(at, sep)
	s.addPoint(ip)
	for _, p := range modelPoints {
		s.addPoint(p)
	}
	entry := &PartEntry{Name: name, At: at.Name, File: path, Command: c, Node: sep, Class: class}
	s.setClass(name, class)
	s.parts = append(s.parts, entry)
	s.undo = append(s.undo, func() { s.parts = s.parts[:len(s.parts)-1] })
	// The part's own transforms are checked now, so that an embedded
	// command is blamed only for what it changes.
	if bad := s.check(s.moved[start:]); bad != nil {
		return outOfRange(c, bad)
	}
	s.moved = s.moved[:start]

	s.nesting++
	defer func() { s.nesting-- }()
	for i, mc := range model.Commands {
		sub, err := ParseCommand(mc.XML, mc.Source, filepath.Dir(path))
		if err != nil {
			return embeddedFailure(c, i+1, err)
		}
		// Everything a confined command pulls in is confined to the same
		// root, however deep the models nest.
		sub.Confined, sub.Root = c.Confined, root
		if err := s.exec(sub, name); err != nil {
			return embeddedFailure(c, i+1, err)
		}
	}
	return nil
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// buildModelNode mirrors a model node and its subtree under parent. A node
// declared as insertion point gets one as its first child, so what is
// attached there, and transforms inserted before it, come before the node's
// mesh and children. Each node is attached to its parent after its own
// subtree is complete (bottom up), so no insertion walks up the tree. It
// keeps its own stack: a model may be as deep as it has nodes.
func (s *Scene) buildModelNode(parent *Node, root *models.Node, part string, points []*Node) []*Node {
	type frame struct {
		mn     *models.Node
		n      *Node
		parent *Node
		next   int // the next of mn's children to build
	}
	var stack []frame
	// enter makes the node of mn (parents before children, so points come
	// in the model's order); it is attached to parent when left.
	enter := func(mn *models.Node, parent *Node) {
		n := s.newNode(KindModelNode, mn.Name, part, mn.Local)
		if mn.InsertionPoint != "" {
			ip := s.newNode(KindInsertionPoint, part+"/"+mn.InsertionPoint, part, mgl64.Ident4())
			n.appendChild(ip)
			points = append(points, ip)
		}
		if mn.Mesh != nil {
			s.attachMesh(n, mn.Mesh)
		}
		stack = append(stack, frame{mn: mn, n: n, parent: parent})
	}
	enter(root, parent)
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next < len(f.mn.Children) {
			f.next++
			enter(f.mn.Children[f.next-1], f.n) // may move the stack: f is not used after
			continue
		}
		f.parent.appendChild(f.n)
		stack = stack[:len(stack)-1]
	}
	return points
}

// attachMesh gives n the g3n graphics of mesh, shared through the mesh
// cache. Each primitive becomes a g3n mesh of its own (about 1.4 KB, with
// geometry and material shared), so each counts as a scene node: a 24 MB
// file of 790,000 one-triangle primitives is within every vertex and
// triangle budget, yet cost 1.1 GB per part.
func (s *Scene) attachMesh(n *Node, mesh *models.Mesh) {
	s.spent.nodes += len(mesh.Primitives)
	s.touch()
	n.mesh = mesh
	n.meshG3N = s.meshes.graphics(mesh)
	for _, g := range n.meshG3N {
		n.g3n.Add(g)
	}
}

// modelKey identifies a loaded model: a model loaded for an unconfined
// command (which may name files anywhere) must not satisfy a confined load,
// so the root it was confined to is part of the key.
type modelKey struct {
	path, root string
	collision  bool // a URDF's collision geometry instead of its visual
}

// loadedModel is a model with what instantiating it once costs.
type loadedModel struct {
	model                    *models.Model
	vertices, triangles      int64
	modelNodes, insertionPts int
	meshes                   int // g3n meshes: one per primitive of each node's mesh
}

// loadModel loads a model once per (path, root): root, if not "", confines
// the files the model names to that directory. fresh tells a model loaded
// now from one found in the cache.
func (s *Scene) loadModel(path, root string, collision bool) (lm *loadedModel, fresh bool, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, false, err
	}
	key := modelKey{abs, root, collision}
	if m, ok := s.models[key]; ok {
		return m, false, nil
	}
	m, err := models.LoadWith(abs, models.LoadOptions{Root: root, Limits: s.limits.Model, PackagePath: s.packagePath, Collision: collision})
	if err != nil {
		return nil, false, err
	}
	// A model stays cached only if the command that loaded it succeeds:
	// refused requests must not keep memory.
	s.undo = append(s.undo, func() { delete(s.models, key) })
	lm = &loadedModel{model: m}
	lm.vertices, lm.triangles, lm.modelNodes = m.Counts()
	// Its own stack: model hierarchies may be as deep as they have nodes.
	stack := append([]*models.Node(nil), m.Roots...)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.InsertionPoint != "" {
			lm.insertionPts++
		}
		if n.Mesh != nil {
			lm.meshes += len(n.Mesh.Primitives)
		}
		stack = append(stack, n.Children...)
	}
	s.models[key] = lm
	return lm, true, nil
}
