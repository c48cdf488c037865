package models

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/go-gl/mathgl/mgl64"
)

// daeDoc wraps library contents and a visual scene in a Collada document.
func daeDoc(asset, libs, scene string) string {
	return `<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset>` + asset + `</asset>
` + libs + `
  <library_visual_scenes><visual_scene id="scene">` + scene + `</visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#scene"/></scene>
</COLLADA>
`
}

// daeCube is a cube of side 2s centred at the origin: 8 positions, six
// quads as a polylist (with a material symbol) or as triangles.
func daeCube(id string, s float64, polylist bool, material string) string {
	pos := ""
	for i := 0; i < 8; i++ {
		x, y, z := -s, -s, -s
		if i&1 != 0 {
			x = s
		}
		if i&2 != 0 {
			y = s
		}
		if i&4 != 0 {
			z = s
		}
		pos += fmt.Sprintf("%g %g %g ", x, y, z)
	}
	// Faces, counter-clockwise seen from outside.
	quads := [][4]int{{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}}
	prim := ""
	mat := ""
	if material != "" {
		mat = ` material="` + material + `"`
	}
	if polylist {
		p, vc := "", ""
		for _, q := range quads {
			vc += "4 "
			p += fmt.Sprintf("%d %d %d %d ", q[0], q[1], q[2], q[3])
		}
		prim = `<polylist count="6"` + mat + `><input semantic="VERTEX" source="#` + id + `-v" offset="0"/><vcount>` + vc + `</vcount><p>` + p + `</p></polylist>`
	} else {
		p := ""
		for _, q := range quads {
			p += fmt.Sprintf("%d %d %d %d %d %d ", q[0], q[1], q[2], q[0], q[2], q[3])
		}
		prim = `<triangles count="12"` + mat + `><input semantic="VERTEX" source="#` + id + `-v" offset="0"/><p>` + p + `</p></triangles>`
	}
	return `<geometry id="` + id + `" name="` + id + `"><mesh>
  <source id="` + id + `-p"><float_array id="` + id + `-pa" count="24">` + pos + `</float_array>
    <technique_common><accessor source="#` + id + `-pa" count="8" stride="3"><param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/></accessor></technique_common></source>
  <vertices id="` + id + `-v"><input semantic="POSITION" source="#` + id + `-p"/></vertices>
  ` + prim + `
</mesh></geometry>`
}

// worldPositions maps every primitive's positions through its node's
// world transform, by mesh name.
func worldPositions(m *Model) map[string][]mgl64.Vec3 {
	out := map[string][]mgl64.Vec3{}
	var walk func(n *Node, parent mgl64.Mat4)
	walk = func(n *Node, parent mgl64.Mat4) {
		w := parent.Mul4(n.Local)
		if n.Mesh != nil {
			for _, p := range n.Mesh.Primitives {
				for _, v := range p.Positions {
					out[n.Name] = append(out[n.Name], w.Mul4x1(mgl64.Vec4{float64(v[0]), float64(v[1]), float64(v[2]), 1}).Vec3())
				}
			}
		}
		for _, k := range n.Children {
			walk(k, w)
		}
	}
	for _, r := range m.Roots {
		walk(r, mgl64.Ident4())
	}
	return out
}

func vecBounds(vs []mgl64.Vec3) (lo, hi mgl64.Vec3) {
	lo = mgl64.Vec3{math.Inf(1), math.Inf(1), math.Inf(1)}
	hi = lo.Mul(-1)
	for _, v := range vs {
		for i := range 3 {
			lo[i], hi[i] = math.Min(lo[i], v[i]), math.Max(hi[i], v[i])
		}
	}
	return
}

func near(a, b mgl64.Vec3, tol float64) bool { return a.Sub(b).Len() <= tol }

