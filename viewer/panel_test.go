package viewer

import (
	"testing"

	"github.com/simvis/simvis/internal/testkit"
	_ "github.com/simvis/simvis/sensors"
)

// Cameras and depth cameras have a view to look through (the depth
// camera's from its description); a laser has none.
func TestSensorView(t *testing.T) {
	s := testkit.LoadXML(t, t.TempDir(), `<scene>
  <sensor type="camera" name="C" width="64" height="48" fov="70"/>
  <sensor type="depth" name="D" width="80" height="40" fov="90" pose_offset="1 2 3 0 0 90"/>
  <sensor type="laser" name="L"/>
</scene>`)
	want := map[string][3]float64{"C": {64, 48, 70}, "D": {80, 40, 90}}
	for _, se := range s.Sensors() {
		v, ok := sensorView(se)
		w, viewable := want[se.Name]
		if ok != viewable {
			t.Errorf("%s: view %v, want %v", se.Name, ok, viewable)
			continue
		}
		if ok && (float64(v.Width) != w[0] || float64(v.Height) != w[1] || v.HFOV != w[2] || v.Pose != se.Frame.World()) {
			t.Errorf("%s: view %+v", se.Name, v)
		}
	}
}
