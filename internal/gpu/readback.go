package gpu

import (
	"fmt"
	"os"

	"github.com/g3n/engine/gls"
)

// PendingRead is a read of a Framebuffer's color attachment under way:
// glReadPixels into a pixel-pack buffer, followed by a fence. Starting one
// returns at once, so that the GPU copies one sensor's picture while the
// next is drawn (GL runs commands in order, so drawing into the same
// framebuffer after the start does not change what is read) and the CPU
// waits once for many. Finish delivers the pixels; every PendingRead must be
// finished or dropped, inside Context.Do of the context that started it.
type PendingRead struct {
	f              *Framebuffer
	pbo            uint32
	fence          uintptr
	rowBytes, rows int
	data           []byte // the pixels already read, where reads run synchronously
}

// WaitReadsEnv, set to 1, makes StartRead read at once, as the other
// reads do: to compare both ways on a GPU (scripts/gpu-check.sh), or where
// a driver's fences misbehave.
const WaitReadsEnv = "SIMVIS_WAIT_READS"

// AsyncReads is false to make StartRead read at once; tests and
// benchmarks set it to compare both ways. It starts true unless
// WaitReadsEnv is 1.
var AsyncReads = os.Getenv(WaitReadsEnv) != "1"

// StartRead starts reading f's color attachment in its own format: 4 bytes
// per pixel for ColorRGBA8, a float per channel otherwise. Where the
// context lacks pixel-pack buffers or fences (OpenGL 3.2) it reads at once.
func (f *Framebuffer) StartRead(gs *gls.GLS) (*PendingRead, error) {
	if f.fbo == 0 {
		return nil, errDeleted
	}
	fi := formats[f.color]
	rowBytes := f.Width * fi.channels
	if fi.isFloat {
		rowBytes *= 4
	}
	p := &PendingRead{f: f, rowBytes: rowBytes, rows: f.Height}
	if !AsyncReads || !loadReadback() {
		p.data = make([]byte, rowBytes*f.Height)
		if err := f.read(p.data, fi.format, fi.typ, rowBytes, "StartRead"); err != nil {
			return nil, err
		}
		return p, nil
	}
	alloc := false
	if n := len(f.pbos); n > 0 {
		p.pbo, f.pbos = f.pbos[n-1], f.pbos[:n-1]
	} else {
		p.pbo, alloc = glGenBuffer(), true
	}
	drainGLErrors()
	glBindFramebuffer(gls.READ_FRAMEBUFFER, f.fbo)
	setPackDefaults()
	p.fence = glStartRead(p.pbo, rowBytes*f.Height, alloc, f.Width, f.Height, fi.format, fi.typ)
	if err := glErrors(); err != nil || p.fence == 0 {
		if p.fence != 0 {
			glDropRead(p.fence)
		}
		glDeleteBuffer(p.pbo)
		if err == nil {
			err = fmt.Errorf("no fence")
		}
		return nil, fmt.Errorf("gpu: StartRead: %w", err)
	}
	return p, nil
}

// Size is the number of bytes Finish writes.
func (p *PendingRead) Size() int { return p.rowBytes * p.rows }

// Finish waits for the read and copies the pixels into dst (Size bytes),
// top row first. Afterwards p is spent.
func (p *PendingRead) Finish(gs *gls.GLS, dst []byte) error {
	return p.finish(dst, false)
}

// FinishOpaque is Finish with every pixel's alpha set to 255 on the way, for
// a ColorRGBA8 read: blended drawing leaves alpha below 1 where it blends,
// and a camera's picture is opaque.
func (p *PendingRead) FinishOpaque(gs *gls.GLS, dst []byte) error {
	if p.f.color != ColorRGBA8 {
		return fmt.Errorf("gpu: PendingRead.FinishOpaque: framebuffer format is %s, want RGBA8", p.f.color)
	}
	return p.finish(dst, true)
}

func (p *PendingRead) finish(dst []byte, opaque bool) error {
	if len(dst) != p.Size() {
		return fmt.Errorf("gpu: PendingRead.Finish: len(dst) = %d, want %d", len(dst), p.Size())
	}
	if p.data != nil {
		copy(dst, p.data)
		p.data = nil
		if opaque {
			for i := 3; i < len(dst); i += 4 {
				dst[i] = 255
			}
		}
		return nil
	}
	if p.fence == 0 {
		return fmt.Errorf("gpu: PendingRead.Finish: the read was finished or dropped already")
	}
	drainGLErrors()
	rc := glFinishRead(p.fence, p.pbo, dst, p.rowBytes, p.rows, opaque)
	p.fence = 0
	p.release()
	switch {
	case rc == 1:
		return fmt.Errorf("gpu: PendingRead.Finish: glClientWaitSync failed")
	case rc == 2:
		return fmt.Errorf("gpu: PendingRead.Finish: glMapBufferRange failed: %w", glErrors())
	}
	if err := glErrors(); err != nil {
		return fmt.Errorf("gpu: PendingRead.Finish: %w", err)
	}
	return nil
}

// Drop abandons the read (an error elsewhere in the frame); p is spent.
func (p *PendingRead) Drop(gs *gls.GLS) {
	p.data = nil
	if p.fence != 0 {
		glDropRead(p.fence)
		p.fence = 0
		p.release()
	}
}

// release hands the pixel-pack buffer back to its framebuffer for the next
// read, or deletes it where the framebuffer is gone.
func (p *PendingRead) release() {
	if p.pbo == 0 {
		return
	}
	if p.f.fbo != 0 {
		p.f.pbos = append(p.f.pbos, p.pbo)
	} else {
		glDeleteBuffer(p.pbo)
	}
	p.pbo = 0
}

// setPackDefaults makes reads tightly packed whatever the width; the other
// pack parameters are reset too since a stray row length would overrun the
// destination.
func setPackDefaults() {
	glPixelStorei(gls.PACK_ALIGNMENT, 1)
	glPixelStorei(gls.PACK_ROW_LENGTH, 0)
	glPixelStorei(gls.PACK_SKIP_ROWS, 0)
	glPixelStorei(gls.PACK_SKIP_PIXELS, 0)
}
