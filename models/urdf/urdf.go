package urdf

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
)

func init() { models.RegisterFormat(".urdf", load) }

// Segments of the cylinder and sphere primitives.
const (
	cylinderSegments = 32
	sphereSegments   = 32
	sphereRings      = 16
)

// xmlElementsPerNode bounds the XML elements of a URDF by the Nodes
// limit: links and joints take a handful each.
const xmlElementsPerNode = 16

type link struct {
	name   string
	e      *elem
	parent *joint
	joints []*joint // to children, in document order
}

type joint struct {
	name          string
	e             *elem
	kind          string
	parent, child *link
	origin        mgl64.Mat4
	axis          mgl64.Vec3
	lower, upper  float64
	hasLimit      bool
	mimic         string
	multiplier    float64
	offset        float64
	mimicLine     int
}

type reader struct {
	r         *models.Reader
	path, dir string
	materials map[string]*models.Material // named at the robot's top level
	meshes    map[string]*models.Model    // by resolved path
	recolored map[recolorKey]*models.Mesh
}

type recolorKey struct {
	mesh *models.Mesh
	mat  *models.Material
}

func load(r *models.Reader, path string) (*models.Model, error) {
	data, err := r.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("models: %s: %w", path, err)
	}
	rd := &reader{r: r, path: path, dir: filepath.Dir(path), materials: map[string]*models.Material{},
		meshes: map[string]*models.Model{}, recolored: map[recolorKey]*models.Mesh{}}
	m, err := rd.robot(data)
	if err != nil {
		var le *lineError
		if errors.As(err, &le) {
			if le.line > 0 {
				return nil, fmt.Errorf("models: %s:%d: %w", path, le.line, err)
			}
			return nil, fmt.Errorf("models: %s: %w", path, err)
		}
		return nil, fmt.Errorf("models: %s: %w", path, err)
	}
	return m, nil
}

var namePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

func (rd *reader) robot(data []byte) (*models.Model, error) {
	maxElems := -1
	if n := rd.r.Options().Limits.Nodes; n >= 0 {
		maxElems = max(xmlElementsPerNode*n, 1024)
	}
	root, err := parseXML(data, maxElems)
	if err != nil {
		return nil, err
	}
	if root.name != "robot" {
		return nil, located(root.line, "root element <%s> (want <robot>)", root.name)
	}
	for _, m := range root.all("material") {
		name, _ := m.attr("name")
		if name == "" {
			return nil, located(m.line, "material without a name")
		}
		mat, err := rd.material(m, true)
		if err != nil {
			return nil, err
		}
		if _, dup := rd.materials[name]; dup {
			return nil, located(m.line, "material %q defined twice", name)
		}
		rd.materials[name] = mat
	}
	links := map[string]*link{}
	var linkOrder []*link
	for _, e := range root.all("link") {
		name, err := checkName(e, "link")
		if err != nil {
			return nil, err
		}
		if l, dup := links[name]; dup {
			return nil, located(e.line, "link %q defined twice (first at line %d)", name, l.e.line)
		}
		l := &link{name: name, e: e}
		links[name] = l
		linkOrder = append(linkOrder, l)
	}
	if len(linkOrder) == 0 {
		return nil, located(root.line, "the robot has no links")
	}
	joints := map[string]*joint{}
	var jointOrder []*joint
	for _, e := range root.all("joint") {
		j, err := rd.joint(e, links)
		if err != nil {
			return nil, err
		}
		if o, dup := joints[j.name]; dup {
			return nil, located(e.line, "joint %q defined twice (first at line %d)", j.name, o.e.line)
		}
		if l, clash := links[j.name]; clash {
			return nil, located(e.line, "joint %q has the name of link %q (line %d): in simvis both are names in the part (an element and an insertion point)", j.name, j.name, l.e.line)
		}
		if j.child.parent != nil {
			return nil, located(e.line, "joint %q: link %q is already the child of joint %q (line %d): a link has one parent", j.name, j.child.name, j.child.parent.name, j.child.parent.e.line)
		}
		j.child.parent = j
		j.parent.joints = append(j.parent.joints, j)
		joints[j.name] = j
		jointOrder = append(jointOrder, j)
	}
	// One root; every link reachable from it (else the joints form a cycle).
	var roots []*link
	for _, l := range linkOrder {
		if l.parent == nil {
			roots = append(roots, l)
		}
	}
	switch {
	case len(roots) == 0:
		return nil, cycle(linkOrder[0])
	case len(roots) > 1:
		var names []string
		for _, l := range roots {
			names = append(names, fmt.Sprintf("%q (line %d)", l.name, l.e.line))
		}
		return nil, located(roots[1].e.line, "links %s are all roots (the child of no joint): a robot has one root link", strings.Join(names, ", "))
	}
	order := []*link{} // parents before children
	stack := []*link{roots[0]}
	seen := map[*link]bool{}
	for len(stack) > 0 {
		l := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		seen[l] = true
		order = append(order, l)
		for i := len(l.joints) - 1; i >= 0; i-- {
			stack = append(stack, l.joints[i].child)
		}
	}
	for _, l := range linkOrder {
		if !seen[l] {
			return nil, cycle(l)
		}
	}
	if err := rd.r.CountNodes(len(linkOrder)); err != nil {
		return nil, located(root.line, "%v", err)
	}

	m := models.NewModel(strings.TrimSuffix(filepath.Base(rd.path), filepath.Ext(rd.path)))
	nodes := map[*link]*models.Node{}
	for _, l := range order {
		var parent *models.Node
		local := mgl64.Ident4()
		if l.parent != nil {
			parent, local = nodes[l.parent.parent], l.parent.origin
		}
		n := m.AddNode(parent, l.name, local, nil)
		n.InsertionPoint = l.name
		nodes[l] = n
		if err := rd.geometry(m, n, l); err != nil {
			return nil, err
		}
	}
	cmds, err := rd.commands(jointOrder, joints)
	if err != nil {
		return nil, err
	}
	m.Commands = cmds
	return m, nil
}

