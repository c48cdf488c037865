package models

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/qmuntal/gltf"
)

// textureTransformExtension is KHR_texture_transform: an affine map of a
// textureInfo's texture coordinates, which the loader bakes into the
// primitives' TexCoords.
const textureTransformExtension = "KHR_texture_transform"

// samplerFromGLTF returns s in glTF's numbers. qmuntal's decoder refuses
// numbers glTF does not define, and cannot tell an explicit REPEAT from
// an unset wrap mode: both load as 0, which Sampler reads as REPEAT.
func samplerFromGLTF(s *gltf.Sampler) (Sampler, error) {
	var out Sampler
	switch s.MagFilter {
	case gltf.MagUndefined:
	case gltf.MagNearest:
		out.MagFilter = FilterNearest
	case gltf.MagLinear:
		out.MagFilter = FilterLinear
	default:
		return out, fmt.Errorf("unknown magFilter %d", s.MagFilter)
	}
	switch s.MinFilter {
	case gltf.MinUndefined:
	case gltf.MinNearest:
		out.MinFilter = FilterNearest
	case gltf.MinLinear:
		out.MinFilter = FilterLinear
	case gltf.MinNearestMipMapNearest:
		out.MinFilter = FilterNearestMipmapNearest
	case gltf.MinLinearMipMapNearest:
		out.MinFilter = FilterLinearMipmapNearest
	case gltf.MinNearestMipMapLinear:
		out.MinFilter = FilterNearestMipmapLinear
	case gltf.MinLinearMipMapLinear:
		out.MinFilter = FilterLinearMipmapLinear
	default:
		return out, fmt.Errorf("unknown minFilter %d", s.MinFilter)
	}
	var err error
	if out.WrapS, err = wrapFromGLTF(s.WrapS, "wrapS"); err != nil {
		return out, err
	}
	out.WrapT, err = wrapFromGLTF(s.WrapT, "wrapT")
	return out, err
}

func wrapFromGLTF(w gltf.WrappingMode, field string) (int, error) {
	switch w {
	case gltf.WrapRepeat:
		return 0, nil
	case gltf.WrapClampToEdge:
		return WrapClampToEdge, nil
	case gltf.WrapMirroredRepeat:
		return WrapMirroredRepeat, nil
	}
	return 0, fmt.Errorf("unknown %s %d", field, w)
}

// samplerToGLTF returns s as qmuntal's sampler, refusing numbers glTF does
// not define for each field.
func samplerToGLTF(s Sampler) (*gltf.Sampler, error) {
	out := &gltf.Sampler{}
	switch s.MagFilter {
	case 0:
	case FilterNearest:
		out.MagFilter = gltf.MagNearest
	case FilterLinear:
		out.MagFilter = gltf.MagLinear
	default:
		return nil, fmt.Errorf("magFilter %d is not a glTF magnification filter (%s)", s.MagFilter, enumList(magFilters))
	}
	switch s.MinFilter {
	case 0:
	case FilterNearest:
		out.MinFilter = gltf.MinNearest
	case FilterLinear:
		out.MinFilter = gltf.MinLinear
	case FilterNearestMipmapNearest:
		out.MinFilter = gltf.MinNearestMipMapNearest
	case FilterLinearMipmapNearest:
		out.MinFilter = gltf.MinLinearMipMapNearest
	case FilterNearestMipmapLinear:
		out.MinFilter = gltf.MinNearestMipMapLinear
	case FilterLinearMipmapLinear:
		out.MinFilter = gltf.MinLinearMipMapLinear
	default:
		return nil, fmt.Errorf("minFilter %d is not a glTF minification filter (%s)", s.MinFilter, enumList(minFilters))
	}
	var err error
	if out.WrapS, err = wrapToGLTF(s.WrapS, "wrapS"); err != nil {
		return nil, err
	}
	if out.WrapT, err = wrapToGLTF(s.WrapT, "wrapT"); err != nil {
		return nil, err
	}
	return out, nil
}

