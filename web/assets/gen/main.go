// Command gen builds the web viewer's browser program (web/browser) for
// js/wasm, compresses it into ../static/simvis.wasm.gz, and copies the Go
// toolchain's wasm_exec.js beside it: the files package assets embeds
// that are made, not written. Run by `go generate ./web/assets` (make).
package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "web/assets/gen:", err)
		os.Exit(1)
	}
}

func run() error {
	goBin := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if os.Getenv("GOROOT") == "" {
		goBin = "go"
	}
	root, err := exec.Command(goBin, "env", "GOROOT").Output()
	if err != nil {
		return err
	}
	static := "static"
	tmp, err := os.MkdirTemp("", "simvis-wasm-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	wasm := filepath.Join(tmp, "simvis.wasm")
	// -trimpath: no paths of this machine in the program; -s -w: no
	// symbol table nor DWARF, a third of the size.
	build := exec.Command(goBin, "build", "-trimpath", "-ldflags=-s -w", "-o", wasm, "github.com/simvis/simvis/web/browser")
	build.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building the browser program: %w", err)
	}
	raw, err := os.ReadFile(wasm)
	if err != nil {
		return err
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(raw)
	if err := zw.Close(); err != nil {
		return err
	}
	if err := writeIfChanged(filepath.Join(static, "simvis.wasm.gz"), gz.Bytes()); err != nil {
		return err
	}
	glue, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(root)), "lib", "wasm", "wasm_exec.js"))
	if err != nil {
		return err
	}
	return writeIfChanged(filepath.Join(static, "wasm_exec.js"), glue)
}

// writeIfChanged leaves a file with the same content alone, so that the
// embedding packages are not rebuilt for nothing.
func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	return os.WriteFile(path, data, 0o644)
}
