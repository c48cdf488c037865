package models

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/go-gl/mathgl/mgl64"
)

func init() { RegisterFormat(".dae", loadCollada) }

// loadCollada reads a Collada 1.4/1.5 document (.dae): the visual scene's
// node tree (matrix, translate, rotate, scale transforms, in order;
// instance_geometry, instance_node), mesh geometry given as triangles,
// polylist or polygons (polygons as fans) with POSITION and NORMAL
// inputs, and the diffuse colour of each bound material's effect
// (profile_COMMON's phong, blinn, lambert or constant; a texture gives
// the uncoloured material, as a mesh without a material does, so a URDF
// can colour it). The asset's <unit meter> scales and its <up_axis>
// (Y_UP, the default, Z_UP or X_UP) turns the document into simvis's
// meters and z up, as Blender and Gazebo import it: Y_UP (x, y, z) ->
// (x, -z, y), X_UP (x, y, z) -> (-z, y, x). Lines, tristrips, trifans,
// textures, cameras, lights, controllers and animations are ignored.
func loadCollada(r *Reader, path string) (*Model, error) {
	data, err := r.fa.readModel(path)
	if err != nil {
		return nil, err
	}
	m, err := decodeCollada(data, path, r)
	if err != nil {
		//lint:ignore ST1005 a proper noun, and never the message's start: Load prefixes "models: PATH: "
		return nil, fmt.Errorf("Collada: %w", err)
	}
	return m, nil
}

// xnode is an element of a parsed XML document.
type xnode struct {
	name     string
	line     int
	attrs    []xml.Attr
	children []*xnode
	text     []byte
}

func (n *xnode) attr(name string) string {
	if n == nil {
		return ""
	}
	for _, a := range n.attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (n *xnode) child(name string) *xnode {
	if n == nil {
		return nil
	}
	for _, c := range n.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

func (n *xnode) all(name string) []*xnode {
	if n == nil {
		return nil
	}
	var out []*xnode
	for _, c := range n.children {
		if c.name == name {
			out = append(out, c)
		}
	}
	return out
}

// path follows child names.
func (n *xnode) path(names ...string) *xnode {
	for _, name := range names {
		if n == nil {
			return nil
		}
		n = n.child(name)
	}
	return n
}

// maxXMLDepth bounds element nesting (the parser's stack and the node
// walks' recursion).
const maxXMLDepth = 256

// parseXMLTree reads a document into xnodes; element and text sizes are
// bounded by the data, already within the load's FileBytes. Lines are 1-based.
func parseXMLTree(data []byte) (*xnode, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	var stack []*xnode
	var root *xnode
	for {
		line, _ := d.InputPos()
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) >= maxXMLDepth {
				return nil, fmt.Errorf("line %d: elements nest more than %d deep", line, maxXMLDepth)
			}
			n := &xnode{name: t.Name.Local, line: line, attrs: t.Attr}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.children = append(p.children, n)
			} else if root != nil {
				return nil, fmt.Errorf("line %d: a second root element <%s>", line, t.Name.Local)
			} else {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.text = append(p.text, t...)
			}
		}
	}
	if root == nil {
		return nil, errors.New("no root element")
	}
	return root, nil
}

// colladaDoc is a document being read.
type colladaDoc struct {
	r       *Reader
	ids     map[string]*xnode
	meshes  map[meshKey]*Mesh // built geometries, by geometry and bindings
	counted map[meshKey]bool  // geometries counted against the budgets
	visits  int               // nodes walked, bounded whatever the budgets
	mats    map[string]*Material
	floats  map[*xnode][]float64
	plain   *Material // for primitives without a colour
	model   *Model
}

func (c *colladaDoc) errf(n *xnode, format string, args ...any) error {
	return fmt.Errorf("line %d: <%s>: %s", n.line, n.name, fmt.Sprintf(format, args...))
}

