package sensors_test

import (
	"math"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/sensors"
)

// Finite values that would compose to a world pose out of range (issue 12)
// are refused by the scene, naming the element; every sensor type, on
// either backend, renders before and after as if nothing had been asked.
// (Sensors also refuse a non-finite pose themselves, naming the sensor:
// a second wall for scenes built by code that bypasses those checks.)
func TestOverflowingPoseIsAnError(t *testing.T) {
	s := roomScene(t, `
  <part file="room.glb" name="FAR" pose_offset="1e38 0 0 0 0 0"/>
  <element type="pose" name="P" insert_at="FAR"/>
  <sensor type="camera" name="CAM" insert_at="FAR" width="16" height="16"/>
  <sensor type="depth" name="DEPTH" insert_at="FAR" width="16" height="16"/>
  <sensor type="depth" name="DEPTH_CPU" insert_at="FAR" width="16" height="16" backend="cpu"/>
  <sensor type="laser" name="SCAN" insert_at="FAR"/>
  <sensor type="laser3d" name="CLOUD" insert_at="FAR"/>
  <sensor type="psd" name="PSD" insert_at="FAR"/>`)
	r := testkit.Renderer(t)
	render := func(when string) {
		for _, se := range s.Sensors() {
			if _, err := sensors.RenderFrame(r, s, se, nil); err != nil {
				t.Fatalf("%s %s the refused value: %v", se.Name, when, err)
			}
		}
	}
	render("before")
	if err := s.Set("P", "x", 1.7e308); err != nil {
		t.Fatal(err)
	}
	err := s.Update()
	if err == nil || !strings.Contains(err.Error(), `"P"`) {
		t.Fatalf("P.x = 1.7e308 under an offset of 1e38: %v, want a refusal naming the element", err)
	}
	if x := testkit.WorldPose(t, s, "CAM").X; x != 1e38 {
		t.Errorf("CAM at x = %g after the refusal, want 1e38", x)
	}
	render("after")

	// Code that sets a node's transform itself bypasses the scene's
	// checks: the sensors still refuse to render from nowhere.
	// Commands insert before an insertion point: the sensors sit beside
	// FAR's point, below the part's separator.
	ip, _ := s.InsertionPoint("FAR")
	ip.Parent().SetLocal(mgl64.Translate3D(math.Inf(1), 0, 0))
	for _, se := range s.Sensors() {
		if _, err := sensors.RenderFrame(r, s, se, nil); err == nil || !strings.Contains(err.Error(), `"`+se.Name+`"`) {
			t.Errorf("%s with an infinite world pose: %v, want an error naming the sensor", se.Name, err)
		}
	}
}
