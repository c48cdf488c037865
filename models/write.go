package models

import (
	"bytes"
	"errors"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/qmuntal/gltf"
	"github.com/qmuntal/gltf/modeler"
)

// Write stores m at path: binary glTF if path ends in .glb, otherwise a
// self-contained .gltf whose buffer is embedded as a data URI. Transforms and
// vertices go back to glTF's y-up frame, textures are stored as PNG with their sampler (texture transforms were
// baked into the texture coordinates at load), and
// primitives with identical geometry share their accessors.
func Write(path string, m *Model) error {
	data, err := encodeGLTF(m, strings.EqualFold(filepath.Ext(path), ".glb"))
	if err != nil {
		return fmt.Errorf("models: %s: %w", path, err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("models: %w", err)
	}
	return nil
}

// encodeGLTF returns m as glTF bytes: binary, or indented JSON with the buffer
// embedded as a data URI.
func encodeGLTF(m *Model, binary bool) ([]byte, error) {
	w := &writer{
		doc:    gltf.NewDocument(),
		meshes: map[*Mesh]int{},
		mats:   map[*Material]int{},
		geom:   map[[32]byte]geomAccessors{},
		nodes:  map[*Node]bool{},
	}
	if err := w.model(m); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := gltf.NewEncoder(&buf)
	enc.AsBinary = binary
	if !binary {
		enc.SetJSONIndent("", "  ")
	}
	if err := enc.Encode(w.doc); err != nil {
		return nil, fmt.Errorf("encoding glTF: %w", err)
	}
	return buf.Bytes(), nil
}

type geomAccessors struct {
	attrs   gltf.PrimitiveAttributes
	indices int
}

type writer struct {
	doc    *gltf.Document
	meshes map[*Mesh]int
	mats   map[*Material]int
	geom   map[[32]byte]geomAccessors // by geometry hash, recomputed here
	nodes  map[*Node]bool
}

func (w *writer) model(m *Model) error {
	w.doc.Asset.Generator = "simvis"
	scene := w.doc.Scenes[0]
	scene.Name = m.Name
	// Listed materials and meshes first, in order, so indices match m's.
	for _, mat := range m.Materials {
		if _, err := w.material(mat); err != nil {
			return err
		}
	}
	for _, mesh := range m.Meshes {
		if _, err := w.mesh(mesh); err != nil {
			return err
		}
	}
	for _, r := range m.Roots {
		i, err := w.tree(r)
		if err != nil {
			return err
		}
		scene.Nodes = append(scene.Nodes, i)
	}
	if len(m.Commands) > 0 {
		cmds := make([]string, len(m.Commands))
		for i, c := range m.Commands {
			x, err := singleElement(c.XML)
			if err != nil {
				return fmt.Errorf("command %d: %v", i+1, err)
			}
			cmds[i] = x
		}
		scene.Extras = simvisSceneExtras(cmds)
	}
	return nil
}

// tree writes the hierarchy under root in depth-first order, parents
// before children, and returns root's index. It keeps its own stack, so a
// deep hierarchy cannot exhaust the goroutine's.
func (w *writer) tree(root *Node) (int, error) {
	type item struct {
		n      *Node
		parent *gltf.Node // nil for root
	}
	stack := []item{{root, nil}}
	rootIdx := 0
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		idx, err := w.node(it.n)
		if err != nil {
			return 0, err
		}
		if it.parent == nil {
			rootIdx = idx
		} else {
			it.parent.Children = append(it.parent.Children, idx)
		}
		// Reversed, so that children come off the stack, and get their
		// indices, in order.
		for i := len(it.n.Children) - 1; i >= 0; i-- {
			stack = append(stack, item{it.n.Children[i], w.doc.Nodes[idx]})
		}
	}
	return rootIdx, nil
}

