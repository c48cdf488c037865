// Command simvis-door is the simvis command line plus the example element
// type "door": the way to ship simvis with your own elements.
//
//	go run ./examples/door/cmd/simvis-door capture scenes/door/scene.xml -o out/door --set LAB_DOOR.open=1
package main

import (
	"os"

	"github.com/simvis/simvis/cli"
	_ "github.com/simvis/simvis/examples/door"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) }
