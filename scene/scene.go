package scene

import (
	"slices"
	"sync/atomic"

	"github.com/g3n/engine/core"
	"github.com/g3n/engine/light"
	"github.com/g3n/engine/math32"
	"github.com/go-gl/mathgl/mgl64"
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
	// models.DefaultPackagePath ($ROS_PACKAGE_PATH); the simvis commands
	// pass their --package-path flags, then $ROS_PACKAGE_PATH.
	PackagePath []string
}

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
