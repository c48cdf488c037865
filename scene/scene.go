package scene

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/g3n/engine/core"
	"github.com/g3n/engine/light"
	"github.com/g3n/engine/math32"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	_ "github.com/simvis/simvis/models/urdf" // URDF parts
)

// RootName is the insertion point every scene starts with.
const RootName = "ROOT"

// WorldFrame names the world frame in frame queries.
const WorldFrame = "world"

// DefaultParamCapacity is the parameter table size when Options leaves it 0.
const DefaultParamCapacity = 1 << 16

// maxNesting bounds parts that embed parts, so a model including itself is
// an error instead of endless recursion.
const maxNesting = 16

// Options configure a new scene.
type Options struct {
	// ParamCapacity fixes the number of parameter slots. The table never
	// grows, so its values never move under a reader (the shared-array
	// interface maps it as is).
	ParamCapacity int
	// ParamStorage, if not nil, holds the parameter table instead of memory
	// the scene allocates: its length is the capacity (ParamCapacity is
	// then ignored). The shared-array interface passes memory mapped from a
	// file here, so that other processes read and write the values in place.
	ParamStorage []float64
	// NoDefaultLights leaves out the default lights (an ambient light and
	// two directional ones) that a new scene has until it gets lights of its
	// own (UseOwnLights).
	NoDefaultLights bool
	// OnRejected, if not nil, receives the values Update refuses, and
	// Update then returns nil: a host whose table is written by other
	// processes counts and reports refusals instead of failing its renders.
	OnRejected func(*RejectedError)
	// Limits bound what one command may add: each model's own limits
	// (file sizes, image pixels, vertices, triangles, nodes) and, over the
	// command and every command embedded in what it loads, the parts,
	// vertices, triangles and nodes it instantiates; and what the whole
	// scene may hold (the Scene* fields, SensorSamples, Elements), however
	// many commands or requests built it. Zero fields take the defaults
	// (DefaultLimits).
	Limits Limits
	// PackagePath lists the directories where URDF parts find the
	// packages their package://PKG/... mesh URIs name (a folder PKG right
	// under an entry, with or without a package.xml); a URDF's own
	// enclosing package is found without it. Nil means
	// models.DefaultPackagePath ($ROS_PACKAGE_PATH; the simvis commands
	// put their --package-path flags first).
	PackagePath []string
}

// Limits bound the cost of one command and of the whole scene (see
// Options.Limits). Zero fields take DefaultLimits' values; negative fields
// mean no limit.
//
// Model limits are checked by the loader (models.LoadWith) for each model
// file; the bytes and image pixels of the files one command loads are
// also summed against Model.FileBytes and Model.ImagePixels (models found
// in the scene's cache cost nothing new). The other budgets are counted over one command and every command
// embedded in the models it loads, recursively: a part is counted, with
// its model's vertices, triangles and nodes, before it is built, so a
// model that embeds parts of itself stops at the budget instead of
// growing exponentially; nodes and meshes an element or sensor adds are
// counted when its constructor returns. A command over a budget is
// refused with an error that names it (file, line, attribute "file" for
// parts) and the limit; nothing it added stays. The simvis command sets
// them with --max-parts, --max-vertices, --max-triangles, --max-nodes,
// --max-model-mib and --max-image-mpixels, the whole-scene budgets with
// --max-scene-parts, --max-scene-nodes, --max-scene-vertices,
// --max-scene-triangles, --max-scene-model-mib, --max-scene-image-mpixels,
// --max-scene-sensors, --max-sensor-mpixels and --max-elements.
type Limits struct {
	// Model bounds each model file (default models.DefaultLimits), and
	// its FileBytes and ImagePixels also what all the model files one
	// command loads (not found in the scene's cache) come to.
	Model models.Limits
	// Per command, embedded commands included:
	Parts     int   // parts added (default 1000)
	Vertices  int64 // vertices instantiated: a model used by 8 parts counts 8 times (default 32 Mi)
	Triangles int64 // triangles instantiated (default 32 Mi)
	// Nodes counts scene graph nodes added: 3 per part (separator,
	// insertion point, model) plus the model's nodes and insertion points,
	// 2 per sensor, and what elements add; and one per mesh primitive
	// instantiated, each a g3n mesh of its own (default 200,000).
	Nodes int

	// The whole scene: what every command executed so far holds, plus
	// what the running command adds, counted like the per-command
	// budgets above and checked before anything is built (see
	// DefaultLimits for the defaults and docs/trust.md). Requests add up
	// one at a time; these bound where they stop.
	SceneParts     int   // parts (default 10,000)
	SceneNodes     int   // scene graph nodes, counted as Nodes (default 1,000,000)
	SceneVertices  int64 // vertices instantiated (default 64 Mi)
	SceneTriangles int64 // triangles instantiated (default 64 Mi)
	// SceneModelBytes and SceneImagePixels bound what the distinct model
	// files the scene loaded read and decode (each counted once, however
	// many parts use it): default 1 GiB and 256 Mi pixels.
	SceneModelBytes  int64
	SceneImagePixels int64
	SceneSensors     int // sensors (default 1024)
	// SensorSamples bounds the pixels and beams of all sensors together
	// (a camera counts width x height, a laser its beams), what each
	// render cycle holds and draws (default 64 Mi). It is checked from
	// the command's attributes before the sensor is built.
	SensorSamples int64
	// Elements bounds the scene's elements (default 4096): a host's
	// shared descriptor table is sized from it.
	Elements int
}