func wrapToGLTF(w int, field string) (gltf.WrappingMode, error) {
	switch w {
	case 0, WrapRepeat:
		return gltf.WrapRepeat, nil
	case WrapClampToEdge:
		return gltf.WrapClampToEdge, nil
	case WrapMirroredRepeat:
		return gltf.WrapMirroredRepeat, nil
	}
	return 0, fmt.Errorf("%s %d is not a glTF wrap mode (%s)", field, w, enumList(wrapModes))
}

type enumName struct {
	v    int
	name string
}

var (
	magFilters = []enumName{{FilterNearest, "NEAREST"}, {FilterLinear, "LINEAR"}}
	minFilters = []enumName{{FilterNearest, "NEAREST"}, {FilterLinear, "LINEAR"},
		{FilterNearestMipmapNearest, "NEAREST_MIPMAP_NEAREST"}, {FilterLinearMipmapNearest, "LINEAR_MIPMAP_NEAREST"},
		{FilterNearestMipmapLinear, "NEAREST_MIPMAP_LINEAR"}, {FilterLinearMipmapLinear, "LINEAR_MIPMAP_LINEAR"}}
	wrapModes = []enumName{{WrapClampToEdge, "CLAMP_TO_EDGE"}, {WrapMirroredRepeat, "MIRRORED_REPEAT"}, {WrapRepeat, "REPEAT"}}
)

func enumList(e []enumName) string {
	s := ""
	for i, x := range e {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%d %s", x.v, x.name)
	}
	return s
}

// samplerFault explains why qmuntal's decoder refused the document data,
// when the reason is a sampler number glTF does not define: its decoder
// says only "unknown magnification filter", where the user needs the
// material, texture and sampler. It returns nil when no sampler is at
// fault (or the JSON cannot be read this way); it runs only on a document
// that failed to decode.
func samplerFault(data []byte) error {
	var doc struct {
		Samplers []*struct {
			MagFilter, MinFilter, WrapS, WrapT json.RawMessage
		}
		Textures []*struct {
			Sampler *int
		}
		Materials []*struct {
			Name                 string
			PBRMetallicRoughness *struct {
				BaseColorTexture *struct {
					Index int
				}
			}
		}
	}
	if json.Unmarshal(jsonChunk(data), &doc) != nil {
		return nil
	}
	faults := map[int]error{}
	for i, s := range doc.Samplers {
		if s == nil {
			continue
		}
		for _, f := range []struct {
			name  string
			raw   json.RawMessage
			enums []enumName
		}{{"magFilter", s.MagFilter, magFilters}, {"minFilter", s.MinFilter, minFilters},
			{"wrapS", s.WrapS, wrapModes}, {"wrapT", s.WrapT, wrapModes}} {
			if f.raw == nil || knownEnum(f.raw, f.enums) {
				continue
			}
			faults[i] = fmt.Errorf("sampler %d: %s %s is not one of glTF's (%s)", i, f.name, f.raw, enumList(f.enums))
			break
		}
	}
	if len(faults) == 0 {
		return nil
	}
	// Name the first material whose base color texture uses a faulty
	// sampler; else the sampler alone.
	for i, m := range doc.Materials {
		if m == nil || m.PBRMetallicRoughness == nil || m.PBRMetallicRoughness.BaseColorTexture == nil {
			continue
		}
		ti := m.PBRMetallicRoughness.BaseColorTexture.Index
		if ti < 0 || ti >= len(doc.Textures) || doc.Textures[ti] == nil || doc.Textures[ti].Sampler == nil {
			continue
		}
		if err := faults[*doc.Textures[ti].Sampler]; err != nil {
			return fmt.Errorf("material %d %q: texture %d: %w", i, m.Name, ti, err)
		}
	}
	for i := range doc.Samplers {
		if err := faults[i]; err != nil {
			return err
		}
	}
	return nil
}

