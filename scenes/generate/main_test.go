package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
)

// The committed assets are exactly what the generator writes now: editing
// the generator without regenerating (go run ./scenes/generate) fails here.
func TestCommittedAssetsAreUpToDate(t *testing.T) {
	dir := t.TempDir()
	if err := write(dir); err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for name := range assets() {
		names = append(names, name)
	}
	for name := range armMeshes() {
		names = append(names, "arm/meshes/"+name)
	}
	for _, name := range names {
		fresh, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(filepath.Join("..", name))
		if err != nil {
			t.Fatalf("%v (run: go run ./scenes/generate)", err)
		}
		if !bytes.Equal(fresh, committed) {
			t.Errorf("scenes/%s differs from what the generator writes; run: go run ./scenes/generate", name)
		}
	}
}

// The Collada hand, written y up in millimetres, reads back (models'
// Collada reader: unit, up axis, node matrices, colours) as the meshes it
// was written from, in meters and z up, each vertex within 1e-6 m.
func TestColladaHandReadsBack(t *testing.T) {
	want := armMeshes()["hand.dae"]
	got, err := models.Load(filepath.Join("..", "arm", "meshes", "hand.dae"))
	if err != nil {
		t.Fatal(err)
	}
	world := func(m *models.Model) (pos [][]mgl64.Vec3, colors [][4]float32) {
		var walk func(n *models.Node, parent mgl64.Mat4)
		walk = func(n *models.Node, parent mgl64.Mat4) {
			w := parent.Mul4(n.Local)
			if n.Mesh != nil {
				for _, p := range n.Mesh.Primitives {
					var vs []mgl64.Vec3
					for _, v := range p.Positions {
						vs = append(vs, w.Mul4x1(mgl64.Vec4{float64(v[0]), float64(v[1]), float64(v[2]), 1}).Vec3())
					}
					pos = append(pos, vs)
					colors = append(colors, p.Material.BaseColor)
				}
			}
			for _, k := range n.Children {
				walk(k, w)
			}
		}
		for _, r := range m.Roots {
			walk(r, mgl64.Ident4())
		}
		return
	}
	wp, wc := world(want)
	gp, gc := world(got)
	if len(wp) != 2 || len(gp) != len(wp) {
		t.Fatalf("%d primitives read, %d written", len(gp), len(wp))
	}
	for i := range wp {
		if gc[i] != wc[i] {
			t.Errorf("primitive %d: colour %v, want %v", i, gc[i], wc[i])
		}
		// The reader builds three vertices per triangle: compare triangle
		// corners in order.
		wi := want.Meshes[i].Primitives[0].Indices
		if len(gp[i]) != len(wi) {
			t.Fatalf("primitive %d: %d vertices, want %d", i, len(gp[i]), len(wi))
		}
		for k, ix := range wi {
			if d := gp[i][k].Sub(wp[i][ix]).Len(); d > 1e-6 {
				t.Fatalf("primitive %d corner %d: %v, want %v (%g m off)", i, k, gp[i][k], wp[i][ix], d)
			}
		}
	}
}