// A Y_UP document in centimetres: a cube (polylist of quads) of side 20 cm
// translated 100 cm along its x, another (triangles) scaled and rotated
// 90 degrees about its y and lifted 50 cm along its y (its up). In simvis
// (meters, z up: (x, y, z) -> (x, -z, y)) the first spans x 0.9..1.1,
// y and z -0.1..0.1, the second's side is 0.4 along its rotated axes.
func TestColladaUnitsUpAxisTransforms(t *testing.T) {
	dir := t.TempDir()
	doc := daeDoc(`<unit name="centimeter" meter="0.01"/><up_axis>Y_UP</up_axis>`,
		`<library_geometries>`+daeCube("quads", 10, true, "")+daeCube("tris", 10, false, "")+`</library_geometries>`,
		`<node id="a" name="a"><translate>100 0 0</translate><instance_geometry url="#quads"/></node>
		 <node id="b" name="b"><translate>0 50 0</translate><rotate>0 1 0 90</rotate><scale>2 1 1</scale><instance_geometry url="#tris"/></node>`)
	m, err := Load(putFile(t, dir, "cubes.dae", []byte(doc)))
	if err != nil {
		t.Fatal(err)
	}
	if v, tris, _ := m.Counts(); tris != 24 || v != 72 {
		t.Fatalf("%d vertices, %d triangles, want 72, 24", v, tris)
	}
	w := worldPositions(m)
	lo, hi := vecBounds(w["quads"])
	if !near(lo, mgl64.Vec3{0.9, -0.1, -0.1}, 1e-6) || !near(hi, mgl64.Vec3{1.1, 0.1, 0.1}, 1e-6) {
		t.Errorf("quads: bounds %v %v", lo, hi)
	}
	// b: the cube scaled 2 along its x, then its x turned onto -z (about y
	// by 90 degrees): document extents x 10, y 10, z 20 cm, lifted 50 cm
	// along y; in simvis x 0.1, y (= -z) 0.2, z (= y) 0.1 around (0, 0, 0.5).
	lo, hi = vecBounds(w["tris"])
	if !near(lo, mgl64.Vec3{-0.1, -0.2, 0.4}, 1e-6) || !near(hi, mgl64.Vec3{0.1, 0.2, 0.6}, 1e-6) {
		t.Errorf("tris: bounds %v %v", lo, hi)
	}
	// Every face's normal points out of its cube (winding kept through
	// the transforms, which keep orientation).
	for _, mesh := range m.Meshes {
		for _, p := range mesh.Primitives {
			for k := 0; k < len(p.Indices); k += 3 {
				a, b, c := p.Positions[p.Indices[k]], p.Positions[p.Indices[k+1]], p.Positions[p.Indices[k+2]]
				centre := a.Add(b).Add(c)
				if n := p.Normals[p.Indices[k]]; n.Dot(centre) <= 0 || math.Abs(float64(n.Len())-1) > 1e-6 {
					t.Fatalf("%s: triangle %d normal %v", mesh.Name, k/3, n)
				}
			}
		}
	}
	if len(m.Files()) != 1 {
		t.Errorf("files %v", m.Files())
	}
}

