package models

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"math"
	"net/url"
	"strings"

	"github.com/qmuntal/gltf"
)

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
