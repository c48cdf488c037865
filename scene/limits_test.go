package scene_test

import (
	"encoding/base64"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// writeLevels writes L0.glb ... L<depth>.glb: each a box whose model
// embeds fan parts of the next level, the last a plain box. A part of L0
// instantiates 1 + fan + fan^2 + ... + fan^depth parts.
func writeLevels(t testing.TB, dir string, depth, fan int) {
	for k := 0; k <= depth; k++ {
		var cmds []string
		if k < depth {
			for i := 0; i < fan; i++ {
				cmds = append(cmds, fmt.Sprintf(`<part file="L%d.glb" name="C%d"/>`, k+1, i))
			}
		}
		writeEmbedding(t, dir, fmt.Sprintf("L%d.glb", k), cmds...)
	}
}

// Embedded commands that grow exponentially (4 parts per level, 1365 parts
// in all) stop at the parts budget, counted over the command and everything
// it embeds, and leave nothing behind.
func TestPartsBudgetStopsExponentialModels(t *testing.T) {
	dir := t.TempDir()
	writeLevels(t, dir, 5, 4)
	s := scene.New(scene.Options{})
	err := exec(t, s, dir, `<part file="L0.glb" name="A"/>`)
	if err == nil || !strings.HasPrefix(err.Error(), `req:1: part "A": attribute "file": embedded command `) ||
		!strings.HasSuffix(err.Error(), `attribute "file": the command, with the commands embedded in its models, would add 1001 parts, over its budget of 1000 (raise it with scene.Options.Limits.Parts / --max-parts)`) {
		t.Fatalf("err = %v", err)
	}
	if len(s.Parts()) != 0 || len(s.Root().Children()) != 1 || len(s.InsertionPoints()) != 1 {
		t.Errorf("refused command left %d parts", len(s.Parts()))
	}
	// A raised budget, or none, lets it through.
	for _, parts := range []int{1365, -1} {
		s := scene.New(scene.Options{Limits: scene.Limits{Parts: parts}})
		if err := exec(t, s, dir, `<part file="L0.glb" name="A"/>`); err != nil {
			t.Fatalf("Parts %d: %v", parts, err)
		}
		if len(s.Parts()) != 1365 {
			t.Errorf("%d parts, want 1365", len(s.Parts()))
		}
	}
	s = scene.New(scene.Options{Limits: scene.Limits{Parts: 1364}})
	if err := exec(t, s, dir, `<part file="L0.glb" name="A"/>`); err == nil || !strings.Contains(err.Error(), "would add 1365 parts, over its budget of 1364") {
		t.Errorf("Parts 1364: %v", err)
	}
}

// Vertices, triangles and scene nodes are counted per instance (a model
// used by many parts counts each time) and refused before the part that
// would pass the budget is built.
func TestGeometryBudgets(t *testing.T) {
	dir := t.TempDir()
	writeLevels(t, dir, 2, 3) // 13 parts of a 24-vertex, 12-triangle box
	for _, c := range []struct {
		limits scene.Limits
		want   string
	}{
		{scene.Limits{Vertices: 300}, "would add 312 vertices, over its budget of 300 (raise it with scene.Options.Limits.Vertices / --max-vertices)"},
		{scene.Limits{Triangles: 100}, "would add 108 triangles, over its budget of 100 (raise it with scene.Options.Limits.Triangles / --max-triangles)"},
		// Each part adds 5 nodes: separator, insertion point, model, box
		// node and its one primitive's mesh.
		{scene.Limits{Nodes: 50}, "would add 55 scene nodes, over its budget of 50 (raise it with scene.Options.Limits.Nodes / --max-nodes)"},
		{scene.Limits{Parts: 12}, "would add 13 parts, over its budget of 12 (raise it with scene.Options.Limits.Parts / --max-parts)"},
		{scene.Limits{Vertices: 312, Triangles: 156, Nodes: 65, Parts: 13}, ""},
		{scene.Limits{Vertices: -1, Triangles: -1, Nodes: -1, Parts: -1}, ""},
	} {
		s := scene.New(scene.Options{Limits: c.limits})
		err := exec(t, s, dir, `<part file="L0.glb" name="A"/>`)
		if c.want == "" {
			if err != nil || len(s.Parts()) != 13 {
				t.Errorf("%+v: %v, %d parts", c.limits, err, len(s.Parts()))
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), `req:1: part "A": attribute "file": `) || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("%+v: %v\nwant suffix %s", c.limits, err, c.want)
		}
		if len(s.Parts()) != 0 {
			t.Errorf("%+v: refused command left %d parts", c.limits, len(s.Parts()))
		}
	}
}

