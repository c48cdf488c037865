package gpu

import (
	"errors"
	"fmt"
	"image"
	"unsafe"

	"github.com/g3n/engine/gls"
)

// ColorFormat is the storage format of a Framebuffer's color attachment.
type ColorFormat int

const (
	// ColorRGBA8 is 8-bit normalized RGBA, read with ReadRGBA.
	ColorRGBA8 ColorFormat = iota
	// ColorR32F is one 32-bit float channel (depth/range style sensors),
	// read with ReadFloat.
	ColorR32F
	// ColorRGBA32F is four 32-bit float channels, read with ReadFloat.
	ColorRGBA32F
)

type formatInfo struct {
	name     string
	internal uint32 // sized internal format of the texture
	format   uint32 // pixel format for reads
	typ      uint32 // pixel type for reads
	channels int
	isFloat  bool
}

var formats = map[ColorFormat]formatInfo{
	ColorRGBA8:   {"RGBA8", gls.RGBA8, gls.RGBA, gls.UNSIGNED_BYTE, 4, false},
	ColorR32F:    {"R32F", gls.R32F, gls.RED, gls.FLOAT, 1, true},
	ColorRGBA32F: {"RGBA32F", gls.RGBA32F, gls.RGBA, gls.FLOAT, 4, true},
}

// String returns the format's name ("RGBA8", "R32F", "RGBA32F").
func (c ColorFormat) String() string {
	if fi, ok := formats[c]; ok {
		return fi.name
	}
	return fmt.Sprintf("ColorFormat(%d)", int(c))
}

// Channels returns the number of color channels (values per pixel read by
// ReadFloat or ReadRGBA), 0 for an unknown format.
func (c ColorFormat) Channels() int { return formats[c].channels }

// Framebuffer is an offscreen render target: a color texture of the chosen
// format plus a 32-bit float depth renderbuffer. All methods must be called
// inside Context.Do. Reads return rows top-down (row 0 is the top of the
// image), unlike GL's bottom-left origin.
type Framebuffer struct {
	Width, Height int

	color ColorFormat
	targetObjects

	// Read scratch, kept per framebuffer so that reading every frame does
	// not allocate: one row for in-place flips, and a whole image only for
	// image.RGBA destinations whose rows are not contiguous.
	row  []byte
	full []byte

	// Pixel-pack buffers of finished reads, for StartRead to reuse.
	pbos []uint32
}

// NewFramebuffer creates a width x height framebuffer with a color
// attachment of the given format and a DEPTH_COMPONENT32F depth attachment,
// and checks that it is complete. The bindings of the caller (framebuffers,
// renderbuffer, 2D texture of the active unit) are left as they were.
func NewFramebuffer(gs *gls.GLS, width, height int, color ColorFormat) (*Framebuffer, error) {
	fi, ok := formats[color]
	if !ok {
		return nil, fmt.Errorf("gpu: NewFramebuffer: unknown color format %d", int(color))
	}
	o, err := newTargetObjects("NewFramebuffer", width, height, attachments{color: &fi})
	if err != nil {
		return nil, err
	}
	return &Framebuffer{Width: width, Height: height, color: color, targetObjects: o}, nil
}

func fbStatusName(st uint32) string {
	switch st {
	case gls.FRAMEBUFFER_UNDEFINED:
		return "GL_FRAMEBUFFER_UNDEFINED"
	case gls.FRAMEBUFFER_INCOMPLETE_ATTACHMENT:
		return "GL_FRAMEBUFFER_INCOMPLETE_ATTACHMENT"
	case gls.FRAMEBUFFER_INCOMPLETE_MISSING_ATTACHMENT:
		return "GL_FRAMEBUFFER_INCOMPLETE_MISSING_ATTACHMENT"
	case gls.FRAMEBUFFER_INCOMPLETE_DRAW_BUFFER:
		return "GL_FRAMEBUFFER_INCOMPLETE_DRAW_BUFFER"
	case gls.FRAMEBUFFER_INCOMPLETE_READ_BUFFER:
		return "GL_FRAMEBUFFER_INCOMPLETE_READ_BUFFER"
	case gls.FRAMEBUFFER_UNSUPPORTED:
		return "GL_FRAMEBUFFER_UNSUPPORTED"
	case gls.FRAMEBUFFER_INCOMPLETE_MULTISAMPLE:
		return "GL_FRAMEBUFFER_INCOMPLETE_MULTISAMPLE"
	case 0:
		return "status query failed (" + glErrorName(glGetError()) + ")"
	}
	return fmt.Sprintf("status 0x%04X", st)
}

