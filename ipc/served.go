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
// slash-separated) of dir, for a transport that serves model files to
// mirrors elsewhere. The caller has checked that a logged command's record
// lists rel under dir; this checks the rest: rel stays inside dir, or,
// through at most MaxUp leading "..", inside the ancestor of dir as many
// levels up (the host's own commands may name such files; see
// LAYOUT.md), also through symbolic links, and names a regular file,
// opened through that directory (os.Root) without blocking (a FIFO would
// stall the server). Errors name rel, never the host's own paths. It
// returns the chunk and the file's size.
func ReadLoggedChunk(dir, rel string, offset int64, max int) ([]byte, int64, error) {
	up, rest, err := splitListed(rel)
	if err != nil {
		return nil, 0, fmt.Errorf("refused: %v", err)
	}
	// Lexically, as the host resolved the command's paths against dir.
	top, where := filepath.Clean(dir), "the scene's directory"
	for range up {
		if !filepath.IsAbs(top) || filepath.Dir(top) == top {
			return nil, 0, fmt.Errorf("%s leaves the scene's directory", quotePath(rel))
		}
		top = filepath.Dir(top)
		where = fmt.Sprintf("the directory %d level(s) above the scene's", up)
	}
	local := filepath.FromSlash(rest)
	real, err := filepath.EvalSymlinks(filepath.Join(top, local))
	base, berr := filepath.EvalSymlinks(top)
	if err != nil || berr != nil {
		return nil, 0, fmt.Errorf("%s: not found", rel)
	}
	r, err := filepath.Rel(base, real)
	if err != nil || !filepath.IsLocal(r) {
		return nil, 0, fmt.Errorf("%q leads out of %s", rel, where)
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
