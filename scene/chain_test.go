package scene_test

import (
	"math"
	"testing"

	"github.com/simvis/simvis/scene"
)

// A chain of 3000 parts, each inserted at the previous one's insertion
// point, puts its last part where composing the 3000 offsets says: 1 cm
// steps, each turned 0.1 degree further.
func TestChainedPartsWorldPose(t *testing.T) {
	dir := t.TempDir()
	writeBoxModel(t, dir, "box.glb", 0.01)
	const n = 3000
	s := buildChain(t, dir, n)
	var x, y float64
	for k := 0; k < n; k++ {
		a := float64(k) * 0.1 * math.Pi / 180
		x += 0.01 * math.Cos(a)
		y += 0.01 * math.Sin(a)
	}
	// 3000 x 0.1 = 300 degrees, reported as -60.
	assertPose(t, s, "P2999", scene.Pose{X: x, Y: y, Yaw: -60})
	tip, err := s.Frame("P2999")
	if err != nil {
		t.Fatal(err)
	}
	// The g3n mirror composes the same chain in float32 (3000 roundings).
	s.G3N().UpdateMatrixWorld()
	g := tip.G3N().MatrixWorld()
	if math.Abs(float64(g[12])-x) > 1e-2 || math.Abs(float64(g[13])-y) > 1e-2 {
		t.Errorf("g3n tip at %g %g, graph %g %g", g[12], g[13], x, y)
	}
	if len(s.Parts()) != n {
		t.Errorf("%d parts", len(s.Parts()))
	}
	assertInRange(t, s)
}

// A model whose nodes form a 20,000-deep chain is instantiated whole: the
// insertion point at its tip is 20 m up (1 mm per node), also after a
// transform is inserted at the tip and moved.
func TestDeepModelWorldPose(t *testing.T) {
	dir := t.TempDir()
	const n = 20000
	writeChainModel(t, dir, "deep.gltf", n)
	s := scene.New(scene.Options{})
	if err := exec(t, s, dir, `<part file="deep.gltf" name="D" pose_offset="1 0 0 0 0 90"/>`); err != nil {
		t.Fatal(err)
	}
	assertPose(t, s, "D/TIP", scene.Pose{X: 1, Z: 20, Yaw: 90})
	for _, xml := range []string{
		`<element type="pose" name="T" insert_at="D/TIP" x="2"/>`,
		`<sensor type="camera" name="CAM" insert_at="D/TIP" pose_offset="0 0 1 0 0 0"/>`,
	} {
		if err := exec(t, s, dir, xml); err != nil {
			t.Fatal(err)
		}
	}
	// T's x = 2 along the part's y (yaw 90): world y 2.
	assertPose(t, s, "CAM", scene.Pose{X: 1, Y: 2, Z: 21, Yaw: 90})
	if err := s.Set("T", "z", -21); err != nil {
		t.Fatal(err)
	}
	assertPose(t, s, "CAM", scene.Pose{X: 1, Y: 2, Z: 0, Yaw: 90})
	// Limits: the deep model exceeds no default.
	if st := s.MeshStats(); st.Instances != 1 {
		t.Errorf("mesh stats %+v", st)
	}
}

// BenchmarkInspectDeepModel describes a scene holding a 20,000-deep model
// with a camera at its tip (every model node then leads to an attachment).
func BenchmarkInspectDeepModel(b *testing.B) {
	dir := b.TempDir()
	writeChainModel(b, dir, "deep.gltf", 20000)
	s := scene.New(scene.Options{})
	for _, xml := range []string{`<part file="deep.gltf" name="D"/>`, `<sensor type="camera" name="CAM" insert_at="D/TIP"/>`} {
		if err := exec(b, s, dir, xml); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if _, err := s.Inspect(); err != nil {
			b.Fatal(err)
		}
	}
}