// DefaultLimits are the limits of a scene whose Options leave them zero.
// Instances of one model share its memory (bounded per file by Model), so
// the vertex and triangle budgets bound what one command adds to every
// render, and the parts and nodes budgets the graph it builds. The
// whole-scene defaults hold every bundled scene and the generated benchmark
// scenes (marvin50, mesh1m) with room to spare; a scene graph node costs
// about 1.5-3 KB, so SceneNodes keeps the graph within a few GB however
// many requests arrive, and SensorSamples keeps a cycle's render targets
// near 64 Mi x (4 color + 4 depth) bytes.
var DefaultLimits = Limits{
	Model:     models.DefaultLimits,
	Parts:     1000,
	Vertices:  32 << 20,
	Triangles: 32 << 20,
	Nodes:     200000,

	SceneParts:       10000,
	SceneNodes:       1000000,
	SceneVertices:    64 << 20,
	SceneTriangles:   64 << 20,
	SceneModelBytes:  1 << 30,
	SceneImagePixels: 256 << 20,
	SceneSensors:     1024,
	SensorSamples:    64 << 20,
	Elements:         4096,
}

// RejectedError reports parameter values Update refused and put back to the
// element's last accepted values.
type RejectedError struct {
	Element string
	Values  int // how many of the element's values had changed
	Err     error
}

func (e *RejectedError) Error() string { return fmt.Sprintf("element %q: %v", e.Element, e.Err) }

func (e *RejectedError) Unwrap() error { return e.Err }

// Scene is a simvis scene graph built from part, element and sensor commands.
// It is not safe for concurrent use: one goroutine builds, sets and renders.
type Scene struct {
	top   *Node // the group that holds ROOT
	names map[string]string

	points   map[string]*Node
	parts    []*PartEntry
	elements []*ElementEntry
	byName   map[string]*ElementEntry
	sensors  []*SensorEntry

	values  []float64 // the parameter table: len = slots in use, cap fixed
	applied []float64 // the values each element last accepted, same layout

	flagged     map[*Node]bool // nodes with a switch or sensed flag
	stylesDirty bool           // colors must be resolved again

	models  map[modelKey]*loadedModel
	meshes  *meshCache
	lights  *core.Node
	log     []*Command
	undo    []func()
	nesting int

	limits Limits // resolved: no zero fields
	// packagePath is where URDF parts find package:// meshes.
	packagePath []string
	spent       spent   // what the running command added so far
	total       spent   // what the commands executed so far added (whole-scene budgets)
	moved       []*Node // nodes inserted or moved since the last world check
	stack       []*Node // the checks' work list, kept to spare Update allocations
	checks      uint64  // world checks so far (Node.visit)
	execs       int     // commands running (nested for embedded ones)

	onRejected func(*RejectedError)

	classes map[string]string // class attribute of parts and elements by name

	returns returnsHub // range returns from sensors to the elements drawing them (returns.go)

	version uint64 // see Version; set by touch
}

