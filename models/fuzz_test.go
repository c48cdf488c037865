package models

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
)

// fuzzLimits keep every input cheap: the code paths are Decode's, the
// numbers smaller, so that a run spends its time on inputs, not on
// decoding the largest accessors the default limits allow.
var fuzzLimits = Limits{FileBytes: 1 << 20, ImagePixels: 1 << 20, Vertices: 1 << 16, Triangles: 1 << 16, Nodes: 10000}

// checkModel checks what a loader promises of a model it returns.
func checkModel(t *testing.T, m *Model, lim Limits) {
	var verts, tris int64
	for i, mesh := range m.Meshes {
		for k, p := range mesh.Primitives {
			n := len(p.Positions)
			if len(p.Normals) != n || p.TexCoords != nil && len(p.TexCoords) != n || len(p.Indices)%3 != 0 || p.Material == nil {
				t.Fatalf("mesh %d primitive %d: %d positions, %d normals, %d uvs, %d indices, material %v",
					i, k, n, len(p.Normals), len(p.TexCoords), len(p.Indices), p.Material)
			}
			for _, ix := range p.Indices {
				if int(ix) >= n {
					t.Fatalf("mesh %d primitive %d: index %d of %d vertices", i, k, ix, n)
				}
			}
			verts += int64(n)
			tris += int64(len(p.Indices) / 3)
		}
	}
	if verts > lim.Vertices || tris > lim.Triangles {
		t.Fatalf("%d vertices, %d triangles loaded under limits %+v", verts, tris, lim)
	}
	var pixels int64
	seen := map[image.Image]bool{}
	for _, mat := range m.Materials {
		if img := mat.BaseColorTexture; img != nil && !seen[img] {
			seen[img] = true
			pixels += int64(img.Bounds().Dx()) * int64(img.Bounds().Dy())
		}
	}
	if pixels > lim.ImagePixels {
		t.Fatalf("%d image pixels loaded under a limit of %d", pixels, lim.ImagePixels)
	}
	nodes := 0
	if err := m.Walk(func(*Node, mgl64.Mat4) error { nodes++; return nil }); err != nil || nodes > lim.Nodes {
		t.Fatalf("walked %d nodes (%v) under a limit of %d", nodes, err, lim.Nodes)
	}
	if _, _, n := m.Counts(); n != nodes {
		t.Fatalf("Counts %d nodes, Walk %d", n, nodes)
	}
}

// FuzzDecode feeds arbitrary bytes to Decode's loader: nothing may panic,
// every error must name the file, and a model returned must be within its
// limits and consistent. Seeds: testdata/fuzz/FuzzDecode (small valid
// .gltf and .glb files and hostile ones; TestWriteFuzzSeeds writes them).
func FuzzDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeWith(bytes.NewReader(data), "fuzz.gltf", fuzzLimits)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "models: fuzz.gltf: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			if strings.Contains(err.Error(), internalError) {
				t.Fatalf("the loader panicked: %v", err)
			}
			return
		}
		checkModel(t, m, fuzzLimits)
	})
}

// fuzzRoot makes the directory FuzzLoadWith loads models in: inside the
// root a buffer, an image, a FIFO, a directory and links in and out;
// outside it an image of a size found nowhere inside (3x5).
func fuzzRoot(t testing.TB) (root string) {
	base := t.TempDir()
	root = filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "m", "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "m", "tri.bin"), triBin(), 0o644)
	os.WriteFile(filepath.Join(root, "tex.png"), pngBytesTB(t, 2, 2), 0o644)
	os.WriteFile(filepath.Join(outside, "x.png"), pngBytesTB(t, 3, 5), 0o644)
	os.WriteFile(filepath.Join(outside, "x.bin"), triBin(), 0o644)
	syscall.Mkfifo(filepath.Join(root, "m", "pipe"), 0o644)
	os.Symlink(filepath.Join(outside, "x.png"), filepath.Join(root, "m", "out.png"))
	os.Symlink(filepath.Join(outside, "x.bin"), filepath.Join(root, "m", "out.bin"))
	os.Symlink("../tex.png", filepath.Join(root, "m", "in.png"))
	os.Symlink("/dev/zero", filepath.Join(root, "m", "zero"))
	return root
}

