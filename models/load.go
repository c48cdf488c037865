package models

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // glTF textures are PNG or JPEG
	_ "image/png"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/qmuntal/gltf"
)

// supportedRequired lists the extensionsRequired a file may declare.
// KHR_mesh_quantization only widens the accepted attribute component types.
// KHR_texture_transform is baked into the texture coordinates at load.
var supportedRequired = []string{"KHR_mesh_quantization", textureTransformExtension}

// Limits against hostile files: an accessor without bufferView and a texture
// header are the only places where a file can ask for memory it does not hold.
const (
	maxBufferlessCount = 1 << 24
	maxTextureSide     = 16384
)

// Load reads a .gltf or .glb file (told apart by content) within
// DefaultLimits, reading only regular files. External buffers and images are
// resolved relative to the file's directory. It is LoadWith with zero
// LoadOptions.
func Load(path string) (*Model, error) {
	return LoadWith(path, LoadOptions{})
}

func load(path string, opts LoadOptions) (*Model, error) {
	r, err := newReader(opts)
	if err != nil {
		return nil, fmt.Errorf("models: %s: %w", path, err)
	}
	defer r.fa.close()
	// Other extensions are read as glTF, told apart from GLB by content,
	// as they always were.
	fn, ok := formatOf(path)
	if !ok {
		fn = loadGLTF
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("models: %s: %w", path, err)
	}
	r.fa.dir = filepath.Dir(abs)
	m, err := fn(r, path)
	if err != nil {
		if !strings.HasPrefix(err.Error(), "models: ") {
			err = fmt.Errorf("models: %s: %w", path, err)
		}
		return nil, err
	}
	m.Path = abs
	m.files = r.fa.order
	m.fileBytes = r.fa.bytes.used
	m.imagePixels = r.pixels
	return m, nil
}

// Decode reads a .gltf or .glb document from r within DefaultLimits; name
// is used in error messages and for Model.Name. Only embedded buffers and
// images (GLB chunk, data URIs) can be resolved; use Load for files
// referring to others.
func Decode(r io.Reader, name string) (*Model, error) {
	return decodeWith(r, name, DefaultLimits)
}

func decodeWith(r io.Reader, name string, lim Limits) (*Model, error) {
	data, err := readBounded(r, 0, lim.FileBytes)
	if err != nil {
		return nil, fmt.Errorf("models: %s: %w", name, err)
	}
	return decode(data, nil, name, nil, lim)
}

// decode reads the .gltf or .glb document data; fsys (nil for none) holds
// its external buffers.
func decode(data []byte, fsys fs.FS, name string, fa *files, lim Limits) (m *Model, err error) {
	// qmuntal/gltf trusts some inputs (a null buffer crashes its decoder);
	// bad files must give errors, not take the simulator down.
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, recovered(name, r)
		}
	}()
	if lim.Nodes >= 0 {
		objects, values := jsonCounts(data)
		if limit := max(jsonObjectsPerNode*int64(lim.Nodes), 1<<16); objects > limit {
			return nil, fmt.Errorf("models: %s: the document has %d JSON objects, more than %d for each node allowed: %w", name, objects,
				jsonObjectsPerNode, &LimitError{Field: "Nodes", Have: (objects + jsonObjectsPerNode - 1) / jsonObjectsPerNode, Max: int64(lim.Nodes)})
		}
		if limit := max(jsonValuesPerNode*int64(lim.Nodes), 1<<20); values > limit {
			return nil, fmt.Errorf("models: %s: the document has %d JSON values, more than %d for each node allowed: %w", name, values,
				jsonValuesPerNode, &LimitError{Field: "Nodes", Have: (values + jsonValuesPerNode - 1) / jsonValuesPerNode, Max: int64(lim.Nodes)})
		}
	}
	doc := new(gltf.Document)
	if err := gltf.NewDecoderFS(bytes.NewReader(data), fsys).Decode(doc); err != nil {
		if serr := samplerFault(data); serr != nil {
			return nil, fmt.Errorf("models: %s: %w", name, serr)
		}
		return nil, fmt.Errorf("models: %s: cannot read glTF: %w", name, err)
	}
	l := &loader{name: name, files: fa, doc: doc, limits: lim, images: map[int]image.Image{},
		geometry: map[geometryKey]*Primitive{},
		pixels:   budget{field: "ImagePixels", max: lim.ImagePixels},
	}
	if m, err = l.model(); err != nil {
		return nil, fmt.Errorf("models: %s: %w", name, err)
	}
	m.imagePixels = l.pixels.used
	if lim.FileBytes >= 0 {
		m.fileBytes = int64(len(data))
	}
	if fa != nil {
		m.fileBytes = fa.bytes.used
	}
	return m, nil
}

