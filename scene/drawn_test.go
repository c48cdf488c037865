package scene_test

import (
	"strings"
	"testing"

	"github.com/simvis/simvis/scene"
)

// drawnAndExported returns the triangles inspect says are drawn and those
// Export writes.
func drawnAndExported(t *testing.T, s *scene.Scene) (drawn, exported int) {
	t.Helper()
	if err := s.Update(); err != nil {
		t.Fatal(err)
	}
	info, err := s.Inspect()
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Export()
	if err != nil {
		t.Fatal(err)
	}
	return info.Meshes.Triangles, m.TriangleCount()
}

// Inspect counts the triangles drawn as Export writes them: a switched-off
// part, and the parts below it, count for neither (inspect counted them:
// the showcase with its cart off said 1,180 where export wrote 720).
func TestInspectDrawnTrianglesSkipSwitchedOff(t *testing.T) {
	dir := t.TempDir()
	writeBoxModel(t, dir, "box.glb", 1) // 12 triangles
	s := load(t, writeFile(t, dir, "s.xml", `<scene>
  <part file="box.glb" name="A"/>
  <part file="box.glb" name="B" pose_offset="2 0 0 0 0 0"/>
  <element type="switch" name="B_ON" insert_at="B" on="1"/>
  <part file="box.glb" name="C" insert_at="B" pose_offset="0 2 0 0 0 0"/>
</scene>`))
	for _, tc := range []struct {
		on   float64
		want int
	}{{1, 36}, {0, 12}, {1, 36}} {
		if err := s.Set("B_ON", "on", tc.on); err != nil {
			t.Fatal(err)
		}
		drawn, exported := drawnAndExported(t, s)
		if drawn != tc.want || exported != tc.want {
			t.Errorf("B on=%g: inspect %d triangles drawn, export %d; want %d", tc.on, drawn, exported, tc.want)
		}
	}
	info, err := s.Inspect()
	if err != nil {
		t.Fatal(err)
	}
	if info.Meshes.Instances != 3 {
		t.Errorf("%d mesh instances, want 3 (switched-off meshes still exist)", info.Meshes.Instances)
	}
	var out strings.Builder
	if err := s.Set("B_ON", "on", 0); err != nil {
		t.Fatal(err)
	}
	drawnAndExported(t, s)
	info, _ = s.Inspect()
	info.WriteSummary(&out)
	if !strings.Contains(out.String(), "; 12 triangles drawn") {
		t.Errorf("summary:\n%s", out.String())
	}
}

// The bundled showcase, its cart switched off: inspect and export agree.
func TestShowcaseCartOffTriangles(t *testing.T) {
	s := load(t, "../scenes/showcase/scene.xml")
	drawnOn, exportedOn := drawnAndExported(t, s)
	if err := s.Set("CART_ON", "on", 0); err != nil {
		t.Fatal(err)
	}
	drawnOff, exportedOff := drawnAndExported(t, s)
	if drawnOn != exportedOn || drawnOff != exportedOff || drawnOff >= drawnOn {
		t.Errorf("cart on: inspect %d, export %d; off: inspect %d, export %d", drawnOn, exportedOn, drawnOff, exportedOff)
	}
	t.Logf("showcase: %d triangles, %d with the cart off", drawnOn, drawnOff)
}