// node appends n, without its children, to the document.
func (w *writer) node(n *Node) (int, error) {
	if n == nil {
		return 0, errors.New("nil node")
	}
	if w.nodes[n] {
		return 0, fmt.Errorf("node %q appears twice in the hierarchy", n.Name)
	}
	w.nodes[n] = true
	for _, v := range n.Local {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("node %q: transform has non-finite values", n.Name)
		}
	}
	gn := &gltf.Node{Name: n.Name}
	// A matrix rather than TRS: it is what we hold, and it round-trips exactly.
	if local := toYUp(n.Local); local != mgl64.Ident4() {
		gn.Matrix = [16]float64(local)
	}
	if n.Mesh != nil {
		i, err := w.mesh(n.Mesh)
		if err != nil {
			return 0, err
		}
		gn.Mesh = gltf.Index(i)
	}
	if n.InsertionPoint != "" {
		if !insertionPointName.MatchString(n.InsertionPoint) {
			return 0, fmt.Errorf("node %q: insertion point %q is not a valid name (want %s)", n.Name, n.InsertionPoint, insertionPointName)
		}
		gn.Extras = simvisNodeExtras(n.InsertionPoint)
	}
	if err := w.cameraAndLight(n, gn); err != nil {
		return 0, err
	}
	w.doc.Nodes = append(w.doc.Nodes, gn)
	return len(w.doc.Nodes) - 1, nil
}

func (w *writer) mesh(m *Mesh) (int, error) {
	if i, ok := w.meshes[m]; ok {
		return i, nil
	}
	if m == nil {
		return 0, errors.New("nil mesh")
	}
	if len(m.Primitives) == 0 {
		return 0, fmt.Errorf("mesh %q has no primitives", m.Name)
	}
	gm := &gltf.Mesh{Name: m.Name}
	for k, p := range m.Primitives {
		gp, err := w.primitive(p)
		if err != nil {
			return 0, fmt.Errorf("mesh %q primitive %d: %w", m.Name, k, err)
		}
		gm.Primitives = append(gm.Primitives, gp)
	}
	w.doc.Meshes = append(w.doc.Meshes, gm)
	w.meshes[m] = len(w.doc.Meshes) - 1
	return w.meshes[m], nil
}

func (w *writer) primitive(p *Primitive) (*gltf.Primitive, error) {
	if p == nil {
		return nil, errors.New("nil primitive")
	}
	n := len(p.Positions)
	switch {
	case n == 0 || len(p.Indices) == 0:
		return nil, errors.New("no triangles")
	case len(p.Indices)%3 != 0:
		return nil, fmt.Errorf("%d indices do not make whole triangles", len(p.Indices))
	case p.Normals != nil && len(p.Normals) != n:
		return nil, fmt.Errorf("%d normals for %d positions", len(p.Normals), n)
	case p.TexCoords != nil && len(p.TexCoords) != n:
		return nil, fmt.Errorf("%d texture coordinates for %d positions", len(p.TexCoords), n)
	}
	var maxIdx uint32
	for k, i := range p.Indices {
		if int64(i) >= int64(n) {
			return nil, fmt.Errorf("index %d is %d, not below vertex count %d", k, i, n)
		}
		maxIdx = max(maxIdx, i)
	}
	gp := &gltf.Primitive{}
	if p.Material != nil {
		mi, err := w.material(p.Material)
		if err != nil {
			return nil, err
		}
		gp.Material = gltf.Index(mi)
	}
	// Key may be stale on hand-built primitives; hash afresh for sharing.
	probe := Primitive{Positions: p.Positions, Normals: p.Normals, TexCoords: p.TexCoords, Indices: p.Indices}
	probe.UpdateKey()
	if g, ok := w.geom[probe.Key]; ok {
		gp.Attributes, gp.Indices = g.attrs, gltf.Index(g.indices)
		return gp, nil
	}

	pos := make([][3]float32, n)
	for k, v := range p.Positions {
		pos[k] = vecToYUp(v)
	}
	attrs := gltf.PrimitiveAttributes{gltf.POSITION: modeler.WritePosition(w.doc, pos)}
	if p.Normals != nil {
		nrm := make([][3]float32, n)
		for k, v := range p.Normals {
			nrm[k] = vecToYUp(v)
		}
		attrs[gltf.NORMAL] = modeler.WriteNormal(w.doc, nrm)
	}
	if p.TexCoords != nil {
		uv := make([][2]float32, n)
		for k, v := range p.TexCoords {
			uv[k] = v
		}
		attrs[gltf.TEXCOORD_0] = modeler.WriteTextureCoord(w.doc, uv)
	}
	var idx int
	if maxIdx <= math.MaxUint16 {
		small := make([]uint16, len(p.Indices))
		for k, i := range p.Indices {
			small[k] = uint16(i)
		}
		idx = modeler.WriteIndices(w.doc, small)
	} else {
		idx = modeler.WriteIndices(w.doc, p.Indices)
	}
	w.geom[probe.Key] = geomAccessors{attrs: attrs, indices: idx}
	gp.Attributes, gp.Indices = attrs, gltf.Index(idx)
	return gp, nil
}

