package main

import (
	"os"
	"os/exec"
	"testing"
)

// Embree, an independent ray caster, finds the same ranges as simvis's
// caster (within 1e-5 m, see tolerance) for every scanner beam and depth
// pixel of the MARVIN scene; run fails otherwise. Skipped without a C
// compiler or libembree-dev (make deps installs it).
func TestEmbreeAgreesOnMarvin(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler")
	}
	if _, err := os.Stat("/usr/include/embree3/rtcore.h"); err != nil {
		t.Skip("libembree-dev is not installed (make deps)")
	}
	if testing.Short() {
		t.Skip("casts 300,000 rays several times")
	}
	if err := run(0.001, 2, t.TempDir(), "c/embree_peer.c", "cc", []string{"../../../scenes/marvin/scene.xml"}); err != nil {
		t.Fatal(err)
	}
}
