// Package cli is the simvis command line. cmd/simvis is a thin main around
// it; a program that registers its own element or sensor types can offer the
// same commands with them:
//
//	import (
//		"os"
//		_ "example.org/mysim/door" // registers element type "door"
//		"github.com/simvis/simvis/cli"
//	)
//
//	func main() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) }
package cli
