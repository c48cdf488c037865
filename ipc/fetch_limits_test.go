package ipc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// A mirror's prefetch stays within the limits and the host's directory:
// a file larger than FileBytes is refused once fetched, and a model whose
// image URI is absolute is refused without asking the host for it.
func TestPrefetchLimits(t *testing.T) {
	host := t.TempDir()
	js := `{"asset":{"version":"2.0"},"images":[{"uri":"/etc/passwd"}]}`
	os.WriteFile(filepath.Join(host, "abs.gltf"), []byte(js), 0o644)

	for _, tc := range []struct {
		file   string
		limits models.Limits
		want   string
		asked  string
	}{
		{"abs.gltf", models.Limits{}, `abs.gltf: uri "/etc/passwd": absolute paths are not allowed`, "abs.gltf"},
		{"abs.gltf", models.Limits{FileBytes: 10}, fmt.Sprintf("fetching abs.gltf from the host: %d bytes, over the limit of 10 "+
			"(raise it with --max-model-mib or scene.Options.Limits.Model.FileBytes)", len(js)), "abs.gltf"},
	} {
		f := &dirFetcher{dir: host}
		fc := fileCache{fetcher: f, always: true, limits: tc.limits}
		local, err := fc.localDir(host)
		if err != nil {
			t.Fatal(err)
		}
		cmd, err := scene.ParseCommand(`<part file="`+tc.file+`" name="P"/>`, "test", local)
		if err != nil {
			t.Fatal(err)
		}
		err = fc.prefetch(cmd, host, local)
		if err == nil || err.Error() != tc.want {
			t.Errorf("prefetch %s with %+v: %v, want %q", tc.file, tc.limits, err, tc.want)
		}
		var le *models.LimitError
		if tc.limits.FileBytes != 0 && !errors.As(err, &le) {
			t.Errorf("no LimitError in %v", err)
		}
		if got := strings.Join(f.asked, " "); got != tc.asked {
			t.Errorf("asked the host for %q, want %q", got, tc.asked)
		}
		fc.close()
	}
}

// A fetching mirror's copy of the host's files stays within its bound, all
// files together: a host that lists ever new files is refused once they
// would pass it, with an error naming the file; a file fetched again in a
// newer version counts once, at its new size.
func TestCacheTotalBound(t *testing.T) {
	host := t.TempDir()
	write := func(name string, n int, b byte) FileHash {
		data := []byte(strings.Repeat(string(b), n))
		if err := os.WriteFile(filepath.Join(host, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		return FileHash{Path: name, SHA256: hashOf(data)}
	}
	fc := fileCache{fetcher: &dirFetcher{dir: host}, always: true, maxTotal: 100}
	defer fc.close()
	resolve := func(seq uint64, f FileHash) error {
		_, err := fc.resolve(LogRecord{Seq: seq, Dir: host, XML: `<part file="` + f.Path + `" name="P"/>`, Files: []FileHash{f}})
		return err
	}
	if err := resolve(1, write("a.bin", 60, 'a')); err != nil {
		t.Fatal(err)
	}
	// a.bin again, changed and as large: still 60 bytes in all.
	if err := resolve(2, write("a.bin", 60, 'b')); err != nil {
		t.Fatalf("a file fetched again: %v", err)
	}
	err := resolve(3, write("b.bin", 60, 'c'))
	want := "fetching b.bin from the host: the mirror's copy of the host's files would hold 120 bytes, over its bound of 100 (16 largest model files: see --max-model-mib)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("a second file past the bound: %v, want %q", err, want)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(firstKey(fc.stored)), "b.bin")); err == nil {
		t.Error("b.bin was written past the bound")
	}
	if fc.total != 60 {
		t.Errorf("the cache counts %d bytes, want 60", fc.total)
	}
}

func firstKey(m map[string]int64) string {
	for k := range m {
		return k
	}
	return ""
}
