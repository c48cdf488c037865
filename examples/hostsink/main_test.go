package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The example host runs 30 cycles with its own element and sink: the
// sink sees every camera frame, and the element's angle turns the camera
// (half a turn shows another part of the world: another mean).
func TestHostWithOwnElementAndSink(t *testing.T) {
	qs, err := filepath.Abs("../../scenes/quickstart")
	if err != nil {
		t.Fatal(err)
	}
	means := map[string]string{}
	for _, angle := range []string{"0", "180"} {
		dir := t.TempDir()
		xml := fmt.Sprintf(`<scene>
  <part file="%[1]s/world.gltf" name="WORLD"/>
  <part file="%[1]s/robot.gltf" name="ROBOT" insert_at="WORLD"/>
  <element type="spin" name="TURN" insert_at="ROBOT" angle="%[2]s"/>
  <sensor type="camera" name="CAM" insert_at="ROBOT" pose_offset="0.2 0 1.1 0 12 0" width="64" height="48" fov="70"/>
</scene>`, qs, angle)
		file := filepath.Join(dir, "scene.xml")
		if err := os.WriteFile(file, []byte(xml), 0o644); err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		if err := run(file, filepath.Join(dir, "region"), &out); err != nil {
			t.Fatalf("angle %s: %v\n%s", angle, err, out.String())
		}
		if !strings.Contains(out.String(), ": 1 elements, 1 sensors") || !strings.Contains(out.String(), "30 cycles") {
			t.Errorf("angle %s: %s", angle, out.String())
		}
		frames := regexp.MustCompile(`(?m)^CAM frame (\d+) at [0-9.]+ s: mean ([0-9.]+)$`).FindAllStringSubmatch(out.String(), -1)
		if len(frames) != 30 || frames[29][1] != "29" {
			t.Fatalf("angle %s: %d frames in\n%s", angle, len(frames), out.String())
		}
		means[angle] = frames[0][2]
	}
	if means["0"] == means["180"] {
		t.Errorf("the spin element's half turn left the camera's mean at %s", means["0"])
	}
}
