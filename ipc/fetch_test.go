package ipc

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl64"

	_ "github.com/simvis/simvis/elements"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// dirFetcher serves files from a directory, as a host does, and records
// what was asked.
type dirFetcher struct {
	dir   string
	asked []string
}

func (f *dirFetcher) FetchFile(dir, path string) ([]byte, error) {
	f.asked = append(f.asked, path)
	return os.ReadFile(filepath.Join(f.dir, filepath.FromSlash(path)))
}

// externalBuffer rewrites a .gltf written with an embedded buffer to keep
// its buffer in a file of its own next to it.
func externalBuffer(t *testing.T, gltfPath, binName string) {
	t.Helper()
	data, _ := os.ReadFile(gltfPath)
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	buf := doc["buffers"].([]any)[0].(map[string]any)
	uri := buf["uri"].(string)
	raw, err := base64.StdEncoding.DecodeString(uri[strings.Index(uri, ",")+1:])
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(filepath.Dir(gltfPath), binName), raw, 0o644)
	buf["uri"] = binName
	out, _ := json.Marshal(doc)
	os.WriteFile(gltfPath, out, 0o644)
}

// A command's model, the model's external buffer and a model that one of
// its embedded commands names are fetched before the command runs, and the
// command then runs from the copies.
func TestPrefetchFollowsModels(t *testing.T) {
	host := t.TempDir()
	os.MkdirAll(filepath.Join(host, "sub"), 0o755)
	inner := models.NewModel("inner")
	inner.AddNode(nil, "box", mgl64.Ident4(), models.Box("box", 1, 1, 1, [4]float32{1, 0, 0, 1}))
	if err := models.Write(filepath.Join(host, "sub", "inner.gltf"), inner); err != nil {
		t.Fatal(err)
	}
	externalBuffer(t, filepath.Join(host, "sub", "inner.gltf"), "inner.bin")
	outer := models.NewModel("outer")
	outer.AddNode(nil, "base", mgl64.Ident4(), models.Box("base", 2, 2, 0.1, [4]float32{0, 0, 1, 1}))
	outer.Commands = []models.Command{{XML: `<part file="sub/inner.gltf" name="IN"/>`}}
	if err := models.Write(filepath.Join(host, "outer.gltf"), outer); err != nil {
		t.Fatal(err)
	}

	f := &dirFetcher{dir: host}
	fc := fileCache{fetcher: f, always: true}
	defer fc.close()
	local, err := fc.localDir(host)
	if err != nil || local == host {
		t.Fatalf("local directory %q (%v)", local, err)
	}
	cmd, err := scene.ParseCommand(`<part file="outer.gltf" name="P"/>`, "test", local)
	if err != nil {
		t.Fatal(err)
	}
	if err := fc.prefetch(cmd, host, local); err != nil {
		t.Fatal(err)
	}
	slices.Sort(f.asked)
	if want := []string{"outer.gltf", "sub/inner.bin", "sub/inner.gltf"}; !slices.Equal(f.asked, want) {
		t.Errorf("fetched %v, want %v", f.asked, want)
	}
	s := scene.New(scene.Options{})
	if err := s.Exec(cmd); err != nil {
		t.Fatalf("running the command from the copies: %v", err)
	}
	if len(s.Parts()) != 2 || !strings.HasPrefix(s.Parts()[1].File, local) {
		t.Errorf("parts %d, inner from %q", len(s.Parts()), s.Parts()[len(s.Parts())-1].File)
	}
	// A second command naming the same model fetches nothing again.
	f.asked = nil
	again, _ := scene.ParseCommand(`<part file="outer.gltf" name="P2"/>`, "test", local)
	fc.prefetch(again, host, local)
	if len(f.asked) != 0 {
		t.Errorf("fetched again: %v", f.asked)
	}
}