func decodeCollada(data []byte, path string, r *Reader) (*Model, error) {
	root, err := parseXMLTree(data)
	if err != nil {
		return nil, err
	}
	if root.name != "COLLADA" {
		return nil, fmt.Errorf("line %d: root element <%s>, want <COLLADA>", root.line, clipWord(root.name))
	}
	c := &colladaDoc{r: r, ids: map[string]*xnode{}, meshes: map[meshKey]*Mesh{}, counted: map[meshKey]bool{},
		mats: map[string]*Material{}, floats: map[*xnode][]float64{}}
	var index func(n *xnode)
	index = func(n *xnode) {
		if id := n.attr("id"); id != "" {
			if _, dup := c.ids[id]; !dup {
				c.ids[id] = n
			}
		}
		for _, k := range n.children {
			index(k)
		}
	}
	index(root)

	// The document's frame to simvis's: up axis, then units.
	conv := mgl64.Ident4()
	asset := root.child("asset")
	if u := asset.path("unit"); u != nil && u.attr("meter") != "" {
		s, err := strconv.ParseFloat(strings.TrimSpace(u.attr("meter")), 64)
		if err != nil || !(s > 0) || math.IsInf(s, 0) {
			return nil, c.errf(u, "meter %q is not a positive finite number", clipWord(u.attr("meter")))
		}
		conv = mgl64.Scale3D(s, s, s)
	}
	up := "Y_UP"
	if u := asset.path("up_axis"); u != nil {
		up = strings.TrimSpace(string(u.text))
	}
	switch up {
	case "Y_UP":
		conv = mgl64.Mat4{1, 0, 0, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 1}.Mul4(conv) // columns: x->x, y->z, z->-y
	case "Z_UP":
	case "X_UP":
		conv = mgl64.Mat4{0, 0, 1, 0, 0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 0, 1}.Mul4(conv) // x->z, y->y, z->-x
	default:
		return nil, c.errf(asset.path("up_axis"), "%q is not X_UP, Y_UP or Z_UP", clipWord(up))
	}

	base := filepath.Base(path)
	c.model = &Model{Name: strings.TrimSuffix(base, filepath.Ext(base))}
	if err := r.CountNodes(1); err != nil {
		return nil, err
	}
	top := c.model.AddNode(nil, c.model.Name, conv, nil)

	// The visual scene the document instantiates, else its first.
	var vs *xnode
	if inst := root.path("scene", "instance_visual_scene"); inst != nil {
		if vs, err = c.ref(inst, "url", "visual_scene"); err != nil {
			return nil, err
		}
	} else if lib := root.child("library_visual_scenes"); lib != nil {
		vs = lib.child("visual_scene")
	}
	if vs == nil {
		return nil, fmt.Errorf("line %d: no <visual_scene> to instantiate", root.line)
	}
	// Pass 1: nodes and geometry counted against the budgets before
	// anything is built.
	if err := c.walk(vs.all("node"), nil, 0, true); err != nil {
		return nil, err
	}
	// Pass 2: build.
	if err := c.walk(vs.all("node"), top, 0, false); err != nil {
		return nil, err
	}
	return c.model, nil
}

// ref resolves an attribute "#id" to the element of that id and name.
func (c *colladaDoc) ref(n *xnode, attr, want string) (*xnode, error) {
	v := n.attr(attr)
	if !strings.HasPrefix(v, "#") {
		return nil, c.errf(n, "%s %q: want a local reference #ID (other documents are not read)", attr, clipWord(v))
	}
	t, ok := c.ids[v[1:]]
	if !ok {
		return nil, c.errf(n, "%s %q: no element has that id", attr, clipWord(v))
	}
	if t.name != want {
		return nil, c.errf(n, "%s %q names a <%s>, want <%s>", attr, clipWord(v), t.name, want)
	}
	return t, nil
}

// maxColladaNodeDepth bounds node nesting through instance_node;
// maxColladaVisits the nodes one document instantiates, budgets lifted or
// not (instance_node can multiply them).
const (
	maxColladaNodeDepth = 64
	maxColladaVisits    = 1 << 22
)

// meshKey is a geometry with the material bindings of an instance.
type meshKey struct {
	g     *xnode
	binds string
}