// cycle describes the cycle of joints that l's parents lead into.
func cycle(l *link) error {
	visited := map[*link]int{}
	var path []*joint
	for l.parent != nil {
		if i, ok := visited[l]; ok {
			path = path[i:]
			break
		}
		visited[l] = len(path)
		path = append(path, l.parent)
		l = l.parent.parent
	}
	var names []string
	for i := len(path) - 1; i >= 0; i-- {
		names = append(names, fmt.Sprintf("%q (line %d)", path[i].name, path[i].e.line))
	}
	if len(path) == 0 {
		return located(0, "no root link")
	}
	return located(path[len(path)-1].e.line, "the joints %s form a cycle: a robot is a tree", strings.Join(names, ", "))
}

func checkName(e *elem, what string) (string, error) {
	name, ok := e.attr("name")
	if !ok || name == "" {
		return "", located(e.line, "%s without a name", what)
	}
	if !namePattern.MatchString(name) {
		return "", located(e.line, "%s name %q: simvis names are letters, digits, '_' and '-', not starting with a digit or '-'", what, clip(name))
	}
	return name, nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// numbers parses an attribute of n finite numbers (absent: def).
func numbers(e *elem, attr string, n int, def []float64) ([]float64, error) {
	v, ok := e.attr(attr)
	if !ok {
		return def, nil
	}
	fields := strings.Fields(v)
	if len(fields) != n {
		return nil, located(e.line, "<%s> %s: want %d numbers, got %d in %q", e.name, attr, n, len(fields), clip(v))
	}
	out := make([]float64, n)
	for i, f := range fields {
		x, err := strconv.ParseFloat(f, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, located(e.line, "<%s> %s: value %d, %q, is not a finite number", e.name, attr, i+1, clip(f))
		}
		out[i] = x
	}
	return out, nil
}

// origin reads an <origin xyz rpy> child (absent: identity).
func origin(parent *elem) (mgl64.Mat4, error) {
	e := parent.first("origin")
	if e == nil {
		return mgl64.Ident4(), nil
	}
	xyz, err := numbers(e, "xyz", 3, []float64{0, 0, 0})
	if err != nil {
		return mgl64.Mat4{}, err
	}
	rpy, err := numbers(e, "rpy", 3, []float64{0, 0, 0})
	if err != nil {
		return mgl64.Mat4{}, err
	}
	return Pose(xyz, rpy), nil
}

// Pose is the transform of a URDF origin: translation xyz, rotation
// Rz(yaw)·Ry(pitch)·Rx(roll) for rpy = (roll, pitch, yaw) in radians.
func Pose(xyz, rpy []float64) mgl64.Mat4 {
	sr, cr := math.Sincos(rpy[0])
	sp, cp := math.Sincos(rpy[1])
	sy, cy := math.Sincos(rpy[2])
	// Column-major, as mgl64 stores it.
	return mgl64.Mat4{
		cy * cp, sy * cp, -sp, 0,
		cy*sp*sr - sy*cr, sy*sp*sr + cy*cr, cp * sr, 0,
		cy*sp*cr + sy*sr, sy*sp*cr - cy*sr, cp * cr, 0,
		xyz[0], xyz[1], xyz[2], 1,
	}
}