// versions numbers the states of every scene of the process, so that a
// version names one state of one scene: a cache keyed by it alone (the ray
// caster a renderer shares between scenes) never takes one scene for another.
var versions atomic.Uint64

// Version returns a number that names the scene's current state: it changes
// whenever what the scene graph holds may have changed, and stays the same
// while nothing did, so that a sensor may skip reading an unchanged scene.
// It changes with every command executed (or undone), every element Apply
// (from Update), and every change to the graph however it is made: nodes
// added, moved or removed, local transforms set (Node.SetLocal), meshes
// attached, switches, sensed flags and color overrides. Versions are unique
// over all scenes of the process and never 0. What elements draw on their
// own g3n nodes outside Apply (scan overlays, lights' directions) is no part
// of the graph and leaves it alone; models' meshes are never changed in
// place. Call Update first: values written to the parameter table take
// effect (and change the version) there.
func (s *Scene) Version() uint64 { return s.version }

// touch gives the scene a new version: every change to what SensedMeshes
// and renderers read calls it.
func (s *Scene) touch() { s.version = versions.Add(1) }

// New returns a scene holding only the ROOT insertion point.
func New(opts Options) *Scene {
	capacity := opts.ParamCapacity
	if capacity <= 0 {
		capacity = DefaultParamCapacity
	}
	var values []float64
	if opts.ParamStorage != nil {
		capacity = len(opts.ParamStorage)
		values = opts.ParamStorage[:0:capacity]
	} else {
		values = make([]float64, 0, capacity)
	}
	s := &Scene{
		names:       map[string]string{RootName: "the root insertion point", WorldFrame: "the world frame"},
		points:      map[string]*Node{},
		byName:      map[string]*ElementEntry{},
		values:      values,
		applied:     make([]float64, 0, capacity),
		flagged:     map[*Node]bool{},
		models:      map[modelKey]*loadedModel{},
		limits:      opts.Limits.resolved(),
		packagePath: slices.Clone(opts.PackagePath),
		meshes:      newMeshCache(),

		onRejected: opts.OnRejected,
	}
	s.touch()
	s.top = s.newNode(KindGroup, "", "", mgl64.Ident4())
	root := s.newNode(KindInsertionPoint, RootName, "", mgl64.Ident4())
	s.top.appendChild(root)
	s.points[RootName] = root
	s.lights = core.NewNode()
	s.lights.SetName("lights")
	s.top.g3n.Add(s.lights)
	if !opts.NoDefaultLights {
		// A key light from above and behind-left and a weak fill from the
		// opposite side, so that no wall orientation is left in flat ambient.
		// g3n directional lights shine from their position toward the origin.
		white := &math32.Color{R: 1, G: 1, B: 1}
		s.lights.Add(light.NewAmbient(white, 0.35))
		key := light.NewDirectional(white, 0.7)
		key.SetPosition(-0.6, -0.4, 1)
		fill := light.NewDirectional(white, 0.3)
		fill.SetPosition(0.6, 0.5, 0.4)
		s.lights.Add(key)
		s.lights.Add(fill)
	}
	return s
}