func keyOf(g, inst *xnode) meshKey {
	var b strings.Builder
	for _, im := range inst.path("bind_material", "technique_common").all("instance_material") {
		b.WriteString(im.attr("symbol") + "\x00" + im.attr("target") + "\x00")
	}
	return meshKey{g, b.String()}
}

// walk counts (count) or builds the nodes under parent.
func (c *colladaDoc) walk(nodes []*xnode, parent *Node, depth int, count bool) error {
	for _, n := range nodes {
		if depth > maxColladaNodeDepth {
			return c.errf(n, "nodes nest more than %d deep (instance_node loops?)", maxColladaNodeDepth)
		}
		if c.visits++; c.visits > maxColladaVisits {
			return c.errf(n, "more than %d nodes instantiated", maxColladaVisits)
		}
		var node *Node
		if count {
			if err := c.r.CountNodes(1); err != nil {
				return err
			}
		} else {
			local, err := c.transform(n)
			if err != nil {
				return err
			}
			name := n.attr("name")
			if name == "" {
				name = n.attr("id")
			}
			node = c.model.AddNode(parent, name, local, nil)
		}
		for _, ig := range n.all("instance_geometry") {
			g, err := c.ref(ig, "url", "geometry")
			if err != nil {
				return err
			}
			if count {
				if err := c.r.CountNodes(1); err != nil {
					return err
				}
				if k := keyOf(g, ig); !c.counted[k] {
					c.counted[k] = true
					if err := c.countGeometry(g); err != nil {
						return err
					}
				}
				continue
			}
			mesh, err := c.mesh(g, ig)
			if err != nil {
				return err
			}
			if mesh != nil {
				c.model.AddNode(node, mesh.Name, mgl64.Ident4(), mesh)
			}
		}
		for _, in := range n.all("instance_node") {
			t, err := c.ref(in, "url", "node")
			if err != nil {
				return err
			}
			if err := c.walk([]*xnode{t}, node, depth+1, count); err != nil {
				return err
			}
		}
		if err := c.walk(n.all("node"), node, depth+1, count); err != nil {
			return err
		}
	}
	return nil
}

// transform composes a node's transform elements in document order.
func (c *colladaDoc) transform(n *xnode) (mgl64.Mat4, error) {
	m := mgl64.Ident4()
	for _, t := range n.children {
		var want int
		switch t.name {
		case "matrix":
			want = 16
		case "translate", "scale":
			want = 3
		case "rotate":
			want = 4
		case "lookat", "skew":
			return m, c.errf(t, "transform not supported (use matrix, translate, rotate, scale)")
		default:
			continue
		}
		v, err := c.numbers(t, want)
		if err != nil {
			return m, err
		}
		var x mgl64.Mat4
		switch t.name {
		case "matrix": // row-major in the file
			x = mgl64.Mat4{v[0], v[4], v[8], v[12], v[1], v[5], v[9], v[13], v[2], v[6], v[10], v[14], v[3], v[7], v[11], v[15]}
		case "translate":
			x = mgl64.Translate3D(v[0], v[1], v[2])
		case "scale":
			x = mgl64.Scale3D(v[0], v[1], v[2])
		case "rotate":
			axis := mgl64.Vec3{v[0], v[1], v[2]}
			if axis.Len() == 0 {
				if v[3] != 0 {
					return m, c.errf(t, "rotation about a zero axis")
				}
				continue
			}
			x = mgl64.HomogRotate3D(mgl64.DegToRad(v[3]), axis.Normalize())
		}
		m = m.Mul4(x)
	}
	return m, nil
}

// numbers parses exactly n finite numbers from an element's text.
func (c *colladaDoc) numbers(n *xnode, want int) ([]float64, error) {
	v, err := c.floatList(n)
	if err != nil {
		return nil, err
	}
	if len(v) != want {
		return nil, c.errf(n, "%d numbers, want %d", len(v), want)
	}
	return v, nil
}

