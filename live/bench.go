package live

import (
	"fmt"
	"io"
	"time"

	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// Bench measures each sensor of the scene for d (unless cyclesOnly), then
// all its scanners together (the sensors whose frames carry returns, such
// as laser, laser3d and psd, where they are some but not all of its sensors) and all its sensors, one after the other as
// in one cycle: what `simvis bench` prints.
func Bench(r *sensors.Renderer, s *scene.Scene, d time.Duration, cyclesOnly bool) ([]sensors.BenchResult, error) {
	var results []sensors.BenchResult
	if !cyclesOnly {
		var err error
		if results, err = sensors.Bench(r, s, d); err != nil {
			return nil, err
		}
	}
	var scanners, all []string
	for _, se := range s.Sensors() {
		all = append(all, se.Name)
		if r, ok := se.Sensor.(scene.Ranger); ok && r.HasReturns() {
			scanners = append(scanners, se.Name)
		}
	}
	sets := map[string][]string{"all sensors": all}
	if len(scanners) > 1 && len(scanners) < len(all) {
		sets["all scanners"] = scanners
	}
	for _, name := range []string{"all scanners", "all sensors"} {
		names, ok := sets[name]
		if !ok {
			continue
		}
		res, err := sensors.BenchSet(r, s, names, d)
		if err != nil {
			return nil, err
		}
		res.Sensor = name
		results = append(results, res)
	}
	return results, nil
}

// WriteBenchTable prints Bench's results as a table, a sensor or set a
// line, under the renderer's name and GL version and, where range sensors
// ran on the GPU backend, how it cast them (Renderer.GPURanges).
func WriteBenchTable(w io.Writer, renderer, version, gpuRanges string, results []sensors.BenchResult) error {
	fmt.Fprintf(w, "renderer: %s (%s)\n", renderer, version)
	if gpuRanges != "" {
		fmt.Fprintf(w, "gpu ranges: %s\n", gpuRanges)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%-14s %-8s %10s %12s %10s %8s %9s %9s %10s %8s %6s %s\n",
		"sensor", "type", "frames/s", "beams/s", "cpu fr/s", "speedup", "<=1mm", "<=1cm", "max err", "hit/miss", "exact", "triangles drawn/sensed")
	for _, res := range results {
		fmt.Fprintf(w, "%-14s %-8s %10.1f", res.Sensor, res.Type, res.FPS)
		switch {
		case res.Beams == 0 && res.Sensors == 0:
			fmt.Fprintln(w)
			continue
		case res.Beams == 0: // a set of cameras: its cycle's times still count
			fmt.Fprintf(w, " %12s", "-")
		default:
			fmt.Fprintf(w, " %12.0f", res.BeamsPerSec)
		}
		if res.Sensors > 0 {
			fmt.Fprintf(w, "   %d sensors: %.2f ms per cycle, %.2f ms CPU per cycle", res.Sensors, res.CycleMS, res.CycleCPUMS)
		}
		if res.CPUFPS > 0 {
			hitMiss := "-"
			if res.HitMiss != nil {
				hitMiss = fmt.Sprint(*res.HitMiss)
			}
			fmt.Fprintf(w, " %10.1f %7.2fx %8.3f%% %8.3f%% %10.2g %8s %6d %d/%d", res.CPUFPS, res.SpeedRatio,
				100*res.Within1mm, 100*res.Within1cm, res.MaxError, hitMiss, res.ExactBeams, res.Drawn, res.Triangles)
			if res.Backend != "" {
				fmt.Fprintf(w, " (%s)", res.Backend)
			}
		}
		fmt.Fprintln(w)
	}
	return nil
}