// loader converts one decoded document; its errors lack the "models: file:"
// prefix, which decode adds.
type loader struct {
	name      string
	files     *files // nil when external files cannot be resolved
	doc       *gltf.Document
	limits    Limits
	materials []*Material
	texCoord  []uvTransform // how each material's base color texture reads its coordinates
	defMat    *Material
	images    map[int]image.Image
	pixels    budget
	// Primitives reading the same accessors the same way share their
	// geometry: a file cannot make one accessor cost memory per use.
	geometry map[geometryKey]*Primitive
}

func (l *loader) model() (*Model, error) {
	doc := l.doc
	for _, e := range doc.ExtensionsRequired {
		if !slices.Contains(supportedRequired, e) {
			return nil, fmt.Errorf("unsupported required extension %q", e)
		}
	}
	// Everything that can ask for memory out of proportion to the file is
	// counted before anything is decoded.
	nodeBudget := budget{field: "Nodes", max: int64(l.limits.Nodes)}
	if err := nodeBudget.add(int64(len(doc.Nodes))); err != nil {
		return nil, fmt.Errorf("the document has %w", err)
	}
	for i, b := range doc.Buffers {
		if b != nil && b.Data == nil && b.URI != "" && !b.IsEmbeddedResource() && l.files == nil {
			return nil, fmt.Errorf("buffer %d: external file %q cannot be resolved (use Load)", i, b.URI)
		}
	}
	if err := l.countGeometry(); err != nil {
		return nil, err
	}

	base := filepath.Base(l.name)
	m := &Model{Name: strings.TrimSuffix(base, filepath.Ext(base))}

	for i, gm := range doc.Materials {
		mat, uv, err := l.material(i, gm)
		if err != nil {
			return nil, err
		}
		l.materials = append(l.materials, mat)
		l.texCoord = append(l.texCoord, uv)
	}
	m.Materials = append(m.Materials, l.materials...)

	for i, gm := range doc.Meshes {
		mesh, err := l.mesh(i, gm)
		if err != nil {
			return nil, err
		}
		m.Meshes = append(m.Meshes, mesh)
	}
	if l.defMat != nil {
		m.Materials = append(m.Materials, l.defMat)
	}

	nodes, hasParent, err := l.nodes(m.Meshes)
	if err != nil {
		return nil, err
	}

	scene, sceneIdx, err := l.scene()
	if err != nil {
		return nil, err
	}
	if m.Roots, err = roots(scene, sceneIdx, nodes, hasParent); err != nil {
		return nil, err
	}

	// Commands come from the default scene, else from the asset.
	where := fmt.Sprintf("%s: scene %d", l.name, sceneIdx)
	var found bool
	if scene != nil {
		if m.Commands, found, err = commands(scene.Extras, where); err != nil {
			return nil, fmt.Errorf("scene %d: %w", sceneIdx, err)
		}
	}
	if !found {
		if m.Commands, _, err = commands(doc.Asset.Extras, l.name+": asset"); err != nil {
			return nil, fmt.Errorf("asset: %w", err)
		}
	}
	return m, nil
}

