package ipc_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simvis/simvis/ipc"
)

// A host's package search path is its own (HostOptions.PackagePath), not
// the process's: two hosts of one process find a URDF's package:// mesh
// through theirs or not at all, and the host lists the mesh among the
// files its command loaded where it lies inside the scene's directory.
func TestHostPackagePathIsItsOwn(t *testing.T) {
	dir := t.TempDir()
	pkgs := filepath.Join(dir, "ws")
	if err := os.MkdirAll(filepath.Join(pkgs, "tiny_meshes"), 0o755); err != nil {
		t.Fatal(err)
	}
	stl := "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid t\n"
	urdf := `<robot name="tiny"><link name="base"><visual><geometry><mesh filename="package://tiny_meshes/t.stl"/></geometry></visual></link></robot>`
	scene := `<scene><part file="tiny.urdf" name="T"/></scene>`
	for name, text := range map[string]string{"ws/tiny_meshes/t.stl": stl, "tiny.urdf": urdf, "scene.xml": scene} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h, err := ipc.NewHost(filepath.Join(dir, "r1"), filepath.Join(dir, "scene.xml"), ipc.HostOptions{PackagePath: []string{pkgs}})
	if err != nil {
		t.Fatalf("with the package path: %v", err)
	}
	defer h.Close()
	recs, err := h.Region.ReadLog(&ipc.LogCursor{})
	var files []string
	for _, f := range recs[0].Files {
		files = append(files, f.Path)
	}
	if err != nil || !strings.Contains(strings.Join(files, " "), "ws/tiny_meshes/t.stl") {
		t.Errorf("the part's logged files %v (%v), want the mesh found through the package path", files, err)
	}
	_, err = ipc.NewHost(filepath.Join(dir, "r2"), filepath.Join(dir, "scene.xml"), ipc.HostOptions{PackagePath: []string{filepath.Join(dir, "elsewhere")}})
	if err == nil || !strings.Contains(err.Error(), `unknown package "tiny_meshes"`) {
		t.Errorf("another host of the process, another path: %v", err)
	}
}
