package models

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // glTF textures are PNG or JPEG
	_ "image/png"
	"io"
	"io/fs"
	"math"
	"net/url"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/qmuntal/gltf"
	"github.com/qmuntal/gltf/modeler"
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

// jsonObjectsPerNode bounds the JSON objects of a document by its node
// limit: decoding turns each object, a few bytes in the file, into a
// struct of up to a few hundred bytes, and the node count can only be
// checked once the document is decoded.
const jsonObjectsPerNode = 16

// jsonValuesPerNode bounds the JSON values (objects, arrays and their
// members) likewise: "[]," in extras, or "0," in an accessor's min, decodes
// to tens of bytes each, so a 99 MB array of empty arrays took 2.8 GB and
// 14 s. The bundled models have at most 52 per node; a document may have
// 1 Mi whatever its nodes.
const jsonValuesPerNode = 64

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

// recovered is the error for a panic r recovered while decoding name. It
// must be called by the deferred function that recovered it, while the
// panicking frames are still on the stack. A panic raised in qmuntal/gltf
// is a malformed file it trusted; one raised elsewhere is a bug of this
// package, which fuzzing must report rather than take for a file error.
func recovered(name string, r any) error {
	if panicSite() == "github.com/qmuntal/gltf" {
		return fmt.Errorf("models: %s: malformed glTF (%v)", name, r)
	}
	return fmt.Errorf("models: %s: %s (%v)", name, internalError, r)
}

// internalError marks errors from panics of this package's own code.
const internalError = "internal error of the loader, please report"

// panicSite returns the package path of the function that raised the
// panic being recovered: the first frame below runtime.gopanic that is
// not the runtime's (a nil dereference or a bounds check passes through
// runtime.sigpanic or runtime.panicIndex). It returns "" if none is found.
func panicSite() string {
	pc := make([]uintptr, 64)
	frames := runtime.CallersFrames(pc[:runtime.Callers(1, pc)])
	panicking := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			panicking = true
		case panicking && !strings.HasPrefix(f.Function, "runtime."):
			return funcPackage(f.Function)
		}
		if !more {
			return ""
		}
	}
}