// Load builds a scene from a scene file.
func Load(path string, opts Options) (*Scene, error) {
	cmds, err := ReadCommands(path)
	if err != nil {
		return nil, err
	}
	s := New(opts)
	for _, c := range cmds {
		if err := s.Exec(c); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Exec executes one command. A command that fails leaves the scene as it
// was. Besides bad attributes, a command fails if it (with the commands
// embedded in the models it loads) would pass a budget of Options.Limits,
// or if its changes would put a local or world transform out of range:
// not finite, or beyond ±3.4e38, where the float32 of renderers overflows.
func (s *Scene) Exec(c *Command) error { return s.ExecVerified(c, nil) }

// ExecVerified is Exec with a last check: verify (if not nil) runs after
// the command succeeded, and its error undoes the command as if it had
// failed. A host uses it to refuse commands whose elements it could not
// publish.
func (s *Scene) ExecVerified(c *Command, verify func() error) error {
	// A new version before and after: whatever the command did or undid
	// (every path of it changes the graph through methods that touch, but
	// a command is rare enough to be counted as a change whatever it did).
	s.touch()
	defer s.touch()
	s.stylesDirty = true // new meshes may sit below a color override
	s.undo = s.undo[:0]
	s.settle()
	s.spent = spent{}
	err := s.exec(c, "")
	if err == nil && verify != nil {
		err = verify()
	}
	if err != nil {
		for i := len(s.undo) - 1; i >= 0; i-- {
			s.undo[i]()
		}
		s.undo = s.undo[:0]
		s.settle()
		return err
	}
	s.undo = s.undo[:0]
	s.total.add(&s.spent)
	s.log = append(s.log, c)
	return nil
}

// Log returns the commands executed so far, in order (not those that failed
// or were embedded in models: replaying the log re-runs those).
func (s *Scene) Log() []*Command { return s.log }

// exec runs a command; prefix is the enclosing part's name for commands
// embedded in a model ("" at top level). Every command ends with a check
// that the world transforms it changed are in range (a part checks its own
// before its embedded commands run).
func (s *Scene) exec(c *Command, prefix string) error {
	s.execs++
	start := len(s.moved)
	defer func() {
		s.moved = s.moved[:start]
		s.execs--
	}()
	var err error
	switch c.Kind() {
	case "part":
		err = s.execPart(c, prefix, start)
	case "element":
		err = s.execElement(c, prefix)
	case "sensor":
		err = s.execSensor(c, prefix)
	default:
		return c.Errorf("", "unknown command (want part, element or sensor)")
	}
	if err != nil {
		return err
	}
	if bad := s.check(s.moved[start:]); bad != nil {
		return outOfRange(c, bad)
	}
	return nil
}

// common reads the name and insert_at attributes every command has.
func (s *Scene) common(c *Command, prefix string) (name string, at *Node, err error) {
	local, err := c.Required("name")
	if err != nil {
		return "", nil, err
	}
	if err := c.checkName("name", local); err != nil {
		return "", nil, err
	}
	name = local
	if prefix != "" {
		name = prefix + "/" + local
	}
	if owner, dup := s.names[name]; dup {
		return "", nil, c.Errorf("name", "%q is already used by %s", name, owner)
	}
	at, err = s.insertionPoint(c, prefix)
	return name, at, err
}

// insertionPoint resolves insert_at. It defaults to the enclosing insertion
// point: ROOT at top level, the part's own for commands embedded in a model,
// where names resolve first among the part's insertion points.
func (s *Scene) insertionPoint(c *Command, prefix string) (*Node, error) {
	v, ok := c.Attr("insert_at")
	if !ok {
		if prefix == "" {
			return s.points[RootName], nil
		}
		return s.points[prefix], nil
	}
	if prefix != "" {
		if ip, ok := s.points[prefix+"/"+v]; ok {
			return ip, nil
		}
	}
	if ip, ok := s.points[v]; ok {
		return ip, nil
	}
	return nil, c.Errorf("insert_at", "no insertion point %q (have %s)", v, strings.Join(s.InsertionPoints(), ", "))
}

func (s *Scene) claim(name, owner string) {
	s.names[name] = owner
	s.undo = append(s.undo, func() { delete(s.names, name) })
}

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

func (s *Scene) addPoint(ip *Node) {
	s.points[ip.Name] = ip
	s.undo = append(s.undo, func() { delete(s.points, ip.Name) })
}

// insertBefore puts n right before the insertion point ip in ip's parent.
func (s *Scene) insertBefore(ip, n *Node) {
	ip.parent.insertAt(ip.indexInParent(), n)
	s.moved = append(s.moved, n)
	s.undo = append(s.undo, n.detach)
}

func (s *Scene) appendChild(parent, n *Node) {
	parent.appendChild(n)
	s.moved = append(s.moved, n)
	s.undo = append(s.undo, n.detach)
}

// insertTransform inserts a transform node before ip that takes ip and every
// later sibling as children: in the Open Inventor traversal a transformation
// affects what follows it up to the end of its separator, and with g3n's
// hierarchical transforms "what follows" must become the node's subtree.
func (s *Scene) insertTransform(ip *Node, kind NodeKind, name, owner string, local mgl64.Mat4) *Node {
	t := s.newNode(kind, name, owner, local)
	parent := ip.parent
	i := ip.indexInParent()
	tail := append([]*Node(nil), parent.children[i:]...)
	for _, c := range tail {
		c.detach()
	}
	for _, c := range tail {
		t.appendChild(c)
	}
	parent.insertAt(i, t)
	s.moved = append(s.moved, t)
	s.undo = append(s.undo, func() {
		t.detach()
		for j, c := range tail {
			c.detach()
			parent.insertAt(i+j, c)
		}
		// Their world transforms lose t; ExecVerified settles them.
		s.moved = append(s.moved, tail...)
	})
	return t
}

// factoryOf reads a command's type attribute and finds its registered
// factory: kind is "element" or "sensor".
func factoryOf[F any](c *Command, kind string, lookup func(string) (F, bool), types func() []string) (string, F, error) {
	typ, err := c.Required("type")
	if err != nil {
		var zero F
		return "", zero, err
	}
	factory, ok := lookup(typ)
	if !ok {
		return "", factory, c.Errorf("type", "unknown %s type %q (have %s)", kind, typ, strings.Join(types(), ", "))
	}
	return typ, factory, nil
}

func (s *Scene) execElement(c *Command, prefix string) error {
	typ, factory, err := factoryOf(c, "element", elementFactory, ElementTypes)
	if err != nil {
		return err
	}
	name, at, err := s.common(c, prefix)
	if err != nil {
		return err
	}
	sensed, err := c.Bool("sensed", true)
	if err != nil {
		return err
	}
	class, err := s.readClass(c, prefix)
	if err != nil {
		return err
	}
	if err := s.chargeElement(c); err != nil {
		return err
	}
	ctx := &Context{Scene: s, Command: c, Name: name, At: at, sensed: sensed}
	el, err := factory(ctx)
	if err != nil {
		return wrapCommandError(c, err)
	}
	if err := s.overspent(c, ""); err != nil {
		return err
	}
	params := el.Params()
	initial := make([]float64, len(params))
	for i, p := range params {
		if initial[i], err = c.Float(p.Name, p.Default); err != nil {
			return err
		}
	}
	if err := c.unused(); err != nil {
		return err
	}
	if len(s.values)+len(params) > cap(s.values) {
		return c.Errorf("", "parameter table full (%d slots); raise the scene's parameter capacity", cap(s.values))
	}
	if err := el.Apply(initial); err != nil {
		return wrapCommandError(c, err)
	}
	entry := &ElementEntry{Name: name, Type: typ, At: at.Name, Command: c, Element: el, Params: params, Start: len(s.values), Class: class}
	s.setClass(name, class)
	s.values = append(s.values, initial...)
	s.applied = append(s.applied, initial...)
	s.elements = append(s.elements, entry)
	s.byName[name] = entry
	s.spent.elements++
	s.claim(name, "element "+quote(name))
	s.undo = append(s.undo, func() {
		s.values = s.values[:entry.Start]
		s.applied = s.applied[:entry.Start]
		s.elements = s.elements[:len(s.elements)-1]
		delete(s.byName, name)
	})
	return nil
}

func (s *Scene) execSensor(c *Command, prefix string) error {
	typ, factory, err := factoryOf(c, "sensor", sensorFactory, SensorTypes)
	if err != nil {
		return err
	}
	name, at, err := s.common(c, prefix)
	if err != nil {
		return err
	}
	offset, err := c.Pose("pose_offset")
	if err != nil {
		return err
	}
	rate, err := c.FloatIn("rate", 0, 0, 10000)
	if err != nil {
		return err
	}
	samples, err := s.chargeSensor(c, typ)
	if err != nil {
		return err
	}
	sep := s.newNode(KindSeparator, name, name, offset.Matrix())
	frame := s.newNode(KindSensor, name, name, mgl64.Ident4())
	sep.appendChild(frame)
	s.insertBefore(at, sep)
	ctx := &Context{Scene: s, Command: c, Name: name, At: at, Frame: frame, sensed: true}
	sensor, err := factory(ctx)
	if err != nil {
		return wrapCommandError(c, err)
	}
	if err := s.overspent(c, ""); err != nil {
		return err
	}
	if err := c.unused(); err != nil {
		return err
	}
	s.claim(name, "sensor "+quote(name))
	s.spent.sensors++
	s.spent.samples += samples
	s.sensors = append(s.sensors, &SensorEntry{Name: name, Type: typ, At: at.Name, Command: c, Frame: frame, Sensor: sensor, Rate: rate})
	s.undo = append(s.undo, func() { s.sensors = s.sensors[:len(s.sensors)-1] })
	return nil
}

// wrapCommandError locates a constructor's plain error at its command.
func wrapCommandError(c *Command, err error) error {
	var located *Error
	if errors.As(err, &located) {
		return err
	}
	return c.Errorf("", "%v", err)
}

// Root returns the top group of the scene graph.
func (s *Scene) Root() *Node { return s.top }

// G3N returns the g3n node to render: the scene graph and its lights.
func (s *Scene) G3N() *core.Node { return s.top.g3n }

// Lights returns the g3n node that holds the scene's default lights.
func (s *Scene) Lights() *core.Node { return s.lights }

// UseOwnLights switches the default lights off: light elements call it, so a
// scene that places its own lights is lit by them alone. It is undone with
// the command that called it, and it travels with the command log (a mirror
// replaying the commands gets the same lighting).
func (s *Scene) UseOwnLights() {
	if !s.lights.Visible() {
		return
	}
	s.lights.SetVisible(false)
	s.undo = append(s.undo, func() { s.lights.SetVisible(true) })
}

// InsertionPoint returns the named insertion point.
func (s *Scene) InsertionPoint(name string) (*Node, bool) {
	ip, ok := s.points[name]
	return ip, ok
}

// InsertionPoints lists insertion point names in traversal order.
func (s *Scene) InsertionPoints() []string {
	var names []string
	s.top.Walk(func(n *Node) error {
		if n.Kind == KindInsertionPoint {
			names = append(names, n.Name)
		}
		return nil
	})
	return names
}

// Parts lists the parts in command order.
func (s *Scene) Parts() []*PartEntry { return s.parts }

// Elements lists the elements in command order (= parameter table order).
func (s *Scene) Elements() []*ElementEntry { return s.elements }

// Element returns the named element.
func (s *Scene) Element(name string) (*ElementEntry, bool) {
	e, ok := s.byName[name]
	return e, ok
}

// Sensors lists the sensors in command order.
func (s *Scene) Sensors() []*SensorEntry { return s.sensors }

// Values returns the parameter table: every element's run of values, in
// element order (ElementEntry.Start), float64. Its backing array has a fixed
// capacity and never moves, so it may be shared as is; adding elements only
// extends it. Values written here directly (not through Set) take effect at
// the next Update, which also rejects non-finite ones.
func (s *Scene) Values() []float64 { return s.values }

// Value returns the current value of element.param.
func (s *Scene) Value(element, param string) (float64, error) {
	e, i, err := s.param(element, param)
	if err != nil {
		return 0, err
	}
	return s.values[e.Start+i], nil
}

func (s *Scene) param(element, param string) (*ElementEntry, int, error) {
	e, ok := s.byName[element]
	if !ok {
		return nil, 0, fmt.Errorf("no element %q", element)
	}
	names := make([]string, len(e.Params))
	for i, p := range e.Params {
		if p.Name == param {
			return e, i, nil
		}
		names[i] = p.Name
	}
	return nil, 0, fmt.Errorf("element %q (%s) has no parameter %q (has %s)", element, e.Type, param, strings.Join(names, ", "))
}

// Set changes element.param; the change reaches the scene graph at the next
// Update (renderers call it before drawing).
func (s *Scene) Set(element, param string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%s.%s: value %v is not finite", element, param, v)
	}
	e, i, err := s.param(element, param)
	if err != nil {
		return err
	}
	s.values[e.Start+i] = v
	return nil
}

// Update propagates changed parameter values into the scene graph: every
// element whose run of the table differs from what it last accepted gets
// Apply. Values may have been written straight into the table (Values, the
// shared-array interface), so changes are found by comparison, not by
// bookkeeping in Set. Rejected values (non-finite, refused by the element,
// or moving a world transform out of range: see Scene.Exec) are reported
// (as *RejectedError, or to Options.OnRejected) and reset in the table to
// the element's last accepted values, so the table always shows the
// scene's state. Only the subtrees below the nodes an element moved are
// checked.
func (s *Scene) Update() error {
	if s.execs == 0 {
		s.settle()
	}
	var errs []error
	for _, e := range s.elements {
		run := s.values[e.Start : e.Start+len(e.Params)]
		last := s.applied[e.Start : e.Start+len(e.Params)]
		if slices.Equal(run, last) {
			continue
		}
		err := finiteValues(e, run)
		if err == nil {
			// Whatever Apply changes (transforms, switches, colors, or
			// what the element draws), the scene is taken as changed.
			s.touch()
			start := len(s.moved)
			err = e.Element.Apply(run)
			if err == nil {
				if bad := s.check(s.moved[start:]); bad != nil {
					err = outOfRangeValues(e, run, last, bad)
				}
			}
			// Refused values that moved nodes (out of range, or an
			// element that moved nodes before failing, against Element's
			// contract) are taken back with the last accepted ones, and
			// the worlds below recomputed: the graph must match the table,
			// and later checks compose from the kept worlds.
			if err != nil && len(s.moved) > start {
				if aerr := e.Element.Apply(last); aerr != nil {
					err = errors.Join(err, fmt.Errorf("restoring the last accepted values: %w", aerr))
				}
				s.check(s.moved[start:])
			}
			s.moved = s.moved[:start]
		}
		if err != nil {
			changed := 0
			for i := range run {
				if run[i] != last[i] { // NaN differs from everything
					changed++
				}
			}
			rej := &RejectedError{Element: e.Name, Values: changed, Err: err}
			copy(run, last)
			if s.onRejected != nil {
				s.onRejected(rej)
				continue
			}
			errs = append(errs, rej)
			continue
		}
		copy(last, run)
	}
	return errors.Join(errs...)
}

func finiteValues(e *ElementEntry, v []float64) error {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("parameter %s: value %v is not finite", e.Params[i].Name, x)
		}
	}
	return nil
}

