package ipc_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/simvis/simvis/ipc"
)

// ReadLoggedChunk serves a regular file inside the directory, or up to
// ipc.MaxUp levels above it through leading "..", in chunks that add up to
// it, and refuses, even for a path a record might list: more levels up,
// ".." after a name, absolute paths, links out of the directory (to a file
// or through a directory) or out of the ancestor a "../" path names,
// FIFOs (at once), directories, negative offsets. No error names the
// host's own paths.
func TestReadLoggedChunk(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "r")
	dir := filepath.Join(root, "scene")
	outside := filepath.Join(root, "outside")
	beyond := filepath.Join(base, "beyond")
	for _, d := range []string{dir, filepath.Join(dir, "sub"), outside, beyond} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), 200) // 3200 bytes
	os.WriteFile(filepath.Join(dir, "sub", "model.bin"), data, 0o644)
	os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644)
	os.WriteFile(filepath.Join(beyond, "secret"), []byte("beyond"), 0o644)
	os.Symlink(filepath.Join(beyond, "secret"), filepath.Join(outside, "escape"))
	os.Symlink("../../beyond", filepath.Join(outside, "escape-dir"))
	links := map[string]string{
		"out.bin":      filepath.Join(outside, "secret"),
		"outdir":       outside,
		"rel-out.bin":  "../outside/secret",
		"in.bin":       "sub/model.bin",
		"sub/up.bin":   "../sub/model.bin",
		"loop-a":       "loop-b",
		"loop-b":       "loop-a",
		"dangling.bin": "nothing-here",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}

	// Chunks at every offset add up to the file, each telling its size.
	for _, rel := range []string{"sub/model.bin", "in.bin", "sub/up.bin", "sub/../sub/model.bin"} {
		var got []byte
		for off := int64(0); ; {
			chunk, size, err := ipc.ReadLoggedChunk(dir, rel, off, 1000)
			if err != nil || size != int64(len(data)) {
				t.Fatalf("%s at %d: size %d, %v", rel, off, size, err)
			}
			if len(chunk) == 0 {
				break
			}
			got = append(got, chunk...)
			off += int64(len(chunk))
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%s: %d bytes in chunks, want the %d of the file", rel, len(got), len(data))
		}
	}
	if chunk, size, err := ipc.ReadLoggedChunk(dir, "sub/model.bin", 1<<40, 1000); err != nil || len(chunk) != 0 || size != int64(len(data)) {
		t.Errorf("past the end: %d bytes, size %d, %v", len(chunk), size, err)
	}
	// A scene directory reached through a link is fine.
	os.Symlink(dir, filepath.Join(root, "scene-link"))
	if _, _, err := ipc.ReadLoggedChunk(filepath.Join(root, "scene-link"), "sub/model.bin", 0, 10); err != nil {
		t.Errorf("through a linked scene directory: %v", err)
	}

	// A file one level up (a record of the host's own commands lists such
	// paths), also spelt through a name and back.
	for _, rel := range []string{"../outside/secret", "sub/../../outside/secret", "../scene/../outside/secret"} {
		if chunk, size, err := ipc.ReadLoggedChunk(dir, rel, 0, 1000); err != nil || string(chunk) != "secret" || size != 6 {
			t.Errorf("%s: %q, %d, %v", rel, chunk, size, err)
		}
	}
	if _, _, err := ipc.ReadLoggedChunk("/", "../etc/passwd", 0, 1000); err == nil || !strings.Contains(err.Error(), "leaves") {
		t.Errorf("above /: %v", err)
	}
	if _, _, err := ipc.ReadLoggedChunk("scene", "../outside/secret", 0, 1000); err == nil || !strings.Contains(err.Error(), "leaves") {
		t.Errorf("above a relative directory: %v", err)
	}

	for rel, want := range map[string]string{
		"../../../../../etc/passwd":    "climbs 5 levels above the record's directory, at most 4",
		"../outside/escape":            "leads out of the directory 1 level(s) above the scene's",
		"../outside/escape-dir/secret": "leads out of the directory 1 level(s) above the scene's",
		"../":                          "names a directory",
		"..":                           "names a directory",
		"x\x00y":                       "NUL",
		"/etc/passwd":                  "absolute",
		"":                             "empty",
		"out.bin":                      "leads out",
		"rel-out.bin":                  "leads out",
		"outdir/secret":                "leads out",
		"loop-a":                       "not found",
		"dangling.bin":                 "not found",
		"missing.bin":                  "not found",
		"fifo":                         "not a regular file",
		"sub":                          "not a regular file",
	} {
		start := time.Now()
		chunk, _, err := ipc.ReadLoggedChunk(dir, rel, 0, 1000)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %q, %v; want an error saying %q", rel, chunk, err, want)
			continue
		}
		if strings.Contains(err.Error(), root) {
			t.Errorf("%q: the error names the host's paths: %v", rel, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%q: refused after %v", rel, d)
		}
	}
	if _, _, err := ipc.ReadLoggedChunk(dir, "sub/model.bin", -1, 1000); err == nil {
		t.Error("a negative offset was read")
	}
}
