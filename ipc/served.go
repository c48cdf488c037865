package ipc

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/simvis/simvis/models"
)

// ReadLoggedChunk reads up to max bytes at offset of the file rel (relative,
// slash-separated) inside dir, for a transport that serves model files to
// mirrors elsewhere. The caller has checked that a logged command's record
// lists rel under dir; this checks the rest: rel stays inside dir, also
// through symbolic links, and names a regular file, opened without
// blocking (a FIFO would stall the server). Errors name rel, never the
// host's own paths. It returns the chunk and the file's size.
func ReadLoggedChunk(dir, rel string, offset int64, max int) ([]byte, int64, error) {
	local := filepath.FromSlash(rel)
	if !filepath.IsLocal(local) {
		return nil, 0, fmt.Errorf("%q leaves the scene's directory", rel)
	}
	real, err := filepath.EvalSymlinks(filepath.Join(dir, local))
	base, berr := filepath.EvalSymlinks(dir)
	if err != nil || berr != nil {
		return nil, 0, fmt.Errorf("%s: not found", rel)
	}
	r, err := filepath.Rel(base, real)
	if err != nil || !filepath.IsLocal(r) {
		return nil, 0, fmt.Errorf("%q leads out of the scene's directory", rel)
	}
	if offset < 0 {
		return nil, 0, fmt.Errorf("%s: negative offset %d", rel, offset)
	}
	// Opened through the directory (os.Root): a link swapped in after the
	// checks above still cannot lead out.
	root, err := os.OpenRoot(base)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: not found", rel)
	}
	defer root.Close()
	f, size, err := models.OpenRegularIn(root, r, -1)
	if err != nil {
		if errors.Is(err, models.ErrNotRegular) {
			return nil, 0, fmt.Errorf("%s: %s", rel, strings.TrimPrefix(err.Error(), r+": "))
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, 0, fmt.Errorf("%s: %v", rel, err)
	}
	defer f.Close()
	buf := make([]byte, min(int64(max), size-min(offset, size)))
	n, err := f.ReadAt(buf, offset)
	if err != nil && err != io.EOF {
		return nil, 0, fmt.Errorf("%s: %v", rel, err)
	}
	return buf[:n], size, nil
}
