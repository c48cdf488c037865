package models

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// FormatFunc reads the model file at path (absolute) through r, which
// holds the files read so far, the budgets they share and the load's
// options. A reader reads every file through r (ReadFile, Load), so that
// confinement and FileBytes apply, and counts what it builds
// (CountGeometry, CountNodes) before allocating it. Its errors need not
// name path: Load adds it where they do not.
type FormatFunc func(r *Reader, path string) (*Model, error)

var (
	formatsMu sync.RWMutex
	formats   = map[string]FormatFunc{}
)

// RegisterFormat makes Load and LoadWith read files whose name ends in ext
// (".stl"; compared without regard to case) with fn, like
// image.RegisterFormat: a package holding a reader registers it in its
// init. Built in: .gltf and .glb (glTF 2.0), .stl (binary and ASCII),
// .obj (with .mtl colours) and .dae (Collada). Package models/urdf
// registers .urdf.
func RegisterFormat(ext string, fn FormatFunc) {
	formatsMu.Lock()
	defer formatsMu.Unlock()
	formats[strings.ToLower(ext)] = fn
}

// Formats lists the registered extensions, sorted.
func Formats() []string {
	formatsMu.RLock()
	defer formatsMu.RUnlock()
	var out []string
	for e := range formats {
		out = append(out, e)
	}
	slices.Sort(out)
	return out
}

func formatOf(path string) (FormatFunc, bool) {
	formatsMu.RLock()
	defer formatsMu.RUnlock()
	fn, ok := formats[strings.ToLower(filepath.Ext(path))]
	return fn, ok
}

// ErrUnsupportedFormat is wrapped by errors for a file whose extension no
// reader is registered for.
var ErrUnsupportedFormat = fmt.Errorf("unsupported model format")

func unsupported(path string) error {
	ext := filepath.Ext(path)
	if ext == "" {
		ext = "(no extension)"
	}
	return fmt.Errorf("%w %q (have %s)", ErrUnsupportedFormat, ext, strings.Join(Formats(), ", "))
}

// Reader is one model load in progress, for FormatFunc implementations:
// every file it reads counts against one FileBytes budget and, with a
// Root, stays confined to it; the meshes of all the files it loads share
// one Vertices, Triangles and Nodes budget (a URDF and all its meshes are
// one model).
type Reader struct {
	fa                 *files
	opts               LoadOptions // Limits resolved
	verts, tris, nodes budget
	pixels             int64
	depth              int
}

// Options returns the load's options, Limits resolved (no zero fields).
func (r *Reader) Options() LoadOptions { return r.opts }

// ReadFile reads the regular file at path (absolute, or relative to the
// working directory) within the load's FileBytes budget and confinement.
// A file read twice costs once. Its errors do not name path.
func (r *Reader) ReadFile(path string) ([]byte, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	return r.fa.read(abs)
}

// CountGeometry counts vertices and triangles a reader is about to build
// against the load's budgets, before it allocates them.
func (r *Reader) CountGeometry(vertices, triangles int64) error {
	if err := r.verts.add(vertices); err != nil {
		return fmt.Errorf("the model has %w", err)
	}
	if err := r.tris.add(triangles); err != nil {
		return fmt.Errorf("the model has %w", err)
	}
	return nil
}

// CountNodes counts n model nodes against the load's Nodes budget.
func (r *Reader) CountNodes(n int) error {
	if err := r.nodes.add(int64(n)); err != nil {
		return fmt.Errorf("the model has %w", err)
	}
	return nil
}

// maxFormatNesting bounds files loading files (a URDF naming a URDF).
const maxFormatNesting = 4

// Load reads another model file (a mesh a URDF names) by its extension,
// within what is left of the load's budgets. Errors name path.
func (r *Reader) Load(path string) (*Model, error) {
	fn, ok := formatOf(path)
	if !ok {
		return nil, fmt.Errorf("%s: %w", path, unsupported(path))
	}
	if r.depth >= maxFormatNesting {
		return nil, fmt.Errorf("%s: model files nest more than %d deep", path, maxFormatNesting)
	}
	r.depth++
	defer func() { r.depth-- }()
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	r.fa.dir = filepath.Dir(abs)
	m, err := fn(r, abs)
	if err != nil {
		if !strings.Contains(err.Error(), path) {
			err = fmt.Errorf("%s: %w", path, err)
		}
		return nil, err
	}
	m.Path = abs
	return m, nil
}

// readURI reads a file named relative to the model being read.
func (r *Reader) readURI(uri string) ([]byte, error) { return r.fa.readURI(uri) }

func newReader(opts LoadOptions) (*Reader, error) {
	lim := opts.Limits.resolved()
	opts.Limits = lim
	fa, err := newFiles(opts.Root, lim.FileBytes)
	if err != nil {
		return nil, err
	}
	return &Reader{fa: fa, opts: opts,
		verts: budget{field: "Vertices", max: lim.Vertices},
		tris:  budget{field: "Triangles", max: lim.Triangles},
		nodes: budget{field: "Nodes", max: int64(lim.Nodes)},
	}, nil
}

// Files returns the absolute paths of the files loading m read (the model
// file, its buffers, images, materials and meshes), in the order they were
// first read, symbolic links resolved; nil for a model built in memory.
func (m *Model) Files() []string { return m.files }

func init() {
	RegisterFormat(".gltf", loadGLTF)
	RegisterFormat(".glb", loadGLTF)
}

// loadGLTF reads a glTF file within what is left of r's budgets.
func loadGLTF(r *Reader, path string) (*Model, error) {
	data, err := r.fa.readModel(path)
	if err != nil {
		return nil, fmt.Errorf("models: %s: %w", path, err)
	}
	lim := r.opts.Limits
	left := func(b budget) int64 {
		if b.max < 0 {
			return -1
		}
		return b.max - b.used
	}
	// decode takes limits as they are (zero: nothing left).
	lim.Vertices, lim.Triangles, lim.Nodes = left(r.verts), left(r.tris), int(left(r.nodes))
	m, err := decode(data, bufferFS{r.fa}, path, r.fa, lim)
	if err != nil {
		return nil, err
	}
	v, t, n := m.Counts()
	r.verts.used, r.tris.used = satAdd(r.verts.used, v), satAdd(r.tris.used, t)
	r.nodes.used += int64(n)
	r.pixels += m.imagePixels
	return m, nil
}
