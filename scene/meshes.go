package scene

import (
	"image"
	"image/draw"
	"math"
	"strconv"
	"strings"

	"github.com/g3n/engine/core"
	"github.com/g3n/engine/geometry"
	"github.com/g3n/engine/gls"
	"github.com/g3n/engine/graphic"
	"github.com/g3n/engine/material"
	"github.com/g3n/engine/math32"
	"github.com/g3n/engine/texture"
	"github.com/simvis/simvis/models"
)

// meshCache shares GPU resources across the scene (paper III-F): primitives
// with identical geometry use one g3n geometry, hence one set of GPU buffers,
// and each model material becomes one g3n material, however many parts use it.
type meshCache struct {
	geometries map[[32]byte]*geometry.Geometry
	materials  map[*models.Material]*litMaterial
	styles     map[styledKey]*litMaterial
	textures   map[*models.Material]*texture.Texture2D
	// anisotropy is the GL_TEXTURE_MAX_ANISOTROPY textures get when first
	// drawn (0: the GL has no anisotropic filtering; see SetAnisotropy).
	anisotropy float32
	shadowDefs [3]string // SIMVIS_SHADOWS, _DIR_SLOTS, _SPOT_SLOTS of every material ("" none; see SetShadowMaps)
	drawHook   func(gs *gls.GLS)
}

func newMeshCache() *meshCache {
	return &meshCache{
		geometries: map[[32]byte]*geometry.Geometry{},
		materials:  map[*models.Material]*litMaterial{},
		styles:     map[styledKey]*litMaterial{},
		textures:   map[*models.Material]*texture.Texture2D{},
	}
}

// textureMaxAnisotropy is GL_TEXTURE_MAX_ANISOTROPY (EXT_texture_filter_anisotropic,
// core in GL 4.6).
const textureMaxAnisotropy = 0x84FE

// SetAnisotropy sets the anisotropic filtering of the scene's textures: at
// most n samples along a texture's direction of greatest squeeze (n >= 1;
// 1 or less turns it off). Renderers call it with what their GL offers
// before drawing (the GL extension EXT_texture_filter_anisotropic); a GL
// without the extension must never get n > 1. Textures take it when next
// drawn; ones drawn before keep theirs.
func (s *Scene) SetAnisotropy(n float32) {
	if n < 1 || math.IsNaN(float64(n)) {
		n = 0
	}
	s.meshes.anisotropy = n
}

// SetShadowMaps tells the scene's model materials how many shadow maps the
// next draws have (0: none) and which map each directional and each spot
// light has (by the renderer's numbering of the lights; -1 none), as the
// defines SIMVIS_SHADOWS, SIMVIS_DIR_SLOTS and SIMVIS_SPOT_SLOTS ("0,-1")
// that a renderer's shader may use: a program without shadows then carries
// no shadow code (a software rasterizer runs every branch of a shader,
// taken or not), one with them reads each light's map at a constant index.
// Each combination compiles its own programs once.
func (s *Scene) SetShadowMaps(n int, dirSlots, spotSlots []int) {
	c := s.meshes
	var defs [3]string
	if n > 0 {
		defs = [3]string{strconv.Itoa(n), slotList(dirSlots), slotList(spotSlots)}
	}
	if defs == c.shadowDefs {
		return
	}
	c.shadowDefs = defs
	for _, m := range c.materials {
		m.setShadowDefines(defs)
	}
	for _, m := range c.styles {
		m.setShadowDefines(defs)
	}
}

func slotList(slots []int) string {
	if len(slots) == 0 {
		return "-1"
	}
	parts := make([]string, len(slots))
	for i, v := range slots {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, ",")
}

var shadowDefineNames = [3]string{"SIMVIS_SHADOWS", "SIMVIS_DIR_SLOTS", "SIMVIS_SPOT_SLOTS"}

func (m *litMaterial) setShadowDefines(defs [3]string) {
	for i, name := range shadowDefineNames {
		if defs[i] != "" {
			m.ShaderDefines.Set(name, defs[i])
		} else {
			m.ShaderDefines.Unset(name)
		}
	}
}

// SetDrawHook sets a function every model material calls when drawn,
// after its own GL setup, with its program current (nil: none): renderers
// give their shader the frame's uniforms through it.
func (s *Scene) SetDrawHook(fn func(gs *gls.GLS)) { s.meshes.drawHook = fn }

// litMaterial is the g3n material of one model material: g3n's standard
// (Phong) material, whose "standard" shader a renderer may replace with one
// that adds shadows and the alpha test (SIMVIS_ALPHA_CUTOFF), plus the
// texture filtering set on the texture once it is on the GL.
type litMaterial struct {
	*material.Standard
	cache    *meshCache
	textured bool
	filtered bool // the texture has its anisotropic filtering
}

