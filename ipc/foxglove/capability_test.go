package foxglove

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
)

// beacon is an element type of the test's own, drawn as an overlay only
// because it says so (scene.Overlayer): no table of this package names
// it. Its one parameter is its cube's x.
type beacon struct{}

func (beacon) Params() []scene.Param   { return []scene.Param{{Name: "x", Default: 1.5}} }
func (beacon) Apply(v []float64) error { return nil }
func (beacon) Overlay(v []float64) scene.Overlay {
	return scene.Overlay{
		Cubes: []scene.OverlayCube{{Center: mgl64.Vec3{v[0], 0, 0}, Size: 0.25, Color: [3]float32{0, 1, 0}}},
		Texts: []scene.OverlayText{{At: mgl64.Vec3{0, 0, 1}, Height: 0.5, Color: [3]float32{1, 1, 1}, Text: "beacon"}},
	}
}

func init() {
	scene.RegisterElement("test-beacon", func(*scene.Context) (scene.Element, error) { return beacon{}, nil })
}

// The overlays channel draws whatever element gives primitives, a type
// registered from outside simvis included.
func TestOverlaysOfAnElementOfOnesOwn(t *testing.T) {
	f := filepath.Join(t.TempDir(), "scene.xml")
	if err := os.WriteFile(f, []byte(`<scene><element type="test-beacon" name="B" insert_at="ROOT" x="3"/></scene>`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := runHost(t, f, Options{})
	c, _, err := dial(t, s.URL(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var id uint32
	for id == 0 {
		for _, ch := range c.until("advertise", nil)["channels"].([]any) {
			if m := ch.(map[string]any); m["topic"] == TopicOverlays {
				id = uint32(m["id"].(float64))
			}
		}
	}
	c.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 7, "channelId": id}}})
	var data []byte
	for len(data) <= 13 || data[0] != 1 || binary.LittleEndian.Uint32(data[1:5]) != 7 {
		_, data = c.read()
	}
	var up struct {
		Entities []struct {
			ID       string
			FrameID  string `json:"frame_id"`
			Metadata []struct{ Key, Value string }
			Cubes    []struct {
				Pose  struct{ Position struct{ X, Y, Z float64 } }
				Size  struct{ X float64 }
				Color struct{ R, G, B, A float64 }
			}
			Texts []struct{ Text string }
		}
	}
	if err := json.Unmarshal(data[13:], &up); err != nil {
		t.Fatal(err)
	}
	if len(up.Entities) != 1 {
		t.Fatalf("overlays: %s", data[13:])
	}
	e := up.Entities[0]
	if e.ID != "overlay:B" || e.FrameID != "ROOT" || len(e.Metadata) != 1 || e.Metadata[0].Value != "test-beacon" {
		t.Errorf("entity %+v", e)
	}
	if len(e.Cubes) != 1 || e.Cubes[0].Pose.Position.X != 3 || e.Cubes[0].Size.X != 0.25 || e.Cubes[0].Color.G != 1 || e.Cubes[0].Color.A != 1 {
		t.Errorf("cubes %+v", e.Cubes)
	}
	if len(e.Texts) != 1 || e.Texts[0].Text != "beacon" {
		t.Errorf("texts %+v", e.Texts)
	}
}
