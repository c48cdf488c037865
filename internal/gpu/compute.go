package gpu

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/g3n/engine/gls"
)

// ComputeProgram is a linked compute shader (OpenGL 4.3). Like all GL
// objects here it belongs to the Context it was made in and is used
// inside that Context's Do.
type ComputeProgram struct {
	id   uint32
	locs map[string]int32
}

// ErrNoCompute is returned by NewComputeProgram where the context's
// OpenGL is older than 4.3, which brought compute shaders.
var ErrNoCompute = errors.New("gpu: OpenGL below 4.3 has no compute shaders")

// SupportsCompute reports whether the current context runs compute
// shaders (OpenGL 4.3 or later). Must be called inside Do.
func SupportsCompute(gs *gls.GLS) bool {
	const majorVersion, minorVersion = 0x821B, 0x821C
	major, minor := glGetInteger(majorVersion), glGetInteger(minorVersion)
	drainGLErrors()
	return major > 4 || major == 4 && minor >= 3
}

// NewComputeProgram compiles and links a compute shader from GLSL source;
// the error holds the compiler's log. Must be called inside Do.
func NewComputeProgram(gs *gls.GLS, src string) (*ComputeProgram, error) {
	if !SupportsCompute(gs) {
		return nil, ErrNoCompute
	}
	if err := loadCompute(); err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	drainGLErrors()
	id, log := glBuildCompute(src)
	if id == 0 {
		return nil, fmt.Errorf("gpu: compiling a compute shader: %s", log)
	}
	if err := glErrors(); err != nil {
		glDeleteProgram(id)
		return nil, fmt.Errorf("gpu: compiling a compute shader: %w", err)
	}
	return &ComputeProgram{id: id, locs: map[string]int32{}}, nil
}

// Uniform is an int uniform's value for Dispatch.
type Uniform struct {
	Name  string
	Value int32
}

// TextureUnit binds a storage buffer's texture view (StorageBuffer.Texture)
// to a texture unit for Dispatch: the shader's buffer sampler declared
// with layout(binding = Unit).
type TextureUnit struct {
	Unit   int
	Buffer *StorageBuffer
}

// Dispatch runs p over groups work groups (in x), with bufs[i] bound at
// storage-buffer binding i, the texture views given on their units and the
// int uniforms set, and makes its writes visible to the reads that follow.
// The program and texture unit in use before are put back: g3n keeps
// track of them. Must be called inside Do.
func (p *ComputeProgram) Dispatch(gs *gls.GLS, groups int, bufs []*StorageBuffer, texs []TextureUnit, uniforms ...Uniform) error {
	if p.id == 0 {
		return errors.New("gpu: Dispatch of a deleted compute program")
	}
	if groups <= 0 {
		return nil
	}
	ids := make([]uint32, len(bufs))
	for i, b := range bufs {
		if b == nil || b.id == 0 {
			return fmt.Errorf("gpu: Dispatch: storage buffer %d is missing or deleted", i)
		}
		ids[i] = b.id
	}
	tids := make([]uint32, len(texs))
	units := make([]int32, len(texs))
	for i, t := range texs {
		if t.Buffer == nil || t.Buffer.tex == 0 {
			return fmt.Errorf("gpu: Dispatch: texture unit %d has no buffer texture", t.Unit)
		}
		tids[i], units[i] = t.Buffer.tex, int32(t.Unit)
	}
	locs := make([]int32, len(uniforms))
	vals := make([]int32, len(uniforms))
	for i, u := range uniforms {
		l, ok := p.locs[u.Name]
		if !ok {
			l = glUniformLocation(p.id, u.Name)
			p.locs[u.Name] = l
		}
		locs[i], vals[i] = l, u.Value
	}
	drainGLErrors()
	glDispatch(p.id, ids, tids, units, locs, vals, groups)
	if err := glErrors(); err != nil {
		return fmt.Errorf("gpu: dispatching %d compute groups: %w", groups, err)
	}
	return nil
}

// Delete frees the program. Must be called inside Do.
func (p *ComputeProgram) Delete(gs *gls.GLS) {
	if p.id != 0 {
		glDeleteProgram(p.id)
		p.id = 0
	}
}

// StorageBuffer is a shader storage buffer: arrays a compute shader reads
// and writes (std430 layout: plain arrays of float64, int32 and the like
// lie in it as they lie in Go memory).
type StorageBuffer struct {
	id   uint32
	size int    // bytes allocated
	tex  uint32 // its buffer texture (Texture), 0 if none
}

