package urdf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
)

// robot wraps links and joints in a robot element, one per line after the
// first, so that line numbers in messages are easy to read.
func robot(lines ...string) string {
	return "<robot name=\"t\">\n" + strings.Join(lines, "\n") + "\n</robot>\n"
}

func put(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const (
	linkA = `<link name="a"/>`
	linkB = `<link name="b"/>`
)

func rev(name, parent, child string) string {
	return `<joint name="` + name + `" type="revolute"><parent link="` + parent + `"/><child link="` + child +
		`"/><limit lower="-1" upper="1"/></joint>`
}

// Every refusal names the file, the line and what is wrong.
func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, "m/ok.stl", "solid\nendsolid\n")
	put(t, dir, "m/ok.ply", "ply\n")
	cases := []struct{ name, text, want string }{
		{"cycle", robot(linkA, linkB, `<link name="c"/>`, rev("ab", "a", "b"), rev("bc", "b", "c"), rev("ca", "c", "a")),
			`:5: the joints "ab" (line 5), "bc" (line 6), "ca" (line 7) form a cycle: a robot is a tree`},
		{"cycle beside a root", robot(linkA, linkB, `<link name="c"/>`, rev("bc", "b", "c"), rev("cb", "c", "b")),
			`:5: the joints "bc" (line 5), "cb" (line 6) form a cycle: a robot is a tree`},
		{"two roots", robot(linkA, linkB),
			`:3: links "a" (line 2), "b" (line 3) are all roots (the child of no joint): a robot has one root link`},
		{"two parents", robot(linkA, linkB, `<link name="c"/>`, rev("ac", "a", "c"), rev("bc", "b", "c")),
			`:6: joint "bc": link "c" is already the child of joint "ac" (line 5): a link has one parent`},
		{"missing link", robot(linkA, rev("ab", "a", "b")),
			`:3: joint "ab": child link "b" is not defined`},
		{"missing mesh", robot(`<link name="a"><visual><geometry><mesh filename="m/none.stl"/></geometry></visual></link>`),
			`:2: link "a": mesh "m/none.stl": ` + dir + `/m/none.stl: no such file or directory`},
		{"unknown package", robot(`<link name="a"><visual><geometry><mesh filename="package://nowhere/x.stl"/></geometry></visual></link>`),
			`:2: link "a": mesh "package://nowhere/x.stl": unknown package "nowhere": not the URDF's own package and not in the package path ` + dir + `/pkgs`},
		{"non-finite", robot(linkA, linkB, `<joint name="ab" type="fixed"><parent link="a"/><child link="b"/>`, `<origin xyz="0 NaN 0"/></joint>`),
			`:5: <origin> xyz: value 2, "NaN", is not a finite number`},
		{"infinite", robot(`<link name="a"><visual><geometry><box size="1 1 1e999"/></geometry></visual></link>`),
			`:2: <box> size: value 3, "1e999", is not a finite number`},
		{"unsupported mesh format", robot(`<link name="a"><visual><geometry><mesh filename="m/ok.ply"/></geometry></visual></link>`),
			`:2: link "a": mesh "m/ok.ply": unsupported mesh format ".ply" (have .dae, .glb, .gltf, .obj, .stl)`},
		{"floating", robot(linkA, linkB, `<joint name="f" type="floating"><parent link="a"/><child link="b"/></joint>`),
			`:4: joint "f": type "floating" is not supported (place a robot with the part's pose_offset and pose elements; see docs/urdf.md)`},
		{"planar", robot(linkA, linkB, `<joint name="p" type="planar"><parent link="a"/><child link="b"/></joint>`),
			`:4: joint "p": type "planar" is not supported (place a robot with the part's pose_offset and pose elements; see docs/urdf.md)`},
		{"no limit", robot(linkA, linkB, `<joint name="ab" type="prismatic"><parent link="a"/><child link="b"/></joint>`),
			`:4: joint "ab": a prismatic joint needs <limit lower=... upper=...>`},
		{"mimic unknown", robot(linkA, linkB, `<joint name="ab" type="continuous"><parent link="a"/><child link="b"/>`, `<mimic joint="zz"/></joint>`),
			`:5: joint "ab": mimics joint "zz", which is not defined`},
		{"mimic cycle", robot(linkA, linkB, `<link name="c"/>`,
			`<joint name="ab" type="continuous"><parent link="a"/><child link="b"/><mimic joint="bc"/></joint>`,
			`<joint name="bc" type="continuous"><parent link="b"/><child link="c"/><mimic joint="ab"/></joint>`),
			`:5: joint "ab": mimic joints "ab" -> "bc" follow each other in a cycle`},
		{"bad name", robot(`<link name="a.b"/>`),
			`:2: link name "a.b": simvis names are letters, digits, '_' and '-', not starting with a digit or '-'`},
		{"joint named like a link", robot(linkA, linkB, rev("b", "a", "b")),
			`:4: joint "b" has the name of link "b" (line 3): in simvis both are names in the part (an element and an insertion point)`},
		{"xml", robot(`<link name="a">`), `:3: XML syntax: element <link> closed by </robot>`},
		{"not a robot", "<model/>\n", `:1: root element <model> (want <robot>)`},
		{"no links", robot(), `:1: the robot has no links`},
		{"zero axis", robot(linkA, linkB, `<joint name="ab" type="continuous"><parent link="a"/><child link="b"/>`, `<axis xyz="0 0 0"/></joint>`),
			`:5: joint "ab": the axis has zero length`},
		{"bad STL", robot(`<link name="a"><visual><geometry><mesh filename="m/bad.stl"/></geometry></visual></link>`),
			`:2: link "a": mesh "m/bad.stl": ` + dir + `/m/bad.stl: STL: line 2: want "facet" or "endsolid", got "oops"`},
	}
	put(t, dir, "m/bad.stl", "solid\noops\n")
	for _, tc := range cases {
		p := put(t, dir, "r.urdf", tc.text)
		_, err := models.LoadWith(p, models.LoadOptions{PackagePath: []string{filepath.Join(dir, "pkgs")}})
		want := "models: " + p + tc.want
		if err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", tc.name, err, want)
		}
	}
}

