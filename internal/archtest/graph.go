package archtest

import (
	"bufio"
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Package is one package of the module as the graph sees it.
type Package struct {
	Path    string   // relative to the module ("scene", "ipc/natsipc"; "." for the root)
	Doc     string   // the package comment's first sentence
	Command bool     // package main
	Imports []string // packages of this module it imports (relative paths), sorted
	Modules []string // other modules it imports from (module paths), sorted
	Cgo     bool     // it imports "C"
}

// Graph is the module's packages and their imports (non-test files only).
type Graph struct {
	Module   string // the module path of go.mod
	Packages map[string]*Package
}

// context is the build context the graph is drawn for: fixed, so that the
// document is the same whatever machine draws it (cgo on, as the build of
// simvis needs).
func context() build.Context {
	c := build.Default
	c.GOOS, c.GOARCH, c.CgoEnabled = "linux", "amd64", true
	c.BuildTags = nil
	return c
}

// Load reads the module rooted at root: every directory with Go files
// except testdata, node_modules, hidden ones and nested modules.
func Load(root string) (*Graph, error) {
	module, requires, err := readGoMod(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	g := &Graph{Module: module, Packages: map[string]*Package{}}
	ctxt := context()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		if path != root {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		bp, err := ctxt.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return fmt.Errorf("archtest: %s: %w", path, err)
		}
		rel, _ := filepath.Rel(root, path)
		p := &Package{Path: filepath.ToSlash(rel), Doc: bp.Doc, Command: bp.Name == "main"}
		modules := map[string]bool{}
		for _, imp := range bp.Imports {
			switch {
			case imp == "C":
				p.Cgo = true
			case imp == module:
				p.Imports = append(p.Imports, ".")
			case strings.HasPrefix(imp, module+"/"):
				p.Imports = append(p.Imports, strings.TrimPrefix(imp, module+"/"))
			case isStandard(imp):
			default:
				modules[moduleOf(imp, requires)] = true
			}
		}
		for m := range modules {
			p.Modules = append(p.Modules, m)
		}
		sort.Strings(p.Imports)
		sort.Strings(p.Modules)
		g.Packages[p.Path] = p
		return nil
	})
	if err != nil {
		return nil, err
	}
	return g, nil
}

// Sorted returns the packages ordered by path.
func (g *Graph) Sorted() []*Package {
	var ps []*Package
	for _, p := range g.Packages {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Path < ps[j].Path })
	return ps
}

// Levels groups the packages by height: level 0 imports no package of the
// module, level n imports one of level n-1 and none above. A package
// imports only lower levels, so the list reads bottom up.
func (g *Graph) Levels() [][]string {
	level := map[string]int{}
	var height func(path string, seen map[string]bool) int
	height = func(path string, seen map[string]bool) int {
		if h, ok := level[path]; ok {
			return h
		}
		if seen[path] { // an import cycle: go build refuses it already
			return 0
		}
		seen[path] = true
		h := 0
		if p, ok := g.Packages[path]; ok {
			for _, imp := range p.Imports {
				h = max(h, height(imp, seen)+1)
			}
		}
		level[path] = h
		return h
	}
	var levels [][]string
	for _, p := range g.Sorted() {
		h := height(p.Path, map[string]bool{})
		for len(levels) <= h {
			levels = append(levels, nil)
		}
		levels[h] = append(levels[h], p.Path)
	}
	return levels
}

// isStandard tells standard-library import paths: their first element has
// no dot.
func isStandard(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return !strings.Contains(first, ".")
}

// moduleOf is the required module that provides imp: the longest module
// path that is imp or a prefix of it.
func moduleOf(imp string, requires []string) string {
	best := ""
	for _, m := range requires {
		if (imp == m || strings.HasPrefix(imp, m+"/")) && len(m) > len(best) {
			best = m
		}
	}
	if best == "" {
		return imp
	}
	return best
}

// readGoMod returns the module path and the required module paths of a
// go.mod file (the few lines the graph needs; no dependency on x/mod).
func readGoMod(path string) (module string, requires []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	inRequire := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0:
		case inRequire && fields[0] == ")":
			inRequire = false
		case inRequire:
			requires = append(requires, fields[0])
		case fields[0] == "module" && len(fields) == 2:
			module = strings.Trim(fields[1], `"`)
		case fields[0] == "require" && len(fields) == 2 && fields[1] == "(":
			inRequire = true
		case fields[0] == "require" && len(fields) >= 3:
			requires = append(requires, fields[1])
		}
	}
	if err := sc.Err(); err != nil {
		return "", nil, err
	}
	if module == "" {
		return "", nil, fmt.Errorf("archtest: %s: no module line", path)
	}
	return module, requires, nil
}
