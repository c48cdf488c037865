package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simvis/simvis/record"
)

// A URDF whose meshes come from a package found through --package-path,
// outside the scene's folder, records with its package (the recording
// notes where, simvis_packages) and plays without any search path: the
// player rebuilds the robot from the recording alone, and takes no
// --package-path, which could only reach outside it.
func TestPlayURDFPackagesFromTheRecording(t *testing.T) {
	dir := t.TempDir()
	stl := "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid t\n"
	files := map[string]string{
		"ws/tiny_meshes/t.stl": stl,
		"scene/tiny.urdf": `<robot name="tiny"><link name="base"><visual><geometry><mesh filename="package://tiny_meshes/t.stl"/></geometry></visual></link>` +
			`<link name="top"/><joint name="lift" type="prismatic"><parent link="base"/><child link="top"/><axis xyz="0 0 1"/><limit lower="0" upper="1" effort="1" velocity="1"/></joint></robot>`,
		"scene/scene.xml": `<scene><part file="tiny.urdf" name="T"/><sensor type="laser" name="L" insert_at="T/top" pose_offset="0 0 1 0 0 0"/></scene>`,
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rec := filepath.Join(dir, "r.mcap")
	if code, _, errOut := simvis(t, "capture", filepath.Join(dir, "scene/scene.xml"), "--mcap", rec, "--frames", "2",
		"--sweep", "T/lift.position=0:0.5", "--package-path", filepath.Join(dir, "ws")); code != 0 {
		t.Fatalf("capture: %s", errOut)
	}
	code, out, errOut := simvis(t, "play", rec, "--shm", filepath.Join(dir, "region"), "--no-nats", "--fast")
	if code != 0 || !strings.Contains(out, "1 elements, 1 sensors") || !strings.Contains(out, "played to") {
		t.Fatalf("play without a package path: %d %q %q", code, out, errOut)
	}
	code, _, errOut = simvis(t, "play", rec, "--no-nats", "--package-path", filepath.Join(dir, "ws"))
	if code != 2 || !strings.Contains(errOut, "finds a URDF's packages in the recording only") {
		t.Errorf("play --package-path: %d %q", code, errOut)
	}
	// The recording says where its package lies among its attachments.
	r, err := record.ReadWith(rec, nil, record.ReadOptions{})
	if err != nil || len(r.PackagePath) != 1 || r.PackagePath[0] != "ws" {
		t.Errorf("the recorded package path %q (%v), want [ws]", r.PackagePath, err)
	}
}
