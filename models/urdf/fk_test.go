package urdf_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/simvis/simvis/scene"

	_ "github.com/simvis/simvis/elements" // the joint element type
)

// dartScript loads a URDF with DART (Debian's python3-dartpy, an
// independent URDF reader) and prints every link's world transform for
// each set of joint positions read from stdin, the root link at the origin.
const dartScript = `
import sys, json
import dartpy as dart
args = json.load(sys.stdin)
loader = dart.utils.DartLoader()
for name, d in args["packages"].items():
    loader.addPackageDirectory(name, d)
skel = loader.parseSkeleton(args["urdf"])
if skel is None:
    sys.exit("DART could not read " + args["urdf"])
out = []
for q in args["trials"]:
    skel.setPositions([0.0] * skel.getNumDofs())
    for name, v in q.items():
        skel.getJoint(name).setPosition(0, v)
    links = {}
    for i in range(skel.getNumBodyNodes()):
        b = skel.getBodyNode(i)
        links[b.getName()] = b.getWorldTransform().matrix().tolist()
    out.append(links)
json.dump(out, sys.stdout)
`

// haveDART skips a test where Debian's python3-dartpy is missing.
func haveDART(t *testing.T) {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import dartpy").Run(); err != nil {
		t.Skip("python3-dartpy is not installed (make deps installs it): ", err)
	}
}

// dartTransforms runs dartScript.
func dartTransforms(t *testing.T, urdf string, packages map[string]string, trials []map[string]float64) []map[string][4][4]float64 {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"urdf": urdf, "packages": packages, "trials": trials})
	cmd := exec.Command("/usr/bin/python3", "-c", dartScript)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("DART: %v\n%s", err, stderr.String())
	}
	var res []map[string][4][4]float64
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("DART output: %v\n%s", err, out)
	}
	return res
}

// joint describes one joint for the random trials: a leader is drawn in
// its range, a follower computed from its leader.
type joint struct {
	name               string
	lo, hi             float64
	leader             string
	multiplier, offset float64
}

// checkFK sets seeded random joint positions on part R of a scene loading
// urdf and compares every link's world transform with DART's within 1e-9.
func checkFK(t *testing.T, urdf string, packages map[string]string, joints []joint, links []string, trials int) {
	t.Helper()
	var path []string
	for _, d := range packages {
		path = append(path, filepath.Dir(d))
	}
	s := scene.New(scene.Options{PackagePath: path})
	c, err := scene.ParseCommand(fmt.Sprintf(`<part file=%q name="R"/>`, urdf), "test.xml", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Exec(c); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(26, 1))
	var qs []map[string]float64
	var ours []map[string][4][4]float64
	for range trials {
		q := map[string]float64{}
		for _, j := range joints {
			if j.leader != "" {
				q[j.name] = j.multiplier*q[j.leader] + j.offset
				continue
			}
			q[j.name] = j.lo + (j.hi-j.lo)*rng.Float64()
			if err := s.Set("R/"+j.name, "position", q[j.name]); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Update(); err != nil {
			t.Fatal(err)
		}
		m := map[string][4][4]float64{}
		for _, l := range links {
			w, err := s.Transform("R/"+l, scene.WorldFrame)
			if err != nil {
				t.Fatal(err)
			}
			var rows [4][4]float64
			for r := range 4 {
				for k := range 4 {
					rows[r][k] = w.At(r, k)
				}
			}
			m[l] = rows
		}
		qs = append(qs, q)
		ours = append(ours, m)
	}
	theirs := dartTransforms(t, urdf, packages, qs)
	worst := 0.0
	for i := range qs {
		if len(theirs[i]) != len(links) {
			t.Fatalf("DART has %d links, we have %d", len(theirs[i]), len(links))
		}
		for _, l := range links {
			d, ok := theirs[i][l]
			if !ok {
				t.Fatalf("DART has no link %q", l)
			}
			for r := range 4 {
				for k := range 4 {
					diff := math.Abs(d[r][k] - ours[i][l][r][k])
					worst = math.Max(worst, diff)
					if diff > 1e-9 {
						t.Fatalf("trial %d (%v), link %s: entry (%d,%d) is %.15g, DART %.15g", i, qs[i], l, r, k, ours[i][l][r][k], d[r][k])
					}
				}
			}
		}
	}
	t.Logf("%d trials, %d links: largest difference from DART %.3g", trials, len(links), worst)
}

func TestForwardKinematicsAgainstDART(t *testing.T) {
	haveDART(t)
	ws, _ := filepath.Abs("testdata/ws")
	urdf := filepath.Join(ws, "allkinds/urdf/allkinds.urdf")
	joints := []joint{
		{name: "j_rev", lo: -2, hi: 2},
		{name: "j_cont", lo: -7, hi: 7},
		{name: "j_pri", lo: 0.1, hi: 0.5},
		{name: "j_mimic", leader: "j_rev", multiplier: -2, offset: 0.3},
		{name: "j_mm", leader: "j_mimic", multiplier: 1.5, offset: -0.2},
		{name: "j_mimic2", leader: "j_mm", multiplier: 0.5, offset: 0.01},
	}
	links := []string{"base_link", "link1", "link2", "link3", "tool", "link4", "link5", "link6"}
	checkFK(t, urdf, map[string]string{"allkinds": filepath.Join(ws, "allkinds"), "parts": filepath.Join(ws, "parts")}, joints, links, 20)
	if _, err := os.Stat(urdf); err != nil {
		t.Fatal(err)
	}
}

// The example robot (scenes/arm) against DART, its gripper's mimic joint
// included.
func TestExampleRobotAgainstDART(t *testing.T) {
	haveDART(t)
	pkg, _ := filepath.Abs("../../scenes/arm")
	joints := []joint{
		{name: "wheel_fl_joint", lo: -7, hi: 7}, {name: "wheel_fr_joint", lo: -7, hi: 7},
		{name: "wheel_rl_joint", lo: -7, hi: 7}, {name: "wheel_rr_joint", lo: -7, hi: 7},
		{name: "shoulder_pan", lo: -2.96, hi: 2.96}, {name: "shoulder_lift", lo: -1.7, hi: 1.7},
		{name: "elbow", lo: -2.5, hi: 2.5}, {name: "wrist", lo: -3.14, hi: 3.14},
		{name: "finger_left_joint", lo: 0, hi: 0.04},
		{name: "finger_right_joint", leader: "finger_left_joint", multiplier: 1},
	}
	links := []string{"base_link", "wheel_fl", "wheel_fr", "wheel_rl", "wheel_rr", "shoulder_link", "upper_arm_link",
		"forearm_link", "hand_link", "finger_left", "finger_right", "tool_link", "mast_link", "lidar_link"}
	checkFK(t, filepath.Join(pkg, "urdf/arm.urdf"), map[string]string{"simvis_arm": pkg}, joints, links, 20)
}
