package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/record"
)

// writeRecordingOf writes a zstd-chunked simvis recording: the changes
// given (XML, logged at 0.1 s, one chunk each) and the attachments given.
func writeRecordingOf(t *testing.T, changes []string, attachments map[string][]byte) string {
	t.Helper()
	w := testkit.NewChangesRecording(t)
	for i, xml := range changes {
		data, _ := json.Marshal(record.Change{Seq: i + 1, Source: "s.xml:2", Dir: ".", XML: xml})
		if err := w.WriteMessage(&mcap.Message{ChannelID: 1, Sequence: uint32(i + 1), LogTime: 1e8, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range attachments {
		if err := w.WriteAttachment(&mcap.Attachment{Name: name, DataSize: uint64(len(data)), Data: bytes.NewReader(data)}); err != nil {
			t.Fatal(err)
		}
	}
	return w.Close()
}

// TestInfoPlayHostileAmplification: issue 29, finding 4, through the
// commands. Six chunks of a few bytes that each decompress to a 32 MiB
// /simvis/changes message: info counts them from the index without
// decompressing (it held every message before: hundreds of MiB), play
// refuses the first before reading its data, naming the file, the
// channel, the message and the flag.
func TestInfoPlayHostileAmplification(t *testing.T) {
	huge := `<element type="pose" name="P` + strings.Repeat("A", 32<<20) + `"/>`
	file := writeRecordingOf(t, []string{huge, huge, huge, huge, huge, huge}, nil)
	if st, _ := os.Stat(file); st.Size() > 1<<20 {
		t.Fatalf("the hostile file holds %d bytes", st.Size())
	}
	huge = ""

	var code int
	var out, errOut string
	n := testkit.Allocated(func() { code, out, errOut = simvis(t, "info", file) })
	if code != 0 || !strings.Contains(out, "6 messages, 6 change-log commands") {
		t.Errorf("info: exit %d\n%s%s", code, out, errOut)
	}
	if n > 8<<20 {
		t.Errorf("info allocated %d MiB; want under 8", n>>20)
	}
	n = testkit.Allocated(func() {
		code, _, errOut = simvis(t, "play", file, "--no-nats", "--shm", filepath.Join(t.TempDir(), "shm"))
	})
	want := "simvis play: " + file + ": /simvis/changes message 1 (log time 0.100000000 s): 33554524 bytes, over the bound of 1048576 bytes for one /simvis/changes message (raise it with record.ReadOptions.ChangeBytes / --max-change-mib)\n"
	if code != 1 || errOut != want {
		t.Errorf("play: exit %d, %q\nwant %q", code, errOut, want)
	}
	if n > 16<<20 {
		t.Errorf("play allocated %d MiB; want under 16", n>>20)
	}
}

// TestPlayHostileConfinement: issue 29, finding 6. play loaded a
// recording's first commands as a scene file, unconfined: an absolute
// path, a path with .. and a model's buffer URI leading out of its
// private directory were read (and their content served to clients).
// Recorded commands now follow the request rule: each is refused with an
// error naming the recorded change and the attribute, and the file
// outside is never opened (inotify sees no open).
func TestPlayHostileConfinement(t *testing.T) {
	base := t.TempDir()
	t.Setenv("TMPDIR", base) // play's private directory is base/simvis-play-*: ".." is base
	testkit.WriteModel(t, base, "secret.glb", func(m *models.Model) {
		m.AddNode(nil, "secret", [16]float64{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, models.Box("secret", 1, 1, 1, [4]float32{1, 1, 1, 1}))
	})
	// A one-triangle glTF whose buffer is ../secret.bin.
	writeExternalBufferGLTF(t, base, "ext.gltf", "secret.bin")
	gltf, err := os.ReadFile(filepath.Join(base, "ext.gltf"))
	if err != nil {
		t.Fatal(err)
	}
	gltf = bytes.Replace(gltf, []byte(`"uri":"secret.bin"`), []byte(`"uri":"../secret.bin"`), 1)
	secretGLB, secretBin := filepath.Join(base, "secret.glb"), filepath.Join(base, "secret.bin")

	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	defer syscall.Close(fd)
	for _, f := range []string{secretGLB, secretBin} {
		if _, err := syscall.InotifyAddWatch(fd, f, syscall.IN_OPEN|syscall.IN_ACCESS); err != nil {
			t.Fatal(err)
		}
	}
	opened := func() bool {
		buf := make([]byte, 4096)
		n, _ := syscall.Read(fd, buf)
		return n > 0
	}
	opened()
	shm := filepath.Join(t.TempDir(), "shm") // a host of its own, whatever else runs
	for _, c := range []struct {
		xml  string
		atts map[string][]byte
		want string
	}{
		{`<part file="` + secretGLB + `" name="S"/>`, nil,
			`recorded change 1 (s.xml:2):1: part "S": attribute "file": absolute path "` + secretGLB + `" refused`},
		{`<part file="../secret.glb" name="S"/>`, nil,
			`recorded change 1 (s.xml:2):1: part "S": attribute "file": path "../secret.glb" refused: it leaves the scene's directory`},
		{`<part file="sub/../../secret.glb" name="S"/>`, nil,
			`recorded change 1 (s.xml:2):1: part "S": attribute "file": path "sub/../../secret.glb" refused: it leaves the scene's directory`},
		{`<part file="m/ext.gltf" name="S"/>`, map[string][]byte{"m/ext.gltf": gltf},
			`recorded change 1 (s.xml:2):1: part "S": attribute "file": `},
	} {
		file := writeRecordingOf(t, []string{`<element type="pose" name="P"/>`, c.xml}, c.atts)
		c.want = strings.Replace(c.want, "change 1", "change 2", 1)
		code, out, errOut := simvis(t, "play", file, "--no-nats", "--fast", "--shm", shm)
		if code != 1 || !strings.HasPrefix(errOut, "simvis play: "+file+": "+c.want) {
			t.Errorf("%s: exit %d, %q\nwant the prefix %q\n%s", c.xml, code, errOut, c.want, out)
		}
		if c.atts != nil && !strings.Contains(errOut, "../secret.bin") {
			t.Errorf("%s: %q does not name the buffer uri", c.xml, errOut)
		}
		if opened() {
			t.Errorf("%s: a file outside the recording was opened", c.xml)
		}
	}
	// The same commands naming files inside play.
	box, err := os.ReadFile(secretGLB)
	if err != nil {
		t.Fatal(err)
	}
	opened()
	file := writeRecordingOf(t, []string{`<part file="m/box.glb" name="S"/>`}, map[string][]byte{"m/box.glb": box})
	if code, out, errOut := simvis(t, "play", file, "--no-nats", "--fast", "--shm", shm); code != 0 {
		t.Errorf("a recording inside its directory: exit %d\n%s%s", code, out, errOut)
	}
}

// writeExternalBufferGLTF writes dir/file, a one-triangle glTF whose
// buffer is the file uri (relative to dir), and the buffer at dir/uri.
func writeExternalBufferGLTF(t *testing.T, dir, file, uri string) {
	t.Helper()
	bin := make([]byte, 0, 42)
	for _, v := range []uint32{0, 0, 0, 0x3f800000, 0, 0, 0, 0x3f800000, 0} {
		bin = append(bin, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	}
	bin = append(bin, 0, 0, 1, 0, 2, 0)
	if err := os.WriteFile(filepath.Join(dir, uri), bin, 0o644); err != nil {
		t.Fatal(err)
	}
	gltf := `{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0}],
"meshes":[{"primitives":[{"attributes":{"POSITION":0},"indices":1}]}],
"buffers":[{"uri":"` + uri + `","byteLength":42}],
"bufferViews":[{"buffer":0,"byteOffset":0,"byteLength":36},{"buffer":0,"byteOffset":36,"byteLength":6}],
"accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]},
{"bufferView":1,"componentType":5123,"count":3,"type":"SCALAR"}]}`
	if err := os.WriteFile(filepath.Join(dir, file), []byte(gltf), 0o644); err != nil {
		t.Fatal(err)
	}
}