// Budgets are per command: commands each within them add up to more.
func TestBudgetsArePerCommand(t *testing.T) {
	dir := t.TempDir()
	writeBoxModel(t, dir, "box.glb", 1)
	s := scene.New(scene.Options{Limits: scene.Limits{Parts: 1, Vertices: 24}})
	for i := 0; i < 5; i++ {
		if err := exec(t, s, dir, fmt.Sprintf(`<part file="box.glb" name="B%d"/>`, i)); err != nil {
			t.Fatal(err)
		}
	}
	// A model with two boxes is over the vertex budget on its own.
	m := models.NewModel("two")
	box := models.Box("box", 1, 1, 1, [4]float32{1, 1, 1, 1})
	m.AddNode(nil, "a", mgl64.Ident4(), box)
	m.AddNode(nil, "b", mgl64.Translate3D(2, 0, 0), box)
	if err := models.Write(filepath.Join(dir, "two.glb"), m); err != nil {
		t.Fatal(err)
	}
	if err := exec(t, s, dir, `<part file="two.glb" name="TWO"/>`); err == nil || !strings.Contains(err.Error(), "would add 48 vertices, over its budget of 24") {
		t.Errorf("two boxes: %v", err)
	}
}

// What elements add (nodes, meshes) counts too: the graph's separator,
// its six nodes and their six meshes.
func TestElementBudget(t *testing.T) {
	s := scene.New(scene.Options{Limits: scene.Limits{Nodes: 5}})
	err := exec(t, s, "", `<element type="graph" name="G" nodes="A B C D E F"/>`)
	want := `req:1: element "G": the command, with the commands embedded in its models, would add 13 scene nodes, over its budget of 5 (raise it with scene.Options.Limits.Nodes / --max-nodes)`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if len(s.Elements()) != 0 || len(s.Root().Children()) != 1 {
		t.Error("refused element left traces")
	}
}

// Zero limits take the documented defaults, negative ones stay (no limit).
func TestLimitsDefaults(t *testing.T) {
	s := scene.New(scene.Options{Limits: scene.Limits{Parts: -1, Vertices: 5, Model: models.Limits{Nodes: 7}}})
	got := s.Limits()
	want := scene.DefaultLimits
	want.Parts, want.Vertices, want.Model.Nodes = -1, 5, 7
	if got != want {
		t.Errorf("limits %+v, want %+v", got, want)
	}
	if scene.New(scene.Options{}).Limits() != scene.DefaultLimits {
		t.Errorf("zero limits are not the defaults")
	}
}

// Each model's own limits reach the loader.
func TestModelLimitsApply(t *testing.T) {
	dir := t.TempDir()
	writeBoxModel(t, dir, "box.glb", 1)
	if _, err := models.LoadWith(filepath.Join(dir, "box.glb"), models.LoadOptions{Limits: models.Limits{Vertices: 10}}); err == nil {
		t.Fatal("models.LoadWith loaded a box model under a 10-vertex limit")
	}
	s := scene.New(scene.Options{Limits: scene.Limits{Model: models.Limits{Vertices: 10}}})
	if err := exec(t, s, dir, `<part file="box.glb" name="B"/>`); err == nil || !strings.HasPrefix(err.Error(), `req:1: part "B": attribute "file": `) {
		t.Errorf("err = %v", err)
	}
}

