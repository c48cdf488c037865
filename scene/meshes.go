package scene

import (
	"image"
	"image/draw"

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
	materials  map[*models.Material]*material.Standard
	styles     map[styledKey]*material.Standard
	textures   map[*models.Material]*texture.Texture2D
}

func newMeshCache() *meshCache {
	return &meshCache{
		geometries: map[[32]byte]*geometry.Geometry{},
		materials:  map[*models.Material]*material.Standard{},
		styles:     map[styledKey]*material.Standard{},
		textures:   map[*models.Material]*texture.Texture2D{},
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

func (c *meshCache) material(m *models.Material) *material.Standard {
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
func (c *meshCache) styled(m *models.Material, color *[4]float32) *material.Standard {
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
func (c *meshCache) newStandard(m *models.Material, override *[4]float32) *material.Standard {
	base := m.BaseColor
	if override != nil {
		base = *override
	}
	col := math32.Color{R: base[0], G: base[1], B: base[2]}
	s := material.NewStandard(&col)
	s.SetSpecularColor(&math32.Color{R: 0.1, G: 0.1, B: 0.1})
	s.SetShininess(16)
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
		// g3n's standard shader has no alpha test: the texture's alpha is
		// thresholded at load instead, and blending shows 0 or 1.
		s.SetTransparent(m.BaseColorTexture != nil)
	}
	if m.BaseColorTexture != nil {
		s.AddTexture(c.texture(m))
	}
	return s
}

// texture returns the model material's base color texture, uploaded once
// and shared by the material and its color-overridden variants.
func (c *meshCache) texture(m *models.Material) *texture.Texture2D {
	if tex, ok := c.textures[m]; ok {
		tex.Incref()
		return tex
	}
	rgba := toRGBA(m.BaseColorTexture)
	if m.AlphaMode == models.AlphaMask {
		threshold(rgba, m.AlphaCutoff)
	}
	if m.AlphaMode == models.AlphaOpaque {
		opaque(rgba)
	}
	tex := texture.NewTexture2DFromRGBA(rgba)
	tex.SetFlipY(false) // glTF's uv origin is the image's top-left, the first row uploaded
	tex.SetWrapS(gls.REPEAT)
	tex.SetWrapT(gls.REPEAT)
	c.textures[m] = tex
	return tex
}

// toRGBA returns the image's pixels with straight (not premultiplied) alpha,
// as GL blending expects, in the *image.RGBA that g3n's texture takes.
func toRGBA(img image.Image) *image.RGBA {
	b := img.Bounds()
	n := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(n, n.Bounds(), img, b.Min, draw.Src)
	return &image.RGBA{Pix: n.Pix, Stride: n.Stride, Rect: n.Rect}
}

func threshold(img *image.RGBA, cutoff float32) {
	limit := uint8(cutoff*255 + 0.5)
	for i := 3; i < len(img.Pix); i += 4 {
		if img.Pix[i] >= limit {
			img.Pix[i] = 255
		} else {
			img.Pix[i] = 0
		}
	}
}

func opaque(img *image.RGBA) {
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
	}
}

// MeshStats tells how much the scene shares: Instances g3n meshes drawn from
// Geometries distinct geometries (one GPU buffer set each) and Materials
// distinct materials.
type MeshStats struct {
	Instances  int `json:"instances"`
	Geometries int `json:"geometries"`
	Materials  int `json:"materials"`
	Triangles  int `json:"triangles_drawn"`
}
