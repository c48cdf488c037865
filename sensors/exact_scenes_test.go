package sensors_test

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	_ "github.com/simvis/simvis/examples/door" // scenes/door's element type "door"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// rangeTypes are the sensor types whose frames are ranges (or depths),
// which Bench compares against the exact ray caster.
var rangeTypes = map[string]bool{"laser": true, "laser3d": true, "psd": true, "depth": true}

// Every backend gives the exact caster's ranges: the GPU only proposes a
// candidate per beam, which the caster confirms. On every benchmark scene
// (marvin50, mesh1m) and every bundled scene, each range sensor forced onto
// "gpu", then onto "auto", agrees with the caster in every beam: no
// hit/miss disagreement and every beam within 1 mm.
func TestEveryBenchSceneExactOnEveryBackend(t *testing.T) {
	files, err := sensors.WriteBenchScenes(t.TempDir(), "../scenes/marvin")
	if err != nil {
		t.Fatal(err)
	}
	type sceneFile struct{ name, path string }
	var scenes []sceneFile
	for _, f := range files[:2] { // the third, a ring of cameras, has no range sensor
		scenes = append(scenes, sceneFile{filepath.Base(filepath.Dir(f)), f})
	}
	bundled, err := filepath.Glob("../scenes/*/scene.xml")
	if err != nil {
		t.Fatal(err)
	}
	if len(bundled) == 0 {
		t.Fatal("no bundled scenes under ../scenes")
	}
	for _, f := range bundled {
		scenes = append(scenes, sceneFile{filepath.Base(filepath.Dir(f)), f})
	}

	r := testkit.Renderer(t)
	for _, sf := range scenes {
		t.Run(sf.name, func(t *testing.T) {
			if testing.Short() && sf.name == sensors.BenchMillion {
				t.Skip("a million triangles: loading, the caster's hierarchy and the GPU frames take long")
			}
			start := time.Now()
			s, err := scene.Load(sf.path, scene.Options{})
			if err != nil {
				t.Fatalf("%s: %v", sf.path, err)
			}
			t.Logf("%s: loaded in %v", sf.name, time.Since(start).Round(time.Millisecond))
			ranges := 0
			for _, se := range s.Sensors() {
				if rangeTypes[se.Type] {
					ranges++
				}
			}
			if ranges == 0 {
				t.Logf("%s has no range sensors (only %d others): nothing to compare", sf.name, len(s.Sensors()))
				return
			}
			for _, backend := range []string{sensors.BackendGPU, sensors.BackendAuto} {
				for _, se := range s.Sensors() {
					if !rangeTypes[se.Type] {
						continue
					}
					if err := sensors.SetBackend(se.Sensor, backend); err != nil {
						t.Fatalf("scene %s, sensor %s (%s): SetBackend(%q): %v", sf.name, se.Name, se.Type, backend, err)
					}
				}
				benchStart := time.Now()
				results, err := sensors.Bench(r, s, time.Millisecond)
				if err != nil {
					t.Fatalf("scene %s, backend %s: %v", sf.name, backend, err)
				}
				checked, beams, overruled := 0, 0, 0
				for _, res := range results {
					if !rangeTypes[res.Type] {
						continue
					}
					checked++
					beams += res.Beams
					overruled += res.ExactBeams
					hm := "nil"
					if res.HitMiss != nil {
						hm = strconv.Itoa(*res.HitMiss)
					}
					if res.HitMiss == nil || *res.HitMiss != 0 || res.Within1mm != 1 {
						t.Errorf("scene %s, sensor %s (%s), backend %s (measured with %s): %d beams, hit/miss %s, within 1 mm %.6f (%d beams off), within 1 cm %.6f, max error %.3g m, caster overruled %d; want hit/miss 0, within 1 mm 1",
							sf.name, res.Sensor, res.Type, backend, res.Backend, res.Beams, hm, res.Within1mm,
							res.Beams-int(res.Within1mm*float64(res.Beams)+0.5), res.Within1cm, res.MaxError, res.ExactBeams)
					}
					if backend == sensors.BackendGPU && res.Backend != sensors.BackendGPU {
						t.Errorf("scene %s, sensor %s: forced onto gpu, measured with %q", sf.name, res.Sensor, res.Backend)
					}
				}
				t.Logf("%s on %s: %d range sensors, %d beams per cycle, %d overruled by the caster, benched in %v",
					sf.name, backend, checked, beams, overruled, time.Since(benchStart).Round(time.Millisecond))
				if checked != ranges {
					t.Errorf("scene %s, backend %s: Bench reported %d range sensors, the scene has %d", sf.name, backend, checked, ranges)
				}
			}
			t.Logf("%s: %d range sensors, both backends in %v", sf.name, ranges, time.Since(start).Round(time.Millisecond))
		})
	}
}
