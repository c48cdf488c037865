package ipc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl64"

	"github.com/simvis/simvis/models"
)

// sha256sum hashes a file with coreutils' sha256sum.
func sha256sum(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command("sha256sum", path).Output()
	if err != nil {
		t.Skipf("sha256sum: %v", err)
	}
	return strings.Fields(string(out))[0]
}

// nestedModels writes outer.gltf, whose embedded command names
// sub/inner.gltf, which keeps its buffer in sub/inner.bin.
func nestedModels(t *testing.T, dir string) {
	t.Helper()
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	inner := models.NewModel("inner")
	inner.AddNode(nil, "box", mgl64.Ident4(), models.Box("box", 1, 1, 1, [4]float32{1, 0, 0, 1}))
	if err := models.Write(filepath.Join(dir, "sub", "inner.gltf"), inner); err != nil {
		t.Fatal(err)
	}
	externalBuffer(t, filepath.Join(dir, "sub", "inner.gltf"), "inner.bin")
	outer := models.NewModel("outer")
	outer.AddNode(nil, "base", mgl64.Ident4(), models.Box("base", 2, 2, 0.1, [4]float32{0, 0, 1, 1}))
	outer.Commands = []models.Command{{XML: `<part file="sub/inner.gltf" name="IN"/>`}}
	if err := models.Write(filepath.Join(dir, "outer.gltf"), outer); err != nil {
		t.Fatal(err)
	}
}