// Format returns the color attachment's format.
func (f *Framebuffer) Format() ColorFormat { return f.color }

// ColorTexture returns the GL name of the color attachment texture (nearest
// filtering, no mipmaps), for sampling in a later pass. It must not be
// sampled while this framebuffer is the draw target.
func (f *Framebuffer) ColorTexture() uint32 { return f.colorTex }

// Bind makes f the draw and read framebuffer and sets the viewport to cover
// it (through gs, so g3n's cached viewport stays right).
func (f *Framebuffer) Bind(gs *gls.GLS) {
	glBindFramebuffer(gls.FRAMEBUFFER, f.fbo)
	gs.Viewport(0, 0, int32(f.Width), int32(f.Height))
}

// Clear binds f and clears its color to (r, g, b, a) and its depth to 1.
// The depth mask is enabled through gs first: g3n materials may leave it
// off, and a masked depth clear silently does nothing. Float formats store
// the values unclamped. The scissor test, if someone enabled it, still
// applies.
func (f *Framebuffer) Clear(gs *gls.GLS, r, g, b, a float32) {
	f.ClearTo(gs, r, g, b, a, 1)
}

// ClearTo is Clear with the depth cleared to depth: 0 is the farthest for
// a reversed-Z pass (SetZeroToOneDepth, SetSolidState reversed).
func (f *Framebuffer) ClearTo(gs *gls.GLS, r, g, b, a, depth float32) {
	gs.ClearColor(r, g, b, a)
	f.bindClear(gs, f.Width, f.Height, gls.COLOR_BUFFER_BIT|gls.DEPTH_BUFFER_BIT, depth)
}

// Unbind makes the default framebuffer (0) the draw and read target. A
// surfaceless context has no usable default framebuffer; this only detaches
// offscreen targets.
func Unbind(gs *gls.GLS) {
	glBindFramebuffer(gls.FRAMEBUFFER, 0)
}

var errDeleted = errors.New("gpu: framebuffer deleted")

// ReadRGBA reads the color attachment as 8-bit RGBA into dst, which must be
// Width x Height; dst's top row receives the top of the image. Float
// formats are converted by GL (clamped to [0,1]; R32F reads as R,0,0,1).
func (f *Framebuffer) ReadRGBA(gs *gls.GLS, dst *image.RGBA) error {
	if f.fbo == 0 {
		return errDeleted
	}
	if dst == nil || dst.Rect.Dx() != f.Width || dst.Rect.Dy() != f.Height {
		return fmt.Errorf("gpu: ReadRGBA: destination must be %dx%d", f.Width, f.Height)
	}
	rowBytes := 4 * f.Width
	n := rowBytes * f.Height
	off := dst.PixOffset(dst.Rect.Min.X, dst.Rect.Min.Y)
	if dst.Stride == rowBytes && off >= 0 && off+n <= len(dst.Pix) {
		return f.read(dst.Pix[off:off+n], gls.RGBA, gls.UNSIGNED_BYTE, rowBytes, "ReadRGBA")
	}
	// Rows of dst are not contiguous (sub-image): read into scratch, copy.
	if len(f.full) < n {
		f.full = make([]byte, n)
	}
	buf := f.full[:n]
	if err := f.readRaw(buf, gls.RGBA, gls.UNSIGNED_BYTE, "ReadRGBA"); err != nil {
		return err
	}
	for y := 0; y < f.Height; y++ {
		src := buf[(f.Height-1-y)*rowBytes : (f.Height-y)*rowBytes]
		o := dst.PixOffset(dst.Rect.Min.X, dst.Rect.Min.Y+y)
		copy(dst.Pix[o:o+rowBytes], src)
	}
	return nil
}

