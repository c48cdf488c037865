package models

import (
	"fmt"
	"os"
	"path/filepath"
)

// Limits bound what loading one model file may cost, so that a small
// hostile file cannot take a host's memory or time. Zero fields take the
// DefaultLimits value; negative fields mean no limit.
//
// Every count is checked before the data it counts is read or decoded: file
// sizes from fstat, image sizes from their headers, vertices and triangles
// from accessor counts, nodes from the document's node list.
type Limits struct {
	// FileBytes bounds the bytes read for one model: the model file, its
	// external buffers and its images together, each file read once
	// however often the model names it.
	FileBytes int64
	// ImagePixels bounds the pixels (width x height) of all images the
	// model's materials use, each image counted once however many
	// materials use it.
	ImagePixels int64
	// Vertices bounds the vertices of all primitives of the model, each
	// primitive counted once (nodes sharing a mesh do not add to it): per
	// primitive the larger of its POSITION count and the vertices it holds
	// once loaded (a primitive without normals is flat shaded, with three
	// vertices per triangle).
	Vertices int64
	// Triangles bounds the triangles of all primitives of the model, each
	// primitive counted once.
	Triangles int64
	// Nodes bounds the nodes in the model's document. As the document
	// must be decoded before its nodes can be counted, it also bounds the
	// JSON before decoding: at most 16 objects and 64 values (objects,
	// arrays and their members) per node allowed, and 65,536 objects and
	// 1 Mi values whatever the limit.
	Nodes int
}

// DefaultLimits suit the bundled scenes with a wide margin: 256 MiB read
// per model, 64 Mpixels of images, 16 Mi vertices and triangles and 100,000
// nodes. Scenes apply them to every model they load (scene.Options.Limits,
// and the simvis flags --max-model-mib, --max-image-mpixels,
// --max-vertices, --max-triangles and --max-nodes).
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
	// inside Root too. Symbolic links that stay inside Root are followed.
	Root   string
	Limits Limits
	// PackagePath lists the directories package://PKG/... URIs (URDF
	// meshes) are looked up in: PKG is a folder of that name directly
	// under an entry, with or without a package.xml; the first entry
	// holding it wins. The URDF's own enclosing package (the nearest
	// folder above it holding a package.xml) is found without it. Nil
	// means DefaultPackagePath.
	PackagePath []string
	// Collision makes a URDF's links show their collision geometry
	// instead of their visual geometry.
	Collision bool
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

// LimitError is a model over one of its Limits. Errors from Load, LoadWith
// and Decode wrap it (errors.As finds it) with the model file and the part
// of the model that went over.
type LimitError struct {
	Field string // the Limits field: "FileBytes", "ImagePixels", "Vertices", "Triangles" or "Nodes"
	Have  int64  // what the model needs, counted up to where it went over
	Max   int64  // the limit
}

// limitNames gives each Limits field what it counts and the simvis flag
// that sets it, for error messages.
var limitNames = map[string][2]string{
	"FileBytes":   {"bytes", "--max-model-mib"},
	"ImagePixels": {"image pixels", "--max-image-mpixels"},
	"Vertices":    {"vertices", "--max-vertices"},
	"Triangles":   {"triangles", "--max-triangles"},
	"Nodes":       {"nodes", "--max-nodes"},
}

func (e *LimitError) Error() string {
	n := limitNames[e.Field]
	return fmt.Sprintf("%d %s, over the limit of %d (raise it with %s or scene.Options.Limits.Model.%s)",
		e.Have, n[0], e.Max, n[1], e.Field)
}

// budget counts one quantity against its limit (negative: none).
type budget struct {
	field string
	used  int64
	max   int64
}

// add counts n more and fails once the total exceeds the limit.
func (b *budget) add(n int64) error {
	if b.max < 0 {
		return nil
	}
	// n > max-used rather than used+n > max: hostile counts may be near the int64 range.
	if n > b.max-b.used {
		return &LimitError{Field: b.field, Have: satAdd(b.used, n), Max: b.max}
	}
	b.used += n
	return nil
}

// satAdd adds non-negative numbers, saturating instead of overflowing.
func satAdd(a, b int64) int64 {
	if a > 1<<63-1-b {
		return 1<<63 - 1
	}
	return a + b
}

// LoadWith is Load under opts: confined to opts.Root, if set, and within
// opts.Limits. A model over a limit is refused with an error naming the
// file, what went over and which limit (a *LimitError); one that names a
// file outside Root, or anything but a regular file, is refused naming the
// file and the URI.
func LoadWith(path string, opts LoadOptions) (*Model, error) {
	if opts.PackagePath == nil {
		opts.PackagePath = DefaultPackagePath
	}
	return load(path, opts)
}

// Counts returns what instantiating the model once adds: vertices and
// triangles over every node's mesh (a mesh used by two nodes counts twice)
// and the number of nodes reachable from its roots. Scenes sum it per
// command against their budgets. It takes time linear in nodes plus
// primitives and no stack however deep the hierarchy: each mesh's sums are
// computed once, since a small file can have 100,000 nodes share a mesh of
// 100,000 primitives. Sums saturate at the int64 range.
func (m *Model) Counts() (vertices, triangles int64, nodes int) {
	type sums struct{ vertices, triangles int64 }
	perMesh := map[*Mesh]sums{}
	stack := append([]*Node(nil), m.Roots...)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n == nil {
			continue
		}
		nodes++
		if n.Mesh != nil {
			s, ok := perMesh[n.Mesh]
			if !ok {
				for _, p := range n.Mesh.Primitives {
					if p != nil {
						s.vertices = satAdd(s.vertices, int64(len(p.Positions)))
						s.triangles = satAdd(s.triangles, int64(len(p.Indices)/3))
					}
				}
				perMesh[n.Mesh] = s
			}
			vertices = satAdd(vertices, s.vertices)
			triangles = satAdd(triangles, s.triangles)
		}
		stack = append(stack, n.Children...)
	}
	return vertices, triangles, nodes
}

// DefaultPackagePath is the package search path of loads whose
// LoadOptions.PackagePath is nil: at start the entries of
// $ROS_PACKAGE_PATH (separated by the list separator, ':'). The simvis
// commands set it from their --package-path flags followed by
// $ROS_PACKAGE_PATH.
var DefaultPackagePath = EnvPackagePath()

// EnvPackagePath returns the entries of $ROS_PACKAGE_PATH.
func EnvPackagePath() []string {
	var out []string
	for _, e := range filepath.SplitList(os.Getenv("ROS_PACKAGE_PATH")) {
		if e != "" {
			out = append(out, e)
		}
	}
	return out
}
