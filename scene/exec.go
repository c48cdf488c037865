package scene

import (
	"errors"
	"strings"

	"github.com/go-gl/mathgl/mgl64"
)

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
	case "remove":
		// A scene is built by adding; taking away is rebuilding without
		// the command, which a running host does (ipc.Host).
		return c.Errorf("", "remove is a request to a running host (simvis request), not a command a scene executes")
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
