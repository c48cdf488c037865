package archtest

import (
	"os"
	"os/exec"
	"testing"
)

// The data model builds for WebAssembly (GOOS=js GOARCH=wasm): a browser
// program can hold the same scene graph the hosts hold (DESIGN.md, "Web
// viewer"). Cgo-only code stays behind build tags; this fails when it leaks
// into models, scene or elements.
func TestDataModelBuildsForWasm(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on the PATH")
	}
	cmd := exec.Command(goTool, "build", "-o", os.DevNull, "./models/...", "./scene/...", "./elements/...")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("GOOS=js GOARCH=wasm go build ./models/... ./scene/... ./elements/...: %v\n%s", err, out)
	}
}
