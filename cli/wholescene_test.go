package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// The whole-scene budgets have flags: each refusal names the budget, what
// the scene holds, what the command would add and the flag; a bad value is
// a usage error; the help lists them with their defaults (issue 29,
// findings 2, 3 and 9).
func TestLimitWholeSceneFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-scene-parts", "1"}, `scene.xml:5: part "ROBOT": attribute "file": the scene holds 1 parts and the command would add 1, over the whole-scene budget of 1 (raise it with scene.Options.Limits.SceneParts / --max-scene-parts)`},
		{[]string{"--max-scene-triangles", "200"}, "--max-scene-triangles"},
		{[]string{"--max-scene-vertices", "200"}, "--max-scene-vertices"},
		{[]string{"--max-scene-nodes", "20"}, "--max-scene-nodes"},
		{[]string{"--max-scene-model-mib", "0.01"}, "--max-scene-model-mib"},
		{[]string{"--max-scene-sensors", "-1", "--max-elements", "-1", "--max-sensor-mpixels", "0.25"}, `sensor "ROBOT_CAM": attribute "width": the scene's sensors have 0 pixels and beams and the command would add 307200, over the budget of 262144`},
	} {
		code, _, errOut := simvis(t, append([]string{"inspect", quickstart}, c.args...)...)
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, %s\nwant %s", c.args, code, errOut, c.want)
		}
	}
	// Exactly what the quickstart scene holds passes.
	if code, _, errOut := simvis(t, "inspect", quickstart, "--max-scene-parts", "2", "--max-elements", "1", "--max-scene-sensors", "1",
		"--max-sensor-mpixels", "0.293"); code != 0 {
		t.Errorf("exact budgets: exit %d: %s", code, errOut)
	}
	for _, bad := range []string{"nan", "inf", "1e300"} {
		if code, _, errOut := simvis(t, "inspect", quickstart, "--max-sensor-mpixels", bad); code != 2 || !strings.Contains(errOut, "--max-sensor-mpixels") {
			t.Errorf("--max-sensor-mpixels %s: exit %d: %s", bad, code, errOut)
		}
	}
	_, help, _ := simvis(t, "help", "inspect")
	for _, flag := range []string{"max-scene-parts", "max-scene-nodes", "max-scene-vertices", "max-scene-triangles", "max-scene-model-mib",
		"max-scene-image-mpixels", "max-scene-sensors", "max-sensor-mpixels", "max-elements"} {
		if !strings.Contains(help, "-"+flag) {
			t.Errorf("inspect's help lacks -%s", flag)
		}
	}
	if !strings.Contains(help, fmt.Sprintf("default %d", scene.DefaultLimits.SceneParts)) {
		t.Errorf("inspect's help lacks the scene parts default")
	}
}

// Issue 29, finding 12: inspect --json and frames --json describe a chain
// of 10,000 parts (40,000 graph levels) completely, the graph's nesting
// continued in subtrees; the text tree's lines stop growing.
func TestInspectFramesDeepChain(t *testing.T) {
	dir := t.TempDir()
	m := models.NewModel("box.glb")
	m.AddNode(nil, "box", mgl64.Ident4(), models.Box("box", 0.01, 0.01, 0.01, [4]float32{1, 1, 1, 1}))
	if err := models.Write(filepath.Join(dir, "box.glb"), m); err != nil {
		t.Fatal(err)
	}
	const n = 10000
	var b strings.Builder
	b.WriteString("<scene>\n")
	for i := 0; i < n; i++ {
		at := "ROOT"
		if i > 0 {
			at = fmt.Sprintf("P%d", i-1)
		}
		fmt.Fprintf(&b, "<part file=\"box.glb\" name=\"P%d\" insert_at=\"%s\" pose_offset=\"0.01 0 0 0 0 0\"/>\n", i, at)
	}
	b.WriteString("</scene>\n")
	path := filepath.Join(dir, "chain.xml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := simvis(t, "inspect", "--json", path)
	if code != 0 {
		t.Fatalf("inspect --json: exit %d: %s", code, errOut)
	}
	var info scene.Info
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatalf("inspect --json: %v", err)
	}
	if len(info.Subtrees) == 0 || info.Models[filepath.Join(dir, "box.glb")] != n {
		t.Errorf("%d subtrees, models %v", len(info.Subtrees), info.Models)
	}
	code, out, errOut = simvis(t, "frames", "--json", path)
	if code != 0 {
		t.Fatalf("frames --json: exit %d: %s", code, errOut)
	}
	var frames []framePose
	if err := json.Unmarshal([]byte(out), &frames); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range frames {
		if f.Frame == "P9999" {
			found = true
			if d := f.Pose.X - 100; d < -1e-6 || d > 1e-6 {
				t.Errorf("P9999 at x %v, want 100", f.Pose.X)
			}
		}
	}
	if !found {
		t.Errorf("frames lacks P9999 (%d frames)", len(frames))
	}
	code, out, errOut = simvis(t, "inspect", path)
	if code != 0 {
		t.Fatalf("inspect: exit %d: %s", code, errOut)
	}
	for _, line := range strings.Split(out, "\n") {
		if len(line) > 400 {
			t.Fatalf("a %d-byte tree line", len(line))
		}
	}
	if !strings.Contains(out, "] separator P9999  pose 0.01 0 0 0 0 0") {
		t.Errorf("the tree lacks the deepest part")
	}
}
