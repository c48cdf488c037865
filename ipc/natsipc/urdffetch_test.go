package natsipc_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/ipc/natsipc"
)

// urdfPackage writes a small ROS package holding a URDF robot whose
// meshes are an STL named by package://, an OBJ with its MTL named by a
// relative path and a Collada file, and a scene placing it; it returns the
// scene file.
func urdfPackage(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("package.xml", `<package format="3"><name>fetch_bot</name><version>0.0.1</version></package>`)
	write("scene.xml", `<scene>
  <part file="urdf/bot.urdf" name="BOT" insert_at="ROOT" pose_offset="1 2 0 0 0 30"/>
</scene>`)
	write("urdf/bot.urdf", `<robot name="fetch_bot">
  <link name="base"><visual><geometry><mesh filename="package://fetch_bot/meshes/body.stl" scale="2 1 1"/></geometry></visual></link>
  <link name="arm"><visual><geometry><mesh filename="../meshes/arm.obj"/></geometry></visual></link>
  <link name="tool"><visual><geometry><mesh filename="package://fetch_bot/meshes/tool.dae"/></geometry></visual></link>
  <joint name="lift" type="prismatic"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.5"/><axis xyz="0 0 1"/><limit lower="0" upper="1"/></joint>
  <joint name="wrist" type="revolute"><parent link="arm"/><child link="tool"/><origin xyz="0.3 0 0" rpy="0 0.2 0"/><axis xyz="0 1 0"/><limit lower="-2" upper="2"/></joint>
</robot>`)
	write("meshes/body.stl", "solid body\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid body\n")
	write("meshes/arm.obj", "mtllib arm.mtl\nv 0 0 0\nv 0.2 0 0\nv 0 0.2 0\nv 0 0 0.2\nusemtl red\nf 1 2 3\nf 1 2 4\n")
	write("meshes/arm.mtl", "newmtl red\nKd 0.9 0.1 0.1\n")
	write("meshes/tool.dae", `<?xml version="1.0"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit meter="0.01"/><up_axis>Y_UP</up_axis></asset>
  <library_geometries><geometry id="g"><mesh>
    <source id="p"><float_array id="pa" count="9">0 0 0 10 0 0 0 10 0</float_array>
      <technique_common><accessor source="#pa" count="3" stride="3"><param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/></accessor></technique_common></source>
    <vertices id="v"><input semantic="POSITION" source="#p"/></vertices>
    <triangles count="1"><input semantic="VERTEX" source="#v" offset="0"/><p>0 1 2</p></triangles>
  </mesh></geometry></library_geometries>
  <library_visual_scenes><visual_scene id="s"><node id="n"><instance_geometry url="#g"/></node></visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#s"/></scene>
</COLLADA>`)
	write("meshes/unused.stl", "solid unused\nendsolid unused\n")
	return filepath.Join(dir, "scene.xml")
}

// A mirror that fetches files rebuilds a URDF part from the host's files
// alone: the URDF, its package:// STL, its OBJ and MTL, its Collada mesh
// and the package.xml that makes package://fetch_bot the URDF's own
// package are listed in the change log with their hashes and served; the
// replica's links sit where the host's do, with the same geometry. Files
// of the package that no command loaded are not served.
func TestMirrorFetchesURDF(t *testing.T) {
	srv := startServer(t, natsipc.ServerOptions{})
	sceneFile := urdfPackage(t)
	hostDir := filepath.Dir(sceneFile)
	s := serveFile(t, srv, sceneFile)
	h, pause := s.host, s.pause

	var cur ipc.LogCursor
	recs, err := h.Region.ReadLog(&cur)
	if err != nil || len(recs) != 1 {
		t.Fatalf("log %v %v", recs, err)
	}
	var listed []string
	for _, f := range recs[0].Files {
		listed = append(listed, f.Path)
	}
	if got, want := strings.Join(listed, " "), "urdf/bot.urdf package.xml meshes/body.stl meshes/arm.obj meshes/arm.mtl meshes/tool.dae"; got != want {
		t.Errorf("files listed %q, want %q", got, want)
	}

	c, m := fetchingMirror(t, srv)
	// A request loading the same robot again, confined to the scene's
	// directory: its files are listed and fetched the same way.
	if _, err := c.Request(`<part file="urdf/bot.urdf" name="BOT2" insert_at="ROOT" pose_offset="-1 0 0 0 0 0"/>`); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(m.Scene().Parts()) < 2 && time.Now().Before(deadline) {
		if err := m.Sync(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	conn, err := natsipc.Dial(srv.URL() + "/test")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if data, err := conn.FetchFile(hostDir, "package.xml"); err != nil || !strings.Contains(string(data), "fetch_bot") {
		t.Errorf("package.xml: %q, %v", data, err)
	}
	for _, p := range []string{"meshes/unused.stl", "scene.xml", "urdf/../meshes/body.stl"} {
		want := p + " in " + hostDir + " is not a file the scene's logged commands loaded"
		if _, err := conn.FetchFile(hostDir, p); err == nil || err.Error() != want {
			t.Errorf("fetch %s: %v, want %q", p, err, want)
		}
	}
	pause()
	if len(m.Scene().Parts()) != 2 {
		t.Fatalf("replica parts %d, want 2", len(m.Scene().Parts()))
	}
	for _, p := range m.Scene().Parts() {
		if strings.HasPrefix(p.File, hostDir) {
			t.Errorf("part %s read from the host's directory %s", p.Name, p.File)
		}
	}
	for _, frame := range []string{"BOT/base", "BOT/arm", "BOT/tool", "BOT2/tool"} {
		if want, got := testkit.WorldPose(t, h.Scene, frame), testkit.WorldPose(t, m.Scene(), frame); want != got {
			t.Errorf("%s: host %v, replica %v", frame, want, got)
		}
	}
	if want, got := h.Scene.Totals(), m.Scene().Totals(); want.Triangles != got.Triangles || want.Vertices != got.Vertices || want.Nodes != got.Nodes || want.Triangles != 2*(1+2+1) {
		t.Errorf("replica totals %+v, host %+v (want %d triangles)", got, want, 2*(1+2+1))
	}

}