// funcPackage returns the package path of a function name as the runtime
// gives it ("github.com/qmuntal/gltf.(*Decoder).Decode").
func funcPackage(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	if dot := strings.IndexByte(fn[slash+1:], '.'); dot >= 0 {
		return fn[:slash+1+dot]
	}
	return fn
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

// material converts material i; it returns with it how its base color
// texture reads the texture coordinates (the TEXCOORD set, and the
// KHR_texture_transform that primitives bake into their TexCoords).
func (l *loader) material(i int, gm *gltf.Material) (*Material, uvTransform, error) {
	var uv uvTransform
	if gm == nil {
		return nil, uv, fmt.Errorf("material %d is null", i)
	}
	m := &Material{
		Name:        gm.Name,
		BaseColor:   [4]float32{1, 1, 1, 1},
		AlphaCutoff: float32(gm.AlphaCutoffOrDefault()),
		DoubleSided: gm.DoubleSided,
		Metallic:    1,
		Roughness:   1,
	}
	for k, c := range gm.EmissiveFactor {
		// Finite and non-negative, as glTF requires; 0 to 1 in glTF 2.0
		// core (KHR_materials_emissive_strength raises the bound).
		if math.IsNaN(c) || c < 0 || c > 1e4 {
			return nil, uv, fmt.Errorf("material %d %q: emissiveFactor[%d] = %g is not in [0, 1e4]", i, gm.Name, k, c)
		}
		m.Emissive[k] = float32(c)
	}
	switch gm.AlphaMode {
	case gltf.AlphaOpaque:
		m.AlphaMode = AlphaOpaque
	case gltf.AlphaMask:
		m.AlphaMode = AlphaMask
	case gltf.AlphaBlend:
		m.AlphaMode = AlphaBlend
	default:
		return nil, uv, fmt.Errorf("material %d %q: unknown alpha mode %d", i, gm.Name, gm.AlphaMode)
	}
	pbr := gm.PBRMetallicRoughness
	if pbr == nil {
		return m, uv, nil
	}
	for k, c := range pbr.BaseColorFactorOrDefault() {
		m.BaseColor[k] = float32(c)
	}
	m.Metallic = float32(pbr.MetallicFactorOrDefault())
	m.Roughness = float32(pbr.RoughnessFactorOrDefault())
	ti := pbr.BaseColorTexture
	if ti == nil {
		return m, uv, nil
	}
	if ti.Index < 0 || ti.Index >= len(l.doc.Textures) || l.doc.Textures[ti.Index] == nil {
		return nil, uv, fmt.Errorf("material %d %q: texture %d out of range (%d textures)", i, gm.Name, ti.Index, len(l.doc.Textures))
	}
	tex := l.doc.Textures[ti.Index]
	if tex.Sampler != nil {
		si := *tex.Sampler
		if si < 0 || si >= len(l.doc.Samplers) || l.doc.Samplers[si] == nil {
			return nil, uv, fmt.Errorf("material %d %q: texture %d: sampler %d out of range (%d samplers)", i, gm.Name, ti.Index, si, len(l.doc.Samplers))
		}
		s, err := samplerFromGLTF(l.doc.Samplers[si])
		if err != nil {
			return nil, uv, fmt.Errorf("material %d %q: texture %d: sampler %d: %w", i, gm.Name, ti.Index, si, err)
		}
		m.Sampler = s
	}
	uv.set = ti.TexCoord
	if x, ok := ti.Extensions[textureTransformExtension]; ok {
		if err := textureTransform(x, &uv); err != nil {
			return nil, uv, fmt.Errorf("material %d %q: texture %d: %s: %w", i, gm.Name, ti.Index, textureTransformExtension, err)
		}
	}
	if tex.Source == nil {
		// The image comes from an extension (KTX2, WebP, ...) we cannot
		// decode; had it been required, model() would have refused the file.
		return m, uv, nil
	}
	img, err := l.image(*tex.Source)
	if err != nil {
		return nil, uv, fmt.Errorf("material %d %q: texture %d: %w", i, gm.Name, ti.Index, err)
	}
	m.BaseColorTexture = img
	return m, uv, nil
}

// image decodes image i once, however many textures use it.
func (l *loader) image(i int) (image.Image, error) {
	if img, ok := l.images[i]; ok {
		return img, nil
	}
	if i < 0 || i >= len(l.doc.Images) || l.doc.Images[i] == nil {
		return nil, fmt.Errorf("image %d out of range (%d images)", i, len(l.doc.Images))
	}
	gi := l.doc.Images[i]
	var (
		data []byte
		err  error
	)
	switch {
	case gi.BufferView != nil:
		data, err = l.bufferView(*gi.BufferView)
	case strings.HasPrefix(gi.URI, "data:"):
		data, err = dataURI(gi.URI)
	case gi.URI == "":
		err = errors.New("has neither uri nor bufferView")
	case l.files == nil:
		err = fmt.Errorf("external file %q cannot be resolved (use Load)", gi.URI)
	default:
		var p string
		if p, err = url.PathUnescape(gi.URI); err != nil {
			err = fmt.Errorf("uri %q: %w", gi.URI, err)
		} else {
			data, err = l.files.readURI(p)
		}
	}
	if err == nil {
		// The header tells the size: check it before decoding allocates it.
		var cfg image.Config
		if cfg, _, err = image.DecodeConfig(bytes.NewReader(data)); err == nil {
			if cfg.Width > maxTextureSide || cfg.Height > maxTextureSide {
				err = fmt.Errorf("%dx%d exceeds %d pixels a side", cfg.Width, cfg.Height, maxTextureSide)
			} else if perr := l.pixels.add(int64(cfg.Width) * int64(cfg.Height)); perr != nil {
				err = fmt.Errorf("%dx%d brings the model's images to %w", cfg.Width, cfg.Height, perr)
			}
		}
	}
	var img image.Image
	if err == nil {
		img, _, err = image.Decode(bytes.NewReader(data))
	}
	if err != nil {
		return nil, fmt.Errorf("image %d %q: %w", i, gi.Name, err)
	}
	l.images[i] = img
	return img, nil
}

// dataURI returns the payload of a base64 data URI.
func dataURI(uri string) ([]byte, error) {
	meta, payload, ok := strings.Cut(strings.TrimPrefix(uri, "data:"), ",")
	if !ok || !strings.HasSuffix(meta, ";base64") {
		return nil, errors.New("data URI is not base64")
	}
	return base64.StdEncoding.DecodeString(payload)
}

func (l *loader) mesh(i int, gm *gltf.Mesh) (*Mesh, error) {
	if gm == nil {
		return nil, fmt.Errorf("mesh %d is null", i)
	}
	m := &Mesh{Name: gm.Name}
	for k, gp := range gm.Primitives {
		p, err := l.primitive(gp)
		if err != nil {
			return nil, fmt.Errorf("mesh %d %q primitive %d: %w", i, gm.Name, k, err)
		}
		m.Primitives = append(m.Primitives, p)
	}
	return m, nil
}

// countGeometry counts the vertices and triangles of every primitive from
// accessor counts alone, against the limits, before any accessor is read.
func (l *loader) countGeometry() error {
	verts := budget{field: "Vertices", max: l.limits.Vertices}
	tris := budget{field: "Triangles", max: l.limits.Triangles}
	for i, gm := range l.doc.Meshes {
		if gm == nil {
			return fmt.Errorf("mesh %d is null", i)
		}
		for k, gp := range gm.Primitives {
			v, t, err := l.primitiveCounts(gp)
			if err == nil {
				if err = verts.add(v); err == nil {
					err = tris.add(t)
				}
				if err != nil {
					err = fmt.Errorf("the model's primitives come to %w", err)
				}
			}
			if err != nil {
				return fmt.Errorf("mesh %d %q primitive %d: %w", i, gm.Name, k, err)
			}
		}
	}
	return nil
}

// primitiveCounts returns what primitive will cost once loaded: the larger
// of its POSITION count and the vertices it holds (flat shading gives every
// triangle three), and its triangles.
func (l *loader) primitiveCounts(gp *gltf.Primitive) (vertices, triangles int64, err error) {
	if gp == nil {
		return 0, 0, errors.New("primitive is null")
	}
	switch gp.Mode {
	case gltf.PrimitiveTriangles, gltf.PrimitiveTriangleStrip, gltf.PrimitiveTriangleFan:
	default:
		return 0, 0, fmt.Errorf("mode %s not supported (only triangles, strips and fans)", gp.Mode)
	}
	pi, ok := gp.Attributes[gltf.POSITION]
	if !ok {
		return 0, 0, errors.New("POSITION accessor missing")
	}
	pa, err := l.accessor(pi)
	if err != nil {
		return 0, 0, fmt.Errorf("POSITION: %w", err)
	}
	nPos, nIdx := int64(pa.Count), int64(pa.Count)
	if gp.Indices != nil {
		ia, err := l.accessor(*gp.Indices)
		if err != nil {
			return 0, 0, fmt.Errorf("indices: %w", err)
		}
		nIdx = int64(ia.Count)
	}
	switch gp.Mode {
	case gltf.PrimitiveTriangleStrip, gltf.PrimitiveTriangleFan:
		triangles = max(0, nIdx-2)
	default:
		if nIdx%3 != 0 {
			return 0, 0, fmt.Errorf("%d indices do not make whole triangles", nIdx)
		}
		triangles = nIdx / 3
	}
	held := nPos
	if _, ok := gp.Attributes[gltf.NORMAL]; !ok {
		held = 3 * triangles
	}
	return max(nPos, held), triangles, nil
}

// geometryKey identifies what a primitive's geometry is built from:
// accessors (-1 for none), mode, and how the texture coordinates are
// transformed (the zero uvTransform where uv is -1), so that primitives
// whose materials transform them differently do not share them.
type geometryKey struct {
	mode                        gltf.PrimitiveMode
	position, normal, uv, index int
	uvt                         uvTransform
}

func (l *loader) primitive(gp *gltf.Primitive) (*Primitive, error) {
	if gp == nil {
		return nil, errors.New("primitive is null")
	}
	switch gp.Mode {
	case gltf.PrimitiveTriangles, gltf.PrimitiveTriangleStrip, gltf.PrimitiveTriangleFan:
	default:
		return nil, fmt.Errorf("mode %s not supported (only triangles, strips and fans)", gp.Mode)
	}
	p := &Primitive{}
	var uvt uvTransform
	matIdx := -1
	if gp.Material == nil {
		if l.defMat == nil {
			l.defMat = DefaultMaterial()
		}
		p.Material = l.defMat
	} else {
		if *gp.Material < 0 || *gp.Material >= len(l.materials) {
			return nil, fmt.Errorf("material %d out of range (%d materials)", *gp.Material, len(l.materials))
		}
		matIdx = *gp.Material
		p.Material, uvt = l.materials[matIdx], l.texCoord[matIdx]
	}

	pi, ok := gp.Attributes[gltf.POSITION]
	if !ok {
		return nil, errors.New("POSITION accessor missing")
	}
	uvName := fmt.Sprintf("TEXCOORD_%d", uvt.set)
	key := geometryKey{mode: gp.Mode, position: pi, normal: -1, uv: -1, index: -1}
	if ni, ok := gp.Attributes[gltf.NORMAL]; ok {
		key.normal = ni
	}
	if ti, ok := gp.Attributes[uvName]; ok {
		key.uv, key.uvt = ti, uvt
	}
	if gp.Indices != nil {
		key.index = *gp.Indices
	}
	if g, ok := l.geometry[key]; ok {
		// Shared slices: loaded geometry is read-only (UpdateKey's hash
		// stands for it).
		p.Positions, p.Normals, p.TexCoords, p.Indices, p.Key = g.Positions, g.Normals, g.TexCoords, g.Indices, g.Key
		return p, nil
	}

	pos, err := l.readVec3(pi, -1)
	if err != nil {
		return nil, fmt.Errorf("POSITION: %w", err)
	}
	n := len(pos)
	p.Positions = make([]mgl32.Vec3, n)
	for k, v := range pos {
		p.Positions[k] = vecToZUp(v)
	}
	if key.normal >= 0 {
		nrm, err := l.readVec3(key.normal, n)
		if err != nil {
			return nil, fmt.Errorf("NORMAL: %w", err)
		}
		p.Normals = make([]mgl32.Vec3, n)
		for k, v := range nrm {
			p.Normals[k] = vecToZUp(v)
		}
	}
	// Read the set the base color texture uses; it becomes TexCoords,
	// with the texture's KHR_texture_transform baked in.
	if key.uv >= 0 {
		uv, err := l.readVec2(key.uv, n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", uvName, err)
		}
		p.TexCoords = make([]mgl32.Vec2, n)
		for k, v := range uv {
			p.TexCoords[k] = v
		}
		if uvt.on {
			if err := transformUVs(p.TexCoords, &uvt); err != nil {
				gm := l.doc.Materials[matIdx]
				ti := gm.PBRMetallicRoughness.BaseColorTexture.Index
				return nil, fmt.Errorf("material %d %q: texture %d: %s of %s: %w", matIdx, gm.Name, ti, textureTransformExtension, uvName, err)
			}
		}
	}

	var idx []uint32
	if gp.Indices != nil {
		a, err := l.accessor(*gp.Indices)
		if err == nil {
			idx, err = modeler.ReadIndices(l.doc, a, nil)
		}
		if err != nil {
			return nil, fmt.Errorf("indices: %w", err)
		}
		for k, v := range idx {
			if int64(v) >= int64(n) {
				return nil, fmt.Errorf("index %d is %d, not below vertex count %d", k, v, n)
			}
		}
	} else {
		idx = make([]uint32, n)
		for k := range idx {
			idx[k] = uint32(k)
		}
	}
	switch gp.Mode {
	case gltf.PrimitiveTriangleStrip:
		idx = stripToTriangles(idx)
	case gltf.PrimitiveTriangleFan:
		idx = fanToTriangles(idx)
	default:
		if len(idx)%3 != 0 {
			return nil, fmt.Errorf("%d indices do not make whole triangles", len(idx))
		}
	}
	p.Indices = idx
	if p.Normals == nil {
		flatNormals(p)
	}
	p.UpdateKey()
	l.geometry[key] = p
	return p, nil
}

// jsonChunk returns the JSON of a .gltf document, or the JSON chunk of a
// .glb one (as much of it as data holds).
func jsonChunk(data []byte) []byte {
	if len(data) >= 20 && string(data[:4]) == "glTF" {
		n := int64(binary.LittleEndian.Uint32(data[12:16]))
		data = data[20:]
		if n < int64(len(data)) {
			data = data[:n]
		}
	}
	return data
}

// transformUVs applies t to uv in float64, refusing a result that float32
// cannot hold (a finite transform can still take coordinates there).
func transformUVs(uv []mgl32.Vec2, t *uvTransform) error {
	for k, c := range uv {
		u, v := t.apply(float64(c[0]), float64(c[1]))
		out := mgl32.Vec2{float32(u), float32(v)}
		if finite(c[0], c[1]) && !finite(out[0], out[1]) {
			return fmt.Errorf("vertex %d (%g, %g) goes to (%g, %g), not finite", k, c[0], c[1], out[0], out[1])
		}
		uv[k] = out
	}
	return nil
}

// jsonCounts counts the objects ('{' outside strings) and, roughly, the
// values (objects, arrays and the members after the first: '{', '[' and ','
// outside strings) in the JSON of a .gltf document, or in the JSON chunk of
// a .glb one.
func jsonCounts(data []byte) (objects, values int64) {
	data = jsonChunk(data)
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case escaped:
			escaped = false
		case inString:
			escaped = c == '\\'
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '{':
			objects++
			values++
		case c == '[' || c == ',':
			values++
		}
	}
	return objects, values
}
