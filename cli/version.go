package cli

import (
	"flag"
	"fmt"
	"io"
	"runtime/debug"
)

// versionInfo is what `simvis version` prints, from the build information
// the Go toolchain embeds in the binary.
type versionInfo struct {
	Module   string `json:"module"`
	Version  string `json:"version"`            // the module version, "(devel)" for a build from a checkout
	Revision string `json:"revision,omitempty"` // VCS revision the binary was built from
	Time     string `json:"time,omitempty"`     // the revision's commit time
	Modified bool   `json:"modified,omitempty"` // built with uncommitted changes
	Go       string `json:"go"`
}

// revision is the VCS revision for builds without Go's VCS stamping (a
// git worktree, GOFLAGS=-buildvcs=false): the Makefile sets it with
// -ldflags "-X github.com/simvis/simvis/cli.revision=...".
var revision string

// readVersion is debug.ReadBuildInfo; tests see through it.
var readVersion = debug.ReadBuildInfo

func buildVersion() versionInfo {
	v := versionInfo{Module: "github.com/simvis/simvis", Version: "unknown", Revision: revision}
	bi, ok := readVersion()
	if !ok {
		return v
	}
	v.Go = bi.GoVersion
	if bi.Main.Path != "" {
		v.Module = bi.Main.Path
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

func (v versionInfo) String() string {
	s := fmt.Sprintf("simvis %s (module %s", v.Version, v.Module)
	if v.Revision != "" {
		s += ", revision " + v.Revision
		if v.Time != "" {
			s += " of " + v.Time
		}
		if v.Modified {
			s += ", with uncommitted changes"
		}
	}
	if v.Go != "" {
		s += ", " + v.Go
	}
	return s + ")"
}

func versionCommand() *command {
	var asJSON bool
	return &command{
		name: "version", args: "[--json]",
		short: "print the module version and the revision the binary was built from",
		summary: "Print simvis' module version (\"(devel)\" for a build from a checkout), the VCS revision\n" +
			"and commit time it was built from (and whether the checkout had uncommitted changes),\n" +
			"and the Go version, from the build information Go embeds in the binary.",
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&asJSON, "json", false, "print JSON instead of text")
		},
		run: func(fs *flag.FlagSet, args []string, w io.Writer) error {
			if len(args) > 0 {
				return usagef("unexpected argument %q", args[0])
			}
			v := buildVersion()
			if asJSON {
				return writeJSON(w, v)
			}
			_, err := fmt.Fprintln(w, v)
			return err
		},
	}
}
