package ipc_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
)

// triangleBuffer is one triangle's three float32 VEC3 positions.
func triangleBuffer() []byte {
	var b bytes.Buffer
	for _, v := range []float32{0, 0, 0, 1, 0, 0, 0, 1, 0} {
		binary.Write(&b, binary.LittleEndian, v)
	}
	return b.Bytes()
}

// gltfDoc writes a one-triangle glTF whose positions come from bufferURI
// ("" embeds them), with an optional base color image and scene extras.
func gltfDoc(bufferURI, imageURI, sceneExtras string) string {
	if bufferURI == "" {
		bufferURI = "data:application/octet-stream;base64," + base64.StdEncoding.EncodeToString(triangleBuffer())
	}
	mat, tex := "", ""
	if imageURI != "" {
		mat = `,"material":0`
		tex = fmt.Sprintf(`,"materials":[{"pbrMetallicRoughness":{"baseColorTexture":{"index":0}}}],
 "textures":[{"source":0}],"images":[{"uri":%q}]`, imageURI)
	}
	extras := ""
	if sceneExtras != "" {
		extras = `,"extras":` + sceneExtras
	}
	return fmt.Sprintf(`{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]%s}],"nodes":[{"mesh":0}],
 "meshes":[{"primitives":[{"attributes":{"POSITION":0}%s}]}],
 "accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}],
 "bufferViews":[{"buffer":0,"byteLength":36}],"buffers":[{"byteLength":36,"uri":%q}]%s}`, extras, mat, bufferURI, tex)
}

// commandsExtras embeds simvis commands in a model's scene extras.
func commandsExtras(cmds ...string) string {
	var quoted []string
	for _, c := range cmds {
		quoted = append(quoted, fmt.Sprintf("%q", c))
	}
	return `{"simvis":{"commands":[` + strings.Join(quoted, ",") + `]}}`
}

// pngHeader is a PNG whose header declares w x h pixels (with a valid
// checksum) and whose data is cut short: a decoder that trusts the header
// allocates w*h*4 bytes before it notices.
func pngHeader(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 6 // 8-bit RGBA
	binary.Write(&b, binary.BigEndian, uint32(len(ihdr)))
	chunk := append([]byte("IHDR"), ihdr...)
	b.Write(chunk)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(chunk))
	return b.Bytes()
}

// hugeSharedAccessor is a 1.6 KB glTF whose 16 M-vertex accessor (no
// buffer view: all zeros) is used by 8 primitives.
func hugeSharedAccessor() string {
	var prims []string
	for i := 0; i < 8; i++ {
		prims = append(prims, `{"attributes":{"POSITION":0}}`)
	}
	return fmt.Sprintf(`{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0}],
 "meshes":[{"primitives":[%s]}],
 "accessors":[{"componentType":5126,"count":16777215,"type":"VEC3","min":[0,0,0],"max":[0,0,0]}]}`, strings.Join(prims, ","))
}

