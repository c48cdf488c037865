package models

import (
	"fmt"
	"math"

	"github.com/qmuntal/gltf"
	"github.com/qmuntal/gltf/modeler"
)

// bufferView returns the bytes of buffer view i after range checks.
func (l *loader) bufferView(i int) ([]byte, error) {
	if i < 0 || i >= len(l.doc.BufferViews) {
		return nil, fmt.Errorf("bufferView %d out of range (%d bufferViews)", i, len(l.doc.BufferViews))
	}
	bv := l.doc.BufferViews[i]
	if bv == nil {
		return nil, fmt.Errorf("bufferView %d is null", i)
	}
	if bv.Buffer < 0 || bv.Buffer >= len(l.doc.Buffers) || l.doc.Buffers[bv.Buffer] == nil {
		return nil, fmt.Errorf("bufferView %d: buffer %d out of range (%d buffers)", i, bv.Buffer, len(l.doc.Buffers))
	}
	data := l.doc.Buffers[bv.Buffer].Data
	if bv.ByteOffset < 0 || bv.ByteLength < 0 || bv.ByteOffset > len(data) || bv.ByteLength > len(data)-bv.ByteOffset {
		return nil, fmt.Errorf("bufferView %d: bytes %d+%d exceed buffer %d (%d bytes loaded)", i, bv.ByteOffset, bv.ByteLength, bv.Buffer, len(data))
	}
	return data[bv.ByteOffset : bv.ByteOffset+bv.ByteLength], nil
}

// accessor returns accessor i after checking that its data lies within its
// buffer view, so that reading it cannot allocate more than the file holds.
func (l *loader) accessor(i int) (*gltf.Accessor, error) {
	if i < 0 || i >= len(l.doc.Accessors) {
		return nil, fmt.Errorf("accessor %d out of range (%d accessors)", i, len(l.doc.Accessors))
	}
	if l.doc.Accessors[i] == nil {
		return nil, fmt.Errorf("accessor %d is null", i)
	}
	a := l.doc.Accessors[i]
	elem := gltf.SizeOfElement(a.ComponentType, a.Type)
	if elem == 0 || a.Count < 0 {
		return nil, fmt.Errorf("accessor %d: invalid type or count", i)
	}
	if a.BufferView == nil {
		if a.Count > maxBufferlessCount {
			return nil, fmt.Errorf("accessor %d: count %d too large", i, a.Count)
		}
		return a, nil
	}
	data, err := l.bufferView(*a.BufferView)
	if err != nil {
		return nil, fmt.Errorf("accessor %d: %w", i, err)
	}
	stride := l.doc.BufferViews[*a.BufferView].ByteStride
	if stride == 0 {
		stride = elem
	}
	// Compare in steps that cannot overflow: every element needs at least one byte.
	if a.ByteOffset < 0 || a.Count > len(data) || stride > len(data) ||
		a.Count > 0 && a.ByteOffset+(a.Count-1)*stride+elem > len(data) {
		return nil, fmt.Errorf("accessor %d: %d elements of %d bytes (stride %d, offset %d) exceed bufferView %d (%d bytes)",
			i, a.Count, elem, stride, a.ByteOffset, *a.BufferView, len(data))
	}
	return a, nil
}

// read reads accessor i as generic data. If want is not negative, the
// accessor must have that many elements, checked before reading.
func (l *loader) read(i, want int) (*gltf.Accessor, any, error) {
	a, err := l.accessor(i)
	if err != nil {
		return nil, nil, err
	}
	if want >= 0 && a.Count != want {
		return nil, nil, fmt.Errorf("accessor %d has %d elements, POSITION %d", i, a.Count, want)
	}
	data, err := modeler.ReadAccessor(l.doc, a, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("accessor %d: %v", i, err)
	}
	return a, data, nil
}

// readVec3 reads a VEC3 accessor of want elements (any if negative) as float32, accepting the quantized integer
// types of KHR_mesh_quantization.
func (l *loader) readVec3(i, want int) ([][3]float32, error) {
	a, data, err := l.read(i, want)
	if err != nil {
		return nil, err
	}
	var out [][3]float32
	switch d := data.(type) {
	case [][3]float32:
		out = d
	case [][3]int8:
		out = vec3From(d, a.Normalized, gltf.DenormalizeByte)
	case [][3]uint8:
		out = vec3From(d, a.Normalized, gltf.DenormalizeUbyte)
	case [][3]int16:
		out = vec3From(d, a.Normalized, gltf.DenormalizeShort)
	case [][3]uint16:
		out = vec3From(d, a.Normalized, gltf.DenormalizeUshort)
	default:
		return nil, fmt.Errorf("accessor %d: want VEC3 of float or (u)byte/(u)short, have %s of %s", i, a.Type, a.ComponentType)
	}
	for _, v := range out {
		if !finite(v[:]...) {
			return nil, fmt.Errorf("accessor %d: non-finite value", i)
		}
	}
	return out, nil
}

// readVec2 is readVec3 for texture coordinates.
func (l *loader) readVec2(i, want int) ([][2]float32, error) {
	a, data, err := l.read(i, want)
	if err != nil {
		return nil, err
	}
	var out [][2]float32
	switch d := data.(type) {
	case [][2]float32:
		out = d
	case [][2]int8:
		out = vec2From(d, a.Normalized, gltf.DenormalizeByte)
	case [][2]uint8:
		out = vec2From(d, a.Normalized, gltf.DenormalizeUbyte)
	case [][2]int16:
		out = vec2From(d, a.Normalized, gltf.DenormalizeShort)
	case [][2]uint16:
		out = vec2From(d, a.Normalized, gltf.DenormalizeUshort)
	default:
		return nil, fmt.Errorf("accessor %d: want VEC2 of float or (u)byte/(u)short, have %s of %s", i, a.Type, a.ComponentType)
	}
	for _, v := range out {
		if !finite(v[:]...) {
			return nil, fmt.Errorf("accessor %d: non-finite value", i)
		}
	}
	return out, nil
}

type quantized interface{ int8 | uint8 | int16 | uint16 }

// unquantize turns an integer component into a float, denormalizing it if
// the accessor says so.
func unquantize[T quantized](v T, normalized bool, denorm func(T) float32) float32 {
	if normalized {
		return denorm(v)
	}
	return float32(v)
}

func vec3From[T quantized](in [][3]T, normalized bool, denorm func(T) float32) [][3]float32 {
	out := make([][3]float32, len(in))
	for i, v := range in {
		for k := range v {
			out[i][k] = unquantize(v[k], normalized, denorm)
		}
	}
	return out
}

func vec2From[T quantized](in [][2]T, normalized bool, denorm func(T) float32) [][2]float32 {
	out := make([][2]float32, len(in))
	for i, v := range in {
		for k := range v {
			out[i][k] = unquantize(v[k], normalized, denorm)
		}
	}
	return out
}

func finite(fs ...float32) bool {
	for _, f := range fs {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return false
		}
	}
	return true
}
