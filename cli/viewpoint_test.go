package cli

import (
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/models"
)

// redPixels counts the pixels of a PNG that are clearly the robot's red.
func redPixels(t *testing.T, file string) int {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return redIn(img)
}

// redIn counts the pixels of a picture that are clearly the robot's red.
func redIn(img image.Image) int {
	return pixelsWhere(img, func(r, g, b uint32) bool { return r > 0x8000 && g < r/3 && b < r/3 })
}

// pixelsWhere counts the pixels of a picture whose color (16 bits a
// channel, as color.Color's RGBA gives it) passes is.
func pixelsWhere(img image.Image, is func(r, g, b uint32) bool) int {
	n := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if is(r, g, b) {
				n++
			}
		}
	}
	return n
}

// Issue 28: a robot in an enclosed 8 x 6 m room (a floor and four walls
// 2.5 m high, no ceiling) is in view of the default viewpoint, which the
// old fixed one (outside the room) never showed; `view -o`, and the
// windows, which start from the same framing.
func TestDefaultViewSeesInsideARoom(t *testing.T) {
	scene := roomScene(t)
	dir := filepath.Dir(scene)
	framed := filepath.Join(dir, "framed.png")
	if code, _, errOut := simvis(t, "view", scene, "-o", framed, "--size", "320x180"); code != 0 {
		t.Fatal(errOut)
	}
	if n := redPixels(t, framed); n < 300 {
		t.Errorf("the default view shows %d of the robot's pixels, want it in view (300 or more of 57,600)", n)
	}
	outside := filepath.Join(dir, "outside.png")
	if code, _, errOut := simvis(t, "view", scene, "-o", outside, "--size", "320x180", "--from", "-4.7 -3.7 2.4 0 25 38"); code != 0 {
		t.Fatal(errOut)
	}
	if n := redPixels(t, outside); n != 0 {
		t.Errorf("the old fixed viewpoint shows %d of the robot's pixels through the wall", n)
	}
}

// roomScene writes the scene of a red robot in an enclosed room and
// returns its path.
func roomScene(t *testing.T) string {
	dir := t.TempDir()
	grey := [4]float32{0.7, 0.7, 0.7, 1}
	testkit.WriteModel(t, dir, "room.glb", func(m *models.Model) {
		m.AddNode(nil, "floor", mgl64.Translate3D(0, 0, -0.01), models.Box("floor", 8, 6, 0.02, grey))
		m.AddNode(nil, "north", mgl64.Translate3D(0, 3, 1.25), models.Box("north", 8, 0.1, 2.5, grey))
		m.AddNode(nil, "south", mgl64.Translate3D(0, -3, 1.25), models.Box("south", 8, 0.1, 2.5, grey))
		m.AddNode(nil, "east", mgl64.Translate3D(4, 0, 1.25), models.Box("east", 0.1, 6, 2.5, grey))
		m.AddNode(nil, "west", mgl64.Translate3D(-4, 0, 1.25), models.Box("west", 0.1, 6, 2.5, grey))
	})
	testkit.WriteModel(t, dir, "robot.glb", func(m *models.Model) {
		m.AddNode(nil, "body", mgl64.Translate3D(0, 0, 0.25), models.Box("body", 0.6, 0.4, 0.5, [4]float32{0.9, 0.05, 0.05, 1}))
	})
	scene := filepath.Join(dir, "scene.xml")
	if err := os.WriteFile(scene, []byte(`<scene>
  <part file="room.glb" name="ROOM"/>
  <part file="robot.glb" name="ROBOT" insert_at="ROOM"/>
  <element type="pose" name="R_POSE" insert_at="ROBOT" x="1" y="0.5" yaw="30"/>
  <sensor type="laser" name="SCAN" insert_at="ROBOT" pose_offset="0.2 0 0.6 0 0 0"/>
</scene>`), 0o644); err != nil {
		t.Fatal(err)
	}
	return scene
}
