package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// consumers are the packages that carry, record, show or run scenes: they
// ask elements and sensors what they need (scene's capability interfaces,
// sensors.Payload) and never name their types (DESIGN.md, "Knowledge
// stays with its owner").
var consumers = []string{"ipc", "record", "viewer", "live", "cli", "scene"}

// typeNameDebts are the places that still name types, by file and name,
// each with what would take it away. A new one fails the test; one paid
// off is simply no longer found.
var typeNameDebts = map[string]string{
	// natsipc completes a scan's or PSD reading's JSON with the fields
	// NATS.md lists (too_close): the wire format's own per-kind rule, on
	// bytes a recording may hand it too.
	"ipc/natsipc/sensorpub.go:scan": "NATS.md's per-kind fields",
	"ipc/natsipc/sensorpub.go:psd":  "NATS.md's per-kind fields",
	// Rebuilding a frame's info from its ROS 2 messages decodes by kind,
	// as ros2.FramePayload does: a decoder per payload type in the codec
	// would take it away.
	"record/frames.go:scan":         "decoding recorded frames by kind",
	"record/frames.go:psd":          "decoding recorded frames by kind",
	"record/frames.go:image":        "decoding recorded frames by kind",
	"record/frames.go:depth":        "decoding recorded frames by kind",
	"record/frames.go:cloud":        "decoding recorded frames by kind",
	"record/frames.go:segmentation": "decoding recorded frames by kind",
}

// registeredNames returns the element and sensor type names the module
// registers (scene.RegisterElement and RegisterSensor calls with a string
// literal, outside tests) and the frame kinds the sensors package declares
// (its Kind constants).
func registeredNames(t *testing.T, root string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	walkGo(t, root, func(path string, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if ok && (sel.Sel.Name == "RegisterElement" || sel.Sel.Name == "RegisterSensor") && len(n.Args) > 0 {
					if s, ok := stringLit(n.Args[0]); ok {
						names[s] = true
					}
				}
			case *ast.ValueSpec:
				if f.Name.Name != "sensors" {
					break
				}
				for i, id := range n.Names {
					if strings.HasPrefix(id.Name, "Kind") && i < len(n.Values) {
						if s, ok := stringLit(n.Values[i]); ok {
							names[s] = true
						}
					}
				}
			}
			return true
		})
	})
	return names
}

// walkGo parses every non-test Go file under dir (testdata, hidden
// folders and node_modules left out).
func walkGo(t *testing.T, dir string, fn func(path string, f *ast.File)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != dir && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		fn(path, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// typeNameUses returns, as "file:name" (file relative to root), where f
// decides by a type name: a switch case, an == or != operand, a key or
// value of a map or slice literal of strings or bools.
func typeNameUses(rel string, f *ast.File, names map[string]bool) []string {
	var uses []string
	add := func(e ast.Expr) {
		if s, ok := stringLit(e); ok && names[s] {
			uses = append(uses, rel+":"+s)
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CaseClause:
			for _, e := range n.List {
				add(e)
			}
		case *ast.BinaryExpr:
			if n.Op == token.EQL || n.Op == token.NEQ {
				add(n.X)
				add(n.Y)
			}
		case *ast.CompositeLit:
			if !literalOfNames(n.Type) {
				break
			}
			for _, e := range n.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok {
					add(kv.Key)
					add(kv.Value)
				} else {
					add(e)
				}
			}
		}
		return true
	})
	return uses
}

// literalOfNames reports whether a composite literal's type is a map or
// slice whose keys or elements can be names: map[string]string,
// map[string]bool, []string. (Maps to any are JSON objects, whose keys
// are field names.)
func literalOfNames(typ ast.Expr) bool {
	simple := func(e ast.Expr) bool {
		id, ok := e.(*ast.Ident)
		return ok && (id.Name == "string" || id.Name == "bool")
	}
	switch t := typ.(type) {
	case *ast.MapType:
		return simple(t.Key) && simple(t.Value)
	case *ast.ArrayType:
		return simple(t.Elt)
	}
	return false
}

// Transports, recordings, viewers, the runtime and the command line switch
// on no element or sensor type name and no frame kind: they ask the
// element, the sensor or the frame's payload.
func TestConsumersNameNoTypes(t *testing.T) {
	root := moduleRoot(t)
	names := registeredNames(t, root)
	for _, want := range []string{"laser", "camera", "pose", "graph", "image", "scan"} {
		if !names[want] {
			t.Fatalf("registered names %v miss %q: the collection broke", names, want)
		}
	}
	var found []string
	for _, pkg := range consumers {
		walkGo(t, filepath.Join(root, pkg), func(path string, f *ast.File) {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range typeNameUses(filepath.ToSlash(rel), f, names) {
				if _, debt := typeNameDebts[u]; !debt {
					found = append(found, u)
				}
			}
		})
	}
	sort.Strings(found)
	if len(found) > 0 {
		t.Errorf("decisions by element or sensor type name or frame kind outside their owners (file:name):\n  %s\n"+
			"ask the element or sensor through a capability interface (scene/capability.go) or the frame's payload (sensors.Payload) instead",
			strings.Join(found, "\n  "))
	}
}

// The check finds the forms it looks for and only those.
func TestTypeNameUsesCatch(t *testing.T) {
	src := `package p
var a = map[string]string{"laser": "scan"}
var b = map[string]any{"pose": 1}
var c = []string{"camera"}
func f(e struct{ Type, Kind string }) {
	switch e.Type {
	case "graph":
	}
	if e.Kind == "depth" {}
	println("label")
}`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{"laser": true, "scan": true, "pose": true, "camera": true, "graph": true, "depth": true, "label": true}
	got := fmt.Sprint(typeNameUses("p.go", f, names))
	if want := "[p.go:laser p.go:scan p.go:camera p.go:graph p.go:depth]"; got != want {
		t.Errorf("uses %s, want %s", got, want)
	}
}
