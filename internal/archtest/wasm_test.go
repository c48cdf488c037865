package archtest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The data model and the web viewer's client side build for WebAssembly
// (GOOS=js GOARCH=wasm): the page's program (web/browser) holds the same
// scene graph the hosts hold and mirrors them with ipc (DESIGN.md, "Web
// viewer"). Cgo-only code stays behind build tags; this fails when it leaks
// into those packages. The page's program itself is vetted here too: the
// host's `go vet ./...` does not see it (it builds for js only).
func TestDataModelBuildsForWasm(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on the PATH")
	}
	for _, args := range [][]string{
		{"build", "-o", os.DevNull, "./models/...", "./scene/...", "./elements/...", "./ipc", "./web/client", "./viewer/orbit", "./viewer/helpers", "./viewer/layering"},
		{"vet", "./web/browser"},
	} {
		cmd := exec.Command(goTool, args...)
		cmd.Dir = "../.."
		cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("GOOS=js GOARCH=wasm go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
