package natsipc_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/simvis/simvis/ipc/natsipc"
)

// A file a logged command loaded that is then replaced by a FIFO, a
// directory or a link out of the scene's directory is refused at once
// (issue 12: opening a FIFO stalled the file handler for good), and the
// handler goes on serving files.
func TestFileServerRefusesNonRegular(t *testing.T) {
	srv := startServer(t, natsipc.ServerOptions{})
	s := serve(t, srv, natsipc.Limits{}, nil)
	dir := filepath.Dir(s.host.Scene.Parts()[0].File)
	world := filepath.Join(dir, "world.gltf")
	want, err := os.ReadFile(filepath.Join(dir, "robot.gltf"))
	if err != nil {
		t.Fatal(err)
	}

	conn, err := natsipc.Dial(srv.URL() + "/test")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, tc := range []struct {
		make func() error
		want string
	}{
		{func() error { return syscall.Mkfifo(world, 0o644) }, "world.gltf: not a regular file (a named pipe)"},
		{func() error { return os.Mkdir(world, 0o755) }, "world.gltf: not a regular file (a directory)"},
		{func() error { return os.Symlink("/dev/zero", world) }, `"world.gltf" leads out of the scene's directory`},
		{func() error { return syscall.Mkfifo(world, 0o644) }, "world.gltf: not a regular file (a named pipe)"},
	} {
		os.RemoveAll(world)
		if err := tc.make(); err != nil {
			t.Skipf("cannot make it here: %v", err)
		}
		if _, err := conn.FetchFile(dir, "world.gltf"); err == nil || err.Error() != tc.want {
			t.Errorf("fetch: %v, want %q", err, tc.want)
		}
		// Still serving.
		if data, err := conn.FetchFile(dir, "robot.gltf"); err != nil || string(data) != string(want) {
			t.Fatalf("after %q: robot.gltf %d bytes, %v", tc.want, len(data), err)
		}
	}
}
