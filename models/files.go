package models

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// ErrNotRegular is wrapped by errors for paths that name something other
// than a regular file: a directory, a FIFO, a device, a socket.
var ErrNotRegular = errors.New("not a regular file")

// openFlags open without blocking: opening a FIFO without a writer, or some
// devices, would otherwise wait for good before fstat could refuse them
// (nonblock is the system's flag; js/wasm, whose files the browser's host
// serves, has none).
const openFlags = os.O_RDONLY | nonblock

// OpenRegular opens the file at path for reading if it is a regular file of
// at most maxBytes bytes (negative: any size), and returns it with its size.
// It never blocks on a FIFO or device: the file is opened non-blocking and
// the open descriptor's fstat decides, so nothing can be swapped in between
// the check and the read. Anything but a regular file gives an error
// wrapping ErrNotRegular; a larger file one wrapping a *LimitError for
// FileBytes. Symbolic links are followed. Reads from a regular file behave
// as usual whatever the flag.
func OpenRegular(path string, maxBytes int64) (*os.File, int64, error) {
	f, err := os.OpenFile(path, openFlags, 0)
	if err != nil {
		return nil, 0, err
	}
	size, err := checkRegular(f, maxBytes)
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	return f, size, nil
}

// OpenRegularIn is OpenRegular for the file rel inside root: the open goes
// through root (os.Root), so that no path, symbolic link or link swapped in
// meanwhile reaches outside it.
func OpenRegularIn(root *os.Root, rel string, maxBytes int64) (*os.File, int64, error) {
	f, err := root.OpenFile(rel, openFlags, 0)
	if err != nil {
		return nil, 0, err
	}
	size, err := checkRegular(f, maxBytes)
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("%s: %w", rel, err)
	}
	return f, size, nil
}

// ReadRegular reads the regular file at path whole, as OpenRegular opens it:
// at most maxBytes bytes (negative: any size), even if the file grows while
// it is read.
func ReadRegular(path string, maxBytes int64) ([]byte, error) {
	f, size, err := OpenRegular(path, maxBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := readBounded(f, size, maxBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, nil
}

// checkRegular returns the size of the open file f if it is a regular file
// of at most maxBytes bytes (negative: any size).
func checkRegular(f *os.File, maxBytes int64) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if !st.Mode().IsRegular() {
		return 0, fmt.Errorf("%w (%s)", ErrNotRegular, fileKind(st.Mode()))
	}
	if maxBytes >= 0 && st.Size() > maxBytes {
		return 0, &LimitError{Field: "FileBytes", Have: st.Size(), Max: maxBytes}
	}
	return st.Size(), nil
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "mode " + m.String()
}

// readBounded reads r, whose size was size when checked, failing with a
// LimitError past maxBytes (negative: no limit) should it have grown.
func readBounded(r io.Reader, size, maxBytes int64) ([]byte, error) {
	if maxBytes < 0 {
		buf := make([]byte, 0, size+1)
		return readAll(r, buf)
	}
	buf := make([]byte, 0, min(size, maxBytes)+1)
	data, err := readAll(io.LimitReader(r, maxBytes+1), buf)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > maxBytes {
		return nil, &LimitError{Field: "FileBytes", Have: int64(len(data)), Max: maxBytes}
	}
	return data, nil
}

// readAll is io.ReadAll into buf, so that a file of known size is read
// without growing the slice.
func readAll(r io.Reader, buf []byte) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// files reads the files one model load needs: the model file, then the
// buffers and images its URIs name, relative to the model's directory.
// Each file is read once, however often the model names it, and all count
// against one FileBytes budget. With a root, every file must resolve,
// symbolic links followed, inside it.
type files struct {
	root     *os.Root // nil: not confined
	rootDir  string   // root's real path (no symbolic links)
	dir      string   // the model's directory, where URIs are resolved
	bytes    budget
	contents map[string][]byte // by real path
	order    []string          // real paths, in the order first read
}

func newFiles(root string, maxBytes int64) (*files, error) {
	fa := &files{bytes: budget{field: "FileBytes", max: maxBytes}, contents: map[string][]byte{}}
	if root == "" {
		return fa, nil
	}
	abs, err := filepath.Abs(root)
	if err == nil {
		fa.rootDir, err = filepath.EvalSymlinks(abs)
	}
	if err == nil {
		fa.root, err = os.OpenRoot(fa.rootDir)
	}
	if err != nil {
		return nil, fmt.Errorf("root directory: %w", err)
	}
	return fa, nil
}

func (fa *files) close() {
	if fa.root != nil {
		fa.root.Close()
	}
}

// readModel reads the model file at p, setting the directory its URIs are
// resolved in. Its errors do not name p.
func (fa *files) readModel(p string) ([]byte, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, err
	}
	fa.dir = filepath.Dir(abs)
	return fa.read(abs)
}

