package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A URDF part finds package:// meshes through --package-path (repeatable)
// and $ROS_PACKAGE_PATH, and frames lists its links.
func TestURDFPackagePath(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("pkgs/wheels/m/w.stl", "solid w\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid w\n")
	write("robot/r.urdf", `<robot name="r">
  <link name="base"/>
  <link name="wheel"><visual><geometry><mesh filename="package://wheels/m/w.stl"/></geometry></visual></link>
  <joint name="spin" type="continuous"><parent link="base"/><child link="wheel"/><origin xyz="0 0 0.5"/><axis xyz="0 1 0"/></joint>
</robot>
`)
	write("robot/scene.xml", `<scene><part file="r.urdf" name="R" pose_offset="1 0 0 0 0 0"/></scene>`)
	scene := filepath.Join(dir, "robot/scene.xml")
	t.Setenv("ROS_PACKAGE_PATH", "")
	code, _, stderr := simvis(t, "frames", scene)
	if code == 0 || !strings.Contains(stderr, `unknown package "wheels": not the URDF's own package and the package path is empty (set ROS_PACKAGE_PATH or give --package-path DIR)`) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, stdout, stderr := simvis(t, "frames", "--json", "--package-path", filepath.Join(dir, "none"), "--package-path", filepath.Join(dir, "pkgs"), "--set", "R/spin.position=0.5", scene)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var frames []struct {
		Frame  string        `json:"frame"`
		Matrix [4][4]float64 `json:"matrix"`
	}
	if err := json.Unmarshal([]byte(stdout), &frames); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	got := map[string][4][4]float64{}
	for _, f := range frames {
		got[f.Frame] = f.Matrix
	}
	if w, ok := got["R/wheel"]; !ok || w[0][3] != 1 || w[2][3] != 0.5 || w[0][2] == 0 {
		t.Fatalf("frames: %s", stdout)
	}
	t.Setenv("ROS_PACKAGE_PATH", filepath.Join(dir, "pkgs"))
	if code, _, stderr := simvis(t, "frames", scene); code != 0 {
		t.Fatalf("with ROS_PACKAGE_PATH: exit %d: %s", code, stderr)
	}
}
