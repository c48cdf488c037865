package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/scene"
)

// scenes/arm places ../quickstart/world.gltf, a file outside its own
// directory: the web page of `serve` fetches it (the change log lists it
// as a ../ path and the server serves it), replays every command of the
// scene, the world first, and puts every element's frame where the scene
// loaded here puts it.
func TestWebPageShowsFilesAboveTheScene(t *testing.T) {
	path := filepath.Join(testkit.RepoRoot(), "scenes", "arm", "scene.xml")
	want, err := scene.Load(path, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := want.Update(); err != nil {
		t.Fatal(err)
	}
	shm := fmt.Sprintf("webarm-%d", time.Now().UnixNano())
	page, _ := startWeb(t, "serve", path, "--shm", shm, "--no-nats", "--web", "127.0.0.1:0")
	b := testkit.Chromium(t, 640, 480)
	b.Open(page)
	n := len(want.Log())
	b.WaitFor(fmt.Sprintf(`typeof simvisState === "function" && JSON.parse(simvisState()).commands === %d && JSON.parse(simvisState()).drawn > 1`, n), 60*time.Second)
	var js string
	if err := b.Eval(`simvisState()`, &js); err != nil {
		t.Fatal(err)
	}
	var st pageState
	if err := json.Unmarshal([]byte(js), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Frames) == 0 {
		t.Fatalf("the page reports no frames: %s", js)
	}
	for _, e := range want.Elements() {
		f, err := want.Frame(e.At)
		if err != nil {
			t.Fatal(err)
		}
		w := f.World().Col(3)
		got, ok := st.Frames[e.At]
		if !ok {
			t.Errorf("the page has no frame %s", e.At)
			continue
		}
		for i := range 3 {
			if math.Abs(got[i]-w[i]) > 1e-6 {
				t.Errorf("frame %s: page %v, here %v", e.At, got, w)
				break
			}
		}
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}
