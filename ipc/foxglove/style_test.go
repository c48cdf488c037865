package foxglove

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// styleScene writes a scene of two white boxes, BOX under a switch SW and
// OTHER under a color TINT (white, as the model), and returns its file.
func styleScene(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	m := models.NewModel("white")
	m.AddNode(nil, "box", mgl64.Ident4(), models.Box("box", 1, 1, 1, [4]float32{1, 1, 1, 1}))
	b, err := models.GLB(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "white.glb"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "scene.xml")
	err = os.WriteFile(f, []byte(`<scene>
  <part file="white.glb" name="BOX" pose_offset="3 0 0 0 0 0"/>
  <part file="white.glb" name="OTHER" pose_offset="3 2 0 0 0 0"/>
  <element type="switch" name="SW" insert_at="BOX" on="1"/>
  <element type="color" name="TINT" insert_at="OTHER" r="1" g="1" b="1" a="1"/>
</scene>`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// sceneMsg is what the tests read of a SceneUpdate.
type sceneMsg struct {
	Deletions []struct {
		Type int
		ID   string
	}
	Entities []struct {
		ID     string
		Models []struct {
			Color         struct{ R, G, B, A float64 }
			OverrideColor bool `json:"override_color"`
			Data          string
		}
	}
}

// glbBaseColors decodes a base64 binary glTF and returns its materials'
// base color factors (glTF's default [1 1 1 1] where none is written).
func glbBaseColors(t *testing.T, data string) [][4]float64 {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil || len(b) < 20 || string(b[:4]) != "glTF" || string(b[16:20]) != "JSON" {
		t.Fatalf("not a binary glTF (%v)", err)
	}
	n := binary.LittleEndian.Uint32(b[12:16])
	var doc struct {
		Materials []struct {
			PBR struct {
				BaseColorFactor *[4]float64 `json:"baseColorFactor"`
			} `json:"pbrMetallicRoughness"`
			AlphaMode string `json:"alphaMode"`
		}
	}
	if err := json.Unmarshal(b[20:20+n], &doc); err != nil {
		t.Fatal(err)
	}
	var out [][4]float64
	for _, m := range doc.Materials {
		c := [4]float64{1, 1, 1, 1}
		if m.PBR.BaseColorFactor != nil {
			c = *m.PBR.BaseColorFactor
		}
		out = append(out, c)
	}
	return out
}

// A driver switches BOX off and turns OTHER red through setParameters (the
// host's client API); the scene channel's next message deletes BOX, leaves
// it out of the entities, and embeds OTHER's model with the red material,
// as simvis export writes it.
func TestSceneFollowsSwitchAndColor(t *testing.T) {
	s := runHost(t, styleScene(t), Options{StyleInterval: time.Millisecond})
	c, _, err := dial(t, s.URL(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var id uint32
	for id == 0 {
		for _, ch := range c.until("advertise", nil)["channels"].([]any) {
			if m := ch.(map[string]any); m["topic"] == TopicScene {
				id = uint32(m["id"].(float64))
			}
		}
	}
	c.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 1, "channelId": id}}})
	next := func() sceneMsg {
		for {
			_, data := c.read()
			if len(data) > 13 && data[0] == 1 && binary.LittleEndian.Uint32(data[1:5]) == 1 {
				var m sceneMsg
				if err := json.Unmarshal(data[13:], &m); err != nil {
					t.Fatal(err)
				}
				return m
			}
		}
	}
	first := next()
	if len(first.Deletions) != 0 || len(first.Entities) != 2 || first.Entities[0].ID != "part:BOX" || first.Entities[1].ID != "part:OTHER" {
		t.Fatalf("first scene: %+v", first)
	}
	for _, e := range first.Entities {
		if len(e.Models) != 1 || e.Models[0].OverrideColor {
			t.Fatalf("%s: models %+v", e.ID, e.Models)
		}
		if got := glbBaseColors(t, e.Models[0].Data); len(got) != 1 || got[0] != [4]float64{1, 1, 1, 1} {
			t.Errorf("%s: base colors %v, want white", e.ID, got)
		}
	}

	c.send(map[string]any{"op": "setParameters", "id": "look", "parameters": []any{
		map[string]any{"name": "SW.on", "value": 0}, map[string]any{"name": "TINT.g", "value": 0},
		map[string]any{"name": "TINT.b", "value": 0}, map[string]any{"name": "TINT.a", "value": 0.5}}})
	for {
		m := next()
		if len(m.Deletions) == 0 {
			continue // a message before the host applied the values
		}
		if len(m.Deletions) != 1 || m.Deletions[0].ID != "part:BOX" || m.Deletions[0].Type != 0 {
			t.Errorf("deletions %+v, want part:BOX by id", m.Deletions)
		}
		if len(m.Entities) != 1 || m.Entities[0].ID != "part:OTHER" || len(m.Entities[0].Models) != 1 {
			t.Fatalf("entities %+v, want part:OTHER alone", m.Entities)
		}
		got := glbBaseColors(t, m.Entities[0].Models[0].Data)
		if len(got) != 1 || got[0] != [4]float64{1, 0, 0, 0.5} {
			t.Errorf("OTHER's base colors %v, want [1 0 0 0.5]", got)
		}
		if m.Entities[0].Models[0].OverrideColor {
			t.Error("override_color set: Foxglove would drop the textures")
		}
		break
	}
}

// Switch and color changes go out at most once per StyleInterval, the
// latest look winning; a part added goes out at once; a slider leaves
// one recolored encoding per model.
func TestStyleChangesAreRateLimited(t *testing.T) {
	s, err := Listen(Options{Addr: "127.0.0.1:0", StyleInterval: time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	file := styleScene(t)
	sc, err := scene.Load(file, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1000, 0)
	clock := t0
	s.scene.now = func() time.Time { return clock }
	update := func() {
		t.Helper()
		if err := sc.Update(); err != nil {
			t.Fatal(err)
		}
		s.Update(sc, 0)
	}
	update()
	if s.scene.styleSent != t0 || len(s.scene.looks) != 2 {
		t.Fatalf("first update not sent: %v %v", s.scene.styleSent, s.scene.looks)
	}
	for i, r := range []float64{0.9, 0.8, 0.7} {
		if err := sc.Set("TINT", "r", r); err != nil {
			t.Fatal(err)
		}
		clock = t0.Add(time.Duration(i+1) * 300 * time.Millisecond)
		update()
		if s.scene.styleSent != t0 {
			t.Fatalf("r=%v at +%v: sent within the interval", r, clock.Sub(t0))
		}
	}
	clock = t0.Add(1100 * time.Millisecond)
	update() // no new value: the pending look goes out now
	if s.scene.styleSent != clock || s.scene.looks[1].color != [4]float32{0.7, 1, 1, 1} {
		t.Fatalf("pending look not sent: %v %+v", s.scene.styleSent, s.scene.looks)
	}
	s.flushScene()
	colored := 0
	for k := range s.build.glb {
		if k.colored {
			colored++
			if k.color != [4]float32{0.7, 1, 1, 1} {
				t.Errorf("stale recolored encoding kept: %v", k.color)
			}
		}
	}
	if colored != 1 {
		t.Errorf("%d recolored encodings kept, want 1", colored)
	}
	cmd, err := scene.ParseCommand(`<part file="white.glb" name="THIRD" pose_offset="0 5 0 0 0 0"/>`, "test", filepath.Dir(file))
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Exec(cmd); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Millisecond)
	update()
	if s.scene.styleSent != clock || s.scene.parts != 3 {
		t.Errorf("an added part waited for the interval: %v, %d parts", s.scene.styleSent.Sub(t0), s.scene.parts)
	}
}