// Z_UP in meters: coordinates as written; a row-major <matrix>; a node
// instantiated twice through instance_node shares one mesh; a bound
// material's diffuse colour (phong, lambert, constant's emission, RGB or
// RGBA) colours its primitive; normals given in the file are used.
func TestColladaMatrixInstancesMaterials(t *testing.T) {
	dir := t.TempDir()
	libs := `<library_effects>
  <effect id="red-fx"><profile_COMMON><technique sid="t"><phong><diffuse><color>1 0 0 1</color></diffuse></phong></technique></profile_COMMON></effect>
  <effect id="glass-fx"><profile_COMMON><technique sid="t"><lambert><diffuse><color>0 0 1 0.5</color></diffuse></lambert></technique></profile_COMMON></effect>
  <effect id="tex-fx"><profile_COMMON><technique sid="t"><blinn><diffuse><texture texture="img" texcoord="uv"/></diffuse></blinn></technique></profile_COMMON></effect>
</library_effects>
<library_materials>
  <material id="red" name="Red"><instance_effect url="#red-fx"/></material>
  <material id="glass"><instance_effect url="#glass-fx"/></material>
  <material id="tex"><instance_effect url="#tex-fx"/></material>
</library_materials>
<library_geometries>` + daeCube("box", 0.5, false, "M") + `
  <geometry id="tri"><mesh>
    <source id="tp"><float_array id="tpa" count="9">0 0 0 1 0 0 0 1 0</float_array>
      <technique_common><accessor source="#tpa" count="3" stride="3"/></technique_common></source>
    <source id="tn"><float_array id="tna" count="6">0 0 2 0 0 -1</float_array>
      <technique_common><accessor source="#tna" count="2" stride="3"/></technique_common></source>
    <vertices id="tv"><input semantic="POSITION" source="#tp"/></vertices>
    <triangles count="1" material="G"><input semantic="VERTEX" source="#tv" offset="0"/><input semantic="NORMAL" source="#tn" offset="1"/><p>0 0 1 0 2 1</p></triangles>
  </mesh></geometry>
</library_geometries>
<library_nodes><node id="shared" name="shared"><instance_geometry url="#box"><bind_material><technique_common><instance_material symbol="M" target="#red"/></technique_common></bind_material></instance_geometry></node></library_nodes>`
	scene := `<node id="m" name="m"><matrix>1 0 0 1  0 0 -1 2  0 1 0 3  0 0 0 1</matrix><instance_node url="#shared"/></node>
  <node id="n" name="n"><translate>-1 0 0</translate><instance_node url="#shared"/></node>
  <node id="g" name="g"><instance_geometry url="#tri"><bind_material><technique_common><instance_material symbol="G" target="#glass"/></technique_common></bind_material></instance_geometry></node>
  <node id="x" name="x"><translate>0 0 5</translate><instance_geometry url="#box"><bind_material><technique_common><instance_material symbol="M" target="#tex"/></technique_common></bind_material></instance_geometry></node>`
	m, err := Load(putFile(t, dir, "z.dae", []byte(daeDoc(`<unit meter="1"/><up_axis>Z_UP</up_axis>`, libs, scene))))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Meshes) != 3 {
		t.Fatalf("%d meshes, want 3 (box red, tri, box textured)", len(m.Meshes))
	}
	var paths []string
	var walk func(n *Node, parent mgl64.Mat4, path string)
	worlds := map[string]mgl64.Mat4{}
	walk = func(n *Node, parent mgl64.Mat4, path string) {
		path += "/" + n.Name
		w := parent.Mul4(n.Local)
		if n.Mesh != nil {
			paths = append(paths, path)
			worlds[path] = w
		}
		for _, k := range n.Children {
			walk(k, w, path)
		}
	}
	for _, r := range m.Roots {
		walk(r, mgl64.Ident4(), "")
	}
	if got := strings.Join(paths, " "); got != "/z/m/shared/box /z/n/shared/box /z/g/tri /z/x/box" {
		t.Fatalf("mesh nodes %s", got)
	}
	// The matrix (row-major) maps x -> x, y -> z, z -> -y, then moves by (1, 2, 3).
	if p := worlds["/z/m/shared/box"].Mul4x1(mgl64.Vec4{0.5, 0.5, 0.5, 1}).Vec3(); !near(p, mgl64.Vec3{1.5, 1.5, 3.5}, 1e-12) {
		t.Errorf("matrix: corner at %v", p)
	}
	if p := worlds["/z/n/shared/box"].Mul4x1(mgl64.Vec4{0.5, 0.5, 0.5, 1}).Vec3(); !near(p, mgl64.Vec3{-0.5, 0.5, 0.5}, 1e-12) {
		t.Errorf("translate: corner at %v", p)
	}
	box, tri, tex := m.Meshes[0], m.Meshes[1], m.Meshes[2]
	if c := box.Primitives[0].Material; c.Name != "Red" || c.BaseColor != [4]float32{1, 0, 0, 1} || c.AlphaMode != AlphaOpaque {
		t.Errorf("red: %q %v %v", c.Name, c.BaseColor, c.AlphaMode)
	}
	tp := tri.Primitives[0]
	if c := tp.Material; c.BaseColor != [4]float32{0, 0, 1, 0.5} || c.AlphaMode != AlphaBlend {
		t.Errorf("glass: %v %v", c.BaseColor, c.AlphaMode)
	}
	if tp.Normals[0] != (mgl32.Vec3{0, 0, 1}) || tp.Normals[1] != (mgl32.Vec3{0, 0, 1}) || tp.Normals[2] != (mgl32.Vec3{0, 0, -1}) {
		t.Errorf("file normals: %v", tp.Normals)
	}
	if c := tex.Primitives[0].Material; c.Name != "default" {
		t.Errorf("textured: material %q, want the uncoloured one", c.Name)
	}
}

