package cli

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// simvis bench --backend gpu reports, for every range sensor of the
// many-robots benchmark scene and of the RAVON scene, exactly the ray
// caster's ranges: every beam within 1 mm, no hit/miss disagreement (the
// GPU proposes a candidate per beam, the exact caster confirms it).
func TestBenchGPUBackendIsExact(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := simvis(t, "bench", "--generate", dir, "--marvin-assets", "../scenes/marvin")
	if code != 0 {
		t.Fatalf("bench --generate: exit %d: %s", code, errOut)
	}
	marvin50 := filepath.Join(dir, "marvin50", "scene.xml")
	if !strings.Contains(out, marvin50) {
		t.Fatalf("bench --generate printed %q, want %s among the files", out, marvin50)
	}
	rangeTypes := map[string]bool{"laser": true, "laser3d": true, "psd": true, "depth": true}
	for _, tc := range []struct {
		name, path string
		ranges     int // range sensors the scene holds
	}{
		{"marvin50", marvin50, 150},
		{"ravon", "../scenes/ravon/scene.xml", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := simvis(t, "bench", tc.path, "--backend", "gpu", "--seconds", "0.01", "--json")
			if code != 0 {
				t.Fatalf("bench %s --backend gpu: exit %d: %s", tc.path, code, errOut)
			}
			var rep struct {
				Results []struct {
					Sensor    string  `json:"sensor"`
					Type      string  `json:"type"`
					Beams     int     `json:"beams_per_frame"`
					Within1mm float64 `json:"within_1mm"`
					Within1cm float64 `json:"within_1cm"`
					MaxError  float64 `json:"max_error_m"`
					HitMiss   *int    `json:"hit_miss_disagreements"`
					Exact     int     `json:"exact_beams_per_frame"`
					Backend   string  `json:"backend"`
				} `json:"results"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("bench --json output: %v\n%s", err, out)
			}
			n := 0
			for _, r := range rep.Results {
				if !rangeTypes[r.Type] {
					continue
				}
				n++
				if r.HitMiss == nil || *r.HitMiss != 0 || r.Within1mm != 1 {
					hm := "absent"
					if r.HitMiss != nil {
						hm = strconv.Itoa(*r.HitMiss)
					}
					t.Errorf("%s, sensor %s (%s), backend %s: %d beams, hit_miss_disagreements %s, within_1mm %v, within_1cm %v, max_error_m %v, exact_beams_per_frame %d; want 0 and 1",
						tc.name, r.Sensor, r.Type, r.Backend, r.Beams, hm, r.Within1mm, r.Within1cm, r.MaxError, r.Exact)
				}
				if r.Backend != "gpu" {
					t.Errorf("%s, sensor %s: --backend gpu, measured with %q", tc.name, r.Sensor, r.Backend)
				}
			}
			if n != tc.ranges {
				t.Errorf("%s: bench reported %d range sensors, want %d:\n%s", tc.name, n, tc.ranges, out)
			}
		})
	}
}
