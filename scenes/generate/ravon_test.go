package main

import (
	"encoding/json"
	"encoding/xml"
	"image"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/simvis/simvis/internal/testkit"
)

// sceneElements reads the attributes of every <element> of the RAVON scene
// by name.
func sceneElements(t *testing.T) map[string]map[string]string {
	t.Helper()
	f, err := os.Open("../ravon/scene.xml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]map[string]string{}
	dec := xml.NewDecoder(f)
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "element" {
			attrs := map[string]string{}
			for _, a := range se.Attr {
				attrs[a.Name.Local] = a.Value
			}
			out[attrs["name"]] = attrs
		}
	}
	return out
}

func num(t *testing.T, attrs map[string]string, key string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(attrs[key], 64)
	if err != nil {
		t.Fatalf("attribute %s: %v", key, err)
	}
	return v
}

// The robot stands on the ground and the navigation graph's nodes float
// 0.3 m above it: scene.xml's heights are the terrain's (to 1 mm), so
// changing terrainHeight without updating scene.xml fails here.
func TestRavonSceneSitsOnTerrain(t *testing.T) {
	els := sceneElements(t)
	pose := els["R_POSE"]
	x, y, z := num(t, pose, "x"), num(t, pose, "y"), num(t, pose, "z")
	if h := terrainHeight(x, y); math.Abs(z-h) > 1e-3 {
		t.Errorf("R_POSE at (%g, %g) has z = %g, the ground is at %.3f", x, y, z, h)
	}
	nav := els["NAV"]
	nodes := strings.Fields(nav["nodes"])
	if len(nodes) < 5 {
		t.Fatalf("NAV has %d nodes", len(nodes))
	}
	for _, n := range nodes {
		x, y, z := num(t, nav, n+"_x"), num(t, nav, n+"_y"), num(t, nav, n+"_z")
		if h := terrainHeight(x, y) + 0.3; math.Abs(z-h) > 1e-3 {
			t.Errorf("NAV node %s at (%g, %g) has z = %g, want %.3f (0.3 m above the ground)", n, x, y, z, h)
		}
	}
}

// luminance of a texel in 0..1 (Rec. 601 weights).
func luminance(img image.Image, x, y int) float64 {
	r, g, b, _ := img.At(x, y).RGBA()
	return (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(b)) / 0xffff
}

// The ground texture is 2048 x 2048 and high-contrast at the texel scale
// a stereo matcher works at: nearly every 4 x 4 block of texels spans a
// fifth of the gray scale or more.
func TestGroundTextureContrast(t *testing.T) {
	img := groundTexture()
	if b := img.Bounds(); b.Dx() != 2048 || b.Dy() != 2048 {
		t.Fatalf("ground texture is %v, want 2048 x 2048", b)
	}
	blocks, flat := 0, 0
	for by := 0; by < 2048; by += 4 {
		for bx := 0; bx < 2048; bx += 4 {
			lo, hi := 1.0, 0.0
			for y := by; y < by+4; y++ {
				for x := bx; x < bx+4; x++ {
					l := luminance(img, x, y)
					lo, hi = math.Min(lo, l), math.Max(hi, l)
				}
			}
			blocks++
			if hi-lo < 0.2 {
				flat++
			}
		}
	}
	t.Logf("%d of %d 4x4 blocks span less than 0.2 of the gray scale", flat, blocks)
	if flat > blocks/100 {
		t.Errorf("%d of %d 4x4 blocks are flat (span < 0.2), want at most 1 %%", flat, blocks)
	}
}

// Leaves are cut out by an alpha mask: alpha is 0 or 1 only, the card's
// corners are empty and the leaves cover between a third and two thirds.
func TestLeafTextureMask(t *testing.T) {
	img := leafTexture().(*image.NRGBA)
	opaque := 0
	for i := 3; i < len(img.Pix); i += 4 {
		switch img.Pix[i] {
		case 255:
			opaque++
		case 0:
		default:
			t.Fatalf("alpha %d at byte %d: want 0 or 255", img.Pix[i], i)
		}
	}
	n := img.Bounds().Dx() * img.Bounds().Dy()
	if opaque < n/3 || opaque > 2*n/3 {
		t.Errorf("leaves cover %d of %d texels, want a third to two thirds", opaque, n)
	}
	for _, p := range []image.Point{{0, 0}, {511, 0}, {0, 511}, {511, 511}} {
		if img.NRGBAAt(p.X, p.Y).A != 0 {
			t.Errorf("corner %v is not transparent", p)
		}
	}
}

// Rocks are irregular: each of the four shapes' vertex distances from its
// center vary by a third or more.
func TestRockMeshesIrregular(t *testing.T) {
	for k := 0; k < 4; k++ {
		m := rockMesh("r", uint64(100+k), nil)
		lo, hi := math.Inf(1), 0.0
		for _, v := range m.Primitives[0].Positions {
			d := float64(v.Len())
			lo, hi = math.Min(lo, d), math.Max(hi, d)
		}
		if hi < 1.33*lo {
			t.Errorf("rock %d: vertex distances %.3f..%.3f m, too round", k, lo, hi)
		}
	}
}

// The RAVON assets stay small enough for the repository: 4 MiB together.
func TestRavonAssetsSize(t *testing.T) {
	total := int64(0)
	for name := range assets() {
		if !strings.HasPrefix(name, "ravon/") {
			continue
		}
		st, err := os.Stat(filepath.Join("..", name))
		if err != nil {
			t.Fatal(err)
		}
		total += st.Size()
	}
	t.Logf("RAVON assets: %d bytes", total)
	if total > 4<<20 {
		t.Errorf("RAVON assets take %d bytes, over 4 MiB", total)
	}
}

// The Khronos glTF Validator (internal/jstest/gltf_validate.js) finds no
// errors and no warnings in the RAVON assets, textures included.
func TestRavonAssetsValidate(t *testing.T) {
	var files []string
	for name := range assets() {
		if strings.HasPrefix(name, "ravon/") {
			abs, err := filepath.Abs(filepath.Join("..", name))
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, abs)
		}
	}
	cmd := testkit.Node(t, filepath.Join(testkit.RepoRoot(), "internal", "jstest", "gltf_validate.js"), files...)
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("gltf_validate.js: %v", err)
	}
	// One JSON line a file, in the order given.
	type report struct {
		File                    string
		Errors, Warnings, Infos int
		Messages                []string
	}
	reports := map[string]report{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var r report
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%v in %s", err, line)
		}
		reports[r.File] = r
	}
	if len(reports) != len(files) {
		t.Fatalf("%d reports for %d files", len(reports), len(files))
	}
	for _, f := range files {
		r, ok := reports[f]
		if !ok {
			t.Errorf("no report for %s", f)
			continue
		}
		if r.Errors > 0 || r.Warnings > 0 {
			t.Errorf("%s: %d errors, %d warnings: %v", filepath.Base(f), r.Errors, r.Warnings, r.Messages)
		}
		t.Logf("%s: %d errors, %d warnings, %d infos", filepath.Base(f), r.Errors, r.Warnings, r.Infos)
	}
}
