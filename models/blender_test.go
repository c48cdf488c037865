package models

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/go-gl/mathgl/mgl64"
)

// meshStats is what both readers report of one file: its triangles and the
// world-space bounds of their corners, meters, z up.
type meshStats struct {
	File      string     `json:"file"`
	Triangles int64      `json:"triangles"`
	Min       [3]float64 `json:"min"`
	Max       [3]float64 `json:"max"`
	Error     string     `json:"error"`
}

// blenderStats runs internal/blendertest/meshstats.py in one headless
// Blender for all files (a start costs about 2 s), by absolute path.
func blenderStats(t *testing.T, blender string, files []string) map[string]meshStats {
	t.Helper()
	script, err := filepath.Abs("../internal/blendertest/meshstats.py")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{"--background", "--factory-startup", "--python-exit-code", "1", "--python", script, "--"}, files...)
	cmd := exec.CommandContext(ctx, blender, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("blender: %v\n%s\n%s", err, out, stderr.String())
	}
	res := map[string]meshStats{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		// Importers print without a final newline at times: the marker
		// may come mid-line.
		_, js, ok := strings.Cut(sc.Text(), "meshstats: ")
		if !ok {
			continue
		}
		var s meshStats
		if err := json.Unmarshal([]byte(js), &s); err != nil {
			t.Fatalf("blender output %q: %v", js, err)
		}
		res[s.File] = s
	}
	for _, f := range files {
		s, ok := res[f]
		switch {
		case !ok:
			t.Fatalf("blender reported nothing for %s; its output:\n%s\n%s", f, out, stderr.String())
		case s.Error != "":
			t.Fatalf("blender could not import %s: %s", f, s.Error)
		}
	}
	return res
}

// simvisStats loads path with simvis and counts what models.Model
// presents: it is z up and in meters already (Collada's unit and up axis
// are its top node's transform; STL and OBJ as written), the same frame as
// Blender's scene, so no conversion is applied here.
func simvisStats(t *testing.T, path string) meshStats {
	t.Helper()
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	s := meshStats{File: path, Min: [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}, Max: [3]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}}
	var walk func(n *Node, parent mgl64.Mat4)
	walk = func(n *Node, parent mgl64.Mat4) {
		w := parent.Mul4(n.Local)
		if n.Mesh != nil {
			for _, p := range n.Mesh.Primitives {
				s.Triangles += int64(len(p.Indices) / 3)
				for _, i := range p.Indices {
					v := p.Positions[i]
					x := w.Mul4x1(mgl64.Vec4{float64(v[0]), float64(v[1]), float64(v[2]), 1})
					for k := range 3 {
						s.Min[k], s.Max[k] = math.Min(s.Min[k], x[k]), math.Max(s.Max[k], x[k])
					}
				}
			}
		}
		for _, c := range n.Children {
			walk(c, w)
		}
	}
	for _, r := range m.Roots {
		walk(r, mgl64.Ident4())
	}
	return s
}

// prism is a closed prism over a convex base polygon (x, y, counter-
// clockwise) from z0 to z1: the two caps as n-gons and n side quads, each
// counter-clockwise seen from outside.
func prism(base [][2]float64, z0, z1 float64) (pos [][3]float64, polys [][]int) {
	n := len(base)
	for _, z := range []float64{z0, z1} {
		for _, b := range base {
			pos = append(pos, [3]float64{b[0], b[1], z})
		}
	}
	bottom, top := make([]int, n), make([]int, n)
	for i := range n {
		bottom[i], top[i] = n-1-i, n+i
		j := (i + 1) % n
		polys = append(polys, []int{i, j, n + j, n + i})
	}
	return pos, append(polys, bottom, top)
}

// fan splits polygons into triangles.
func fan(polys [][]int) [][]int {
	var out [][]int
	for _, p := range polys {
		for k := 1; k+1 < len(p); k++ {
			out = append(out, []int{p[0], p[k], p[k+1]})
		}
	}
	return out
}

// num writes a number as float32 reads it back.
func num(x float64) string { return fmt.Sprint(float32(x)) }

func stlTriangles(pos [][3]float64, polys [][]int) [][3]mgl32.Vec3 {
	var out [][3]mgl32.Vec3
	for _, tri := range fan(polys) {
		var t [3]mgl32.Vec3
		for k, i := range tri {
			t[k] = mgl32.Vec3{float32(pos[i][0]), float32(pos[i][1]), float32(pos[i][2])}
		}
		out = append(out, t)
	}
	return out
}