// Every primitive of a model node's mesh becomes a g3n mesh of its own, so
// each counts as a scene node: a 24 MB file of 790,000 one-triangle
// primitives sharing one accessor is within the vertex and triangle
// budgets, yet cost 1.1 GB and 5 s per part when primitives went uncounted.
func TestPrimitivesCountAsNodes(t *testing.T) {
	dir := t.TempDir()
	const prims = 2000
	tri := base64.StdEncoding.EncodeToString(make([]byte, 36)) // three zero vertices
	doc := `{"asset":{"version":"2.0"},` +
		`"buffers":[{"byteLength":36,"uri":"data:application/octet-stream;base64,` + tri + `"}],` +
		`"bufferViews":[{"buffer":0,"byteLength":36}],` +
		`"accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3"}],` +
		`"meshes":[{"primitives":[` + strings.Repeat(`{"attributes":{"POSITION":0}},`, prims-1) + `{"attributes":{"POSITION":0}}]}],` +
		`"nodes":[{"mesh":0}]}`
	writeFile(t, dir, "many.gltf", doc)
	s := scene.New(scene.Options{Limits: scene.Limits{Nodes: prims}})
	err := exec(t, s, dir, `<part file="many.gltf" name="M"/>`)
	// Separator, insertion point, model, the model's node and its meshes.
	want := fmt.Sprintf(`req:1: part "M": attribute "file": the command, with the commands embedded in its models, would add %d scene nodes, over its budget of %d (raise it with scene.Options.Limits.Nodes / --max-nodes)`, prims+4, prims)
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	if len(s.Parts()) != 0 || len(s.Root().Children()) != 1 {
		t.Error("refused part left traces")
	}
	s = scene.New(scene.Options{Limits: scene.Limits{Nodes: prims + 4}})
	if err := exec(t, s, dir, `<part file="many.gltf" name="M"/>`); err != nil {
		t.Fatal(err)
	}
}

// Model limits bound each file and also what all the files one command
// loads come to: one command naming many distinct model files, each within
// the limits (20 PNGs of 8192x8192 compress to a few MB), would otherwise
// multiply them. A model found in the cache costs nothing new.
func TestModelLimitsSumOverCommand(t *testing.T) {
	dir := t.TempDir()
	var one int64
	for _, name := range []string{"a", "b", "c"} {
		m := models.NewModel(name)
		box := models.Box("box", 1, 1, 1, [4]float32{1, 1, 1, 1})
		tex := image.NewRGBA(image.Rect(0, 0, 10, 10))
		for _, p := range box.Primitives {
			p.Material = &models.Material{BaseColor: [4]float32{1, 1, 1, 1}, BaseColorTexture: tex}
		}
		m.AddNode(nil, "box", mgl64.Ident4(), box)
		path := filepath.Join(dir, name+".glb")
		if err := models.Write(path, m); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		one = max(one, st.Size())
	}
	writeEmbedding(t, dir, "all.glb", `<part file="a.glb" name="A"/>`, `<part file="b.glb" name="B"/>`, `<part file="c.glb" name="C"/>`)
	size := func(name string) int64 {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	all := size("all.glb")

	// Every file is within 'one' bytes (all.glb too) and 100 pixels; three
	// of them are not.
	s := scene.New(scene.Options{Limits: scene.Limits{Model: models.Limits{FileBytes: all + one}}})
	err := exec(t, s, dir, `<part file="all.glb" name="P"/>`)
	want := fmt.Sprintf(`req:1: part "P": attribute "file": embedded command 2: %s: scene 0 extras.simvis.commands[1]:1: part "B": attribute "file": the command, with the commands embedded in its models, would add %d bytes of model files, over its budget of %d (raise it with scene.Options.Limits.Model.FileBytes / --max-model-mib)`,
		filepath.Join(dir, "all.glb"), all+size("a.glb")+size("b.glb"), all+one)
	if err == nil || err.Error() != want {
		t.Errorf("bytes: %v\nwant %s", err, want)
	}
	s = scene.New(scene.Options{Limits: scene.Limits{Model: models.Limits{ImagePixels: 250}}})
	err = exec(t, s, dir, `<part file="all.glb" name="P"/>`)
	want = `req:1: part "P": attribute "file": embedded command 3: ` + filepath.Join(dir, "all.glb") + `: scene 0 extras.simvis.commands[2]:1: part "C": attribute "file": the command, with the commands embedded in its models, would add 300 image pixels, over its budget of 250 (raise it with scene.Options.Limits.Model.ImagePixels / --max-image-mpixels)`
	if err == nil || err.Error() != want {
		t.Errorf("pixels: %v\nwant %s", err, want)
	}
	if len(s.Parts()) != 0 {
		t.Errorf("refused command left %d parts", len(s.Parts()))
	}
	// Loaded one at a time, each command is within the budget; once
	// cached, the same models cost nothing new.
	for _, name := range []string{"a", "b", "c"} {
		if err := exec(t, s, dir, fmt.Sprintf(`<part file="%s.glb" name="%s"/>`, name, strings.ToUpper(name))); err != nil {
			t.Fatal(err)
		}
	}
	if err := exec(t, s, dir, `<part file="all.glb" name="P"/>`); err != nil {
		t.Errorf("cached models: %v", err)
	}
}