func knownEnum(raw json.RawMessage, enums []enumName) bool {
	var v int
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	for _, e := range enums {
		if e.v == v {
			return true
		}
	}
	return false
}

// uvTransform is how a primitive's TexCoords come from a TEXCOORD set: the
// set, and KHR_texture_transform's affine map, row-major,
//
//	u' = m[0] u + m[1] v + m[2]
//	v' = m[3] u + m[4] v + m[5]
//
// applied when on. Comparable: it is part of geometryKey.
type uvTransform struct {
	set int
	on  bool
	m   [6]float64
}

// apply returns the transformed coordinates.
func (t *uvTransform) apply(u, v float64) (float64, float64) {
	return t.m[0]*u + t.m[1]*v + t.m[2], t.m[3]*u + t.m[4]*v + t.m[5]
}

// textureTransform reads a KHR_texture_transform extension value (raw
// JSON, or whatever a caller or a registered decoder put in the map) into
// uv, whose set it overrides where the extension names a texCoord. It
// refuses values that are not finite numbers.
func textureTransform(v any, uv *uvTransform) error {
	raw, ok := v.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return err
		}
	}
	var x struct {
		Offset   []json.RawMessage `json:"offset"`
		Rotation json.RawMessage   `json:"rotation"`
		Scale    []json.RawMessage `json:"scale"`
		TexCoord json.RawMessage   `json:"texCoord"`
	}
	if err := json.Unmarshal(raw, &x); err != nil {
		return fmt.Errorf("not an object with offset, rotation, scale and texCoord: %w", err)
	}
	offset, scale, rot := [2]float64{0, 0}, [2]float64{1, 1}, 0.0
	for _, f := range []struct {
		name string
		in   []json.RawMessage
		out  *[2]float64
	}{{"offset", x.Offset, &offset}, {"scale", x.Scale, &scale}} {
		if f.in == nil {
			continue
		}
		if len(f.in) != 2 {
			return fmt.Errorf("%s has %d numbers, want 2", f.name, len(f.in))
		}
		for k, n := range f.in {
			c, err := finiteNumber(n)
			if err != nil {
				return fmt.Errorf("%s[%d]: %w", f.name, k, err)
			}
			f.out[k] = c
		}
	}
	if x.Rotation != nil {
		var err error
		if rot, err = finiteNumber(x.Rotation); err != nil {
			return fmt.Errorf("rotation: %w", err)
		}
	}
	if x.TexCoord != nil {
		set, err := strconv.ParseInt(string(x.TexCoord), 10, 32)
		if err != nil || set < 0 {
			return fmt.Errorf("texCoord %s is not a TEXCOORD set (an integer >= 0)", x.TexCoord)
		}
		uv.set = int(set)
	}
	// T R S with the extension's matrices: translation [1 0 ox; 0 1 oy],
	// rotation [cos r, sin r; -sin r, cos r], scale diag(sx, sy). (The
	// GLSL in its README lists the rotation in mat3's column-major order;
	// the example there, "the lower left quadrant, rotated clockwise",
	// holds with the row-major reading used here, as in three.js.)
	s, c := math.Sincos(rot)
	if rot == 0 {
		s, c = 0, 1
	}
	uv.m = [6]float64{c * scale[0], s * scale[1], offset[0], -s * scale[0], c * scale[1], offset[1]}
	uv.on = uv.m != [6]float64{1, 0, 0, 0, 1, 0}
	if !uv.on {
		uv.m = [6]float64{}
	}
	return nil
}

// finiteNumber parses a JSON number, refusing one that overflows float64.
func finiteNumber(raw json.RawMessage) (float64, error) {
	var n json.Number
	if json.Unmarshal(raw, &n) != nil || strings.HasPrefix(string(raw), `"`) {
		return 0, fmt.Errorf("%s is not a number", raw)
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%s is not a number", raw)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%s is not finite", n)
	}
	return f, nil
}
