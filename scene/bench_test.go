package scene_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// chainCommand is part i of a chain: each part is inserted at the previous
// one's insertion point, 1 cm further along x and turned 0.1 degree.
func chainCommand(t testing.TB, dir string, i int) *scene.Command {
	at := scene.RootName
	if i > 0 {
		at = "P" + strconv.Itoa(i-1)
	}
	c, err := scene.ParseCommand(fmt.Sprintf(`<part file="box.glb" name="P%d" insert_at="%s" pose_offset="0.01 0 0 0 0 0.1"/>`, i, at), "chain", dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// buildChain executes n chained part commands on a new scene.
func buildChain(t testing.TB, dir string, n int) *scene.Scene {
	s := scene.New(scene.Options{})
	for i := 0; i < n; i++ {
		if err := s.Exec(chainCommand(t, dir, i)); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// BenchmarkChainedParts builds chains of parts, each inserted at the
// previous part's insertion point (one command per part). Linear insertion
// keeps the time per part constant as the chain grows.
func BenchmarkChainedParts(b *testing.B) {
	dir := b.TempDir()
	writeBoxModel(b, dir, "box.glb", 0.01)
	for _, n := range []int{1000, 2000, 3000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				buildChain(b, dir, n)
			}
		})
	}
}

// writeChainModel writes a model whose nodes form one chain n deep, every
// node 1 mm above its parent, with a box at the end.
func writeChainModel(t testing.TB, dir, file string, n int) {
	m := models.NewModel(file)
	var parent *models.Node
	for i := 0; i < n; i++ {
		var mesh *models.Mesh
		if i == n-1 {
			mesh = models.Box("tip", 0.01, 0.01, 0.01, [4]float32{1, 0, 0, 1})
		}
		parent = m.AddNode(parent, "n"+strconv.Itoa(i), mgl64.Translate3D(0, 0, 0.001), mesh)
	}
	parent.InsertionPoint = "TIP"
	if err := models.Write(filepath.Join(dir, file), m); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkDeepModelPart instantiates a model whose nodes form a
// 20,000-deep chain: the scene's share of loading such a model (the model
// itself is loaded once, before the timer, and cached by the scene).
func BenchmarkDeepModelPart(b *testing.B) {
	dir := b.TempDir()
	writeChainModel(b, dir, "deep.gltf", 20000)
	s := scene.New(scene.Options{})
	exec := func(i int) {
		c, err := scene.ParseCommand(fmt.Sprintf(`<part file="deep.gltf" name="D%d"/>`, i), "deep", dir)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Exec(c); err != nil {
			b.Fatal(err)
		}
	}
	exec(0)
	i := 1
	for b.Loop() {
		exec(i)
		i++
	}
}
