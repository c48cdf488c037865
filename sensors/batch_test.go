package sensors_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// sameCycles renders cycles of every sensor of a and of b, which are two
// loads of one scene: a's one sensor after the other with RenderFrame, b's
// together with RenderFrames. Every frame (stamp, pose, each range or
// pixel, to the bit) and every error must be the same, and so must the
// returns published. It returns how many frames rendered.
func sameCycles(t *testing.T, a, b *scene.Scene, cycles int) int {
	t.Helper()
	r := testkit.Renderer(t)
	frames := 0
	for c := range cycles {
		ea, eb := a.Sensors(), b.Sensors()
		stamps := make([]*sensors.Stamp, len(eb))
		for i := range stamps {
			if i%3 != 2 { // and some without a stamp
				stamps[i] = &sensors.Stamp{Frame: c, Time: 0.1 * float64(c)}
			}
		}
		got, errs := sensors.RenderFrames(r, b, eb, stamps)
		if len(got) != len(eb) || len(errs) != len(eb) {
			t.Fatalf("%d frames and %d errors for %d sensors", len(got), len(errs), len(eb))
		}
		for i, se := range ea {
			want, werr := sensors.RenderFrame(r, a, se, stamps[i])
			if (werr == nil) != (errs[i] == nil) || werr != nil && werr.Error() != errs[i].Error() {
				t.Fatalf("cycle %d, %s: error %v, one by one %v", c, se.Name, errs[i], werr)
			}
			if werr != nil {
				if got[i] != nil {
					t.Errorf("cycle %d, %s: a frame and an error", c, se.Name)
				}
				continue
			}
			frames++
			wi, wd, err := want.Encode()
			if err != nil {
				t.Fatal(err)
			}
			gi, gd, err := got[i].Encode()
			if err != nil {
				t.Fatal(err)
			}
			if got[i].Sensor != se.Name || !bytes.Equal(gi, wi) || !bytes.Equal(gd, wd) {
				t.Fatalf("cycle %d, %s: the frame differs from the one rendered alone:\n%.300s\nalone:\n%.300s", c, se.Name, gi, wi)
			}
		}
		if pa, pb := a.ReturnsPublished(), b.ReturnsPublished(); pa != pb {
			t.Errorf("cycle %d: %d returns published, %d one by one", c, pb, pa)
		}
	}
	return frames
}