func (c *colladaDoc) floatList(n *xnode) ([]float64, error) {
	if v, ok := c.floats[n]; ok {
		return v, nil
	}
	fields := bytes.Fields(n.text)
	v := make([]float64, len(fields))
	for i, f := range fields {
		x, err := strconv.ParseFloat(string(f), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, c.errf(n, "value %d, %q, is not a finite number", i+1, clipWord(string(f)))
		}
		v[i] = x
	}
	c.floats[n] = v
	return v, nil
}

func (c *colladaDoc) intList(n *xnode) ([]int, error) {
	fields := bytes.Fields(n.text)
	v := make([]int, len(fields))
	for i, f := range fields {
		x, err := strconv.Atoi(string(f))
		if err != nil || x < 0 {
			return nil, c.errf(n, "value %d, %q, is not an index (a non-negative integer)", i+1, clipWord(string(f)))
		}
		v[i] = x
	}
	return v, nil
}

// colladaPrim is a primitive element of a mesh, read but not built.
type colladaPrim struct {
	el      *xnode
	stride  int   // indices per corner
	pos     int   // offset of the position index
	nrm     int   // offset of the normal index, -1 if none
	polys   []int // corners per polygon
	indices []int // the <p> values
	nrmSrc  *xnode
}

// prims reads a geometry's primitive elements (indices checked against
// their sources later); tris is their triangle count.
func (c *colladaDoc) prims(g *xnode) (prims []colladaPrim, vertices *xnode, tris int64, err error) {
	mesh := g.child("mesh")
	if mesh == nil {
		return nil, nil, 0, nil // convex_mesh, spline, brep: nothing to draw
	}
	vertices = mesh.child("vertices")
	for _, el := range mesh.children {
		switch el.name {
		case "triangles", "polylist", "polygons":
		default:
			continue
		}
		p := colladaPrim{el: el, pos: -1, nrm: -1}
		for _, in := range el.all("input") {
			off, err := strconv.Atoi(in.attr("offset"))
			if err != nil || off < 0 || off > 64 {
				return nil, nil, 0, c.errf(in, "offset %q is not an integer from 0 to 64", clipWord(in.attr("offset")))
			}
			p.stride = max(p.stride, off+1)
			switch in.attr("semantic") {
			case "VERTEX":
				p.pos = off
			case "NORMAL":
				if p.nrmSrc, err = c.ref(in, "source", "source"); err != nil {
					return nil, nil, 0, err
				}
				p.nrm = off
			}
		}
		if p.pos < 0 {
			return nil, nil, 0, c.errf(el, "no input with semantic VERTEX")
		}
		var ps []*xnode
		if el.name == "polygons" {
			ps = el.all("p")
		} else if pe := el.child("p"); pe != nil {
			ps = []*xnode{pe}
		}
		for _, pe := range ps {
			v, err := c.intList(pe)
			if err != nil {
				return nil, nil, 0, err
			}
			if el.name == "polygons" {
				p.polys = append(p.polys, len(v)/p.stride)
			}
			p.indices = append(p.indices, v...)
		}
		if len(p.indices)%p.stride != 0 {
			return nil, nil, 0, c.errf(el, "%d indices are not a whole number of corners of %d indices", len(p.indices), p.stride)
		}
		corners := len(p.indices) / p.stride
		switch el.name {
		case "triangles":
			if corners%3 != 0 {
				return nil, nil, 0, c.errf(el, "%d corners are not a whole number of triangles", corners)
			}
			tris += int64(corners / 3)
		case "polylist":
			vc := el.child("vcount")
			if vc == nil {
				return nil, nil, 0, c.errf(el, "no <vcount>")
			}
			if p.polys, err = c.intList(vc); err != nil {
				return nil, nil, 0, err
			}
			fallthrough
		case "polygons":
			sum := 0
			for _, k := range p.polys {
				if k < 3 {
					return nil, nil, 0, c.errf(el, "a polygon of %d corners (want at least 3)", k)
				}
				if k > corners { // also keeps the sum from overflowing
					return nil, nil, 0, c.errf(el, "a polygon of %d corners, more than the %d <p> gives", k, corners)
				}
				sum += k
				tris += int64(k - 2)
			}
			if sum != corners {
				return nil, nil, 0, c.errf(el, "the polygons count %d corners, <p> gives %d", sum, corners)
			}
		}
		prims = append(prims, p)
	}
	if len(prims) > 0 && vertices == nil {
		return nil, nil, 0, c.errf(mesh, "no <vertices>")
	}
	return prims, vertices, tris, nil
}

