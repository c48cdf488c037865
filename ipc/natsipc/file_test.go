package natsipc_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/simvis/simvis/ipc/natsipc"
)

// A FIFO, a device or a directory in a scene directory is refused at once
// (issue 12: opening a FIFO stalled the file handler for good), and the
// handler goes on serving files.
func TestFileServerRefusesNonRegular(t *testing.T) {
	srv := startServer(t, natsipc.ServerOptions{})
	s := serve(t, srv, natsipc.Limits{}, nil)
	dir := filepath.Dir(s.host.Scene.Parts()[0].File)
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.gltf"), 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	os.Mkdir(filepath.Join(dir, "sub.gltf"), 0o755)
	os.Symlink("pipe.gltf", filepath.Join(dir, "link.gltf"))
	os.Symlink("/dev/zero", filepath.Join(dir, "zero.bin"))
	want, err := os.ReadFile(filepath.Join(dir, "robot.gltf"))
	if err != nil {
		t.Fatal(err)
	}

	conn, err := natsipc.Dial(srv.URL() + "/test")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, tc := range []struct{ path, want string }{
		{"pipe.gltf", "pipe.gltf: not a regular file (a named pipe)"},
		{"link.gltf", "link.gltf: not a regular file (a named pipe)"},
		{"sub.gltf", "sub.gltf: not a regular file (a directory)"},
		{"zero.bin", `"zero.bin" leads out of the scene's directory`},
		{"pipe.gltf", "pipe.gltf: not a regular file (a named pipe)"},
	} {
		if _, err := conn.FetchFile(dir, tc.path); err == nil || err.Error() != tc.want {
			t.Errorf("fetch %s: %v, want %q", tc.path, err, tc.want)
		}
		// Still serving.
		if data, err := conn.FetchFile(dir, "robot.gltf"); err != nil || string(data) != string(want) {
			t.Fatalf("after fetching %s: robot.gltf %d bytes, %v", tc.path, len(data), err)
		}
	}
}
