package ipc

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl64"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// outsideTree writes a project in which scene dir base/a/b/proj/scenes/arm
// names files outside it, as scenes/arm names ../quickstart/world.gltf:
// ../quickstart/world.gltf (its buffer beside it, and an embedded command
// naming ../shared/box.gltf, one more level up from arm's point of view
// only through quickstart's), ../../models/bot.gltf (two levels up) and
// local.gltf; and, out of reach, base/a/far.gltf (five levels up) and an
// unlisted ../quickstart/secret.txt. It returns the scene directory.
func outsideTree(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	proj := filepath.Join(base, "a", "b", "proj")
	dir := filepath.Join(proj, "scenes", "arm")
	for _, d := range []string{dir, filepath.Join(proj, "scenes", "quickstart"), filepath.Join(proj, "scenes", "shared"), filepath.Join(proj, "models")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(rel string, m *models.Model) {
		if err := models.Write(filepath.Join(proj, filepath.FromSlash(rel)), m); err != nil {
			t.Fatal(err)
		}
	}
	box := models.NewModel("box")
	box.AddNode(nil, "box", mgl64.Translate3D(0, 0, 0.5), models.Box("box", 0.3, 0.3, 0.3, [4]float32{1, 0, 0, 1}))
	write("scenes/shared/box.gltf", box)
	world := models.NewModel("world")
	world.AddNode(nil, "floor", mgl64.Ident4(), models.Box("floor", 4, 4, 0.1, [4]float32{0.5, 0.5, 0.5, 1}))
	world.Commands = []models.Command{{XML: `<part file="../shared/box.gltf" name="BOX" pose_offset="1 0 0.7 0 0 30"/>`}}
	write("scenes/quickstart/world.gltf", world)
	externalBuffer(t, filepath.Join(proj, "scenes", "quickstart", "world.gltf"), "world.bin")
	bot := models.NewModel("bot")
	bot.AddNode(nil, "body", mgl64.Translate3D(0, 0, 0.2), models.Box("body", 0.5, 0.4, 0.3, [4]float32{0, 0, 1, 1}))
	write("models/bot.gltf", bot)
	local := models.NewModel("local")
	local.AddNode(nil, "mark", mgl64.Ident4(), models.Box("mark", 0.1, 0.1, 0.1, [4]float32{0, 1, 0, 1}))
	write("scenes/arm/local.gltf", local)
	if err := models.Write(filepath.Join(base, "a", "far.gltf"), local); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(proj, "scenes", "quickstart", "secret.txt"), []byte("secret"), 0o644)
	os.WriteFile(filepath.Join(dir, "scene.xml"), []byte(`<scene>
  <part file="../quickstart/world.gltf" name="WORLD"/>
  <part file="../../models/bot.gltf" name="BOT" insert_at="WORLD" pose_offset="0.5 0.5 0 0 0 -20"/>
  <part file="local.gltf" name="L" insert_at="BOT" pose_offset="0 0 0.4 0 0 0"/>
</scene>`), 0o644)
	return dir
}

// listingFetcher serves files as a host's transport does: only those its
// change log lists for the directory, through ReadLoggedChunk, in chunks.
type listingFetcher struct {
	Conn
	region *Region
	asked  []string
}

func (f *listingFetcher) FetchFile(dir, path string) ([]byte, error) {
	f.asked = append(f.asked, path)
	var cur LogCursor
	recs, err := f.region.ReadLog(&cur)
	if err != nil {
		return nil, err
	}
	listed := false
	for _, r := range recs {
		for _, fh := range r.Files {
			listed = listed || r.Dir == dir && fh.Path == path
		}
	}
	if !listed {
		return nil, errors.New(path + " is not a file the scene's logged commands loaded")
	}
	var data []byte
	for {
		chunk, size, err := ReadLoggedChunk(dir, path, int64(len(data)), 1000)
		if err != nil {
			return nil, err
		}
		data = append(data, chunk...)
		if int64(len(data)) >= size || len(chunk) == 0 {
			return data, nil
		}
	}
}

