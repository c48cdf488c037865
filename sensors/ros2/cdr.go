package ros2

import (
	"encoding/binary"
	"math"
)

// cdrHeader is the encapsulation header: representation CDR_LE (0x0001),
// options 0.
var cdrHeader = [4]byte{0x00, 0x01, 0x00, 0x00}

// writer appends XCDR1 little-endian data. Alignment counts from the end
// of the encapsulation header, as the payload's origin.
type writer struct{ b []byte }

func newWriter(size int) *writer {
	w := &writer{b: make([]byte, 4, 4+size)}
	copy(w.b, cdrHeader[:])
	return w
}

func (w *writer) align(n int) {
	for (len(w.b)-4)%n != 0 {
		w.b = append(w.b, 0)
	}
}

func (w *writer) u8(v uint8) { w.b = append(w.b, v) }

func (w *writer) boolean(v bool) {
	if v {
		w.u8(1)
	} else {
		w.u8(0)
	}
}

func (w *writer) u16(v uint16) {
	w.align(2)
	w.b = binary.LittleEndian.AppendUint16(w.b, v)
}

func (w *writer) u32(v uint32) {
	w.align(4)
	w.b = binary.LittleEndian.AppendUint32(w.b, v)
}

func (w *writer) i32(v int32) { w.u32(uint32(v)) }

func (w *writer) f32(v float32) { w.u32(math.Float32bits(v)) }

func (w *writer) f64(v float64) {
	w.align(8)
	w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(v))
}

// str writes a CDR string: length with the terminating NUL, bytes, NUL.
func (w *writer) str(s string) {
	w.u32(uint32(len(s) + 1))
	w.b = append(w.b, s...)
	w.b = append(w.b, 0)
}

func (w *writer) f32seq(v []float32) {
	w.u32(uint32(len(v)))
	for _, x := range v {
		w.f32(x)
	}
}

func (w *writer) f64seq(v []float64) {
	w.u32(uint32(len(v)))
	for _, x := range v {
		w.f64(x)
	}
}

func (w *writer) f64arr(v []float64) {
	for _, x := range v {
		w.f64(x)
	}
}

func (w *writer) bytes(v []byte) {
	w.u32(uint32(len(v)))
	w.b = append(w.b, v...)
}
