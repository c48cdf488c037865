package sensors

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/simvis/simvis/internal/gpu"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors/gpucast"
)

// rangesOf returns every range sensor's frame of one cycle (RenderFrames,
// all beams cast together) as float64 ranges, by sensor name.
func rangesOf(t *testing.T, r *Renderer, s *scene.Scene) map[string][]float64 {
	t.Helper()
	entries := s.Sensors()
	frames, errs := RenderFrames(r, s, entries, make([]*Stamp, len(entries)))
	out := map[string][]float64{}
	for i, f := range frames {
		if errs[i] != nil {
			t.Fatalf("sensor %s: %v", entries[i].Name, errs[i])
		}
		switch p := f.payload.(type) {
		case *Scan:
			out[f.Sensor] = p.Ranges
		case *Cloud:
			out[f.Sensor] = p.Ranges
		case *DepthImage:
			rs := make([]float64, len(p.Depth))
			for k, z := range p.Depth {
				rs[k] = float64(z)
			}
			out[f.Sensor] = rs
		}
	}
	return out
}

// On a context with compute shaders, backend="gpu" range sensors cast
// every beam with the compute caster (sensors/gpucast): their frames are
// the CPU backend's, bit for bit, MARVIN's scanners and depth camera as
// the 50 MARVINs' 150 scanners and RAVON's sensors (through its
// alpha-masked foliage), alone (Scan) and in a cycle (RenderFrames).
func TestGPUBackendOnComputeIsCPUBackend(t *testing.T) {
	r, err := NewRenderer()
	if err != nil {
		t.Skip(err)
	}
	defer r.Close()
	dir := t.TempDir()
	files, err := WriteBenchScenes(dir, "../scenes/marvin")
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(files[1]) // the million triangles are not needed
	// RAVON's foliage is alpha-masked: its beams pass through cut-away
	// texels on the compute caster as on the CPU.
	for _, file := range []string{"../scenes/marvin/scene.xml", files[0], "../scenes/ravon/scene.xml"} {
		var s [2]*scene.Scene
		for k, backend := range []string{BackendGPU, BackendCPU} {
			if s[k], err = scene.Load(file, scene.Options{}); err != nil {
				t.Fatal(err)
			}
			for _, se := range s[k].Sensors() {
				if _, ok := se.Sensor.(interface{ beams() *beamSet }); ok || se.Type == "depth" {
					if err := SetBackend(se.Sensor, backend); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		gpu, cpu := rangesOf(t, r, s[0]), rangesOf(t, r, s[1])
		if r.compute.g == nil {
			t.Skip("no compute shaders on this context: the GPU backend draws depth-buffer views")
		}
		if !r.useCompute(s[0]) {
			t.Fatalf("%s: the GPU backend is not on the compute caster", file)
		}
		beams, hits := 0, 0
		for name, want := range cpu {
			got := gpu[name]
			if len(got) != len(want) {
				t.Fatalf("%s, sensor %s: %d ranges on the GPU, %d on the CPU", file, name, len(got), len(want))
			}
			for i := range want {
				beams++
				if !math.IsInf(want[i], 0) {
					hits++
				}
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%s, sensor %s, beam %d: %v on the GPU backend, %v on the CPU", file, name, i, got[i], want[i])
				}
			}
		}
		if len(cpu) == 0 || hits == 0 {
			t.Fatalf("%s: %d range sensors, %d hits: nothing compared", file, len(cpu), hits)
		}
		// A laser alone (Scan, castOne) as well.
		for k, se := range s[0].Sensors() {
			if l, ok := se.Sensor.(*Laser); ok {
				a, err := l.Scan(r, s[0])
				if err != nil {
					t.Fatal(err)
				}
				b, err := s[1].Sensors()[k].Sensor.(*Laser).Scan(r, s[1])
				if err != nil {
					t.Fatal(err)
				}
				for i := range b.Ranges {
					if math.Float64bits(a.Ranges[i]) != math.Float64bits(b.Ranges[i]) {
						t.Fatalf("%s, %s alone, beam %d: %v on the GPU backend, %v on the CPU", file, se.Name, i, a.Ranges[i], b.Ranges[i])
					}
				}
				break
			}
		}
		t.Logf("%s: %d range sensors, %d beams (%d hits), the GPU backend's the CPU's bit for bit", file, len(cpu), beams, hits)
	}
}

// Where the compute caster cannot be made (here: made to fail), the GPU
// backend's range sensors draw depth-buffer views, with the CPU backend's
// ranges; the renderer says why (ComputeErr, GPURanges).
func TestGPUBackendWithoutCompute(t *testing.T) {
	defer func(f func(*gpu.Context) (*gpucast.Caster, error)) { newComputeCaster = f }(newComputeCaster)
	newComputeCaster = func(*gpu.Context) (*gpucast.Caster, error) {
		return nil, errors.New("gpucast: the device's float64 arithmetic is not IEEE 754's (a test)")
	}
	r, err := NewRenderer()
	if err != nil {
		t.Skip(err)
	}
	defer r.Close()
	if r.ComputeErr() != nil || r.GPURanges() != "" {
		t.Fatalf("before any range sensor: %v, %q", r.ComputeErr(), r.GPURanges())
	}
	var s [2]*scene.Scene
	for k, backend := range []string{BackendGPU, BackendCPU} {
		if s[k], err = scene.Load("../scenes/marvin/scene.xml", scene.Options{}); err != nil {
			t.Fatal(err)
		}
		for _, se := range s[k].Sensors() {
			if _, ok := se.Sensor.(*Laser); ok {
				if err := SetBackend(se.Sensor, backend); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	gpuRanges, cpuRanges := rangesOf(t, r, s[0]), rangesOf(t, r, s[1])
	if err := r.ComputeErr(); err == nil || !strings.Contains(err.Error(), "(a test)") {
		t.Fatalf("ComputeErr: %v", err)
	}
	if got := r.GPURanges(); !strings.HasPrefix(got, "depth-buffer views (") || !strings.Contains(got, "(a test)") {
		t.Fatalf("GPURanges: %q", got)
	}
	n := 0
	for _, se := range s[1].Sensors() {
		if _, ok := se.Sensor.(*Laser); !ok {
			continue
		}
		want, got := cpuRanges[se.Name], gpuRanges[se.Name]
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%s beam %d: %v on the GPU backend, %v on the CPU", se.Name, i, got[i], want[i])
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no laser compared")
	}
}