func pngBytesTB(t testing.TB, w, h int) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewNRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// FuzzLoadWith loads arbitrary bytes as root/m/model.gltf confined to root:
// nothing may panic or block (the FIFO), and nothing from outside the root
// may be read (no 3x5 texture, no buffer read through out.bin).
func FuzzLoadWith(f *testing.F) {
	root := fuzzRoot(f)
	path := filepath.Join(root, "m", "model.gltf")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := LoadWith(path, LoadOptions{Root: root, Limits: fuzzLimits})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "models: "+path+": ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			if strings.Contains(err.Error(), internalError) {
				t.Fatalf("the loader panicked: %v", err)
			}
			return
		}
		checkModel(t, m, fuzzLimits)
		for _, mat := range m.Materials {
			if img := mat.BaseColorTexture; img != nil && img.Bounds().Dx() == 3 && img.Bounds().Dy() == 5 {
				t.Fatal("read an image from outside the root")
			}
		}
	})
}

// TestWriteFuzzSeeds writes the seed corpora of FuzzDecode and FuzzLoadWith
// when SIMVIS_WRITE_FUZZ_SEEDS is set; otherwise it checks they are there.
func TestWriteFuzzSeeds(t *testing.T) {
	seeds := fuzzSeeds(t)
	write := os.Getenv("SIMVIS_WRITE_FUZZ_SEEDS") != ""
	for target, files := range seeds {
		dir := filepath.Join("testdata", "fuzz", target)
		if write {
			os.MkdirAll(dir, 0o755)
		}
		for name, data := range files {
			p := filepath.Join(dir, name)
			content := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
			if write {
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if got, err := os.ReadFile(p); err != nil || string(got) != content {
				t.Errorf("seed %s missing or stale (run with SIMVIS_WRITE_FUZZ_SEEDS=1): %v", p, err)
			}
		}
	}
}

// fuzzSeeds returns the seeds by target and file name.
func fuzzSeeds(t *testing.T) map[string]map[string][]byte {
	tri := encode(t, triDoc(), false)
	glb := encode(t, triDoc(), true)
	withPNG := func(uri string) []byte {
		return triGLTF(t, "data:application/octet-stream;base64,"+base64.StdEncoding.EncodeToString(triBin()), []string{uri}, nil)
	}
	small := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngBytes(t, 2, 2))
	huge := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngHeader(16384, 16384))
	decode := map[string][]byte{
		"tri-gltf":        tri,
		"tri-glb":         glb,
		"textured":        withPNG(small),
		"huge-png-header": withPNG(huge),
		"shared-accessor": bufferless(t, 15999999, 8, false),
		"small-shared":    bufferless(t, 30, 3, true),
		"chain":           chainDoc(40),
		"cycle":           []byte(`{"asset":{"version":"2.0"},"nodes":[{"children":[1]},{"children":[0]}]}`),
		"null-buffer":     []byte(`{"asset":{"version":"2.0"},"buffers":[null]}`),
		"external-buffer": triGLTF(t, "tri.bin", nil, nil),
		"glb-huge-length": glbHugeLength(glb),
		"strip-fan": []byte(`{"asset":{"version":"2.0"},"nodes":[{"mesh":0}],"meshes":[{"primitives":[` +
			`{"attributes":{"POSITION":0},"mode":5},{"attributes":{"POSITION":0},"mode":6}]}],` +
			`"accessors":[{"componentType":5126,"count":5,"type":"VEC3"}]}`),
		"sparse": []byte(`{"asset":{"version":"2.0"},"nodes":[{"mesh":0}],"meshes":[{"primitives":[{"attributes":{"POSITION":0}}]}],` +
			`"buffers":[{"uri":"data:application/octet-stream;base64,AAAAAAAAAAAAAIA/","byteLength":12}],"bufferViews":[{"buffer":0,"byteLength":12}],` +
			`"accessors":[{"componentType":5126,"count":3,"type":"VEC3","sparse":{"count":1,"indices":{"bufferView":0,"componentType":5125},"values":{"bufferView":0}}}]}`),
	}
	load := map[string][]byte{
		"tri":            triGLTF(t, "tri.bin", nil, nil),
		"inside":         triGLTF(t, "tri.bin", []string{"../tex.png", "in.png"}, nil),
		"image-out":      triGLTF(t, "tri.bin", []string{"../../outside/x.png"}, nil),
		"image-link-out": triGLTF(t, "tri.bin", []string{"out.png"}, nil),
		"buffer-out":     triGLTF(t, "out.bin", nil, nil),
		"fifo":           triGLTF(t, "pipe", []string{"pipe"}, nil),
		"zero":           triGLTF(t, "zero", []string{"zero", "sub"}, nil),
	}
	return map[string]map[string][]byte{"FuzzDecode": decode, "FuzzLoadWith": load}
}

// glbHugeLength claims a JSON chunk of 4 GiB in a GLB header.
func glbHugeLength(glb []byte) []byte {
	out := bytes.Clone(glb)
	copy(out[8:12], []byte{0xff, 0xff, 0xff, 0xff})
	copy(out[12:16], []byte{0xf0, 0xff, 0xff, 0xff})
	return out
}
