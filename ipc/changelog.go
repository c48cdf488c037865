package ipc

import (
	"errors"
	"fmt"
	"unsafe"
)

// Change-log record header fields (LAYOUT.md).
const (
	recLen     = 0  // u32 bytes of the whole record, a multiple of 8
	recSrcLen  = 4  // u32
	recDirLen  = 8  // u32
	recTextLen = 12 // u32
	recSeq     = 16 // u64
	recHeader  = 24
)

// LogRecord is one command the host executed, as the change log holds it.
// Replaying every record of an epoch, in order, on an empty scene rebuilds
// the host's scene.
type LogRecord struct {
	Seq    uint64 // 1, 2, 3, ... within an epoch
	Source string // where it came from: "FILE:LINE" or "request N from pid P"
	Dir    string // absolute directory its relative file paths resolve against
	XML    string // the command
}

// ErrLogFull is returned (to the requester, as the request's outcome) when
// a command's record does not fit the change log: the command is refused
// and the scene does not change, so mirrors never miss a command.
var ErrLogFull = errors.New("change log full")

func recordSize(source, dir, xml string) int {
	return (recHeader + len(source) + len(dir) + len(xml) + 7) &^ 7
}

// logFits reports whether a record of these strings fits the change log.
func (r *Region) logFits(source, dir, xml string) error {
	used, capacity := r.get64(offLogUsed), r.get64(offLogCap)
	if need := uint64(recordSize(source, dir, xml)); used+need > capacity {
		return fmt.Errorf("%w: the command needs %d bytes, %d of %d are left (start the host with a larger change log, simvis serve --log-mib)",
			ErrLogFull, need, capacity-used, capacity)
	}
	return nil
}

// appendLog appends a record and then publishes it by advancing log_used,
// so readers never see a partial record. Only the host appends.
func (r *Region) appendLog(source, dir, xml string) (uint64, error) {
	if err := r.logFits(source, dir, xml); err != nil {
		return 0, err
	}
	used := r.get64(offLogUsed)
	seq := r.get64(offLogCount) + 1
	base := int(r.get64(offLogOff) + used)
	size := recordSize(source, dir, xml)
	rec := r.mem[base : base+size]
	put := func(at int, v uint32) { *(*uint32)(unsafe.Pointer(&rec[at])) = v }
	put(recLen, uint32(size))
	put(recSrcLen, uint32(len(source)))
	put(recDirLen, uint32(len(dir)))
	put(recTextLen, uint32(len(xml)))
	*(*uint64)(unsafe.Pointer(&rec[recSeq])) = seq
	n := recHeader
	n += copy(rec[n:], source)
	n += copy(rec[n:], dir)
	n += copy(rec[n:], xml)
	clear(rec[n:])
	r.store64(offLogCount, seq)
	r.store64(offLogUsed, used+uint64(size)) // publishes the record
	return seq, nil
}

// readLog returns the records published after byte offset off and the
// offset after them. A record that does not parse is damage, an error.
func (r *Region) readLog(off uint64) ([]LogRecord, uint64, error) {
	used, capacity := r.get64(offLogUsed), r.get64(offLogCap)
	if used > capacity || off > used {
		return nil, off, fmt.Errorf("ipc: %s: change log offsets %d/%d of %d are damaged", r.path, off, used, capacity)
	}
	base := int(r.get64(offLogOff))
	var out []LogRecord
	for off < used {
		if used-off < recHeader {
			return out, off, fmt.Errorf("ipc: %s: change log record at %d is cut off", r.path, off)
		}
		rec := r.mem[base+int(off) : base+int(used)]
		get := func(at int) int { return int(*(*uint32)(unsafe.Pointer(&rec[at]))) }
		size, ls, ld, lt := get(recLen), get(recSrcLen), get(recDirLen), get(recTextLen)
		if size < recHeader || size%8 != 0 || size > len(rec) || recHeader+ls+ld+lt > size {
			return out, off, fmt.Errorf("ipc: %s: change log record at %d is damaged", r.path, off)
		}
		p := recHeader
		out = append(out, LogRecord{
			Seq:    *(*uint64)(unsafe.Pointer(&rec[recSeq])),
			Source: string(rec[p : p+ls]),
			Dir:    string(rec[p+ls : p+ls+ld]),
			XML:    string(rec[p+ls+ld : p+ls+ld+lt]),
		})
		off += uint64(size)
	}
	return out, off, nil
}

// ReadLog returns the change-log records after cur and advances cur past
// them (cur.Pos is a byte offset into the log section).
func (r *Region) ReadLog(cur *LogCursor) ([]LogRecord, error) {
	recs, off, err := r.readLog(cur.Pos)
	cur.Pos = off
	if len(recs) > 0 {
		cur.Seq = recs[len(recs)-1].Seq
	}
	return recs, err
}