// Texel formats of a buffer's texture view (Texture).
const (
	TexelRGBA32UI = 0x8D70 // four uint32: two float64 (packDouble2x32)
	TexelRGBA32I  = 0x8D82 // four int32
	TexelR32I     = 0x8235 // one int32
)

// Texture gives the buffer a texture view of the given texel format, so
// that shaders read it with texelFetch: on some implementations
// (llvmpipe) a texel fetch gathers lanes far faster than a storage-buffer
// load. A buffer has one view; a later call keeps the first. Must be
// called inside Do.
func (b *StorageBuffer) Texture(gs *gls.GLS, format uint32) error {
	if b.tex != 0 {
		return nil
	}
	if _, err := b.Reserve(gs, 64); err != nil { // a texture needs storage
		return err
	}
	drainGLErrors()
	b.tex = glBufferTexture(b.id, format)
	if err := glErrors(); err != nil || b.tex == 0 {
		return fmt.Errorf("gpu: making a buffer texture: %v", err)
	}
	return nil
}

// NewStorageBuffer makes an empty storage buffer. Must be called inside Do,
// after a NewComputeProgram of the same context succeeded.
func NewStorageBuffer(gs *gls.GLS) (*StorageBuffer, error) {
	if err := loadCompute(); err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	id := glGenBuffer()
	if id == 0 {
		return nil, errors.New("gpu: glGenBuffers gave no storage buffer")
	}
	return &StorageBuffer{id: id}, nil
}

// Reserve makes room for at least size bytes in the buffer. Where it
// grows (by half again more than asked, so that a slowly growing array
// does not reallocate every cycle) its contents are lost: the caller
// uploads them again. It reports whether it grew. Must be called inside
// Do.
func (b *StorageBuffer) Reserve(gs *gls.GLS, size int) (grew bool, err error) {
	if size <= b.size && b.size > 0 {
		return false, nil
	}
	size = max(size+size/2, 64) // an empty array still needs storage to bind
	drainGLErrors()
	glBufferData(b.id, size, nil)
	if err := glErrors(); err != nil {
		return false, fmt.Errorf("gpu: allocating a storage buffer of %d bytes: %w", size, err)
	}
	b.size = size
	return true, nil
}

// Size returns the bytes the buffer holds.
func (b *StorageBuffer) Size() int { return b.size }

// Upload replaces the buffer's contents by data's elements (numbers: no
// pointers), growing it where it is too small; a buffer never shrinks, so
// a shader must be told how many elements are valid. Must be called
// inside Do.
func Upload[T float64 | float32 | int32 | uint32](gs *gls.GLS, b *StorageBuffer, data []T) error {
	if _, err := b.Reserve(gs, len(data)*int(unsafe.Sizeof(T(0)))); err != nil {
		return err
	}
	return UploadAt(gs, b, 0, data)
}

// UploadAt writes data's elements into the buffer from element at on
// (the rest is left as it is); they must fit in its size (Reserve). Must
// be called inside Do.
func UploadAt[T float64 | float32 | int32 | uint32](gs *gls.GLS, b *StorageBuffer, at int, data []T) error {
	es := int(unsafe.Sizeof(T(0)))
	n := len(data) * es
	if at < 0 || at*es+n > b.size {
		return fmt.Errorf("gpu: writing %d bytes at byte %d of a storage buffer of %d", n, at*es, b.size)
	}
	if n == 0 {
		return nil
	}
	drainGLErrors()
	glBufferSubData(b.id, at*es, n, unsafe.Pointer(&data[0]))
	if err := glErrors(); err != nil {
		return fmt.Errorf("gpu: uploading %d bytes to a storage buffer: %w", n, err)
	}
	return nil
}

// Read copies the buffer's first len(dst) elements into dst. Must be
// called inside Do.
func Read[T float64 | float32 | int32 | uint32](gs *gls.GLS, b *StorageBuffer, dst []T) error {
	n := len(dst) * int(unsafe.Sizeof(T(0)))
	if n == 0 {
		return nil
	}
	if n > b.size {
		return fmt.Errorf("gpu: reading %d bytes from a storage buffer of %d", n, b.size)
	}
	drainGLErrors()
	glGetBufferSubData(b.id, 0, n, unsafe.Pointer(&dst[0]))
	if err := glErrors(); err != nil {
		return fmt.Errorf("gpu: reading %d bytes from a storage buffer: %w", n, err)
	}
	return nil
}

// Delete frees the buffer. Must be called inside Do.
func (b *StorageBuffer) Delete(gs *gls.GLS) {
	if b.tex != 0 {
		glDeleteTexture(b.tex)
		b.tex = 0
	}
	if b.id != 0 {
		glDeleteBuffer(b.id)
		b.id, b.size = 0, 0
	}
}
