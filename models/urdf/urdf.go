// Package urdf reads URDF robot descriptions (.urdf) into models.Model, so
// that a part can load a robot like any model file: it registers the .urdf
// extension with models.RegisterFormat.
//
// Every link becomes a node declared as insertion point LINK (a part named
// R gives R/LINK), the root link at the model's origin; every joint's child
// link hangs below its parent link at the joint's origin (xyz, and rpy in
// URDF's fixed-axis convention: R = Rz(yaw)·Ry(pitch)·Rx(roll)). Revolute,
// continuous and prismatic joints become embedded commands: elements of
// type "joint" (package elements) named JOINT, inserted at the child
// link's insertion point, with one parameter, position, in radians or
// meters, and the URDF limits as its range; mimic joints follow their
// leader. Fixed joints are static. Floating and planar joints are refused:
// the part's pose and pose elements place a robot in the world.
//
// Links show their visual geometry (or, with models.LoadOptions.Collision,
// their collision geometry): box, cylinder (along z), sphere, and meshes in
// any format registered with models (STL, OBJ, Collada, glTF) with their
// scale. Material colours (inline rgba or named at the robot's top level)
// colour primitives and meshes whose file gives no colour (STL, OBJ faces
// without a material); texture images are ignored.
//
// Mesh URIs are relative to the URDF's directory, file:// URIs or absolute
// paths, or package://PKG/PATH, PKG found as the URDF's own enclosing
// package (the nearest directory above the URDF holding a package.xml,
// named PKG or whose package.xml names PKG) or as a directory PKG
// directly under an entry of models.LoadOptions.PackagePath (or the entry
// itself when it is named PKG).
//
// Errors name the URDF file and the line of what they refuse.
package urdf

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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

func (rd *reader) joint(e *elem, links map[string]*link) (*joint, error) {
	name, err := checkName(e, "joint")
	if err != nil {
		return nil, err
	}
	j := &joint{name: name, e: e, multiplier: 1}
	j.kind, _ = e.attr("type")
	switch j.kind {
	case "revolute", "continuous", "prismatic", "fixed":
	case "floating", "planar":
		return nil, located(e.line, "joint %q: type %q is not supported (place a robot with the part's pose_offset and pose elements; see docs/urdf.md)", name, j.kind)
	case "":
		return nil, located(e.line, "joint %q: no type (want revolute, continuous, prismatic or fixed)", name)
	default:
		return nil, located(e.line, "joint %q: unknown type %q (want revolute, continuous, prismatic or fixed)", name, clip(j.kind))
	}
	for _, end := range []struct {
		tag string
		l   **link
	}{{"parent", &j.parent}, {"child", &j.child}} {
		c := e.first(end.tag)
		if c == nil {
			return nil, located(e.line, "joint %q: no <%s>", name, end.tag)
		}
		ln, _ := c.attr("link")
		l, ok := links[ln]
		if !ok {
			return nil, located(c.line, "joint %q: %s link %q is not defined", name, end.tag, clip(ln))
		}
		*end.l = l
	}
	if j.parent == j.child {
		return nil, located(e.line, "joint %q: link %q is its own parent", name, j.child.name)
	}
	if j.origin, err = origin(e); err != nil {
		return nil, err
	}
	if j.kind == "fixed" {
		return j, nil
	}
	axis := []float64{1, 0, 0}
	if a := e.first("axis"); a != nil {
		if axis, err = numbers(a, "xyz", 3, axis); err != nil {
			return nil, err
		}
		if math.Sqrt(axis[0]*axis[0]+axis[1]*axis[1]+axis[2]*axis[2]) < 1e-9 {
			return nil, located(a.line, "joint %q: the axis has zero length", name)
		}
	}
	j.axis = mgl64.Vec3{axis[0], axis[1], axis[2]}
	if l := e.first("limit"); l != nil {
		j.hasLimit = true
		lim, err := numbers(l, "lower", 1, []float64{0})
		if err != nil {
			return nil, err
		}
		j.lower = lim[0]
		if lim, err = numbers(l, "upper", 1, []float64{0}); err != nil {
			return nil, err
		}
		j.upper = lim[0]
		if j.kind != "continuous" && j.lower > j.upper {
			return nil, located(l.line, "joint %q: lower limit %g above upper limit %g", name, j.lower, j.upper)
		}
	} else if j.kind != "continuous" {
		return nil, located(e.line, "joint %q: a %s joint needs <limit lower=... upper=...>", name, j.kind)
	}
	if mm := e.first("mimic"); mm != nil {
		j.mimic, _ = mm.attr("joint")
		j.mimicLine = mm.line
		if j.mimic == "" {
			return nil, located(mm.line, "joint %q: <mimic> names no joint", name)
		}
		v, err := numbers(mm, "multiplier", 1, []float64{1})
		if err != nil {
			return nil, err
		}
		j.multiplier = v[0]
		if v, err = numbers(mm, "offset", 1, []float64{0}); err != nil {
			return nil, err
		}
		j.offset = v[0]
	}
	return j, nil
}

