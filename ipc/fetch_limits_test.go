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