// The host's own commands that name files up to MaxUp levels above the
// scene's directory list them as "../" paths; a mirror that fetches files
// lays them out in its cache, below copies of the directories' real names,
// and shows the parts with the same world poses and meshes as the host,
// none read from the host's directories. A request naming such a file is
// still refused, and a confined command lists none; a file five levels up
// is left out.
func TestMirrorFetchesFilesAboveTheScene(t *testing.T) {
	dir := outsideTree(t)
	h, err := NewHost(filepath.Join(t.TempDir(), "region"), filepath.Join(dir, "scene.xml"), HostOptions{Warnings: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var cur LogCursor
	recs, err := h.Region.ReadLog(&cur)
	if err != nil || len(recs) != 3 {
		t.Fatalf("log: %d records, %v", len(recs), err)
	}
	var listed [][]string
	for _, r := range recs {
		var ps []string
		for _, f := range r.Files {
			ps = append(ps, f.Path)
			if want := sha256sum(t, filepath.Join(dir, filepath.FromSlash(f.Path))); f.SHA256 != want {
				t.Errorf("%s: SHA-256 %s, sha256sum says %s", f.Path, f.SHA256, want)
			}
		}
		listed = append(listed, ps)
	}
	want := [][]string{{"../quickstart/world.gltf", "../quickstart/world.bin", "../shared/box.gltf"}, {"../../models/bot.gltf"}, {"local.gltf"}}
	for i := range want {
		if !slices.Equal(listed[i], want[i]) {
			t.Errorf("record %d lists %q, want %q", i+1, listed[i], want[i])
		}
	}
	if got := loadedFiles(dir, `<part file="../../../../../far.gltf" name="F"/>`, loadOpts{}, &fileMemo{}); len(got) != 0 {
		t.Errorf("a file five levels up is listed: %v", got)
	}
	if got := loadedFiles(dir, `<part file="../quickstart/world.gltf" name="W"/>`, loadOpts{confined: true}, &fileMemo{}); len(got) != 0 {
		t.Errorf("a confined command lists %v", got)
	}
	if _, err := h.Execute(`<part file="../quickstart/world.gltf" name="W2"/>`, "test"); err == nil || !strings.Contains(err.Error(), "leaves the scene's directory") {
		t.Errorf("a request naming ../quickstart/world.gltf: %v", err)
	}

	c, err := Open(h.Region.path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	f := &listingFetcher{Conn: c.conn, region: h.Region}
	m, err := NewMirrorWith(NewClient(f), MirrorOptions{FetchFiles: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	slices.Sort(f.asked)
	if want := []string{"../../models/bot.gltf", "../quickstart/world.bin", "../quickstart/world.gltf", "../shared/box.gltf", "local.gltf"}; !slices.Equal(f.asked, want) {
		t.Errorf("fetched %q, want %q", f.asked, want)
	}
	if _, err := f.FetchFile(dir, "../quickstart/secret.txt"); err == nil || !strings.Contains(err.Error(), "not a file the scene's logged commands loaded") {
		t.Errorf("an unlisted file above the scene was served: %v", err)
	}
	parts := m.Scene().Parts()
	if len(parts) != len(h.Scene.Parts()) || len(parts) != 4 {
		t.Fatalf("replica parts %d, host %d", len(parts), len(h.Scene.Parts()))
	}
	for i, p := range parts {
		hp := h.Scene.Parts()[i]
		if !within(m.files.root, p.File) {
			t.Errorf("part %s read from %s, outside the mirror's cache", p.Name, p.File)
		}
		// Laid out under the real names, as on the host.
		if r, _ := filepath.Rel(m.files.copyRoot(filepath.Dir(p.File)), p.File); !strings.HasSuffix(hp.File, string(filepath.Separator)+r) {
			t.Errorf("part %s: the copy %s is laid out as %s, the host's is %s", p.Name, p.File, r, hp.File)
		}
	}
	for _, frame := range []string{"WORLD", "WORLD/BOX", "BOT", "L"} {
		if want, got := testkit.WorldPose(t, h.Scene, frame), testkit.WorldPose(t, m.Scene(), frame); want != got {
			t.Errorf("%s: host %v, replica %v", frame, want, got)
		}
	}
	if want, got := h.Scene.Totals(), m.Scene().Totals(); want != got || want.Triangles != 4*12 {
		t.Errorf("replica totals %+v, host %+v", got, want)
	}

	// A mirror on the host's machine (shared memory) reads them in place.
	local, err := NewMirror(c, nil, scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	for i, p := range local.Scene().Parts() {
		if hp := h.Scene.Parts()[i]; p.File != hp.File {
			t.Errorf("shared-memory mirror: part %s from %s, the host's from %s", p.Name, p.File, hp.File)
		}
	}
	if want, got := h.Scene.Totals(), local.Scene().Totals(); want != got {
		t.Errorf("shared-memory mirror totals %+v, host %+v", got, want)
	}
}

// A hostile host's records cannot make a mirror write or read outside its
// cache: paths that climb more than MaxUp levels, hide a NUL, or name a
// directory, record directories whose names could not be laid out, and a
// command naming a file the list does not hold, are refused with errors
// naming them, and nothing is fetched for them.
func TestMirrorRefusesHostilePaths(t *testing.T) {
	host := t.TempDir()
	nestedModels(t, host)
	sum := sha256sum(t, filepath.Join(host, "outer.gltf"))
	for _, tc := range []struct {
		dir, path, want string
	}{
		{host, "../../../../../etc/passwd", `"../../../../../etc/passwd" climbs 5 levels above the record's directory, at most 4`},
		{host, "sub/../../../../../../etc/passwd", `climbs 5 levels`},
		{host, "/etc/passwd", `"/etc/passwd" is absolute`},
		{host, "..", `".." names a directory`},
		{host, "../", `"../" names a directory`},
		{host, "a\x00b", `"a\x00b" holds a NUL byte`},
		{host, strings.Repeat("n", 300) + "/x", "has a name of 300 bytes, at most 255"},
		{host, strings.Repeat("n/", 3000), "is 6000 bytes long"},
		{"relative/dir", "../x.gltf", `record directory "relative/dir" is not a clean absolute path`},
		{"/a/../b", "../x.gltf", `record directory "/a/../b" is not a clean absolute path`},
		{"/a", "../../x.gltf", `record directory "/a" has fewer than 2 levels above it`},
		{"/", "../x.gltf", `record directory "/" has fewer than 1 levels above it`},
		{"/a/" + strings.Repeat("n", 300), "../x.gltf", "is 300 bytes long, at most 255"},
		{"/a/b\x00c", "../x.gltf", `name "b\x00c" holds a separator or a NUL byte`},
	} {
		f := &dirFetcher{dir: host}
		fc := fileCache{fetcher: f, always: true}
		rec := LogRecord{Seq: 7, Dir: tc.dir, XML: `<part file="outer.gltf" name="P"/>`, Files: []FileHash{{Path: "outer.gltf", SHA256: sum}, {Path: tc.path, SHA256: sum}}}
		_, err := fc.command(rec)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q in %q: %v, want an error saying %q", tc.path, tc.dir, err, tc.want)
		}
		if len(f.asked) != 0 {
			t.Errorf("%q in %q: fetched %q", tc.path, tc.dir, f.asked)
		}
		if _, err := DecodeFiles((must(json.Marshal([]FileHash{{Path: tc.path, SHA256: sum}})))); tc.dir == host && err == nil {
			t.Errorf("%q: DecodeFiles took it", tc.path)
		}
		fc.close()
	}

	// A listed file is fetched into the copy, but the command itself names
	// a file outside it: the mirror, which runs the command confined to its
	// copy (it has no package search path), refuses it before reading it.
	secret := filepath.Join(t.TempDir(), "secret.gltf")
	os.WriteFile(secret, []byte(`{"asset":{"version":"2.0"}}`), 0o644)
	for _, file := range []string{secret, "../../../../../../../../../../" + secret, "../outside.gltf"} {
		fc := fileCache{fetcher: &dirFetcher{dir: host}, always: true, confine: true}
		rec := LogRecord{Seq: 8, Dir: host, XML: `<part file="` + file + `" name="P"/>`, Files: []FileHash{{Path: "outer.gltf", SHA256: sum}}}
		c, err := fc.command(rec)
		if err == nil {
			_, err = c.Path("file")
		}
		if err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("command naming %s: %v", file, err)
		}
		fc.close()
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// Whatever a listed path holds, splitListed either refuses it or returns
// at most MaxUp levels and a rest that stays below the ancestor: joined to
// a directory as a mirror or a host joins it, the path lies inside the
// directory that many levels up, and nowhere else.
func FuzzSplitListed(f *testing.F) {
	for _, s := range []string{"a.gltf", "../q/w.gltf", "../../../../../x", "a/../../b", "..", "../", "/etc/passwd", "a\x00b", "./x", "x/./../../y", `..\x`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		up, rest, err := splitListed(p)
		if err != nil {
			return
		}
		if up < 0 || up > MaxUp || rest == "" {
			t.Fatalf("%q: up %d, rest %q", p, up, rest)
		}
		dir := "/r/a/b/c/d/e"
		top := dir
		for range up {
			top = filepath.Dir(top)
		}
		if full := filepath.Join(dir, filepath.FromSlash(p)); !within(top, full) || full != filepath.Join(top, filepath.FromSlash(rest)) {
			t.Fatalf("%q: resolves to %s, outside %s or not at %q", p, full, top, rest)
		}
	})
}