// scene returns the default scene: the one named by "scene", else the first
// one; nil if there is none.
func (l *loader) scene() (*gltf.Scene, int, error) {
	doc := l.doc
	if doc.Scene == nil {
		if len(doc.Scenes) > 0 && doc.Scenes[0] != nil {
			return doc.Scenes[0], 0, nil
		}
		return nil, 0, nil
	}
	i := *doc.Scene
	if i < 0 || i >= len(doc.Scenes) || doc.Scenes[i] == nil {
		return nil, 0, fmt.Errorf("default scene %d out of range (%d scenes)", i, len(doc.Scenes))
	}
	return doc.Scenes[i], i, nil
}

// roots returns the scene's root nodes, or all parentless nodes if scene is nil.
func roots(scene *gltf.Scene, sceneIdx int, nodes []*Node, hasParent []bool) ([]*Node, error) {
	var out []*Node
	if scene == nil {
		for i, n := range nodes {
			if !hasParent[i] {
				out = append(out, n)
			}
		}
		return out, nil
	}
	seen := map[int]bool{}
	for _, r := range scene.Nodes {
		switch {
		case r < 0 || r >= len(nodes):
			return nil, fmt.Errorf("scene %d: node %d out of range (%d nodes)", sceneIdx, r, len(nodes))
		case hasParent[r]:
			return nil, fmt.Errorf("scene %d: root node %d has a parent", sceneIdx, r)
		case seen[r]:
			return nil, fmt.Errorf("scene %d: node %d listed twice", sceneIdx, r)
		}
		seen[r] = true
		out = append(out, nodes[r])
	}
	return out, nil
}

// nodes converts all nodes and links them, checking that they form a forest.
func (l *loader) nodes(meshes []*Mesh) ([]*Node, []bool, error) {
	gnodes := l.doc.Nodes
	nodes := make([]*Node, len(gnodes))
	for i, gn := range gnodes {
		if gn == nil {
			return nil, nil, fmt.Errorf("node %d is null", i)
		}
		n, err := l.node(gn, meshes)
		if err != nil {
			return nil, nil, fmt.Errorf("node %d %q: %w", i, gn.Name, err)
		}
		nodes[i] = n
	}
	// With at most one parent per node and parentless roots, what Walk
	// reaches is a tree, so cycles need no separate check.
	hasParent := make([]bool, len(gnodes))
	for i, gn := range gnodes {
		for _, c := range gn.Children {
			switch {
			case c < 0 || c >= len(nodes):
				return nil, nil, fmt.Errorf("node %d %q: child %d out of range (%d nodes)", i, gn.Name, c, len(nodes))
			case hasParent[c]:
				return nil, nil, fmt.Errorf("node %d %q: child %d has more than one parent", i, gn.Name, c)
			}
			hasParent[c] = true
			nodes[i].Children = append(nodes[i].Children, nodes[c])
		}
	}
	return nodes, hasParent, nil
}

func (l *loader) node(gn *gltf.Node, meshes []*Mesh) (*Node, error) {
	n := &Node{Name: gn.Name}
	var local mgl64.Mat4
	if mat := gn.MatrixOrDefault(); mat != gltf.DefaultMatrix {
		local = mgl64.Mat4(mat)
	} else {
		t, r, s := gn.TranslationOrDefault(), gn.RotationOrDefault(), gn.ScaleOrDefault()
		q := mgl64.Quat{W: r[3], V: mgl64.Vec3{r[0], r[1], r[2]}}
		local = mgl64.Translate3D(t[0], t[1], t[2]).Mul4(q.Normalize().Mat4()).Mul4(mgl64.Scale3D(s[0], s[1], s[2]))
	}
	for _, v := range local {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.New("transform has non-finite values")
		}
	}
	n.Local = toZUp(local)
	if gn.Mesh != nil {
		if *gn.Mesh < 0 || *gn.Mesh >= len(meshes) {
			return nil, fmt.Errorf("mesh %d out of range (%d meshes)", *gn.Mesh, len(meshes))
		}
		n.Mesh = meshes[*gn.Mesh]
	}
	var err error
	n.InsertionPoint, err = insertionPoint(gn.Extras)
	return n, err
}
