package scene

import (
	"path/filepath"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
)

// The model cache keys on the path and the root a load was confined to:
// a model loaded unconfined is loaded again for a confined command.
func TestModelCacheKey(t *testing.T) {
	dir := t.TempDir()
	m := models.NewModel("box")
	m.AddNode(nil, "box", mgl64.Ident4(), models.Box("box", 1, 1, 1, [4]float32{1, 1, 1, 1}))
	path := filepath.Join(dir, "box.glb")
	if err := models.Write(path, m); err != nil {
		t.Fatal(err)
	}
	s := New(Options{})
	free, fresh, err := s.loadModel(path, "", false)
	if err != nil {
		t.Fatal(err)
	}
	confined, fresh2, err := s.loadModel(path, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	again, fresh3, err := s.loadModel(path, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if !fresh || !fresh2 || fresh3 {
		t.Errorf("fresh loads: %v, %v, %v; want true, true, false", fresh, fresh2, fresh3)
	}
	if free == confined || confined != again || len(s.models) != 2 {
		t.Errorf("cache: unconfined %p, confined %p then %p, %d entries", free, confined, again, len(s.models))
	}
	if free.vertices != 24 || free.triangles != 12 || free.modelNodes != 1 || free.insertionPts != 0 || free.meshes != 1 {
		t.Errorf("counts %+v", *free)
	}
}
