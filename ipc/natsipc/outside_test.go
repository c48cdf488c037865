package natsipc_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/ipc/natsipc"
)

// copyTree copies the files under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// scenes/arm's world is ../quickstart/world.gltf: over NATS, a mirror that
// fetches files shows it, and the URDF arm standing in it, named from a
// third directory too (../arm/urdf/arm.urdf: its meshes and package.xml
// are listed as "../" paths as well), with the host's world poses and
// meshes, from the files the change log lists and the host serves. A file
// beside them that no command loaded, and a path further out, are
// refused; so is a request naming the world.
func TestMirrorFetchesFilesAboveTheScene(t *testing.T) {
	srv := startServer(t, natsipc.ServerOptions{})
	scenes := filepath.Join(t.TempDir(), "scenes")
	for _, d := range []string{"arm", "quickstart"} {
		copyTree(t, filepath.Join("..", "..", "scenes", d), filepath.Join(scenes, d))
	}
	hostDir := filepath.Join(scenes, "view")
	// scenes/arm's world and arm, without its sensors (which this package
	// does not link), from a directory of its own.
	sceneFile := filepath.Join(hostDir, "scene.xml")
	os.MkdirAll(hostDir, 0o755)
	os.WriteFile(sceneFile, []byte(`<scene>
  <part file="../quickstart/world.gltf" name="WORLD"/>
  <part file="../arm/urdf/arm.urdf" name="ARM" insert_at="WORLD" pose_offset="0.5 0.5 0 0 0 -20"/>
</scene>`), 0o644)
	s := serveFile(t, srv, sceneFile)
	h, pause := s.host, s.pause

	var cur ipc.LogCursor
	recs, err := h.Region.ReadLog(&cur)
	if err != nil || len(recs) != 2 || len(recs[0].Files) != 1 || recs[0].Files[0].Path != "../quickstart/world.gltf" {
		t.Fatalf("log %+v %v", recs, err)
	}
	var listed []string
	for _, f := range recs[1].Files {
		listed = append(listed, f.Path)
	}
	if got := strings.Join(listed, " "); !strings.HasPrefix(got, "../arm/urdf/arm.urdf ../arm/package.xml ../arm/meshes/") || len(listed) != 2+8 {
		t.Errorf("the URDF's record lists %q", got)
	}

	c, m := fetchingMirror(t, srv)
	if _, err := c.Request(`<part file="../quickstart/world.gltf" name="WORLD2"/>`); err == nil || !strings.Contains(err.Error(), "leaves the scene's directory") {
		t.Errorf("a request naming ../quickstart/world.gltf: %v", err)
	}

	conn, err := natsipc.Dial(srv.URL() + "/test")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	want, _ := os.ReadFile(filepath.Join(scenes, "quickstart", "world.gltf"))
	if data, err := conn.FetchFile(hostDir, "../quickstart/world.gltf"); err != nil || string(data) != string(want) {
		t.Errorf("../quickstart/world.gltf: %d bytes, %v", len(data), err)
	}
	for _, p := range []string{"../quickstart/robot.gltf", "../quickstart/scene.xml", "../../../../../../../etc/passwd", "../arm/../quickstart/world.gltf"} {
		want := p + " in " + hostDir + " is not a file the scene's logged commands loaded"
		if _, err := conn.FetchFile(hostDir, p); err == nil || err.Error() != want {
			t.Errorf("fetch %s: %v, want %q", p, err, want)
		}
	}
	pause()
	if len(m.Scene().Parts()) != len(h.Scene.Parts()) {
		t.Fatalf("replica parts %d, host %d", len(m.Scene().Parts()), len(h.Scene.Parts()))
	}
	for _, p := range m.Scene().Parts() {
		if strings.HasPrefix(p.File, scenes) {
			t.Errorf("part %s read from the host's directory: %s", p.Name, p.File)
		}
	}
	for _, frame := range h.Scene.FrameNames() {
		if want, got := testkit.WorldPose(t, h.Scene, frame), testkit.WorldPose(t, m.Scene(), frame); want != got {
			t.Errorf("%s: host %v, replica %v", frame, want, got)
		}
	}
	if want, got := h.Scene.Totals(), m.Scene().Totals(); want != got || want.Triangles == 0 {
		t.Errorf("replica totals %+v, host %+v", got, want)
	}
}

// A hostile host (or anyone who may publish to its change log) cannot make
// a mirror that fetches files write or read outside its cache: a record
// whose file list climbs more than ipc.MaxUp levels, or whose directory
// has no names to lay a "../" path out under, stops the mirror with an
// error naming the path, and nothing is fetched for it.
func TestMirrorRefusesHostileFileList(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		dir, files, want string
	}{
		{"/scene", `[{"path":"../../../../../etc/passwd","sha256":"` + sum + `"}]`, `"../../../../../etc/passwd" climbs 5 levels above the record's directory, at most 4`},
		{"/scene", `[{"path":"../x\u0000y","sha256":"` + sum + `"}]`, `holds a NUL byte`},
		{"/", `[{"path":"../etc/passwd","sha256":"` + sum + `"}]`, `record directory "/" has fewer than 1 levels above it`},
		{"/a/../..", `[{"path":"../x.gltf","sha256":"` + sum + `"}]`, `record directory "/a/../.." is not a clean absolute path`},
	} {
		t.Run(tc.want, func(t *testing.T) {
			srv := startServer(t, natsipc.ServerOptions{})
			serve(t, srv, natsipc.Limits{}, nil)
			c, m := fetchingMirror(t, srv)
			js := jetStreamOf(t, srv.URL())
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			msg := nats.NewMsg("simvis.test.log")
			msg.Header.Set("Simvis-Epoch", fmt.Sprint(c.Epoch()))
			msg.Header.Set("Simvis-Seq", fmt.Sprint(m.Applied()+1))
			msg.Header.Set("Simvis-Source", "forged")
			msg.Header.Set("Simvis-Dir", tc.dir)
			msg.Header.Set("Simvis-Files", tc.files)
			msg.Data = []byte(`<part file="x.gltf" name="FORGED"/>`)
			if _, err := js.PublishMsg(ctx, msg); err != nil {
				t.Skipf("this server refuses a forged record: %v", err)
			}
			var serr error
			for deadline := time.Now().Add(10 * time.Second); serr == nil && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				serr = m.Sync()
			}
			if serr == nil || !strings.Contains(serr.Error(), tc.want) {
				t.Fatalf("Sync: %v, want an error saying %q", serr, tc.want)
			}
			if _, ok := m.Scene().Element("FORGED"); ok {
				t.Error("the forged command ran")
			}
		})
	}
}