// Frame returns the node of a named frame: an insertion point or a sensor.
func (s *Scene) Frame(name string) (*Node, error) {
	if ip, ok := s.points[name]; ok {
		return ip, nil
	}
	for _, se := range s.sensors {
		if se.Name == name {
			return se.Frame, nil
		}
	}
	if name == WorldFrame {
		return s.top, nil
	}
	return nil, fmt.Errorf("no frame %q (frames are insertion points and sensors: %s)", name, strings.Join(s.FrameNames(), ", "))
}

// FrameNames lists every named frame: insertion points, then sensors.
func (s *Scene) FrameNames() []string {
	names := s.InsertionPoints()
	for _, se := range s.sensors {
		names = append(names, se.Name)
	}
	return names
}

// Transform returns the pose of frame `of` relative to frame `rel` (the
// getTransformation(FOI, FOR) of a robot model server): it maps coordinates
// in `of` to coordinates in `rel`. rel "world" is the world frame.
func (s *Scene) Transform(of, rel string) (mgl64.Mat4, error) {
	if err := s.Update(); err != nil {
		return mgl64.Mat4{}, err
	}
	a, err := s.Frame(of)
	if err != nil {
		return mgl64.Mat4{}, err
	}
	b, err := s.Frame(rel)
	if err != nil {
		return mgl64.Mat4{}, err
	}
	m := a.World()
	ok := true
	if b != s.top { // the world frame's inverse is the identity
		var inv mgl64.Mat4
		inv, ok = InvertAffine(b.World())
		m = inv.Mul4(m)
	}
	if !ok || !inRange(&m) {
		// Frames are in range, but a frame scaled (nearly) to nothing has
		// an inverse that is not.
		return mgl64.Mat4{}, fmt.Errorf("the transform of %q relative to %q is out of range (is %q scaled nearly to zero?)", of, rel, rel)
	}
	return m, nil
}