// ReadDepth reads the depth attachment as window-space depth in [0,1] into
// dst (len Width*Height), top row first.
func (f *Framebuffer) ReadDepth(gs *gls.GLS, dst []float32) error {
	if f.fbo == 0 {
		return errDeleted
	}
	if len(dst) != f.Width*f.Height {
		return fmt.Errorf("gpu: ReadDepth: len(dst) = %d, want %d", len(dst), f.Width*f.Height)
	}
	return f.read(FloatBytes(dst), gls.DEPTH_COMPONENT, gls.FLOAT, 4*f.Width, "ReadDepth")
}

// ReadFloat reads a float color attachment into dst, top row first: one
// value per pixel for ColorR32F, four (RGBA) for ColorRGBA32F, so len(dst)
// must be Width*Height*Format().Channels(). It fails on ColorRGBA8.
func (f *Framebuffer) ReadFloat(gs *gls.GLS, dst []float32) error {
	if f.fbo == 0 {
		return errDeleted
	}
	fi := formats[f.color]
	if !fi.isFloat {
		return fmt.Errorf("gpu: ReadFloat: framebuffer format is %s; use ReadRGBA", fi.name)
	}
	if want := f.Width * f.Height * fi.channels; len(dst) != want {
		return fmt.Errorf("gpu: ReadFloat: len(dst) = %d, want %d", len(dst), want)
	}
	return f.read(FloatBytes(dst), fi.format, gls.FLOAT, 4*fi.channels*f.Width, "ReadFloat")
}

// read fills dst (exactly Height rows of rowBytes) and flips it in place to
// top-down order.
func (f *Framebuffer) read(dst []byte, format, typ uint32, rowBytes int, op string) error {
	if err := f.readRaw(dst, format, typ, op); err != nil {
		return err
	}
	if len(f.row) < rowBytes {
		f.row = make([]byte, rowBytes)
	}
	flipRows(dst, rowBytes, f.Height, f.row[:rowBytes])
	return nil
}

// readRaw runs glReadPixels over the whole framebuffer into dst, bottom row
// first as GL delivers it.
func (f *Framebuffer) readRaw(dst []byte, format, typ uint32, op string) error {
	drainGLErrors()
	glBindFramebuffer(gls.READ_FRAMEBUFFER, f.fbo)
	// A bound pixel-pack buffer would turn our pointer into a buffer offset.
	pbo := uint32(glGetInteger(gls.PIXEL_PACK_BUFFER_BINDING))
	if pbo != 0 {
		glBindBuffer(gls.PIXEL_PACK_BUFFER, 0)
	}
	setPackDefaults()
	glReadPixels(f.Width, f.Height, format, typ, dst)
	if pbo != 0 {
		glBindBuffer(gls.PIXEL_PACK_BUFFER, pbo)
	}
	if err := glErrors(); err != nil {
		return fmt.Errorf("gpu: %s: glReadPixels: %w", op, err)
	}
	return nil
}

// flipRows reverses the order of rows rows of rowBytes bytes in buf, using
// tmp (len rowBytes) as swap space.
func flipRows(buf []byte, rowBytes, rows int, tmp []byte) {
	for top, bot := 0, rows-1; top < bot; top, bot = top+1, bot-1 {
		a := buf[top*rowBytes : (top+1)*rowBytes]
		b := buf[bot*rowBytes : (bot+1)*rowBytes]
		copy(tmp, a)
		copy(a, b)
		copy(b, tmp)
	}
}

// FloatBytes views s as bytes (native byte order, which is what GL
// writes): the destination of a float target's PendingRead.
func FloatBytes(s []float32) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 4*len(s))
}

// Delete releases the GL objects of f; f is unusable afterwards. Calling it
// again does nothing.
func (f *Framebuffer) Delete(gs *gls.GLS) {
	f.delete()
	for _, b := range f.pbos {
		glDeleteBuffer(b)
	}
	f.row, f.full, f.pbos = nil, nil, nil
}
