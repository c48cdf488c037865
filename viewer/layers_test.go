package viewer

import "testing"

// Software rasterizers (the viewer then presents frames itself) are told
// apart from hardware renderers by their GL renderer strings.
func TestSoftwareGL(t *testing.T) {
	for r, want := range map[string]bool{
		"llvmpipe (LLVM 15.0.6, 256 bits)": true,
		"softpipe":                         true,
		"Mesa X11 swrast":                  true,
		"NVIDIA H100 80GB HBM3/PCIe/SSE2":  false,
		"AMD Radeon RX 6800 (radeonsi, navi21, LLVM 15.0.6, DRM 3.49)": false,
	} {
		if got := softwareGL(r); got != want {
			t.Errorf("softwareGL(%q) = %v, want %v", r, got, want)
		}
	}
}
