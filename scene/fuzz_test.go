package scene_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// FuzzParseCommand parses one command. Nothing may panic; an error is
// located (*scene.Error); an accepted command prints as XML that parses
// back to the same text (hosts publish commands as text, mirrors replay it).
// Seeds: testdata/fuzz/FuzzParseCommand.
func FuzzParseCommand(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		c, err := scene.ParseCommand(text, "fuzz", "/scene")
		if err != nil {
			var located *scene.Error
			if !errors.As(err, &located) || located.File != "fuzz" {
				t.Fatalf("error not located: %v", err)
			}
			return
		}
		switch c.Kind() {
		case "part", "element", "sensor":
		default:
			t.Fatalf("accepted command kind %q", c.Kind())
		}
		out := c.String()
		back, err := scene.ParseCommand(out, "fuzz", "/scene")
		if err != nil {
			t.Fatalf("%q printed as %q, which does not parse: %v", text, out, err)
		}
		if again := back.String(); again != out {
			t.Fatalf("%q printed as %q, then as %q", text, out, again)
		}
	})
}

// fuzzDir holds the models FuzzSceneExec commands can name: box.glb,
// robot.glb (insertion point MOUNT, an embedded pose element), twice.glb
// (embeds two parts of itself: exponential), and link/ leading out of the
// directory to outside/x.glb.
func fuzzDir(f *testing.F) string {
	base := f.TempDir()
	dir, outside := filepath.Join(base, "scene"), filepath.Join(base, "outside")
	for _, d := range []string{dir, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	writeBoxModel(f, dir, "box.glb", 0.5)
	writeBoxModel(f, outside, "x.glb", 0.5)
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		f.Fatal(err)
	}
	m := models.NewModel("robot")
	base0 := m.AddNode(nil, "base", mgl64.Translate3D(0, 0, 0.2), models.Box("base", 0.6, 0.4, 0.3, [4]float32{0, 0, 1, 1}))
	m.AddNode(base0, "mast", mgl64.Translate3D(0.2, 0, 0.8), nil).InsertionPoint = "MOUNT"
	m.Commands = []models.Command{{XML: `<element type="pose" name="TILT" insert_at="MOUNT" pitch="30"/>`, Source: "robot.glb"}}
	if err := models.Write(filepath.Join(dir, "robot.glb"), m); err != nil {
		f.Fatal(err)
	}
	writeEmbedding(f, dir, "twice.glb", `<part file="twice.glb" name="L"/>`, `<part file="twice.glb" name="R"/>`)
	return dir
}

// snapshot is the scene as inspect shows it, less the mesh cache figures
// (a refused command may leave shared geometry cached, not drawn).
func snapshot(t *testing.T, s *scene.Scene) []byte {
	info, err := s.Inspect()
	if err != nil {
		t.Fatalf("inspect: %v", err)
	}
	info.Meshes = scene.MeshStats{}
	data, err := json.Marshal(info)
	if err != nil {
		t.Fatalf("inspect does not marshal: %v", err)
	}
	return data
}

// FuzzSceneExec executes fuzzed commands on a scene holding a robot, from
// a scene file or, confined, as a host's request. Nothing may panic; a
// refused command is located and leaves the scene as it was; an accepted
// one leaves every world transform in range, the scene describable as
// JSON, and (confined) every model inside the scene's directory. Seeds
// (the reproductions among them): testdata/fuzz/FuzzSceneExec.
func FuzzSceneExec(f *testing.F) {
	dir := fuzzDir(f)
	f.Fuzz(func(t *testing.T, text string, confined bool) {
		cmds, err := scene.ParseCommands([]byte(text), "fuzz", dir)
		if err != nil {
			return
		}
		s := scene.New(scene.Options{ParamCapacity: 1 << 12,
			Limits: scene.Limits{Parts: 64, Vertices: 1 << 16, Triangles: 1 << 16, Nodes: 4096}})
		if err := exec(t, s, dir, `<part file="robot.glb" name="R" pose_offset="1 2 0 0 0 30"/>`); err != nil {
			t.Fatal(err)
		}
		for _, c := range cmds {
			c.Confined = confined
			before := snapshot(t, s)
			if err := s.Exec(c); err != nil {
				var located *scene.Error
				if !errors.As(err, &located) || !strings.HasPrefix(err.Error(), "fuzz:") {
					t.Fatalf("error not located at the command: %v", err)
				}
				if after := snapshot(t, s); !bytes.Equal(before, after) {
					t.Fatalf("refused command %s (%v) changed the scene:\n%s\n%s", c, err, before, after)
				}
				continue
			}
			fuzzAssertInRange(t, s)
			snapshot(t, s)
			if confined {
				for _, p := range s.Parts() {
					real, err := filepath.EvalSymlinks(p.File)
					if err != nil {
						t.Fatal(err)
					}
					if !strings.HasPrefix(real, dir+string(filepath.Separator)) {
						t.Fatalf("confined command loaded %s", real)
					}
				}
			}
		}
		// Values written at run time: large ones are rejected, not applied.
		for i := range s.Values() {
			s.Values()[i] = math.MaxFloat64 / float64(i+1)
		}
		_ = s.Update()
		fuzzAssertInRange(t, s)
		snapshot(t, s)
	})
}

func fuzzAssertInRange(t *testing.T, s *scene.Scene) {
	var walk func(n *scene.Node, parent mgl64.Mat4)
	walk = func(n *scene.Node, parent mgl64.Mat4) {
		w := parent.Mul4(n.Local())
		for _, v := range w {
			if !(math.Abs(v) <= math.MaxFloat32) {
				t.Fatalf("node %s %q: world transform out of range: %v", n.Kind, n.Name, w)
			}
		}
		for _, c := range n.Children() {
			walk(c, w)
		}
	}
	walk(s.Root(), mgl64.Ident4())
}