// RenderSetup implements material.IMaterial: the standard material's
// state, then, the first time the texture is on the GL (bound to unit 0
// by the standard setup), its anisotropic filtering, then the draw hook.
func (m *litMaterial) RenderSetup(gs *gls.GLS) {
	m.Standard.RenderSetup(gs)
	if m.textured && !m.filtered && m.cache.anisotropy >= 1 {
		gs.ActiveTexture(gls.TEXTURE0)
		gs.TexParameteri(gls.TEXTURE_2D, textureMaxAnisotropy, int32(m.cache.anisotropy))
		m.filtered = true
	}
	if h := m.cache.drawHook; h != nil {
		h(gs)
	}
}

// graphics returns new g3n meshes for one model mesh, sharing geometry and
// materials with every earlier instance.
func (c *meshCache) graphics(m *models.Mesh) []core.INode {
	out := make([]core.INode, 0, len(m.Primitives))
	for _, p := range m.Primitives {
		g, ok := c.geometries[p.Key]
		if ok {
			g.Incref()
		} else {
			g = newGeometry(p)
			c.geometries[p.Key] = g
		}
		mat := c.material(p.Material)
		mesh := graphic.NewMesh(g, mat)
		mesh.SetName(m.Name)
		out = append(out, mesh)
	}
	return out
}

func newGeometry(p *models.Primitive) *geometry.Geometry {
	g := geometry.NewGeometry()
	pos := math32.NewArrayF32(0, 3*len(p.Positions))
	for _, v := range p.Positions {
		pos.Append(v[0], v[1], v[2])
	}
	nrm := math32.NewArrayF32(0, 3*len(p.Normals))
	for _, v := range p.Normals {
		nrm.Append(v[0], v[1], v[2])
	}
	g.AddVBO(gls.NewVBO(pos).AddAttrib(gls.VertexPosition))
	g.AddVBO(gls.NewVBO(nrm).AddAttrib(gls.VertexNormal))
	if len(p.TexCoords) > 0 {
		uv := math32.NewArrayF32(0, 2*len(p.TexCoords))
		for _, v := range p.TexCoords {
			uv.Append(v[0], v[1])
		}
		g.AddVBO(gls.NewVBO(uv).AddAttrib(gls.VertexTexcoord))
	}
	g.SetIndices(math32.ArrayU32(append([]uint32(nil), p.Indices...)))
	return g
}

func (c *meshCache) material(m *models.Material) *litMaterial {
	if s, ok := c.materials[m]; ok {
		s.Incref()
		return s
	}
	s := c.newStandard(m, nil)
	c.materials[m] = s
	return s
}

// styledKey identifies a material under a color override.
type styledKey struct {
	base  *models.Material
	color [4]float32
}

// styled returns the material for m under a color override (nil: none).
// Overridden materials are made on first use and shared afterwards, so a
// color element costs one material per distinct (material, color).
func (c *meshCache) styled(m *models.Material, color *[4]float32) *litMaterial {
	if color == nil {
		return c.materials[m]
	}
	key := styledKey{m, *color}
	if s, ok := c.styles[key]; ok {
		return s
	}
	s := c.newStandard(m, color)
	c.styles[key] = s
	return s
}

// newStandard makes the g3n material for a model material, with the base
// color and opacity replaced where override is not nil.
//
// glTF's metallic-roughness model is reduced to Phong where cheap: the
// diffuse color is the base color (no environment to reflect, so metals are
// not darkened), and smoother, more metallic surfaces get a sharper,
// stronger highlight (shininess 2/r^4 - 2, at least 16; specular 0.1 +
// 0.8 metallic (1-r)^2), which leaves glTF's default (rough) material as it
// always looked. Emissive light is added whatever the lighting.
func (c *meshCache) newStandard(m *models.Material, override *[4]float32) *litMaterial {
	base := m.BaseColor
	if override != nil {
		base = *override
	}
	col := math32.Color{R: base[0], G: base[1], B: base[2]}
	s := material.NewStandard(&col)
	r := float64(min(max(m.Roughness, 0.05), 1))
	metal := float64(min(max(m.Metallic, 0), 1))
	spec := float32(0.1 + 0.8*metal*(1-r)*(1-r))
	s.SetSpecularColor(&math32.Color{R: spec, G: spec, B: spec})
	s.SetShininess(float32(max(16, 2/(r*r*r*r)-2)))
	s.SetEmissiveColor(&math32.Color{R: m.Emissive[0], G: m.Emissive[1], B: m.Emissive[2]})
	if m.DoubleSided {
		s.SetSide(material.SideDouble)
	}
	switch {
	case override != nil && override[3] < 1:
		s.SetOpacity(override[3])
		s.SetTransparent(true)
	case m.AlphaMode == models.AlphaBlend:
		s.SetOpacity(base[3])
		s.SetTransparent(true)
	case m.AlphaMode == models.AlphaMask:
		// A real alpha test (discard below the cutoff, opaque above), in
		// the shader renderers put in place of g3n's standard one; the
		// cutoff is a define, so materials with the usual 0.5 share a
		// program.
		s.SetOpacity(base[3])
		s.ShaderDefines.Set("SIMVIS_ALPHA_CUTOFF", strconv.FormatFloat(float64(m.AlphaCutoff), 'g', -1, 32))
	}
	lm := &litMaterial{Standard: s, cache: c}
	lm.setShadowDefines(c.shadowDefs)
	if m.BaseColorTexture != nil {
		s.AddTexture(c.texture(m))
		lm.textured = true
	}
	return lm
}