// countGeometry counts a geometry's flat vertices and triangles.
func (c *colladaDoc) countGeometry(g *xnode) error {
	_, _, tris, err := c.prims(g)
	if err != nil {
		return err
	}
	return c.r.CountGeometry(3*tris, tris)
}

// vectors reads a source's 3-vectors through its accessor.
func (c *colladaDoc) vectors(src *xnode) ([]mgl32.Vec3, error) {
	fa := src.child("float_array")
	acc := src.path("technique_common", "accessor")
	if fa == nil || acc == nil {
		return nil, c.errf(src, "want a <float_array> and a <technique_common><accessor>")
	}
	v, err := c.floatList(fa)
	if err != nil {
		return nil, err
	}
	get := func(name string, def int) (int, error) {
		s := acc.attr(name)
		if s == "" {
			return def, nil
		}
		x, err := strconv.Atoi(s)
		if err != nil || x < 0 {
			return 0, c.errf(acc, "%s %q is not a non-negative integer", name, clipWord(s))
		}
		return x, nil
	}
	count, err := get("count", -1)
	if err != nil {
		return nil, err
	}
	stride, err := get("stride", 1)
	if err != nil {
		return nil, err
	}
	offset, err := get("offset", 0)
	if err != nil {
		return nil, err
	}
	if count < 0 {
		return nil, c.errf(acc, "no count")
	}
	if stride < 3 {
		return nil, c.errf(acc, "stride %d: a 3D vector needs at least 3", stride)
	}
	if count > 0 && (int64(offset)+int64(count-1)*int64(stride)+3 > int64(len(v))) {
		return nil, c.errf(acc, "%d vectors of stride %d from %d need more than the %d values of its array", count, stride, offset, len(v))
	}
	out := make([]mgl32.Vec3, count)
	for i := range out {
		k := offset + i*stride
		out[i] = mgl32.Vec3{float32(v[k]), float32(v[k+1]), float32(v[k+2])}
	}
	return out, nil
}