// asciiSTLSolid writes one solid, with the file normal zero (both readers
// compute their own) and numbers in exponent form for some.
func asciiSTLSolid(name string, pos [][3]float64, polys [][]int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "solid %s\r\n", name)
	for _, tri := range fan(polys) {
		b.WriteString("  facet normal 0 0 0\r\n    outer loop\r\n")
		for _, i := range tri {
			fmt.Fprintf(&b, "\tvertex %e %g %s\r\n", pos[i][0], pos[i][1], num(pos[i][2]))
		}
		b.WriteString("    endloop\r\n  endfacet\r\n")
	}
	fmt.Fprintf(&b, "endsolid %s\r\n", name)
	return b.String()
}

// daeGeometry writes positions (document units) as one <geometry> with one
// primitive element of kind triangles (polys fanned), polylist or polygons
// (one <p> each), its corners carrying a NORMAL index at offset 1 (one
// normal per polygon, zero: the readers compute their own where they
// need) so that readers must step over it.
func daeGeometry(id, kind string, pos [][3]float64, polys [][]int) string {
	if kind == "triangles" {
		polys = fan(polys)
	}
	var p, vcount strings.Builder
	for k, poly := range polys {
		if kind == "polygons" {
			p.WriteString("<p>")
		}
		for _, i := range poly {
			fmt.Fprintf(&p, "%d %d ", i, k)
		}
		if kind == "polygons" {
			p.WriteString("</p>")
		}
		fmt.Fprintf(&vcount, "%d ", len(poly))
	}
	var ps strings.Builder
	for _, v := range pos {
		fmt.Fprintf(&ps, "%s %s %s ", num(v[0]), num(v[1]), num(v[2]))
	}
	prim := fmt.Sprintf(`<%s count="%d" material="m"><input semantic="VERTEX" source="#%s-v" offset="0"/><input semantic="NORMAL" source="#%s-n" offset="1"/>`,
		kind, len(polys), id, id)
	switch kind {
	case "polylist":
		prim += "<vcount>" + vcount.String() + "</vcount><p>" + p.String() + "</p>"
	case "polygons":
		prim += p.String()
	default:
		prim += "<p>" + p.String() + "</p>"
	}
	prim += "</" + kind + ">"
	acc := func(src string, n int) string {
		return fmt.Sprintf(`<technique_common><accessor source="#%s" count="%d" stride="3"><param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/></accessor></technique_common>`, src, n)
	}
	return fmt.Sprintf(`<geometry id="%[1]s" name="%[1]s"><mesh>
  <source id="%[1]s-p"><float_array id="%[1]s-pa" count="%[2]d">%[3]s</float_array>%[4]s</source>
  <source id="%[1]s-n"><float_array id="%[1]s-na" count="%[5]d">%[6]s</float_array>%[7]s</source>
  <vertices id="%[1]s-v"><input semantic="POSITION" source="#%[1]s-p"/></vertices>
  %[8]s
</mesh></geometry>
`, id, 3*len(pos), ps.String(), acc(id+"-pa", len(pos)), 3*len(polys), strings.Repeat("0 0 1 ", len(polys)), acc(id+"-na", len(polys)), prim)
}

// daeFile is a Collada 1.4.1 document: asset, geometries, library nodes,
// the visual scene's nodes, and one red material the symbol "m" binds.
func daeFile(asset, geometries, libraryNodes, nodes string) string {
	return `<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><contributor><authoring_tool>simvis models/blender_test.go</authoring_tool></contributor>` + asset + `</asset>
  <library_effects><effect id="red-fx"><profile_COMMON><technique sid="common"><lambert><diffuse><color>0.8 0.1 0.1 1</color></diffuse></lambert></technique></profile_COMMON></effect></library_effects>
  <library_materials><material id="red" name="red"><instance_effect url="#red-fx"/></material></library_materials>
  <library_geometries>
` + geometries + `  </library_geometries>
` + libraryNodes + `  <library_visual_scenes><visual_scene id="scene" name="scene">
` + nodes + `  </visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#scene"/></scene>
</COLLADA>
`
}

const bindRed = `<bind_material><technique_common><instance_material symbol="m" target="#red"/></technique_common></bind_material>`

