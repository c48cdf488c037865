package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// DebianPython returns Debian's python3, which sees Debian's Python
// packages (the python3 on PATH may not), or skips the test where it or
// module (from the Debian package pkg, which `make deps` installs) is
// missing: the independent readers the tests check outputs with.
func DebianPython(t testing.TB, module, pkg string) string {
	t.Helper()
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skipf("no %s (Debian python3 with %s, `make deps` installs it): %v", py, pkg, err)
	}
	if out, err := exec.Command(py, "-c", "import "+module).CombinedOutput(); err != nil {
		t.Skipf("%s has no %s (Debian package %s, `make deps` installs it): %v %s", py, module, pkg, err, out)
	}
	return py
}

// RepoRoot is the repository's top directory, found from this file's path
// so that tests in any package can name files from the root.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Node returns a command running node on script with args, its modules
// resolved from internal/jstest/node_modules (the npm packages pinned in
// internal/jstest/package.json, which `make deps` installs), or skips the
// test where node or those modules are missing.
func Node(t testing.TB, script string, args ...string) *exec.Cmd {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("no node on PATH (`make deps` installs nodejs): %v", err)
	}
	modules := filepath.Join(RepoRoot(), "internal", "jstest", "node_modules")
	if _, err := os.Stat(filepath.Join(modules, ".package-lock.json")); err != nil {
		t.Skipf("npm packages missing in %s (`make deps` installs them): %v", modules, err)
	}
	cmd := exec.Command(node, append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	return cmd
}
