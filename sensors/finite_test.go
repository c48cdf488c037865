package sensors_test

import (
	"strings"
	"testing"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/sensors"
)

// Finite values that compose to a non-finite world pose (issue 12) never
// crash a render nor give an output of garbage: every sensor type, on
// either backend, returns an error naming the sensor (or the scene refuses
// the value first, naming the element).
func TestOverflowingPoseIsAnError(t *testing.T) {
	s := roomScene(t, `
  <part file="room.glb" name="FAR" pose_offset="8e307 0 0 0 0 0"/>
  <element type="pose" name="P" insert_at="FAR"/>
  <sensor type="camera" name="CAM" insert_at="FAR" width="16" height="16"/>
  <sensor type="depth" name="DEPTH" insert_at="FAR" width="16" height="16"/>
  <sensor type="depth" name="DEPTH_CPU" insert_at="FAR" width="16" height="16" backend="cpu"/>
  <sensor type="laser" name="SCAN" insert_at="FAR"/>
  <sensor type="laser3d" name="CLOUD" insert_at="FAR"/>
  <sensor type="psd" name="PSD" insert_at="FAR"/>`)
	r := testkit.Renderer(t)
	for _, se := range s.Sensors() {
		if _, err := sensors.RenderFrame(r, s, se, nil); err != nil {
			t.Fatalf("%s before the overflow: %v", se.Name, err)
		}
	}
	if err := s.Set("P", "x", 1.7e308); err != nil {
		return // refused at the element: nothing non-finite reaches a sensor
	}
	for _, se := range s.Sensors() {
		_, err := sensors.RenderFrame(r, s, se, nil)
		if err == nil || !strings.Contains(err.Error(), `"`+se.Name+`"`) && !strings.Contains(err.Error(), `"P"`) {
			t.Errorf("%s at x = 2.5e308: %v, want an error naming the sensor or the element", se.Name, err)
		}
	}
}
