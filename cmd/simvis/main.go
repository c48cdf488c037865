// Command simvis builds scenes from XML scene files, inspects them, renders
// their simulated sensors headless, and exports and queries them. Run
// 'simvis help' for the commands; the work is done by package cli.
package main

import (
	"os"

	"github.com/simvis/simvis/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) }
