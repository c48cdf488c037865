package models

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/qmuntal/gltf"
)

// glTF's emissiveFactor is read into Material.Emissive and written back;
// a negative or NaN one is refused naming the material.
func TestEmissiveFactor(t *testing.T) {
	doc := triDoc()
	doc.Materials = []*gltf.Material{{Name: "lamp", EmissiveFactor: [3]float64{0.25, 0.5, 1}}}
	doc.Meshes[0].Primitives[0].Material = gltf.Index(0)
	m := mustDecode(t, doc)
	got := m.Meshes[0].Primitives[0].Material.Emissive
	if got != [3]float32{0.25, 0.5, 1} {
		t.Errorf("emissive %v, want [0.25 0.5 1]", got)
	}
	path := filepath.Join(t.TempDir(), "lamp.glb")
	if err := Write(path, m); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if e := back.Meshes[0].Primitives[0].Material.Emissive; e != got {
		t.Errorf("written and read back: %v, want %v", e, got)
	}

	doc.Materials[0].EmissiveFactor = [3]float64{0, -1, 0}
	if _, err := decodeDoc(t, doc); err == nil || !strings.Contains(err.Error(), "lamp") || !strings.Contains(err.Error(), "emissiveFactor[1]") {
		t.Errorf("negative emissive: %v, want an error naming the material and emissiveFactor[1]", err)
	}

	bad := NewModel("bad")
	box := Box("box", 1, 1, 1, [4]float32{1, 1, 1, 1})
	box.Primitives[0].Material.Emissive[2] = float32(math.Inf(1))
	bad.AddNode(nil, "box", mgl64.Ident4(), box)
	if err := Write(filepath.Join(t.TempDir(), "bad.glb"), bad); err == nil || !strings.Contains(err.Error(), "emissive") {
		t.Errorf("writing an infinite emissive: %v, want an error naming it", err)
	}
}
