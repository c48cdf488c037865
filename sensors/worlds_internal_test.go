package sensors

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/g3n/engine/gls"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

// updateWorlds walks the g3n graph for every picture, except between the
// pictures of one batch while the scene's version stays the same; a batch
// (drawQueue.runOn) starts and ends with a walk due.
func TestUpdateWorldsSkipsOnlyWhileNothingMoved(t *testing.T) {
	file := filepath.Join(t.TempDir(), "scene.xml")
	xml := `<scene><sensor type="camera" name="C" pose_offset="1 0 0 0 0 0" width="4" height="4"/></scene>`
	if err := os.WriteFile(file, []byte(xml), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := scene.Load(file, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	node := s.Sensors()[0].Frame
	x := func() float32 { m := node.G3N().MatrixWorld(); return m[12] }
	check := func(step string, want float32) {
		t.Helper()
		if got := x(); got != want {
			t.Errorf("%s: the g3n world x is %v, want %v", step, got, want)
		}
	}
	r := &Renderer{}
	r.updateWorlds(s)
	check("first picture", 1)

	q := &drawQueue{r: r}
	q.jobs = []func(*gls.GLS){
		func(*gls.GLS) { r.updateWorlds(s) },
		func(*gls.GLS) {
			node.SetLocal(mgl64.Translate3D(2, 0, 0)) // a new version
			r.updateWorlds(s)
			check("a move in a batch", 3) // its parent lies at x = 1
		},
		func(*gls.GLS) {
			// A change the version does not see (g3n's node alone) is
			// not walked for within the batch: the skip is real.
			node.G3N().SetPositionX(5)
			r.updateWorlds(s)
			check("an unchanged version in a batch", 3)
		},
	}
	q.runOn(nil)
	// After the batch every picture walks.
	r.updateWorlds(s)
	check("after the batch", 6)
}