// readURI reads the file a buffer or image URI names (already unescaped,
// slash-separated). Its errors name the URI.
func (fa *files) readURI(uri string) ([]byte, error) {
	if fa.root != nil && (path.IsAbs(uri) || filepath.IsAbs(filepath.FromSlash(uri)) || filepath.VolumeName(filepath.FromSlash(uri)) != "") {
		return nil, fmt.Errorf("uri %q: absolute paths are not allowed", uri)
	}
	data, err := fa.read(filepath.Join(fa.dir, filepath.FromSlash(uri)))
	if err != nil {
		return nil, fmt.Errorf("uri %q: %w", uri, err)
	}
	return data, nil
}

// read reads the file at the absolute path p.
func (fa *files) read(p string) ([]byte, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path's spelling is the caller's to give
		}
		return nil, err
	}
	if data, ok := fa.contents[real]; ok {
		return data, nil
	}
	var f *os.File
	if fa.root == nil {
		f, err = os.OpenFile(real, openFlags, 0)
	} else {
		rel, rerr := filepath.Rel(fa.rootDir, real)
		if rerr != nil || !filepath.IsLocal(rel) {
			return nil, fmt.Errorf("leads out of %s", fa.rootDir)
		}
		// Opened through the root, so that a link swapped in after
		// EvalSymlinks still cannot lead out.
		f, err = fa.root.OpenFile(rel, openFlags, 0)
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, err
	}
	defer f.Close()
	left := int64(-1)
	if fa.bytes.max >= 0 {
		left = fa.bytes.max - fa.bytes.used
	}
	size, err := checkRegular(f, -1)
	if err != nil {
		return nil, err
	}
	if err := fa.bytes.add(size); err != nil {
		return nil, fmt.Errorf("the model's files come to %w", err)
	}
	data, err := readBounded(f, size, left)
	if err != nil {
		var le *LimitError
		if errors.As(err, &le) {
			// It grew after fstat: report the model's total, as add does.
			le.Have, le.Max = satAdd(fa.bytes.used-size, le.Have), fa.bytes.max
			return nil, fmt.Errorf("the model's files come to %w", err)
		}
		return nil, err
	}
	fa.bytes.used += int64(len(data)) - size
	fa.contents[real] = data
	fa.order = append(fa.order, real)
	return data, nil
}

// bufferFS is the file system qmuntal/gltf reads external buffers from:
// every read goes through files, with its confinement and budget.
type bufferFS struct{ fa *files }

// ReadFile is what qmuntal/gltf calls (fs.ReadFile prefers it to Open).
func (b bufferFS) ReadFile(name string) ([]byte, error) {
	data, err := b.fa.readURI(name)
	if err != nil {
		return nil, fmt.Errorf("buffer %w", err)
	}
	return data, nil
}

// Open satisfies fs.FS; qmuntal/gltf does not call it.
func (b bufferFS) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: errors.ErrUnsupported}
}