// texture returns the model material's base color texture, uploaded once
// and shared by the material and its color-overridden variants.
func (c *meshCache) texture(m *models.Material) *texture.Texture2D {
	if tex, ok := c.textures[m]; ok {
		tex.Incref()
		return tex
	}
	rgba := toRGBA(m.BaseColorTexture)
	if m.AlphaMode == models.AlphaOpaque {
		opaque(rgba)
	}
	// g3n uploads with mipmaps (generated by the GL); filters and wrap
	// modes are the material's sampler's, trilinear minification, linear
	// magnification and REPEAT where it sets none; anisotropic filtering
	// comes with the first draw.
	tex := texture.NewTexture2DFromRGBA(rgba)
	s := m.Sampler
	tex.SetMinFilter(minFilter(s.MinFilter))
	tex.SetMagFilter(magFilter(s.MagFilter))
	tex.SetFlipY(false) // glTF's uv origin is the image's top-left, the first row uploaded
	tex.SetWrapS(GLWrap(s.WrapS))
	tex.SetWrapT(GLWrap(s.WrapT))
	c.textures[m] = tex
	return tex
}

// minFilter is the GL minification filter of a glTF sampler's minFilter
// (glTF's numbers are GL's): LINEAR_MIPMAP_LINEAR where unset.
func minFilter(f int) uint32 {
	switch f {
	case models.FilterNearest, models.FilterLinear,
		models.FilterNearestMipmapNearest, models.FilterLinearMipmapNearest,
		models.FilterNearestMipmapLinear, models.FilterLinearMipmapLinear:
		return uint32(f)
	}
	return gls.LINEAR_MIPMAP_LINEAR
}

// magFilter is the GL magnification filter of a glTF sampler's magFilter:
// NEAREST or LINEAR, LINEAR where unset.
func magFilter(f int) uint32 {
	if f == models.FilterNearest {
		return gls.NEAREST
	}
	return gls.LINEAR
}

// GLWrap is the GL wrap mode of a glTF sampler's wrapS or wrapT (REPEAT
// where unset): cameras and the sensors' own texture passes wrap alike.
func GLWrap(w int) uint32 {
	switch w {
	case models.WrapClampToEdge:
		return gls.CLAMP_TO_EDGE
	case models.WrapMirroredRepeat:
		return gls.MIRRORED_REPEAT
	}
	return gls.REPEAT
}

// toRGBA returns the image's pixels with straight (not premultiplied) alpha,
// as GL blending expects, in the *image.RGBA that g3n's texture takes.
func toRGBA(img image.Image) *image.RGBA {
	b := img.Bounds()
	n := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(n, n.Bounds(), img, b.Min, draw.Src)
	return &image.RGBA{Pix: n.Pix, Stride: n.Stride, Rect: n.Rect}
}

func opaque(img *image.RGBA) {
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
	}
}

// MeshStats tells how much the scene shares: Instances g3n meshes drawn from
// Geometries distinct geometries (one GPU buffer set each) and Materials
// distinct materials, and how many triangles are drawn.
type MeshStats struct {
	Instances  int `json:"instances"`
	Geometries int `json:"geometries"`
	Materials  int `json:"materials"`
	// Triangles are those of the meshes shown: switched-off subtrees are
	// not drawn (nor exported), so their triangles do not count.
	Triangles int `json:"triangles_drawn"`
}

// MeshStats reports how much geometry the scene shares.
func (s *Scene) MeshStats() MeshStats {
	// Instances are counted in the graph, not the cache, so meshes of a
	// command that failed and was undone do not count.
	st := MeshStats{Geometries: len(s.meshes.geometries), Materials: len(s.meshes.materials)}
	s.top.Walk(func(n *Node) error {
		st.Instances += len(n.meshG3N)
		return nil
	})
	// Triangles follow Export's rule (Node.style): a switched-off node hides
	// its subtree. Its own stack, as Walk: a chain of parts is as deep as
	// it is long.
	stack := []*Node{s.top}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if shown, _ := n.style(nil); !shown {
			continue
		}
		if n.mesh != nil {
			for _, p := range n.mesh.Primitives {
				st.Triangles += len(p.Indices) / 3
			}
		}
		stack = append(stack, n.children...)
	}
	return st
}