// What is wrong is refused with its line; budgets are counted before the
// geometry is built.
func TestColladaRefusals(t *testing.T) {
	dir := t.TempDir()
	geo := `<library_geometries>` + daeCube("c", 1, true, "") + `</library_geometries>`
	inst := `<node id="n"><instance_geometry url="#c"/></node>`
	for _, tc := range []struct{ name, doc, want string }{
		{"up", daeDoc(`<up_axis>W_UP</up_axis>`, geo, inst), `line 3: <up_axis>: "W_UP" is not X_UP, Y_UP or Z_UP`},
		{"unit", daeDoc(`<unit meter="-1"/>`, geo, inst), `line 3: <unit>: meter "-1" is not a positive finite number`},
		{"url", daeDoc(``, geo, `<node id="n"><instance_geometry url="#nope"/></node>`), `line 10: <instance_geometry>: url "#nope": no element has that id`},
		{"external", daeDoc(``, geo, `<node id="n"><instance_geometry url="other.dae#c"/></node>`), `line 10: <instance_geometry>: url "other.dae#c": want a local reference #ID (other documents are not read)`},
		{"nan", daeDoc(``, strings.Replace(geo, ">-1 ", ">nan ", 1), inst), `line 5: <float_array>: value 1, "nan", is not a finite number`},
		{"index", daeDoc(``, strings.Replace(geo, "<p>0 2 3 1 ", "<p>0 2 3 8 ", 1), inst), `line 8: <polylist>: position index 8 of 8 positions`},
		{"vcount", daeDoc(``, strings.Replace(geo, "<vcount>4 ", "<vcount>5 ", 1), inst), `line 8: <polylist>: the polygons count 25 corners, <p> gives 24`},
		{"huge", daeDoc(``, strings.Replace(geo, "<vcount>4 ", "<vcount>9223372036854775807 ", 1), inst), `line 8: <polylist>: a polygon of 9223372036854775807 corners, more than the 24 <p> gives`},
		{"loop", daeDoc(``, geo, `<node id="n"><instance_node url="#n"/></node>`), `line 10: <node>: nodes nest more than 64 deep (instance_node loops?)`},
		{"root", `<collada/>`, `line 1: root element <collada>, want <COLLADA>`},
		{"syntax", `<COLLADA><asset></COLLADA>`, `XML syntax error on line 1: element <asset> closed by </COLLADA>`},
	} {
		p := putFile(t, dir, tc.name+".dae", []byte(tc.doc))
		if _, err := Load(p); err == nil || err.Error() != "models: "+p+": Collada: "+tc.want {
			t.Errorf("%s: got %v\nwant %s", tc.name, err, tc.want)
		}
	}
	p := putFile(t, dir, "big.dae", []byte(daeDoc(``, geo, inst)))
	_, err := LoadWith(p, LoadOptions{Limits: Limits{Triangles: 11}})
	var le *LimitError
	if !errors.As(err, &le) || le.Field != "Triangles" || le.Have != 12 {
		t.Errorf("triangle budget: %v", err)
	}
	_, err = LoadWith(p, LoadOptions{Limits: Limits{Nodes: 2}})
	if !errors.As(err, &le) || le.Field != "Nodes" {
		t.Errorf("node budget: %v", err)
	}
}

func FuzzCollada(f *testing.F) {
	f.Add([]byte(daeDoc(`<unit meter="0.01"/><up_axis>Y_UP</up_axis>`, `<library_geometries>`+daeCube("c", 1, true, "")+`</library_geometries>`,
		`<node id="n"><translate>1 2 3</translate><rotate>0 0 1 45</rotate><instance_geometry url="#c"/></node>`)))
	f.Add([]byte(daeDoc(`<up_axis>Z_UP</up_axis>`, `<library_geometries>`+daeCube("c", 1, false, "M")+`</library_geometries><library_nodes><node id="l"><instance_geometry url="#c"/></node></library_nodes>`,
		`<node id="n"><matrix>1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1</matrix><instance_node url="#l"/><instance_node url="#l"/></node>`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := fuzzReader(t)
		m, err := decodeCollada(data, "f.dae", r)
		if err != nil {
			return
		}
		checkModel(t, m, fuzzLimits)
	})
}