// writeBlenderMeshes writes one file per reader feature into dir and
// returns their paths. Shapes are asymmetric and off-centre, rotations not
// multiples of 90 degrees, so a wrong axis, order or unit moves the bounds.
// Every node's transform is translate, rotations, scale in that order (or
// a matrix of that form): Blender keeps an object's transform as location,
// rotation and scale, which cannot hold a shear.
func writeBlenderMeshes(t *testing.T, dir string) []string {
	tri := [][2]float64{{0.05, -0.02}, {0.43, 0.11}, {0.12, 0.37}}
	quad := [][2]float64{{-0.2, -0.1}, {0.3, -0.15}, {0.35, 0.2}, {-0.1, 0.25}}
	penta := [][2]float64{{0, 0}, {0.2, -0.05}, {0.31, 0.12}, {0.14, 0.3}, {-0.06, 0.16}}
	var files []string
	add := func(name, data string) {
		files = append(files, putFile(t, dir, name, []byte(data)))
	}

	// Binary STL whose 80-byte header starts with "solid", as some
	// exporters write: both readers go by the size the count implies.
	pos, polys := prism(penta, 0.017, 0.29)
	bin := binarySTLBytes(append(stlTriangles(prism(quad, -0.4, -0.31)), stlTriangles(pos, polys)...))
	copy(bin, "solid written as binary")
	add("binary.stl", string(bin))

	// ASCII STL, two solids in one file, CRLF, %e and %g numbers.
	pos, polys = prism(tri, 1.25, 1.5)
	pos2, polys2 := prism(quad, -0.75, -0.7)
	add("ascii.stl", asciiSTLSolid("first", pos, polys)+asciiSTLSolid("second", pos2, polys2))

	// OBJ with an MTL: a first object with no material, objects and
	// groups, quads and pentagons, v, v/vt/vn and v//vn corners, negative
	// (relative) indices.
	add("parts.mtl", "newmtl red\nKd 0.8 0.1 0.1\nnewmtl blue\nKd 0.1 0.1 0.8\nd 0.5\n")
	var obj strings.Builder
	obj.WriteString("# simvis models/blender_test.go\nmtllib parts.mtl\nvt 0 0\nvt 1 0\nvt 1 1\nvn 0 0 1\nvn 0 0 -1\n")
	// corner writes the corner of the object's vertex i (rel: the same as
	// a relative index).
	objPrism := func(name string, base [][2]float64, z0, z1 float64, corner func(rel, i int) string) {
		p, f := prism(base, z0, z1)
		fmt.Fprintf(&obj, "o %s\n", name)
		for _, v := range p {
			fmt.Fprintf(&obj, "v %s %s %s\n", num(v[0]+0.5), num(v[1]-0.25), num(v[2]))
		}
		for k, poly := range f {
			switch k {
			case len(f) - 2:
				obj.WriteString("g " + name + "_caps\nusemtl red\n")
			case 0:
				obj.WriteString("g " + name + "_sides\n")
			}
			obj.WriteString("f")
			for _, i := range poly {
				obj.WriteString(" " + corner(i-len(p), i))
			}
			obj.WriteString("\n")
		}
	}
	nv := 0
	objPrism("plain", quad, 0, 0.1, func(rel, i int) string { return fmt.Sprint(nv + i + 1) })
	nv += 2 * len(quad)
	obj.WriteString("usemtl blue\n")
	objPrism("textured", penta, 0.2, 0.45, func(rel, i int) string { return fmt.Sprintf("%d/%d/1", nv+i+1, i%3+1) })
	nv += 2 * len(penta)
	objPrism("relative", tri, -0.3, -0.05, func(rel, i int) string { return fmt.Sprintf("%d//2", rel) })
	add("parts.obj", obj.String())

	// Collada, y up in centimetres: triangles, polylist and polygons at
	// three levels of nodes (translate, rotate, scale; a matrix; rotate
	// then translate), one geometry instantiated twice.
	scale := func(b [][2]float64, s float64) [][2]float64 {
		out := make([][2]float64, len(b))
		for i, v := range b {
			out[i] = [2]float64{v[0] * s, v[1] * s}
		}
		return out
	}
	pos, polys = prism(scale(tri, 100), 0, 20)
	geoms := daeGeometry("tris", "triangles", pos, polys)
	pos, polys = prism(scale(penta, 100), -5, 12.5)
	geoms += daeGeometry("plist", "polylist", pos, polys)
	pos, polys = prism(scale(quad, 100), 3, 7)
	geoms += daeGeometry("pgons", "polygons", pos, polys)
	// The child's matrix (row-major, as Collada writes it): 40 degrees
	// about z, then moved (10, 20, -30).
	c, s := math.Cos(40*math.Pi/180), math.Sin(40*math.Pi/180)
	matrix := fmt.Sprintf("%s %s 0 10 %s %s 0 20 0 0 1 -30 0 0 0 1", num(c), num(-s), num(s), num(c))
	nodes := `    <node id="root" name="root"><translate>12 -3.5 7</translate><rotate>0 1 0 30</rotate><rotate>1 0 0 -15</rotate><scale>1.5 0.5 2</scale>
      <instance_geometry url="#tris"/>
      <node id="child" name="child"><matrix>` + matrix + `</matrix>
        <instance_geometry url="#plist">` + bindRed + `</instance_geometry>
        <node id="grandchild" name="grandchild"><rotate>0.3 0.4 0.5 70</rotate><translate>-4 2 1</translate>
          <instance_geometry url="#pgons"/>
        </node>
      </node>
    </node>
    <node id="second" name="second"><translate>-50 0 25</translate><rotate>0 0 1 -20</rotate>
      <instance_geometry url="#tris"/>
    </node>
`
	add("yup_cm.dae", daeFile(`<unit name="centimeter" meter="0.01"/><up_axis>Y_UP</up_axis>`, geoms, "", nodes))

	// Collada, z up in meters: a matrix, nested nodes and a library node
	// instantiated through instance_node; the second file without <unit>
	// (meters by default).
	pos, polys = prism(penta, 0.1, 0.6)
	geoms = daeGeometry("plist", "polylist", pos, polys)
	pos, polys = prism(quad, -0.2, 0)
	geoms += daeGeometry("pgons", "polygons", pos, polys)
	lib := `  <library_nodes><node id="lib" name="lib"><translate>0.3 -0.2 0.1</translate><rotate>1 1 0 35</rotate>
    <instance_geometry url="#pgons"/></node></library_nodes>
`
	matrix = fmt.Sprintf("%s 0 %s 1.5 0 1 0 -0.25 %s 0 %s 0.75 0 0 0 1", num(c), num(s), num(-s), num(c))
	nodes = `    <node id="a" name="a"><matrix>` + matrix + `</matrix>
      <instance_geometry url="#plist">` + bindRed + `</instance_geometry>
      <node id="b" name="b"><translate>0 0.4 0</translate><scale>2 2 2</scale><instance_node url="#lib"/></node>
    </node>
`
	add("zup_m.dae", daeFile(`<unit name="meter" meter="1"/><up_axis>Z_UP</up_axis>`, geoms, lib, nodes))
	// The same document x up. Blender turns X_UP by -90 degrees about y,
	// (x, y, z) -> (-z, y, x), as simvis does; the COLLADA Refinery's axis
	// converter (Sony's reference tools) puts it at (-y, -z, x), a quarter
	// turn about z from that: both put x up, and files written x up are
	// rare, so simvis follows Blender.
	add("xup_m.dae", daeFile(`<up_axis>X_UP</up_axis>`, geoms, lib, nodes))
	return files
}