// Transforms is Transform for many frames relative to one: every world
// transform comes from one top-down pass over the graph, so listing every
// frame of a chain of parts costs its length, not its length squared.
func (s *Scene) Transforms(of []string, rel string) ([]mgl64.Mat4, error) {
	if err := s.Update(); err != nil {
		return nil, err
	}
	sensors := make(map[string]*Node, len(s.sensors))
	for _, se := range s.sensors {
		if _, dup := sensors[se.Name]; !dup {
			sensors[se.Name] = se.Frame
		}
	}
	frame := func(name string) (*Node, error) {
		if ip, ok := s.points[name]; ok {
			return ip, nil
		}
		if f, ok := sensors[name]; ok {
			return f, nil
		}
		return s.Frame(name) // the world frame, or the error naming the frames
	}
	nodes := make([]*Node, 0, len(of)+1)
	for _, name := range append(of[:len(of):len(of)], rel) {
		n, err := frame(name)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
	}
	worlds := s.worlds(nodes)
	ref := nodes[len(of)]
	inv, ok := mgl64.Ident4(), true
	if ref != s.top { // the world frame's inverse is the identity
		inv, ok = InvertAffine(worlds[len(of)])
	}
	out := make([]mgl64.Mat4, len(of))
	for i, name := range of {
		m := worlds[i]
		if ref != s.top {
			m = inv.Mul4(m)
		}
		if !ok || !inRange(&m) {
			return nil, fmt.Errorf("the transform of %q relative to %q is out of range (is %q scaled nearly to zero?)", name, rel, rel)
		}
		out[i] = m
	}
	return out, nil
}

