package scene_test

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// writeEmbedding writes dir/file: a box whose model embeds the commands.
func writeEmbedding(t testing.TB, dir, file string, cmds ...string) {
	t.Helper()
	m := models.NewModel(file)
	m.AddNode(nil, "box", mgl64.Ident4(), models.Box("box", 0.1, 0.1, 0.1, [4]float32{1, 1, 1, 1}))
	for _, c := range cmds {
		m.Commands = append(m.Commands, models.Command{XML: c, Source: file})
	}
	if err := models.Write(filepath.Join(dir, file), m); err != nil {
		t.Fatal(err)
	}
}

// confinedLayout is a scene directory root with models/ and parts/ inside,
// a directory outside it, and root/link leading there.
func confinedLayout(t *testing.T) (root, outside string) {
	base := t.TempDir()
	root, outside = filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{root, outside, filepath.Join(root, "models"), filepath.Join(root, "parts")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	writeBoxModel(t, outside, "x.glb", 1)
	writeBoxModel(t, filepath.Join(root, "parts"), "ok.glb", 1)
	return root, outside
}

// request executes xml as a host executes a request: confined to dir.
func request(t *testing.T, s *scene.Scene, dir, xml string) error {
	t.Helper()
	c, err := scene.ParseCommand(xml, "req", dir)
	if err != nil {
		t.Fatal(err)
	}
	c.Confined = true
	return s.Exec(c)
}

// Commands embedded in a model that a request loads follow the request's
// rules: their paths resolve against the model's directory and must stay
// inside the request's root, however deep models nest. The same models
// loaded from a scene file (not confined) may name files anywhere.
func TestConfinedEmbeddedCommands(t *testing.T) {
	root, outside := confinedLayout(t)
	models := filepath.Join(root, "models")
	writeEmbedding(t, models, "dotdot.glb", `<part file="../../outside/x.glb" name="X"/>`)
	writeEmbedding(t, models, "abs.glb", `<part file="`+filepath.Join(outside, "x.glb")+`" name="X"/>`)
	writeEmbedding(t, models, "link.glb", `<part file="../link/x.glb" name="X"/>`)
	writeEmbedding(t, models, "inside.glb", `<part file="../parts/ok.glb" name="X"/>`)
	writeEmbedding(t, models, "nested.glb", `<part file="inside.glb" name="IN"/>`, `<part file="dotdot.glb" name="OUT"/>`)
	embedded := func(src string) string {
		return `req:1: part "P": attribute "file": embedded command 1: ` + src + ` scene 0 extras.simvis.commands[0]:1: part "X": attribute "file": `
	}
	for _, c := range []struct{ file, want string }{
		{"dotdot.glb", embedded(filepath.Join(models, "dotdot.glb")+":") + `path "../../outside/x.glb" refused: it leaves the scene's directory`},
		{"abs.glb", embedded(filepath.Join(models, "abs.glb")+":") + `absolute path "` + filepath.Join(outside, "x.glb") + `" refused`},
		{"link.glb", embedded(filepath.Join(models, "link.glb")+":") + `path "../link/x.glb" refused: a symbolic link leads out of the scene's directory`},
		{"nested.glb", `req:1: part "P": attribute "file": embedded command 2 (part "OUT") > embedded command 1: ` + filepath.Join(models, "dotdot.glb") + ":"},
	} {
		t.Run(c.file, func(t *testing.T) {
			s := scene.New(scene.Options{})
			err := request(t, s, root, `<part file="models/`+c.file+`" name="P"/>`)
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("confined: %v\nwant prefix %s", err, c.want)
			}
			if !strings.Contains(err.Error(), "refused") {
				t.Errorf("confined: %v", err)
			}
			if len(s.Parts()) != 0 {
				t.Errorf("refused request left %d parts", len(s.Parts()))
			}
			// From a scene file the same model loads, outside files and all.
			if err := exec(t, s, root, `<part file="models/`+c.file+`" name="P"/>`); err != nil {
				t.Errorf("not confined: %v", err)
			}
		})
	}
	// Relative paths that stay inside the root are fine, also with "..".
	s := scene.New(scene.Options{})
	if err := request(t, s, root, `<part file="models/inside.glb" name="P"/>`); err != nil {
		t.Fatal(err)
	}
	if got, want := s.Parts()[1].File, filepath.Join(root, "parts", "ok.glb"); got != want {
		t.Errorf("embedded part loaded %s, want %s", got, want)
	}
	// The request's own path: top-level rules unchanged.
	for xml, want := range map[string]string{
		`<part file="models/../../outside/x.glb" name="Q"/>`: `req:1: part "Q": attribute "file": path "models/../../outside/x.glb" refused: it leaves the scene's directory`,
		`<part file="link/x.glb" name="Q"/>`:                 `req:1: part "Q": attribute "file": path "link/x.glb" refused: a symbolic link leads out of the scene's directory`,
	} {
		if err := request(t, s, root, xml); err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", xml, err, want)
		}
	}
}

// writeExternalBuffer writes dir/file, a one-triangle glTF whose buffer is
// the file uri (relative to dir), and the buffer itself at dir/uri.
func writeExternalBuffer(t *testing.T, dir, file, uri string) {
	t.Helper()
	var bin []byte
	for _, v := range []float32{0, 0, 0, 1, 0, 0, 0, 1, 0} {
		bin = binary.LittleEndian.AppendUint32(bin, math.Float32bits(v))
	}
	for _, i := range []uint16{0, 1, 2} {
		bin = binary.LittleEndian.AppendUint16(bin, i)
	}
	if err := os.WriteFile(filepath.Join(dir, uri), bin, 0o644); err != nil {
		t.Fatal(err)
	}
	gltf := `{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0}],
"meshes":[{"primitives":[{"attributes":{"POSITION":0},"indices":1}]}],
"buffers":[{"uri":"` + uri + `","byteLength":42}],
"bufferViews":[{"buffer":0,"byteOffset":0,"byteLength":36},{"buffer":0,"byteOffset":36,"byteLength":6}],
"accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]},
{"bufferView":1,"componentType":5123,"count":3,"type":"SCALAR"}]}`
	if err := os.WriteFile(filepath.Join(dir, file), []byte(gltf), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A model loaded for a scene file (where its buffer may lie outside the
// directory) must not serve a request that loads it later: requests load
// models confined to the scene's directory.
func TestModelCacheKeepsConfinement(t *testing.T) {
	root, _ := confinedLayout(t)
	// root/link leads outside: the buffer lies there.
	writeExternalBuffer(t, root, "ext.gltf", "link/ext.bin")
	if _, err := models.LoadWith(filepath.Join(root, "ext.gltf"), models.LoadOptions{Root: root}); err == nil {
		t.Fatal("models.LoadWith followed a buffer link out of its root")
	}
	s := scene.New(scene.Options{})
	if err := exec(t, s, root, `<part file="ext.gltf" name="FROM_FILE"/>`); err != nil {
		t.Fatal(err)
	}
	err := request(t, s, root, `<part file="ext.gltf" name="FROM_REQUEST"/>`)
	if err == nil || !strings.HasPrefix(err.Error(), `req:1: part "FROM_REQUEST": attribute "file": `) {
		t.Errorf("request reusing a model loaded unconfined: %v", err)
	}
}
