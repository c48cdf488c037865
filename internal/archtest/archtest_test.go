package archtest

import (
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/packages.md's generated section")

// moduleRoot is the directory of go.mod above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above", dir)
		}
		dir = parent
	}
}

func load(t *testing.T) *Graph {
	t.Helper()
	g, err := Load(moduleRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// docs/packages.md's generated section is what the code says today.
func TestPackagesDoc(t *testing.T) {
	g := load(t)
	path := filepath.Join(moduleRoot(t), "docs", "packages.md")
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	section := Render(g, Rules)
	doc, ok := Splice(string(old), section)
	if !ok {
		t.Fatalf("docs/packages.md lacks the markers of its generated section:\n%s\n%s", BeginMarker, EndMarker)
	}
	if doc == string(old) {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s", path)
		return
	}
	t.Errorf("docs/packages.md is stale: run `make packages-doc` (go generate ./internal/archtest) to rewrite it; its generated section should read:\n%s", section)
}

// The imports keep the rules of rules.go, and every rule still names
// packages that exist.
func TestDependencyRules(t *testing.T) {
	g := load(t)
	for _, v := range Check(g, Rules) {
		t.Errorf("%v (internal/archtest/rules.go)", v)
	}
	for _, u := range Unmatched(g, Rules) {
		t.Errorf("the pattern %s matches no package: a package moved? adjust internal/archtest/rules.go", u)
	}
}

// The rules catch what they should: a scene importing sensors, a sensor
// importing a transport, anything but a command importing cli, NATS and
// cgo outside their packages.
func TestRulesCatch(t *testing.T) {
	g := &Graph{Module: "example.com/m", Packages: map[string]*Package{
		"models":        {Path: "models", Modules: []string{"github.com/qmuntal/gltf"}},
		"scene":         {Path: "scene", Imports: []string{"models", "sensors"}},
		"sensors/ros2":  {Path: "sensors/ros2", Imports: []string{"ipc/natsipc", "scene"}},
		"ipc/natsipc":   {Path: "ipc/natsipc", Modules: []string{"github.com/nats-io/nats.go"}},
		"viewer":        {Path: "viewer", Cgo: true, Imports: []string{"cli"}},
		"elements":      {Path: "elements", Cgo: true, Modules: []string{"github.com/nats-io/nats.go"}},
		"cmd/simvis":    {Path: "cmd/simvis", Imports: []string{"cli"}},
		"cli":           {Path: "cli", Imports: []string{"ipc/natsipc"}},
		"internal/gpu":  {Path: "internal/gpu", Cgo: true},
		"internal/test": {Path: "internal/test"},
	}}
	seen := map[string]bool{}
	var got []string
	for _, v := range Check(g, Rules) {
		if s := v.Importer + " -> " + v.Imported; !seen[s] { // viewer -> cli breaks two rules
			seen[s] = true
			got = append(got, s)
		}
	}
	sort.Strings(got)
	want := []string{
		"elements -> C",
		"elements -> github.com/nats-io/nats.go",
		"scene -> sensors",
		"sensors/ros2 -> ipc/natsipc",
		"viewer -> cli",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A rule naming a package that moved is reported, not silently void.
func TestUnmatchedPattern(t *testing.T) {
	g := &Graph{Packages: map[string]*Package{"record": {Path: "record"}}}
	rules := []Rule{{Says: "x", From: []string{"ipc/record"}, To: []string{"record/..."}}}
	if u := Unmatched(g, rules); len(u) != 1 || !strings.Contains(u[0], `"ipc/record"`) {
		t.Errorf("unmatched %q, want ipc/record", u)
	}
}