// mesh builds a geometry's mesh with the materials an instance binds. A
// geometry instantiated with the same bindings is built once.
func (c *colladaDoc) mesh(g, inst *xnode) (*Mesh, error) {
	binds := map[string]string{} // symbol -> material id
	for _, im := range inst.path("bind_material", "technique_common").all("instance_material") {
		binds[im.attr("symbol")] = strings.TrimPrefix(im.attr("target"), "#")
	}
	key := keyOf(g, inst)
	if m, ok := c.meshes[key]; ok {
		return m, nil
	}
	prims, vertices, _, err := c.prims(g)
	if err != nil {
		return nil, err
	}
	if len(prims) == 0 {
		return nil, nil
	}
	var posSrc *xnode
	for _, in := range vertices.all("input") {
		if in.attr("semantic") == "POSITION" {
			if posSrc, err = c.ref(in, "source", "source"); err != nil {
				return nil, err
			}
		}
	}
	if posSrc == nil {
		return nil, c.errf(vertices, "no input with semantic POSITION")
	}
	pos, err := c.vectors(posSrc)
	if err != nil {
		return nil, err
	}
	name := g.attr("name")
	if name == "" {
		name = g.attr("id")
	}
	mesh := &Mesh{Name: name}
	for _, p := range prims {
		var nrm []mgl32.Vec3
		if p.nrm >= 0 {
			if nrm, err = c.vectors(p.nrmSrc); err != nil {
				return nil, err
			}
		}
		mat, err := c.material(binds, p.el.attr("material"))
		if err != nil {
			return nil, err
		}
		corners := len(p.indices) / p.stride
		polys := p.polys
		if p.el.name == "triangles" {
			polys = nil
		}
		var ntris int64
		if polys == nil {
			ntris = int64(corners / 3)
		} else {
			for _, k := range polys {
				ntris += int64(k - 2)
			}
		}
		t := newTriangles(ntris, mat)
		corner := func(i int) (mgl32.Vec3, mgl32.Vec3, bool, error) {
			vi := p.indices[i*p.stride+p.pos]
			if vi >= len(pos) {
				return mgl32.Vec3{}, mgl32.Vec3{}, false, c.errf(p.el, "position index %d of %d positions", vi, len(pos))
			}
			if p.nrm < 0 {
				return pos[vi], mgl32.Vec3{}, false, nil
			}
			ni := p.indices[i*p.stride+p.nrm]
			if ni >= len(nrm) {
				return mgl32.Vec3{}, mgl32.Vec3{}, false, c.errf(p.el, "normal index %d of %d normals", ni, len(nrm))
			}
			n := nrm[ni]
			l := n.Len()
			return pos[vi], n, l > 0 && !math.IsInf(float64(l), 0), nil
		}
		tri := func(a, b, d int) error {
			var v, n [3]mgl32.Vec3
			var ok [3]bool
			for j, i := range [3]int{a, b, d} {
				var err error
				if v[j], n[j], ok[j], err = corner(i); err != nil {
					return err
				}
			}
			t.add(v[0], v[1], v[2], mgl32.Vec3{})
			ns := t.p.Normals[len(t.p.Normals)-3:]
			for j := range ns {
				if ok[j] {
					ns[j] = n[j].Normalize()
				}
			}
			return nil
		}
		if polys == nil {
			for i := 0; i+2 < corners; i += 3 {
				if err := tri(i, i+1, i+2); err != nil {
					return nil, err
				}
			}
		} else {
			start := 0
			for _, k := range polys {
				for j := 1; j+1 < k; j++ {
					if err := tri(start, start+j, start+j+1); err != nil {
						return nil, err
					}
				}
				start += k
			}
		}
		t.p.UpdateKey()
		mesh.Primitives = append(mesh.Primitives, t.p)
	}
	c.meshes[key] = mesh
	return mesh, nil
}

// material returns the material a primitive's symbol binds: its effect's
// diffuse colour, else the uncoloured material.
func (c *colladaDoc) material(binds map[string]string, symbol string) (*Material, error) {
	id, ok := binds[symbol]
	if !ok {
		id = symbol // some exporters name the material itself
	}
	if m, ok := c.mats[id]; ok {
		return m, nil
	}
	plain := func() *Material {
		if c.plain == nil {
			c.plain = uncoloredMaterial()
		}
		return c.plain
	}
	mel, ok := c.ids[id]
	if id == "" || !ok || mel.name != "material" {
		return plain(), nil
	}
	ie := mel.child("instance_effect")
	if ie == nil {
		return plain(), nil
	}
	eff, err := c.ref(ie, "url", "effect")
	if err != nil {
		return nil, err
	}
	tech := eff.path("profile_COMMON", "technique")
	var shading *xnode
	for _, s := range []string{"phong", "blinn", "lambert", "constant"} {
		if shading = tech.path(s); shading != nil {
			break
		}
	}
	col := shading.path("diffuse", "color")
	if shading != nil && shading.name == "constant" {
		col = shading.path("emission", "color")
	}
	if col == nil {
		c.mats[id] = plain()
		return c.mats[id], nil
	}
	v, err := c.floatList(col)
	if err != nil {
		return nil, err
	}
	if len(v) != 3 && len(v) != 4 {
		return nil, c.errf(col, "%d numbers, want 3 or 4 (RGB or RGBA)", len(v))
	}
	name := mel.attr("name")
	if name == "" {
		name = id
	}
	m := &Material{Name: name, BaseColor: [4]float32{1, 1, 1, 1}, AlphaCutoff: 0.5, Roughness: 1}
	for i, x := range v {
		m.BaseColor[i] = float32(min(max(x, 0), 1))
	}
	if m.BaseColor[3] < 1 {
		m.AlphaMode = AlphaBlend
	}
	c.mats[id] = m
	return m, nil
}