// The model: links as insertion points at joint origins, geometry below
// them, joints as embedded commands with leaders first.
func TestModel(t *testing.T) {
	ws, _ := filepath.Abs("testdata/ws")
	path := filepath.Join(ws, "allkinds/urdf/allkinds.urdf")
	m, err := models.LoadWith(path, models.LoadOptions{PackagePath: []string{ws}})
	if err != nil {
		t.Fatal(err)
	}
	var points []string
	m.Walk(func(n *models.Node, _ mgl64.Mat4) error {
		if n.InsertionPoint != "" {
			points = append(points, n.InsertionPoint)
		}
		return nil
	})
	if got := strings.Join(points, " "); got != "base_link link1 link2 link3 tool link4 link5 link6" {
		t.Fatalf("insertion points %s", got)
	}
	var cmds []string
	for _, c := range m.Commands {
		cmds = append(cmds, c.XML)
	}
	want := []string{
		`<element type="joint" name="j_rev" insert_at="link1" kind="revolute" axis="0 0.6 0.8" min="-2" max="2"/>`,
		`<element type="joint" name="j_cont" insert_at="link2" kind="continuous" axis="1 1 0"/>`,
		`<element type="joint" name="j_pri" insert_at="link3" kind="prismatic" axis="0 0 -3" min="0.1" max="0.5" position="0.1"/>`,
		`<element type="joint" name="j_mimic" insert_at="link4" kind="revolute" axis="1 0 0" min="-10" max="10" mimic="j_rev" multiplier="-2" offset="0.3"/>`,
		`<element type="joint" name="j_mm" insert_at="link6" kind="continuous" axis="0 0 1" mimic="j_mimic" multiplier="1.5" offset="-0.2"/>`,
		`<element type="joint" name="j_mimic2" insert_at="link5" kind="prismatic" axis="0 1 0" min="-1" max="1" mimic="j_mm" multiplier="0.5" offset="0.01"/>`,
	}
	if strings.Join(cmds, "\n") != strings.Join(want, "\n") {
		t.Fatalf("commands:\n%s", strings.Join(cmds, "\n"))
	}
	// Files: the URDF, the package.xml that makes its own package, its
	// meshes and the OBJ's material library.
	var rel []string
	for _, f := range m.Files() {
		r, _ := filepath.Rel(filepath.Join(filepath.Dir(path), "..", ".."), f)
		rel = append(rel, filepath.ToSlash(r))
	}
	if got, want := strings.Join(rel, " "), "allkinds/urdf/allkinds.urdf allkinds/package.xml allkinds/meshes/tetra.stl allkinds/meshes/cube.obj allkinds/meshes/cube.mtl parts/meshes/wedge.stl"; got != want {
		t.Fatalf("files %s, want %s", got, want)
	}
	// Colours: the STL takes the visual's material, the OBJ keeps its own.
	colors := map[string][4]float32{}
	for _, mesh := range m.Meshes {
		colors[mesh.Name] = mesh.Primitives[0].Material.BaseColor
	}
	if colors["tetra.stl"] != [4]float32{1, 0, 0, 0.5} || colors["cube.obj"] != [4]float32{1, 0.5, 0, 1} ||
		colors["wedge.stl"] != [4]float32{0.8, 0.8, 0.8, 1} || colors["base_link visual 1"] != [4]float32{0.1, 0.2, 0.8, 1} {
		t.Fatalf("colours %v", colors)
	}
	// Collision geometry instead: base_link's box only.
	c, err := models.LoadWith(path, models.LoadOptions{PackagePath: []string{ws}, Collision: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Meshes) != 1 || c.Meshes[0].Name != "base_link collision 1" {
		t.Fatalf("collision meshes %d", len(c.Meshes))
	}
	// Budgets: the meshes count against the URDF's.
	_, err = models.LoadWith(path, models.LoadOptions{PackagePath: []string{ws}, Limits: models.Limits{Triangles: 100}})
	if err == nil || !strings.Contains(err.Error(), "triangles, over the limit of 100") {
		t.Fatalf("got %v", err)
	}
	// Confined to a root, the package outside it is refused.
	_, err = models.LoadWith(path, models.LoadOptions{Root: filepath.Join(ws, "allkinds"), PackagePath: []string{ws}})
	if err == nil || !strings.Contains(err.Error(), "leads out of") {
		t.Fatalf("got %v", err)
	}
}

func FuzzURDF(f *testing.F) {
	f.Add([]byte(robot(linkA, linkB, rev("ab", "a", "b"))))
	f.Add([]byte(robot(`<material name="m"><color rgba="1 0 0 1"/></material>`,
		`<link name="a"><visual><origin rpy="1 2 3"/><geometry><sphere radius="1"/></geometry><material name="m"/></visual></link>`,
		linkB, `<joint name="ab" type="continuous"><parent link="a"/><child link="b"/><mimic joint="ab"/></joint>`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		p := put(t, dir, "f.urdf", string(data))
		lim := models.Limits{FileBytes: 1 << 20, Vertices: 1 << 16, Triangles: 1 << 16, Nodes: 1000}
		m, err := models.LoadWith(p, models.LoadOptions{Root: dir, Limits: lim})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "models: "+p) {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		if v, tr, n := m.Counts(); v > lim.Vertices || tr > lim.Triangles || n > lim.Nodes {
			t.Fatalf("%d vertices, %d triangles, %d nodes", v, tr, n)
		}
	})
}
