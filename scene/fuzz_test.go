package scene_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beevik/etree"
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

// FuzzSceneExec executes a fuzzed command on a scene holding a robot, from
// a scene file or, confined, as a host's request. The command is built
// from its parts (kind: part, element or sensor; type, name, insert_at,
// file, pose_offset, and more attributes as "key=value;key=value"), so that
// mutations explore what commands do rather than XML syntax (which
// FuzzParseCommand covers); then every parameter is set to value. Nothing
// may panic; a refused command is located and leaves the scene as it was;
// an accepted one leaves every world transform in range, the scene
// describable as JSON, and (confined) every model inside the scene's
// directory. Seeds (the reproductions among them):
// testdata/fuzz/FuzzSceneExec.
func FuzzSceneExec(f *testing.F) {
	dir := fuzzDir(f)
	f.Fuzz(func(t *testing.T, kind uint8, typ, name, at, file, pose, attrs string, value float64, confined bool) {
		elem := etree.NewElement([]string{"part", "element", "sensor"}[kind%3])
		for _, a := range [][2]string{{"type", typ}, {"name", name}, {"insert_at", at}, {"file", file}, {"pose_offset", pose}} {
			if a[1] != "" {
				elem.CreateAttr(a[0], a[1])
			}
		}
		for _, kv := range strings.Split(attrs, ";") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				elem.CreateAttr(k, v)
			}
		}
		doc := etree.NewDocument()
		doc.SetRoot(elem)
		text, err := doc.WriteToString()
		if err != nil {
			return
		}
		c, err := scene.ParseCommand(text, "fuzz", dir)
		if err != nil {
			return // not XML (an attribute key that is no name): FuzzParseCommand's ground
		}
		c.Confined = confined
		s := scene.New(scene.Options{ParamCapacity: 1 << 12,
			Limits: scene.Limits{Parts: 64, Vertices: 1 << 16, Triangles: 1 << 16, Nodes: 4096}})
		for _, xml := range []string{
			`<part file="robot.glb" name="R" pose_offset="1 2 0 0 0 30"/>`,
			`<sensor type="camera" name="CAM" insert_at="R/MOUNT" pose_offset="0.1 0 0 0 0 0"/>`,
		} {
			if err := exec(t, s, dir, xml); err != nil {
				t.Fatal(err)
			}
		}
		before := snapshot(t, s)
		if err := s.Exec(c); err != nil {
			var located *scene.Error
			if !errors.As(err, &located) || !strings.HasPrefix(err.Error(), "fuzz:1: ") {
				t.Fatalf("error not located at the command: %v", err)
			}
			if after := snapshot(t, s); !bytes.Equal(before, after) {
				t.Fatalf("refused command %s (%v) changed the scene:\n%s\n%s", c, err, before, after)
			}
		} else {
			assertWorldsInRange(t, s)
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
		// Values written at run time: those out of range are rejected,
		// not applied.
		for i := range s.Values() {
			s.Values()[i] = value * float64(i+1)
		}
		_ = s.Update()
		assertWorldsInRange(t, s)
		snapshot(t, s)
	})
}
