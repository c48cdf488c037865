package archtest

import (
	"fmt"
	"sort"
	"strings"
)

// A Rule forbids imports: no package matching From, unless it matches
// Except, imports a package matching To. Patterns name packages by their
// path in the module ("scene"), a trailing "/..." taking the packages
// below too ("ipc/..." is ipc and ipc/natsipc), "..." every package of
// the module, "!P" leaving out what P matched; another module's path ("github.com/nats-io/...") names what it
// provides, and "C" is cgo.
type Rule struct {
	Says   string // the rule in words, as docs/packages.md lists it
	From   []string
	Except []string
	To     []string
}

// Rules are the dependency directions of DESIGN.md that hold today. When
// a package moves or appears, adjust the patterns here; a pattern that
// matches no package fails the test, so a rename cannot void a rule
// silently.
var Rules = []Rule{
	{
		Says: "`models` (and its format readers) is the bottom: it imports no other simvis package",
		From: []string{"models/..."},
		To:   []string{"...", "!models/..."},
	},
	{
		Says: "`scene` imports only `models`: nothing of elements, sensors, transports, recordings, viewers, the command line or the GL context",
		From: []string{"scene/..."},
		To:   []string{"...", "!models/...", "!scene/..."},
	},
	{
		Says: "`elements` builds on `scene` and `models` alone",
		From: []string{"elements/..."},
		To:   []string{"...", "!models/...", "!scene/..."},
	},
	{
		Says: "Sensors know no transport, recording, viewer or command line",
		From: []string{"sensors/..."},
		To:   []string{"ipc/...", "record/...", "viewer/...", "cli/..."},
	},
	{
		Says: "Transports (`ipc/...`) know no recording, viewer or command line",
		From: []string{"ipc/..."},
		To:   []string{"record/...", "viewer/...", "cli/..."},
	},
	{
		Says: "The shared-memory `ipc` and `ipc/natsipc` carry bytes: they import no sensors",
		From: []string{"ipc", "ipc/natsipc"},
		To:   []string{"sensors/..."},
	},
	{
		Says: "`record` knows no transport, viewer or command line",
		From: []string{"record/..."},
		To:   []string{"ipc/...", "viewer/...", "cli/..."},
	},
	{
		Says: "`viewer` knows no transport, recording or command line",
		From: []string{"viewer/..."},
		To:   []string{"ipc/...", "record/...", "cli/..."},
	},
	{
		Says: "The web viewer's server (`web/...`) is a transport: it knows no sensors, recording, desktop viewer, GL context or command line; its browser program mirrors with `ipc` and draws with g3n",
		From: []string{"web/..."},
		To:   []string{"sensors/...", "record/...", "viewer", "internal/gpu", "cli/..."},
	},
	{
		Says: "`live` runs scenes over transports, recordings, sensors and the viewer: none of those imports it",
		From: []string{"models/...", "scene/...", "elements/...", "sensors/...", "ipc/...", "web/...", "record/...", "viewer/..."},
		To:   []string{"live/..."},
	},
	{
		Says:   "Nothing imports `cli` but the commands (`cmd/...`, `examples/door/cmd/...`)",
		From:   []string{"..."},
		Except: []string{"cmd/...", "examples/door/cmd/...", "cli/..."},
		To:     []string{"cli/..."},
	},
	{
		Says:   "Only `ipc/natsipc` and `cli` import NATS",
		From:   []string{"..."},
		Except: []string{"ipc/natsipc", "cli"},
		To:     []string{"github.com/nats-io/..."},
	},
	{
		Says:   "Cgo (raw GL, EGL, GLFW) only in `internal/gpu` and `viewer`",
		From:   []string{"..."},
		Except: []string{"internal/gpu", "viewer"},
		To:     []string{"C"},
	},
	{
		Says: "The GL context (`internal/gpu`) is for sensors and viewers: `models`, `scene`, `elements`, transports and `record` do not import it",
		From: []string{"models/...", "scene/...", "elements/...", "ipc/...", "record/..."},
		To:   []string{"internal/gpu"},
	},
	{
		Says: "`internal/testkit` is for tests only: no package's own code imports it",
		From: []string{"..."},
		To:   []string{"internal/testkit"},
	},
}

// match reports whether the package path matches one of the patterns; a
// pattern "!P" removes what P matches from the patterns before it.
func match(path string, patterns []string) bool {
	in := false
	for _, pat := range patterns {
		if neg, ok := strings.CutPrefix(pat, "!"); ok {
			if matchOne(path, neg) {
				in = false
			}
		} else if matchOne(path, pat) {
			in = true
		}
	}
	return in
}

func matchOne(path, pat string) bool {
	switch {
	case pat == "...":
		return path != "C" && isStandard(path) // this module's paths have no dot either
	case strings.HasSuffix(pat, "/..."):
		base := strings.TrimSuffix(pat, "/...")
		return path == base || strings.HasPrefix(path, base+"/")
	}
	return path == pat
}

// Violation is an import a rule forbids.
type Violation struct {
	Rule     *Rule
	Importer string
	Imported string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s imports %s, but %s", v.Importer, v.Imported, v.Rule.Says)
}

// Check returns the imports of g that break rules, sorted.
func Check(g *Graph, rules []Rule) []Violation {
	var out []Violation
	for i := range rules {
		r := &rules[i]
		for _, p := range g.Sorted() {
			if !match(p.Path, r.From) || match(p.Path, r.Except) {
				continue
			}
			var imported []string
			imported = append(imported, p.Imports...)
			imported = append(imported, p.Modules...)
			if p.Cgo {
				imported = append(imported, "C")
			}
			for _, imp := range imported {
				if match(imp, r.To) {
					out = append(out, Violation{r, p.Path, imp})
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Importer < out[j].Importer })
	return out
}

// Unmatched lists the patterns of rules that name no package of g (nor,
// for other modules' paths, any module a package imports): stale after a
// package moved.
func Unmatched(g *Graph, rules []Rule) []string {
	var names []string
	for _, p := range g.Packages {
		names = append(names, p.Path)
		names = append(names, p.Modules...)
		if p.Cgo {
			names = append(names, "C")
		}
	}
	var out []string
	for _, r := range rules {
		for _, list := range [][]string{r.From, r.Except, r.To} {
			for _, pat := range list {
				pat = strings.TrimPrefix(pat, "!")
				found := false
				for _, n := range names {
					if matchOne(n, pat) {
						found = true
						break
					}
				}
				if !found {
					out = append(out, fmt.Sprintf("%q (rule %q)", pat, r.Says))
				}
			}
		}
	}
	return out
}