func (w *writer) material(m *Material) (int, error) {
	if i, ok := w.mats[m]; ok {
		return i, nil
	}
	if m == nil {
		return 0, errors.New("nil material")
	}
	if !finite(append([]float32{m.AlphaCutoff, m.Metallic, m.Roughness}, m.BaseColor[:]...)...) {
		return 0, fmt.Errorf("material %q has non-finite factors", m.Name)
	}
	pbr := &gltf.PBRMetallicRoughness{
		BaseColorFactor: &[4]float64{float64(m.BaseColor[0]), float64(m.BaseColor[1]), float64(m.BaseColor[2]), float64(m.BaseColor[3])},
		MetallicFactor:  gltf.Float(float64(m.Metallic)),
		RoughnessFactor: gltf.Float(float64(m.Roughness)),
	}
	gm := &gltf.Material{Name: m.Name, PBRMetallicRoughness: pbr, DoubleSided: m.DoubleSided}
	if !finite(m.Emissive[:]...) {
		return 0, fmt.Errorf("material %q has a non-finite emissive factor", m.Name)
	}
	for k, c := range m.Emissive {
		gm.EmissiveFactor[k] = float64(c)
	}
	switch m.AlphaMode {
	case AlphaOpaque:
		gm.AlphaMode = gltf.AlphaOpaque
	case AlphaMask:
		gm.AlphaMode = gltf.AlphaMask
		gm.AlphaCutoff = gltf.Float(float64(m.AlphaCutoff))
	case AlphaBlend:
		gm.AlphaMode = gltf.AlphaBlend
	default:
		return 0, fmt.Errorf("material %q: unknown alpha mode %d", m.Name, m.AlphaMode)
	}
	if m.BaseColorTexture != nil {
		tex := &gltf.Texture{}
		if m.Sampler != (Sampler{}) {
			gs, err := samplerToGLTF(m.Sampler)
			if err != nil {
				return 0, fmt.Errorf("material %q: texture sampler: %w", m.Name, err)
			}
			w.doc.Samplers = append(w.doc.Samplers, gs)
			tex.Sampler = gltf.Index(len(w.doc.Samplers) - 1)
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, m.BaseColorTexture); err != nil {
			return 0, fmt.Errorf("material %q: texture: %w", m.Name, err)
		}
		img, err := modeler.WriteImage(w.doc, m.Name, "image/png", &buf)
		if err != nil {
			return 0, fmt.Errorf("material %q: texture: %w", m.Name, err)
		}
		tex.Source = gltf.Index(img)
		w.doc.Textures = append(w.doc.Textures, tex)
		pbr.BaseColorTexture = &gltf.TextureInfo{Index: len(w.doc.Textures) - 1}
	}
	w.doc.Materials = append(w.doc.Materials, gm)
	w.mats[m] = len(w.doc.Materials) - 1
	return w.mats[m], nil
}