// The change log records the files each command loaded, with their
// SHA-256 (checked with sha256sum): the model, its external buffer, the
// model its embedded command names; nothing for a command without files.
// The record reads back from the shared region as written.
func TestLogRecordsLoadedFiles(t *testing.T) {
	dir := t.TempDir()
	nestedModels(t, dir)
	os.WriteFile(filepath.Join(dir, "unrelated.gltf"), []byte("{}"), 0o644)
	sceneFile := filepath.Join(dir, "scene.xml")
	os.WriteFile(sceneFile, []byte(`<scene>
  <part file="outer.gltf" name="P" insert_at="ROOT"/>
  <element type="pose" name="E" insert_at="ROOT"/>
</scene>`), 0o644)
	h, err := NewHost(filepath.Join(t.TempDir(), "region"), sceneFile, HostOptions{Warnings: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	c, err := Open(h.Region.path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var recs []LogRecord
	for _, read := range []func(*LogCursor) ([]LogRecord, error){h.Region.ReadLog, c.conn.(*shmConn).region.ReadLog} {
		var cur LogCursor
		r, err := read(&cur)
		if err != nil || len(r) != 2 {
			t.Fatalf("log: %d records, %v", len(r), err)
		}
		recs = append(recs, r...)
	}
	for i, rec := range recs {
		if i%2 == 1 {
			if len(rec.Files) != 0 {
				t.Errorf("element record lists files: %v", rec.Files)
			}
			continue
		}
		var got []string
		for _, f := range rec.Files {
			got = append(got, f.Path)
			if want := sha256sum(t, filepath.Join(dir, filepath.FromSlash(f.Path))); f.SHA256 != want {
				t.Errorf("%s: SHA-256 %s, sha256sum says %s", f.Path, f.SHA256, want)
			}
		}
		if want := []string{"outer.gltf", "sub/inner.gltf", "sub/inner.bin"}; !slices.Equal(got, want) {
			t.Errorf("record %d files %v, want %v", rec.Seq, got, want)
		}
	}
	// The model changes on disk: the next command that loads it logs the
	// new content's hash, not the one remembered.
	old := recs[0].Files[1].SHA256
	inner, _ := os.ReadFile(filepath.Join(dir, "sub", "inner.gltf"))
	os.WriteFile(filepath.Join(dir, "sub", "inner.gltf"), append(inner, ' '), 0o644)
	if _, err := h.Execute(`<part file="outer.gltf" name="Q" insert_at="ROOT"/>`, "test"); err != nil {
		t.Fatal(err)
	}
	var cur LogCursor
	all, _ := h.Region.ReadLog(&cur)
	last := all[len(all)-1]
	if len(last.Files) != 3 || last.Files[1].SHA256 == old || last.Files[1].SHA256 != sha256sum(t, filepath.Join(dir, "sub", "inner.gltf")) {
		t.Errorf("after the change: %+v", last.Files)
	}
}

// A mirror whose machine has the host's directory but an older copy of a
// model, and lacks another file, fetches exactly those two; a file that
// matches its hash is copied locally; the replica is built from the copies.
// A host serving something else than its command loaded is an error.
func TestStaleFileRefetched(t *testing.T) {
	hostFiles := t.TempDir() // what the host has
	nestedModels(t, hostFiles)
	files := loadedFiles(hostFiles, `<part file="outer.gltf" name="P" insert_at="ROOT"/>`, loadOpts{}, &fileMemo{})
	if len(files) != 3 {
		t.Fatalf("files %v", files)
	}
	here := t.TempDir() // the host's directory on the mirror's machine
	nestedModels(t, here)
	os.Remove(filepath.Join(here, "sub", "inner.bin"))
	os.WriteFile(filepath.Join(here, "outer.gltf"), []byte(`{"asset":{"version":"2.0"}}`), 0o644) // stale

	f := &dirFetcher{dir: hostFiles}
	fc := fileCache{fetcher: f}
	defer fc.close()
	rec := LogRecord{Seq: 1, Dir: here, XML: `<part file="outer.gltf" name="P" insert_at="ROOT"/>`, Files: files}
	local, err := fc.resolve(rec)
	if err != nil {
		t.Fatal(err)
	}
	if local == here {
		t.Fatal("the stale directory was used")
	}
	slices.Sort(f.asked)
	if want := []string{"outer.gltf", "sub/inner.bin"}; !slices.Equal(f.asked, want) {
		t.Errorf("fetched %v, want %v", f.asked, want)
	}
	for _, name := range []string{"outer.gltf", "sub/inner.gltf", "sub/inner.bin"} {
		if got, want := sha256sum(t, filepath.Join(local, name)), sha256sum(t, filepath.Join(hostFiles, name)); got != want {
			t.Errorf("%s: copy %s, host %s", name, got, want)
		}
	}
	// Once there, nothing is fetched again.
	f.asked = nil
	if _, err := fc.resolve(rec); err != nil || len(f.asked) != 0 {
		t.Errorf("again: fetched %v, %v", f.asked, err)
	}
	// Where every file matches, the host's directory is used as it is.
	if d, err := fc.resolve(LogRecord{Dir: hostFiles, Files: files}); err != nil || d != hostFiles {
		t.Errorf("matching directory: %q, %v", d, err)
	}
	// The host's copy changed after its command loaded it.
	os.WriteFile(filepath.Join(hostFiles, "sub", "inner.bin"), []byte("changed"), 0o644)
	fc2 := fileCache{fetcher: f}
	defer fc2.close()
	if _, err := fc2.resolve(rec); !errors.Is(err, errHashDiffers) || !strings.Contains(err.Error(), "sub/inner.bin") {
		t.Errorf("changed on the host: %v", err)
	}
}

// Records of one directory whose file lists climb different numbers of
// "../" are laid out in different copies of the host's directories; a file
// both list is fetched from the host once and copied from the cache the
// second time.
func TestSharedFileFetchedOnce(t *testing.T) {
	root := t.TempDir()
	scn := filepath.Join(root, "scn")
	nestedModels(t, scn)
	os.MkdirAll(filepath.Join(root, "shared"), 0o755)
	os.WriteFile(filepath.Join(root, "shared", "extra.bin"), []byte("only here"), 0o644)
	files := loadedFiles(scn, `<part file="outer.gltf" name="P" insert_at="ROOT"/>`, loadOpts{}, &fileMemo{})
	if len(files) != 3 {
		t.Fatalf("files %v", files)
	}
	f := &dirFetcher{dir: scn}
	fc := fileCache{fetcher: f, always: true}
	defer fc.close()
	first, err := fc.resolve(LogRecord{Seq: 1, Dir: scn, Files: files})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.asked) != 3 {
		t.Fatalf("first record fetched %v", f.asked)
	}
	f.asked = nil
	climbing := append(slices.Clone(files), FileHash{Path: "../shared/extra.bin", SHA256: sha256sum(t, filepath.Join(root, "shared", "extra.bin"))})
	second, err := fc.resolve(LogRecord{Seq: 2, Dir: scn, Files: climbing})
	if err != nil {
		t.Fatal(err)
	}
	if second == first {
		t.Fatalf("both records resolved in %s: the test needs two copies", first)
	}
	if want := []string{"../shared/extra.bin"}; !slices.Equal(f.asked, want) {
		t.Errorf("second record fetched %v, want %v", f.asked, want)
	}
	for _, fh := range files {
		if got := sha256sum(t, filepath.Join(second, filepath.FromSlash(fh.Path))); got != fh.SHA256 {
			t.Errorf("%s in the second copy: %s, listed %s", fh.Path, got, fh.SHA256)
		}
	}
}
