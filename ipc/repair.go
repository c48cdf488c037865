package ipc

import (
	"bytes"
	"fmt"
	"unsafe"
)

// logCheckBytes bounds how much of the change log the host compares with
// its private copy each cycle. The header, the descriptors and the names
// are compared whole every cycle (at most a few MiB at the largest sizes,
// usually a few KiB); the log may reach the size of its section (64 MiB by
// default), so it is checked a window at a time, round robin: 256 KiB
// costs tens of microseconds, and a 1 MiB log is checked whole every four
// cycles.
var logCheckBytes = 256 << 10 // a variable for tests

// reassert rewrites what the host owns (header fields, descriptor records,
// names, change-log records) wherever the shared copy differs from the
// host's private one, and says what it repaired. Only the host calls it,
// from its cycle.
func (r *Region) reassert() []string {
	o := r.own
	var fixed []string
	for _, f := range hostFields {
		off, size := f[0], f[1]
		if size == 8 {
			if want, got := r.hget64(off), r.get64(off); got != want {
				r.store64(off, want)
				fixed = append(fixed, fmt.Sprintf("header field at %d (%d, want %d)", off, got, want))
			}
			continue
		}
		want, got := r.hget32(off), r.get32(off)
		if got == want {
			continue
		}
		if off == offState && got == stateReplaced && !r.isFileAt(r.path) {
			// A new host took the name and said so: that is true.
			*(*uint32)(unsafe.Pointer(&o.hdr[offState])) = stateReplaced
			continue
		}
		r.store32(off, want)
		fixed = append(fixed, fmt.Sprintf("header field at %d (%d, want %d)", off, got, want))
	}
	if text := r.mem[offRejText:headerUsed]; !bytes.Equal(text, o.hdr[offRejText:headerUsed]) {
		copy(text, o.hdr[offRejText:headerUsed])
		fixed = append(fixed, "the text of the last refusal")
	}
	if !bytes.Equal(r.mem[r.lay.descOff:r.lay.descOff+len(o.desc)], o.desc) ||
		!bytes.Equal(r.mem[r.lay.namesOff:r.lay.namesOff+len(o.names)], o.names) {
		r.writeDescriptors(r.hget32(offValuesUse))
		fixed = append(fixed, "descriptor records or parameter names")
	}
	// Readers take a named record just past desc_count for a rewound
	// count: none may lie there.
	if n := len(o.desc); n < r.lay.descCap*descSize && r.mem[r.lay.descOff+n] != 0 {
		clear(r.mem[r.lay.descOff+n : r.lay.descOff+n+descSize])
		fixed = append(fixed, fmt.Sprintf("a descriptor record written past the last (%d)", n/descSize))
	}
	// Readers take a record just past log_used for one being published
	// (or for rewound counters) and look again: nothing may lie there
	// between the host's appends.
	if n := len(o.log); n+8 <= r.lay.logCap && r.get64(r.lay.logOff+n) != 0 {
		r.store64(r.lay.logOff+n, 0)
		fixed = append(fixed, fmt.Sprintf("bytes written past the end of the change log (%d)", n))
	}
	if n := len(o.log); n > 0 {
		if o.logCheck >= n {
			o.logCheck = 0
		}
		a, b := o.logCheck, min(n, o.logCheck+logCheckBytes)
		if shared := r.mem[r.lay.logOff+a : r.lay.logOff+b]; !bytes.Equal(shared, o.log[a:b]) {
			copy(shared, o.log[a:b])
			fixed = append(fixed, fmt.Sprintf("change-log bytes [%d, %d)", a, b))
		}
		o.logCheck = b
	}
	return fixed
}