// InvertAffine inverts a transform whose last row is 0 0 0 1 (every
// transform of the graph): [A t]^-1 = [A^-1 -A^-1 t]. Unlike mgl64's Inv,
// which returns zero for determinants below 1e-10 (a frame scaled by 1e-4
// per axis), it reports false only for a singular matrix or a result that
// is not finite.
func InvertAffine(m mgl64.Mat4) (mgl64.Mat4, bool) {
	a := m.Mat3()
	det := a.Det()
	if det == 0 || math.IsNaN(det) || math.IsInf(det, 0) {
		return mgl64.Mat4{}, false
	}
	// The adjugate over the determinant (mgl64's Mat3.Inv has the same
	// epsilon test as Mat4.Inv).
	inv := mgl64.Mat3{
		a[4]*a[8] - a[5]*a[7], a[2]*a[7] - a[1]*a[8], a[1]*a[5] - a[2]*a[4],
		a[5]*a[6] - a[3]*a[8], a[0]*a[8] - a[2]*a[6], a[2]*a[3] - a[0]*a[5],
		a[3]*a[7] - a[4]*a[6], a[1]*a[6] - a[0]*a[7], a[0]*a[4] - a[1]*a[3],
	}.Mul(1 / det)
	t := inv.Mul3x1(mgl64.Vec3{m[12], m[13], m[14]}).Mul(-1)
	r := inv.Mat4()
	r.SetCol(3, mgl64.Vec4{t[0], t[1], t[2], 1})
	for _, v := range r {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return mgl64.Mat4{}, false
		}
	}
	return r, true
}

// MeshStats reports how much geometry the scene shares.
func (s *Scene) MeshStats() MeshStats {
	// Instances are counted in the graph, not the cache, so meshes of a
	// command that failed and was undone do not count.
	st := MeshStats{Geometries: len(s.meshes.geometries), Materials: len(s.meshes.materials)}
	s.top.Walk(func(n *Node) error {
		st.Instances += len(n.meshG3N)
		if n.mesh != nil {
			for _, p := range n.mesh.Primitives {
				st.Triangles += len(p.Indices) / 3
			}
		}
		return nil
	})
	return st
}
