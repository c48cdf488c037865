package ipc

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// RejectionTextBytes bounds the reason a host keeps for the values it
// refused last (longer reasons are cut at a character boundary).
const RejectionTextBytes = 512

// Rejection is a host's word on the last values it refused: an element's
// new values that its Apply (or a parameter's range) turned down, reset to
// the element's last accepted ones.
type Rejection struct {
	Cycle  uint64 // the host cycle that refused them: cycles completed before it, plus one
	First  int    // the element's first value slot
	Count  int    // its number of value slots
	Reason string // the element's error
}

// putRejection publishes the host's last refusal in the header: the cycle
// field is cleared while the rest is written and set last, so that a
// reader that sees the same non-zero cycle before and after reading the
// rest has read one refusal whole.
func (r *Region) putRejection(x Rejection) {
	text := x.Reason
	if len(text) > RejectionTextBytes {
		cut := RejectionTextBytes
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	r.hput64(offRejCycle, 0)
	r.hput32(offRejFirst, uint32(x.First))
	r.hput32(offRejCount, uint32(x.Count))
	r.hput32(offRejLen, uint32(len(text)))
	area := r.own.hdr[offRejText:headerUsed]
	clear(area)
	copy(area, text)
	copy(r.mem[offRejText:headerUsed], area)
	r.hput64(offRejCycle, x.Cycle)
}

// LastRejection returns the host's last refusal of values, and false
// where there is none (or it is being written: ask again).
func (r *Region) LastRejection() (Rejection, bool) {
	for try := 0; try < 3; try++ {
		c1 := r.get64(offRejCycle)
		if c1 == 0 {
			return Rejection{}, false
		}
		x := Rejection{Cycle: c1, First: int(r.get32(offRejFirst)), Count: int(r.get32(offRejCount))}
		n := min(int(r.get32(offRejLen)), RejectionTextBytes)
		x.Reason = strings.ToValidUTF8(string(r.mem[offRejText:offRejText+n]), "?")
		if r.get64(offRejCycle) == c1 {
			return x, true
		}
	}
	return Rejection{}, false
}

// RefusedError is a value write the host did not take: the element
// refused it (Reason, where the host kept one) and the slot reads Now.
type RefusedError struct {
	Index      int
	Value, Now float64
	Reason     string
}

func (e *RefusedError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("the host did not take %v (value %d reads %v): refused, or overwritten by another client", e.Value, e.Index, e.Now)
	}
	return fmt.Sprintf("the host refused %v: %s", e.Value, e.Reason)
}