// commands returns the joint elements, leaders before the joints that
// mimic them.
func (rd *reader) commands(order []*joint, byName map[string]*joint) ([]models.Command, error) {
	var out []models.Command
	done := map[*joint]bool{}
	var emit func(j *joint, chain []*joint) error
	emit = func(j *joint, chain []*joint) error {
		if done[j] || j.kind == "fixed" {
			return nil
		}
		if slices.Contains(chain, j) {
			var names []string
			for _, c := range chain {
				names = append(names, strconv.Quote(c.name))
			}
			return located(j.mimicLine, "joint %q: mimic joints %s follow each other in a cycle", j.name, strings.Join(names, " -> "))
		}
		if j.mimic != "" {
			leader, ok := byName[j.mimic]
			if !ok {
				return located(j.mimicLine, "joint %q: mimics joint %q, which is not defined", j.name, clip(j.mimic))
			}
			if leader.kind == "fixed" {
				return located(j.mimicLine, "joint %q: mimics fixed joint %q", j.name, leader.name)
			}
			if err := emit(leader, append(chain, j)); err != nil {
				return err
			}
		}
		done[j] = true
		out = append(out, models.Command{XML: elementXML(j), Source: fmt.Sprintf("%s:%d (joint %q)", rd.path, j.e.line, j.name)})
		return nil
	}
	for _, j := range order {
		if err := emit(j, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func elementXML(j *joint) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<element type="joint" name="%s" insert_at="%s" kind="%s" axis="%s %s %s"`,
		j.name, j.child.name, j.kind, num(j.axis[0]), num(j.axis[1]), num(j.axis[2]))
	if j.kind != "continuous" {
		fmt.Fprintf(&b, ` min="%s" max="%s"`, num(j.lower), num(j.upper))
	}
	if j.mimic != "" {
		fmt.Fprintf(&b, ` mimic="%s" multiplier="%s" offset="%s"`, j.mimic, num(j.multiplier), num(j.offset))
	} else if j.kind != "continuous" && (j.lower > 0 || j.upper < 0) {
		// Zero is outside the limits: start at the nearer one.
		fmt.Fprintf(&b, ` position="%s"`, num(math.Min(math.Max(0, j.lower), j.upper)))
	}
	b.WriteString("/>")
	return b.String()
}

func (rd *reader) material(e *elem, topLevel bool) (*models.Material, error) {
	name, _ := e.attr("name")
	c := e.first("color")
	if c == nil {
		if topLevel {
			// A named material with only a texture: white, as ROS draws it.
			return colored(name, [4]float64{1, 1, 1, 1}), nil
		}
		if m, ok := rd.materials[name]; ok {
			return m, nil
		}
		if e.first("texture") != nil {
			return colored(name, [4]float64{1, 1, 1, 1}), nil
		}
		return nil, located(e.line, "material %q: no <color> and no material of that name at the robot's top level", clip(name))
	}
	v, err := numbers(c, "rgba", 4, []float64{1, 1, 1, 1})
	if err != nil {
		return nil, err
	}
	for i, x := range v {
		if x < 0 || x > 1 {
			return nil, located(c.line, "<color> rgba: value %d, %g, is outside 0..1", i+1, x)
		}
	}
	return colored(name, [4]float64(v)), nil
}

func colored(name string, c [4]float64) *models.Material {
	m := &models.Material{Name: name, AlphaCutoff: 0.5, Roughness: 1}
	for i, x := range c {
		m.BaseColor[i] = float32(x)
	}
	if m.BaseColor[3] < 1 {
		m.AlphaMode = models.AlphaBlend
	}
	return m
}

var defaultColor = [4]float32{0.8, 0.8, 0.8, 1}

// geometry adds a link's visuals (or collisions) as children of its node.
func (rd *reader) geometry(m *models.Model, n *models.Node, l *link) error {
	tag := "visual"
	if rd.r.Options().Collision {
		tag = "collision"
	}
	for i, v := range l.e.all(tag) {
		local, err := origin(v)
		if err != nil {
			return err
		}
		var mat *models.Material
		if me := v.first("material"); me != nil && tag == "visual" {
			if mat, err = rd.material(me, false); err != nil {
				return err
			}
		}
		g := v.first("geometry")
		if g == nil || len(g.children) == 0 {
			return located(v.line, "link %q: <%s> without geometry", l.name, tag)
		}
		shape := g.children[0]
		name := fmt.Sprintf("%s %s %d", l.name, tag, i+1)
		color := defaultColor
		if mat != nil {
			color = mat.BaseColor
		}
		if err := rd.r.CountNodes(1); err != nil {
			return located(v.line, "%v", err)
		}
		var mesh *models.Mesh
		switch shape.name {
		case "box":
			s, err := numbers(shape, "size", 3, nil)
			if err != nil {
				return err
			}
			if s == nil {
				return located(shape.line, "link %q: <box> without size", l.name)
			}
			mesh = models.Box(name, s[0], s[1], s[2], color)
		case "cylinder":
			rl, err := twoNumbers(shape, "radius", "length")
			if err != nil {
				return err
			}
			mesh = models.Cylinder(name, rl[0], rl[1], cylinderSegments, color)
		case "sphere":
			r, err := numbers(shape, "radius", 1, nil)
			if err != nil {
				return err
			}
			if r == nil {
				return located(shape.line, "link %q: <sphere> without radius", l.name)
			}
			mesh = models.Sphere(name, r[0], sphereSegments, sphereRings, color)
		case "mesh":
			if err := rd.mesh(m, n, l, shape, local, mat, name); err != nil {
				return err
			}
			continue
		default:
			return located(shape.line, "link %q: unknown geometry <%s> (want box, cylinder, sphere or mesh)", l.name, clip(shape.name))
		}
		if mat != nil {
			for _, p := range mesh.Primitives {
				p.Material.Name = mat.Name
			}
		}
		var verts, tris int64
		for _, p := range mesh.Primitives {
			verts += int64(len(p.Positions))
			tris += int64(len(p.Indices) / 3)
		}
		if err := rd.r.CountGeometry(verts, tris); err != nil {
			return located(shape.line, "%v", err)
		}
		m.AddNode(n, name, local, mesh)
	}
	return nil
}

func twoNumbers(e *elem, a, b string) ([]float64, error) {
	var out []float64
	for _, attr := range []string{a, b} {
		v, err := numbers(e, attr, 1, nil)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, located(e.line, "<%s> without %s", e.name, attr)
		}
		out = append(out, v[0])
	}
	return out, nil
}

// mesh adds a mesh geometry: a node at the visual's origin, scaled, above
// a copy of the mesh file's node tree.
func (rd *reader) mesh(m *models.Model, n *models.Node, l *link, e *elem, local mgl64.Mat4, mat *models.Material, name string) error {
	uri, _ := e.attr("filename")
	if uri == "" {
		return located(e.line, "link %q: <mesh> without filename", l.name)
	}
	path, err := rd.resolve(uri)
	if err != nil {
		return located(e.line, "link %q: mesh %q: %v", l.name, clip(uri), err)
	}
	s, err := numbers(e, "scale", 3, []float64{1, 1, 1})
	if err != nil {
		return err
	}
	for i, x := range s {
		if x == 0 {
			return located(e.line, "link %q: mesh %q: scale value %d is zero", l.name, clip(uri), i+1)
		}
	}
	mm, ok := rd.meshes[path]
	if !ok {
		if ext := strings.ToLower(filepath.Ext(path)); ext == ".urdf" || !slices.Contains(models.Formats(), ext) {
			var have []string
			for _, f := range models.Formats() {
				if f != ".urdf" {
					have = append(have, f)
				}
			}
			if ext == "" {
				ext = "(no extension)"
			}
			return located(e.line, "link %q: mesh %q: unsupported mesh format %q (have %s)", l.name, clip(uri), ext, strings.Join(have, ", "))
		}
		if mm, err = rd.r.Load(path); err != nil {
			return located(e.line, "link %q: mesh %q: %v", l.name, clip(uri), strings.TrimPrefix(err.Error(), "models: "))
		}
		rd.meshes[path] = mm
	}
	top := m.AddNode(n, name, local.Mul4(mgl64.Scale3D(s[0], s[1], s[2])), nil)
	if err := rd.r.CountNodes(countNodes(mm)); err != nil {
		return located(e.line, "%v", err)
	}
	// The mesh model's nodes are copied (they get their own parents),
	// their meshes shared.
	type item struct {
		src    *models.Node
		parent *models.Node
	}
	stack := []item{}
	for i := len(mm.Roots) - 1; i >= 0; i-- {
		stack = append(stack, item{mm.Roots[i], top})
	}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		c := m.AddNode(it.parent, it.src.Name, it.src.Local, rd.recolor(it.src.Mesh, mat))
		for i := len(it.src.Children) - 1; i >= 0; i-- {
			stack = append(stack, item{it.src.Children[i], c})
		}
	}
	return nil
}

func countNodes(m *models.Model) int {
	_, _, n := m.Counts()
	return n
}

// recolor returns mesh with mat in place of the materials its file gave
// no colour (named "default"); the same mesh and material give the same
// copy, sharing the geometry.
func (rd *reader) recolor(mesh *models.Mesh, mat *models.Material) *models.Mesh {
	if mesh == nil || mat == nil {
		return mesh
	}
	needs := false
	for _, p := range mesh.Primitives {
		needs = needs || p.Material != nil && p.Material.Name == "default"
	}
	if !needs {
		return mesh
	}
	k := recolorKey{mesh, mat}
	if c, ok := rd.recolored[k]; ok {
		return c
	}
	c := &models.Mesh{Name: mesh.Name}
	for _, p := range mesh.Primitives {
		if p.Material != nil && p.Material.Name == "default" {
			cp := *p
			cp.Material = mat
			p = &cp
		}
		c.Primitives = append(c.Primitives, p)
	}
	rd.recolored[k] = c
	return c
}

// resolve turns a mesh URI into a path.
func (rd *reader) resolve(uri string) (string, error) {
	switch {
	case strings.HasPrefix(uri, "package://"):
		rest := strings.TrimPrefix(uri, "package://")
		pkg, rel, ok := strings.Cut(rest, "/")
		if !ok || pkg == "" || rel == "" {
			return "", fmt.Errorf("want package://PACKAGE/PATH")
		}
		rel, err := url.PathUnescape(rel)
		if err != nil {
			return "", err
		}
		dir, err := rd.findPackage(pkg)
		if err != nil {
			return "", err
		}
		if !filepath.IsLocal(filepath.FromSlash(rel)) {
			return "", fmt.Errorf("the path leads out of package %q", pkg)
		}
		return filepath.Join(dir, filepath.FromSlash(rel)), nil
	case strings.HasPrefix(uri, "file://"):
		u, err := url.Parse(uri)
		if err != nil {
			return "", err
		}
		if u.Host != "" && u.Host != "localhost" {
			return "", fmt.Errorf("file URI with host %q (want file:///ABSOLUTE/PATH)", u.Host)
		}
		if !filepath.IsAbs(u.Path) {
			return "", fmt.Errorf("want file:///ABSOLUTE/PATH")
		}
		return filepath.Clean(u.Path), nil
	}
	if i := strings.Index(uri, "://"); i > 0 && !strings.ContainsAny(uri[:i], "/\\") {
		return "", fmt.Errorf("unsupported URI scheme %q (want a path, file:// or package://)", uri[:i])
	}
	if filepath.IsAbs(uri) {
		return filepath.Clean(uri), nil
	}
	return filepath.Join(rd.dir, filepath.FromSlash(uri)), nil
}

// findPackage finds package pkg: the URDF's own enclosing package first,
// then the search path.
func (rd *reader) findPackage(pkg string) (string, error) {
	root := rd.r.Options().Root
	if root != "" {
		if abs, err := filepath.Abs(root); err == nil {
			root = abs
		}
	}
	for dir := rd.dir; ; dir = filepath.Dir(dir) {
		if root != "" {
			if rel, err := filepath.Rel(root, dir); err != nil || !filepath.IsLocal(rel) && rel != "." {
				break
			}
		}
		if isFile(filepath.Join(dir, "package.xml")) {
			// Read through the load, so that it counts and Model.Files
			// lists it: a mirror or a recording needs it to find the
			// same package.
			data, err := rd.r.ReadFile(filepath.Join(dir, "package.xml"))
			if err != nil {
				return "", fmt.Errorf("package.xml of %s: %w", dir, err)
			}
			if filepath.Base(dir) == pkg || packageName(data) == pkg {
				return dir, nil
			}
			break // the nearest package.xml is the enclosing package
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	path := rd.r.Options().PackagePath
	for _, entry := range path {
		if entry == "" {
			continue
		}
		if filepath.Base(filepath.Clean(entry)) == pkg && isFile(filepath.Join(entry, "package.xml")) {
			return filepath.Abs(entry)
		}
		if st, err := os.Stat(filepath.Join(entry, pkg)); err == nil && st.IsDir() {
			return filepath.Abs(filepath.Join(entry, pkg))
		}
	}
	where := "the package path is empty (set ROS_PACKAGE_PATH or give --package-path DIR)"
	if len(path) > 0 {
		where = "not in the package path " + clip(strings.Join(path, string(filepath.ListSeparator)))
	}
	return "", fmt.Errorf("unknown package %q: not the URDF's own package and %s", pkg, where)
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

var nameTag = regexp.MustCompile(`<name>\s*([^<\s]+)\s*</name>`)

// packageName is the <name> of a package.xml (found in its first 64 KiB).
func packageName(data []byte) string {
	if m := nameTag.FindSubmatch(data[:min(len(data), 64<<10)]); m != nil {
		return string(m[1])
	}
	return ""
}
