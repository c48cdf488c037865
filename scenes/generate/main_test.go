package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
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
