package scene_test

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/simvis/simvis/scene"
)

// allocated returns the bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// describeAll is what inspect and frames do with a scene: the graph as
// text and as indented JSON (as the CLI writes it), and the world pose of
// every frame.
func describeAll(t testing.TB, s *scene.Scene) (text, js []byte) {
	info, err := s.Inspect()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	info.WriteTree(&buf)
	info.WriteSummary(io.Discard)
	js, err = json.MarshalIndent(info, "", "  ")
	if err != nil {
		t.Fatalf("inspect JSON: %v", err)
	}
	if _, err := s.Transforms(s.FrameNames(), scene.WorldFrame); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), js
}

// Issue 29, finding 12: a chain of parts, each inserted at the previous
// one's insertion point, is as deep as it is long. Inspect (text and JSON)
// and the world poses of every frame cost memory linear in the chain's
// length: twice the parts allocate about twice the bytes (a quadratic
// tree printing or per-frame pose walk allocated four times as many),
// and the JSON of 10,000 parts (40,000 levels) is within every reader's
// nesting limit.
func TestInspectFramesDeepChainLinear(t *testing.T) {
	dir := t.TempDir()
	writeBoxModel(t, dir, "box.glb", 0.01)
	var s *scene.Scene
	for _, n := range []int{1000, 5000} {
		small, large := buildChain(t, dir, n), buildChain(t, dir, 2*n)
		a := allocated(func() { describeAll(t, small) })
		b := allocated(func() { describeAll(t, large) })
		if ratio := float64(b) / float64(a); ratio > 2.6 {
			t.Fatalf("describing %d parts allocates %d bytes, %d parts %d: %.2f times as much, not linear", n, a, 2*n, b, ratio)
		}
		s = large
	}
	text, js := describeAll(t, s) // 10,000 parts
	for _, want := range []string{"] separator P9999  pose 0.01 0 0 0 0 0.1", "insertion point P9999"} {
		if !bytes.Contains(text, []byte(want)) {
			t.Errorf("the tree lacks %q", want)
		}
	}
	// Lines stop growing at the indentation cap.
	longest := 0
	for _, line := range strings.Split(string(text), "\n") {
		longest = max(longest, len(line))
	}
	if longest > 400 {
		t.Errorf("longest tree line %d bytes", longest)
	}
	// Every node of the graph is in the JSON once, following continuations.
	var info scene.Info
	if err := json.Unmarshal(js, &info); err != nil {
		t.Fatal(err)
	}
	if len(info.Subtrees) == 0 {
		t.Fatal("no subtrees for a 40,000-deep graph")
	}
	parts := 0
	stack := []*scene.NodeInfo{info.Graph}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Kind == "separator" {
			parts++
		}
		cs := n.Children
		if n.Continued > 0 {
			sub := info.Subtrees[n.Continued-1]
			if sub.Name != n.Name || sub.Kind != n.Kind || len(n.Children) != 0 {
				t.Fatalf("continuation %d of %s %q is %s %q", n.Continued, n.Kind, n.Name, sub.Kind, sub.Name)
			}
			cs = sub.Children
		}
		stack = append(stack, cs...)
	}
	if parts != 10000 {
		t.Errorf("the JSON graph holds %d parts, want 10000", parts)
	}
}

// A shallow scene's tree keeps its exact form: indentation, branches, no
// continuations.
func TestInspectTreeShallowUnchanged(t *testing.T) {
	dir := t.TempDir()
	writeBoxModel(t, dir, "box.glb", 0.01)
	s := buildChain(t, dir, 2)
	info, err := s.Inspect()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	info.WriteTree(&buf)
	want := `group (scene root)
├─ separator P0  pose 0.01 0 0 0 0 0.1
│  ├─ separator P1  pose 0.01 0 0 0 0 0.1
│  │  ├─ insertion point P1
│  │  └─ model box.glb (1 meshes, 12 triangles)
│  ├─ insertion point P0
│  └─ model box.glb (1 meshes, 12 triangles)
└─ insertion point ROOT
`
	if buf.String() != want || len(info.Subtrees) != 0 {
		t.Errorf("tree:\n%s\nwant:\n%s", buf.String(), want)
	}
}
