package ipc_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
)

// Issue 29, finding 9: one driver filled the fixed 4,096-entry element
// table. The scene's element budget (--max-elements) is what refuses the
// next element, naming the client, the budget and the flag; a host sizes
// its shared descriptor table from it, so raising the flag raises the
// table.
func TestHostElementBudget(t *testing.T) {
	if scene.DefaultLimits.Elements != ipc.DefaultSizes.Elements {
		t.Errorf("default element budget %d, descriptor table %d", scene.DefaultLimits.Elements, ipc.DefaultSizes.Elements)
	}
	for _, limit := range []int{10, ipc.DefaultSizes.Elements + 4} {
		h, err := ipc.NewHost(filepath.Join(t.TempDir(), "region"), sceneCopy(t), ipc.HostOptions{Limits: scene.Limits{Elements: limit}})
		if err != nil {
			t.Fatal(err)
		}
		// The quickstart scene holds one element, R_POSE.
		for i := 1; i < limit; i++ {
			if _, err := h.Execute(fmt.Sprintf(`<element type="pose" name="E%d" insert_at="ROBOT"/>`, i), "client 7"); err != nil {
				t.Fatalf("element %d of %d: %v", i+1, limit, err)
			}
		}
		_, err = h.Execute(`<element type="pose" name="LAST" insert_at="ROBOT"/>`, "client 7")
		want := fmt.Sprintf(`client 7:1: element "LAST": the scene holds %d elements and the command would add 1, over the budget of %d elements (raise it with scene.Options.Limits.Elements / --max-elements)`, limit, limit)
		if err == nil || err.Error() != want {
			t.Errorf("element %d: %v\nwant %s", limit+1, err, want)
		}
		c, err := ipc.Open(h.Region.Path())
		if err != nil {
			t.Fatal(err)
		}
		ds, err := c.Elements()
		c.Close()
		if err != nil || len(ds) != limit {
			t.Errorf("a client sees %d elements (%v), want %d", len(ds), err, limit)
		}
		// Sensors asked for by request meet the whole scene's budget of
		// pixels and beams (finding 3) the same way.
		_, err = h.Execute(`<sensor type="camera" name="BIG" width="16384" height="16384" rate="1"/>`, "client 7")
		if err == nil || !strings.Contains(err.Error(), "--max-sensor-mpixels") {
			t.Errorf("a 16384x16384 camera by request: %v", err)
		}
		h.Close()
	}
}