// The 50 robots' 150 scanners on the CPU, cast together, give the very
// ranges each gives rendered alone, cycle after cycle as the robots move.
func TestRenderFramesMatchesMarvins50(t *testing.T) {
	dir := t.TempDir()
	files, err := sensors.WriteBenchScenes(dir, "../scenes/marvin")
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(files[1]) // the million triangles are not needed
	load := func() *scene.Scene {
		s, err := scene.Load(files[0], scene.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, se := range s.Sensors() {
			if err := sensors.SetBackend(se.Sensor, sensors.BackendCPU); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	a, b := load(), load()
	move := func(s *scene.Scene, k int) {
		for _, name := range []string{"M00_TILT_UNIT", "M17_TILT_UNIT", "M42_TILT_UNIT"} {
			if err := s.Set(name, "angle", float64(10*k-20)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for k := range 3 {
		move(a, k)
		move(b, k)
		if n := sameCycles(t, a, b, 1); n != 150 {
			t.Fatalf("%d frames of 150 sensors", n)
		}
	}
}

// A scene of every sensor type on either backend, with noise, returns
// drawn by an overlay, and sensors that cannot render (their world pose is
// infinite): cast together or one by one, the same frames and errors.
// Cameras of one size share a target, read back after all are drawn.
func TestRenderFramesMatchesMixed(t *testing.T) {
	xml := `
  <sensor type="laser" name="L_CPU" pose_offset="1 0.5 1 0 0 17" backend="cpu" noise_stddev="0.02" seed="3"/>
  <element type="scan" name="L_CPU_SCAN" sensor="L_CPU"/>
  <sensor type="camera" name="CAM" pose_offset="0 0 1 0 0 0" width="32" height="24"/>
  <sensor type="camera" name="CAM_BACK" pose_offset="0 0 1 0 0 180" width="32" height="24" noise_stddev="0.02" seed="5"/>
  <sensor type="camera" name="CAM_EXPOSED" pose_offset="0 0 1.2 0 10 90" width="32" height="24" exposure="2" gamma="2.2"/>
  <sensor type="camera" name="CAM_LENS" pose_offset="0.5 0 1 0 0 -90" width="40" height="30" k1="-0.2" k2="0.05"/>
  <sensor type="laser" name="L_GPU" pose_offset="-1 0.5 1 0 0 -40" backend="gpu" noise_stddev="0.01" seed="4"/>
  <sensor type="psd" name="PSD" pose_offset="3.5 0 1 0 0 0" noise_stddev="0.01"/>
  <sensor type="laser3d" name="CLOUD" pose_offset="0 -1 1.5 0 0 0" backend="cpu" resolution="2" noise_bias="0.01"/>
  <element type="scan" name="CLOUD_SCAN" sensor="CLOUD"/>
  <sensor type="depth" name="DEPTH_CPU" pose_offset="0 0 1 0 0 30" width="32" height="24" backend="cpu" noise_stddev="0.01"/>
  <sensor type="depth" name="DEPTH_GPU" pose_offset="0 0 1 0 0 30" width="32" height="24" backend="gpu"/>
  <part file="room.glb" name="FAR" pose_offset="50 0 0 0 0 0"/>
  <sensor type="laser" name="FAR_L" insert_at="FAR" backend="cpu"/>
  <sensor type="psd" name="FAR_PSD" insert_at="FAR"/>
  <sensor type="camera" name="FAR_CAM" insert_at="FAR" width="32" height="24"/>
  <sensor type="laser" name="L_CPU2" pose_offset="-2 -1 0.5 0 0 150" backend="cpu" range_min="1.5"/>`
	a, b := roomScene(t, xml), roomScene(t, xml)
	for _, s := range []*scene.Scene{a, b} {
		ip, _ := s.InsertionPoint("FAR")
		ip.Parent().SetLocal(mgl64.Translate3D(math.Inf(1), 0, 0))
	}
	if n, want := sameCycles(t, a, b, 3), 3*(len(a.Sensors())-3); n != want {
		t.Errorf("%d frames rendered, want %d (all but FAR's sensors)", n, want)
	}
	if a.ReturnsPublished() == 0 {
		t.Error("no returns published: the overlays say nothing")
	}
}

// Scanners on auto keep measuring both backends when their frames are
// rendered together (a CPU frame's cost is then its share of the batch),
// choose one, and every frame on either gives the exact caster's ranges.
func TestRenderFramesAuto(t *testing.T) {
	s := roomScene(t, `<sensor type="laser" name="A" pose_offset="1 0.5 1 0 0 17"/>
<sensor type="laser" name="B" pose_offset="1 0.5 1 0 0 17"/>
<sensor type="laser" name="C" pose_offset="1 0.5 1 0 0 17" backend="cpu"/>`)
	r := testkit.Renderer(t)
	entries := s.Sensors()
	ranges := func(f *sensors.Frame) []*float64 {
		info, _, err := f.Encode()
		if err != nil {
			t.Fatal(err)
		}
		var sc struct{ Ranges []*float64 }
		if err := json.Unmarshal(info, &sc); err != nil {
			t.Fatal(err)
		}
		return sc.Ranges
	}
	used := map[string]int{}
	for c := range 16 {
		for _, se := range entries[:2] {
			used[sensors.Backend(se.Sensor)]++
		}
		frames, errs := sensors.RenderFrames(r, s, entries, make([]*sensors.Stamp, len(entries)))
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		ref := ranges(frames[2])
		for k, f := range frames[:2] {
			for i, rg := range ranges(f) {
				if (rg == nil) != (ref[i] == nil) || rg != nil && math.Abs(*rg-*ref[i]) > 1e-9 {
					t.Fatalf("cycle %d, %s beam %d: %v, exact caster %v", c, entries[k].Name, i, rg, ref[i])
				}
			}
		}
	}
	for _, se := range entries[:2] {
		if got := se.Sensor.Describe()["backend_chosen"]; got != "gpu" && got != "cpu" {
			t.Errorf("%s: backend_chosen %v after 16 cycles", se.Name, got)
		}
	}
	if used["gpu"] < 4 || used["cpu"] < 4 {
		t.Errorf("frames per backend %v: both were to be measured", used)
	}
}

// Cameras of one size draw into one target, each picture read back after
// all are drawn: every frame is still its own camera's picture (four boxes
// of four colors, one ahead of each camera, so that any picture read from
// another camera differs), the same as rendered alone; so are two
// segmentation cameras' ids.
func TestRenderFramesCamerasKeepTheirPictures(t *testing.T) {
	dir := t.TempDir()
	colors := [][4]float32{{1, 0, 0, 1}, {0, 1, 0, 1}, {0, 0, 1, 1}, {1, 1, 0, 1}}
	xml := `<scene>`
	for k, c := range colors {
		// A part each, so that the segmentation cameras see other instances.
		testkit.WriteModel(t, dir, fmt.Sprintf("box%d.glb", k), func(m *models.Model) {
			m.AddNode(nil, "box", mgl64.Ident4(), models.Box("box", 1, 1, 1, c))
		})
		a := float64(k) * math.Pi / 2
		xml += fmt.Sprintf(`<part file="box%d.glb" name="B%d" pose_offset="%g %g 1 0 0 0"/>`, k, k, 3*math.Cos(a), 3*math.Sin(a))
	}
	for k := range colors {
		xml += fmt.Sprintf(`<sensor type="camera" name="C%d" pose_offset="0 0 1 0 0 %d" width="24" height="16" fov="30" shadows="false"/>`, k, 90*k)
	}
	xml += `<sensor type="camera" name="WIDE" pose_offset="0 0 1 0 0 45" width="48" height="32" fov="120"/>
	  <sensor type="segmentation" name="S0" pose_offset="0 0 1 0 0 0" width="24" height="16" fov="30"/>
	  <sensor type="segmentation" name="S1" pose_offset="0 0 1 0 0 90" width="24" height="16" fov="30"/></scene>`
	a, b := testkit.LoadXML(t, dir, xml), testkit.LoadXML(t, dir, xml)
	if n := sameCycles(t, a, b, 2); n != 14 {
		t.Fatalf("%d frames, want 14", n)
	}
	// Each of C0..C3 sees its own box's color in its middle pixel.
	r := testkit.Renderer(t)
	frames, errs := sensors.RenderFrames(r, b, b.Sensors(), make([]*sensors.Stamp, 7))
	for k, c := range colors {
		if errs[k] != nil {
			t.Fatal(errs[k])
		}
		img := frames[k].Payload().(*sensors.CameraImage).Image
		px := img.RGBAAt(12, 8)
		for ch, want := range c[:3] {
			got := []uint8{px.R, px.G, px.B}[ch]
			if (want > 0) != (got > 40) {
				t.Errorf("camera C%d's middle pixel is %v, want the color of box %d %v", k, px, k, c)
				break
			}
		}
	}
}

// A cycle's cameras share one walk of the scene's graph and one search for
// its shadow-casting lights (updateWorlds): pictures drawn together, with
// shadows, from cameras at other places, are those drawn alone, while the
// sun and a box move between cycles.
func TestRenderFramesShadowsFollowTheScene(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "box.glb", 1, 1, 1, [4]float32{1, 1, 1, 1})
	testkit.WriteBox(t, dir, "plate.glb", 12, 12, 0.02, [4]float32{0.5, 0.5, 0.5, 1})
	xml := `<scene>
  <part file="plate.glb" name="PLATE" pose_offset="0 0 -0.01 0 0 0"/>
  <part file="box.glb" name="BOX" pose_offset="0 0 0.5 0 0 0"/>
  <element type="pose" name="SLIDE" insert_at="BOX" x="0"/>
  <element type="light" name="AMB" kind="ambient" intensity="0.3"/>
  <element type="light" name="SUN" kind="sun" azimuth="0" elevation="45"/>
  <sensor type="camera" name="DOWN" width="48" height="48" fov="70" pose_offset="0 0 6 0 90 0"/>
  <sensor type="camera" name="SIDE" width="48" height="32" fov="60" pose_offset="-5 -1 3 0 25 10"/>
  <sensor type="camera" name="FAR" width="32" height="32" fov="50" pose_offset="4 4 4 0 30 -135"/>
</scene>`
	a, b := testkit.LoadXML(t, dir, xml), testkit.LoadXML(t, dir, xml)
	for c, step := range [][3]float64{{0, 45, 0}, {90, 30, 0}, {90, 30, 1.5}, {200, 60, -1}} {
		for _, s := range []*scene.Scene{a, b} {
			for _, set := range []struct {
				element, param string
				v              float64
			}{{"SUN", "azimuth", step[0]}, {"SUN", "elevation", step[1]}, {"SLIDE", "x", step[2]}} {
				if err := s.Set(set.element, set.param, set.v); err != nil {
					t.Fatal(err)
				}
			}
		}
		if n := sameCycles(t, a, b, 1); n != 3 {
			t.Fatalf("step %d: %d frames, want 3", c, n)
		}
	}
}