// TestMeshesAgainstBlender loads STL, OBJ and Collada files with simvis
// and with Blender's own importers (Debian's Blender, an independent
// reader) and compares triangle counts (exactly) and the world-space
// bounds of all triangle corners (1e-6 m): files covering each reader's
// features, and every mesh of scenes/arm.
func TestMeshesAgainstBlender(t *testing.T) {
	blender, err := exec.LookPath("blender")
	if err != nil {
		t.Skipf("blender is not installed (make deps installs it, or apt-get install -y blender): %v", err)
	}
	files := writeBlenderMeshes(t, t.TempDir())
	files = slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, ".mtl") })
	arm, err := filepath.Glob("../scenes/arm/meshes/*")
	if err != nil {
		t.Fatal(err)
	}
	nArm := 0
	for _, f := range arm {
		switch strings.ToLower(filepath.Ext(f)) {
		case ".stl", ".obj", ".dae":
			abs, err := filepath.Abs(f)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, abs)
			nArm++
		}
	}
	if nArm == 0 {
		t.Fatal("no meshes in scenes/arm/meshes")
	}
	theirs := blenderStats(t, blender, files)
	const tol = 1e-6
	var total int64
	for _, f := range files {
		ours, b := simvisStats(t, f), theirs[f]
		name := filepath.Base(f)
		if strings.Contains(f, "scenes/arm/") {
			name = "scenes/arm/meshes/" + name
		}
		if ours.Triangles == 0 {
			t.Errorf("%s: simvis reads no triangles", name)
		}
		if ours.Triangles != b.Triangles {
			t.Errorf("%s: %d triangles, Blender %d", name, ours.Triangles, b.Triangles)
		}
		var worst float64
		for k := range 3 {
			worst = max(worst, math.Abs(ours.Min[k]-b.Min[k]), math.Abs(ours.Max[k]-b.Max[k]))
		}
		if !(worst <= tol) {
			t.Errorf("%s: bounds %v..%v, Blender %v..%v (differ by %.3g m)", name, ours.Min, ours.Max, b.Min, b.Max, worst)
		}
		total += ours.Triangles
		t.Logf("%s: %d triangles, bounds agree within %.2g m", name, ours.Triangles, worst)
	}
	t.Logf("%d files, %d triangles", len(files), total)
}
