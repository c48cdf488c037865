// Package assets holds the web viewer's page: its HTML and script,
// written here, and two files `go generate` puts beside them before the
// build embeds them (make does it): the browser program compiled to
// WebAssembly (simvis.wasm.gz, from web/browser) and the Go toolchain's
// wasm_exec.js that starts it. A binary built without them serves a page
// that says so.
package assets

//go:generate go run ./gen

import (
	"embed"
	"io/fs"
)

//go:embed static
var files embed.FS

// Program is the name of the compressed WebAssembly program in FS.
const Program = "simvis.wasm.gz"

// FS returns the page's files.
func FS() fs.FS {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embedded directory is there by construction
	}
	return sub
}

// Built reports whether the browser program was generated into this build.
func Built() bool {
	_, err := fs.Stat(FS(), Program)
	return err == nil
}