// Every way a request can pull a hostile file into a host is refused with
// an error naming what was wrong, quickly and without the memory the file
// asks for; meanwhile the host keeps cycling, an honest client keeps
// working and a mirror built afterwards equals the host's scene.
func TestHostileModelRequests(t *testing.T) {
	h, shm := startHost(t, ipc.HostOptions{})
	dir := filepath.Dir(h.Scene.Parts()[0].File)
	outside := filepath.Join(filepath.Dir(dir), "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(dir, name string, data []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(outside, "x.gltf", []byte(gltfDoc("", "", "")))
	write(outside, "tri.bin", triangleBuffer())
	write(outside, "tex.png", pngHeader(2, 2))
	write(dir, "good.gltf", []byte(gltfDoc("", "", "")))
	write(dir, "embed_rel.gltf", []byte(gltfDoc("", "", commandsExtras(`<part file="../outside/x.gltf" name="X"/>`))))
	write(dir, "embed_abs.gltf", []byte(gltfDoc("", "", commandsExtras(
		fmt.Sprintf(`<part file=%q name="X"/>`, filepath.Join(outside, "x.gltf"))))))
	write(dir, "img_out.gltf", []byte(gltfDoc("", "../outside/tex.png", "")))
	write(dir, "buf_out.gltf", []byte(gltfDoc("../outside/tri.bin", "", "")))
	write(dir, "dev_zero.gltf", []byte(gltfDoc("", "../../../../../../../../../../dev/zero", "")))
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.png")); err != nil {
		t.Fatal(err)
	}
	write(dir, "zero_link.gltf", []byte(gltfDoc("", "zero.png", "")))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.gltf"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.bin"), 0o644); err != nil {
		t.Fatal(err)
	}
	write(dir, "fifo_buf.gltf", []byte(gltfDoc("fifo.bin", "", "")))
	write(dir, "big.png", pngHeader(16384, 16384))
	write(dir, "big_img.gltf", []byte(gltfDoc("", "big.png", "")))
	write(dir, "huge.gltf", []byte(hugeSharedAccessor()))
	// Four parts of itself per level: 4^16 parts if nothing stops it.
	write(dir, "grow.gltf", []byte(gltfDoc("", "", commandsExtras(
		`<part file="grow.gltf" name="A"/>`, `<part file="grow.gltf" name="B"/>`,
		`<part file="grow.gltf" name="C"/>`, `<part file="grow.gltf" name="D"/>`))))

	stop := cycleWhile(t, h)
	defer stop()
	c := open(t, shm)
	before := c.Region().Cycles()
	for _, tc := range []struct {
		name, xml string
		want      []string // every one must appear in the refusal
	}{
		{"camera pose overflows", `<sensor type="camera" name="EVIL" insert_at="ROBOT" pose_offset="1.7e308 1.7e308 0 0 0 0" width="16" height="16"/>`,
			[]string{"pose_offset", "EVIL"}},
		{"laser pose overflows", `<sensor type="laser" name="EVIL2" insert_at="ROBOT" pose_offset="1.7e308 1.7e308 0 0 0 0"/>`,
			[]string{"pose_offset", "EVIL2"}},
		{"part pose overflows", `<part file="good.gltf" name="P1" insert_at="ROBOT" pose_offset="1.7e308 1.7e308 0 0 0 0"/>`,
			[]string{"pose_offset", "P1"}},
		{"embedded relative path out", `<part file="embed_rel.gltf" name="E1"/>`, []string{"../outside/x.gltf"}},
		{"embedded absolute path", `<part file="embed_abs.gltf" name="E2"/>`, []string{"absolute"}},
		{"image URI out", `<part file="img_out.gltf" name="I1"/>`, []string{"../outside/tex.png"}},
		{"buffer URI out", `<part file="buf_out.gltf" name="B1"/>`, []string{"../outside/tri.bin"}},
		{"image URI to /dev/zero", `<part file="dev_zero.gltf" name="Z1"/>`, []string{"dev/zero"}},
		{"image link to /dev/zero", `<part file="zero_link.gltf" name="Z2"/>`, []string{"zero.png"}},
		{"FIFO as model", `<part file="fifo.gltf" name="F1"/>`, []string{"fifo.gltf", "regular file"}},
		{"FIFO as buffer", `<part file="fifo_buf.gltf" name="F2"/>`, []string{"fifo.bin", "regular file"}},
		{"image header too large", `<part file="big_img.gltf" name="G1"/>`, []string{"16384"}},
		{"shared huge accessor", `<part file="huge.gltf" name="H1"/>`, []string{"vertices"}},
		{"exponential embedding", `<part file="grow.gltf" name="R1"/>`, []string{"parts"}},
		{"child element in a command", `<part file="good.gltf" name="C1"><element type="pose" name="Q"/></part>`,
			[]string{"element"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Request(tc.xml)
			var rerr *ipc.RequestError
			if !errors.As(err, &rerr) {
				t.Fatalf("got %v, want the host's refusal", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(rerr.Msg, w) {
					t.Errorf("refusal %q does not mention %q", rerr.Msg, w)
				}
			}
		})
	}
	// The host kept cycling through all of it, and an honest client still
	// adds parts and moves elements.
	if seq, err := c.Request(`<part file="good.gltf" name="GOOD" insert_at="ROBOT" pose_offset="0 0 2 0 0 0"/>`); err != nil || seq != 5 {
		t.Fatalf("honest request: change %d, %v; want change 5", seq, err)
	}
	yaw, err := c.Param("R_POSE", "yaw")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Set(yaw, 33); err != nil {
		t.Fatal(err)
	}
	waitCycles(t, c, c.Region().Cycles()+3)
	if after := c.Region().Cycles(); after <= before {
		t.Fatalf("host cycles %d -> %d: it stopped", before, after)
	}
	m, err := ipc.NewMirror(open(t, shm), nil, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Sync(); err != nil {
		t.Fatal(err)
	}
	stop()
	if err := m.Sync(); err != nil {
		t.Fatal(err)
	}
	sameScene(t, h.Scene, m.Scene())
	if got := len(m.Scene().Parts()); got != 3 {
		t.Errorf("mirror has %d parts, want WORLD, ROBOT and GOOD", got)
	}
}
