package ipc

import (
	"bytes"
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
	// Files are the files the command loaded (its model, the model's
	// buffers and images, models of its embedded commands), with their
	// SHA-256: what a mirror fetches, and what the NATS file subject serves.
	Files []FileHash
}

// pendingFiles is the file list of the command logFits checked last, and
// what the host knows of the files its commands loaded.
type pendingFiles struct {
	dir, xml string
	lo       loadOpts
	files    []byte
	memo     fileMemo
}

// ErrLogFull is returned (to the requester, as the request's outcome) when
// a command's record does not fit the change log: the command is refused
// and the scene does not change, so mirrors never miss a command.
var ErrLogFull = errors.New("change log full")

func recordSize(source, dir, xml string, files []byte) int {
	return (recHeader + len(source) + len(dir) + len(xml) + len(files) + 7) &^ 7
}

// filesOf returns the file list of a command as the log stores it,
// working it out (reading and hashing the files) once for the logFits and
// appendLog of one command.
func (r *Region) filesOf(dir, xml string, lo loadOpts) []byte {
	p := &r.own.files
	if p.dir != dir || p.xml != xml || p.lo != lo {
		p.dir, p.xml, p.lo, p.files = dir, xml, lo, encodeFiles(loadedFiles(dir, xml, lo, &p.memo))
	}
	return p.files
}

// logFits reports whether a record of these strings fits the change log.
func (r *Region) logFits(source, dir, xml string, lo loadOpts) error {
	used, capacity := len(r.own.log), r.lay.logCap
	if need := recordSize(source, dir, xml, r.filesOf(dir, xml, lo)); used+need > capacity {
		return fmt.Errorf("%w: the command needs %d bytes, %d of %d are left (start the host with a larger change log, simvis serve --log-mib)",
			ErrLogFull, need, capacity-used, capacity)
	}
	return nil
}

// appendLog appends a record to the host's private log, copies it into the
// region and then publishes it by advancing log_used, so readers never see
// a partial record. Only the host appends.
func (r *Region) appendLog(source, dir, xml string, lo loadOpts) (uint64, error) {
	if err := r.logFits(source, dir, xml, lo); err != nil {
		return 0, err
	}
	o := r.own
	files := r.filesOf(dir, xml, lo)
	o.files.dir, o.files.xml, o.files.files = "", "", nil
	used := len(o.log)
	seq := r.hget64(offLogCount) + 1
	size := recordSize(source, dir, xml, files)
	o.log = append(o.log, make([]byte, size)...)
	rec := o.log[used:]
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
	copy(rec[n:], files) // the rest is zero padding
	copy(r.mem[r.lay.logOff+used:], rec)
	r.hput64(offLogCount, seq)
	r.hput64(offLogUsed, uint64(len(o.log))) // publishes the record
	return seq, nil
}

// parseLog decodes the records of log (the bytes in use) from byte offset
// off, whose previous record had sequence prev: every record must fit,
// and sequence numbers must follow each other. Strings are copies.
func parseLog(log []byte, off int, prev uint64) ([]LogRecord, int, error) {
	var out []LogRecord
	for off < len(log) {
		if len(log)-off < recHeader {
			return out, off, fmt.Errorf("change log record at %d is cut off", off)
		}
		rec := log[off:]
		get := func(at int) int { return int(*(*uint32)(unsafe.Pointer(&rec[at]))) }
		size, ls, ld, lt := get(recLen), get(recSrcLen), get(recDirLen), get(recTextLen)
		if size < recHeader || size%8 != 0 || size > len(rec) || ls > size || ld > size || lt > size || recHeader+ls+ld+lt > size {
			return out, off, fmt.Errorf("change log record at %d does not parse (%d bytes: %d+%d+%d)", off, size, ls, ld, lt)
		}
		seq := *(*uint64)(unsafe.Pointer(&rec[recSeq]))
		if seq != prev+1 {
			return out, off, fmt.Errorf("change log record at %d has sequence %d, want %d", off, seq, prev+1)
		}
		p := recHeader
		// After the text: the file list (JSON), then zero padding.
		files, err := DecodeFiles(bytes.TrimRight(rec[p+ls+ld+lt:size], "\x00"))
		if err != nil {
			return out, off, fmt.Errorf("change log record at %d: %v", off, err)
		}
		out = append(out, LogRecord{
			Seq:    seq,
			Source: string(rec[p : p+ls]),
			Dir:    string(rec[p+ls : p+ls+ld]),
			XML:    string(rec[p+ls+ld : p+ls+ld+lt]),
			Files:  files,
		})
		prev = seq
		off += size
	}
	return out, off, nil
}

// ReadLog returns the change-log records after cur and advances cur past
// them (cur.Pos is a byte offset into the log section). A client that
// finds the log damaged (counters out of range or rewound, a record that
// does not parse or breaks the sequence) retries for a while, since the
// host repairs what it owns every cycle, then reports it and leaves cur
// where it was.
func (r *Region) ReadLog(cur *LogCursor) ([]LogRecord, error) {
	if o := r.own; o != nil {
		if cur.Pos > uint64(len(o.log)) {
			return nil, fmt.Errorf("ipc: %s: log cursor %d is past the log's %d bytes", r.path, cur.Pos, len(o.log))
		}
		recs, off, err := parseLog(o.log, int(cur.Pos), cur.Seq)
		advance(cur, recs, off)
		return recs, err
	}
	var recs []LogRecord
	var end int
	var why error
	// The host checks the log a window a cycle: damage anywhere is repaired
	// within a full round plus the cycle in progress.
	sweep := min(r.get64(offLogUsed), uint64(r.lay.logCap))/uint64(logCheckBytes) + 2
	waited, err := r.retry(sweep, func() error {
		recs = nil
		used, count, capacity := r.get64(offLogUsed), r.get64(offLogCount), uint64(r.lay.logCap)
		if used > capacity || used%8 != 0 || used < cur.Pos || count < cur.Seq {
			why = fmt.Errorf("change log counters log_used %d, log_count %d (capacity %d) do not fit this reader's position %d, record %d",
				used, count, capacity, cur.Pos, cur.Seq)
			return errDamaged
		}
		log := r.mem[r.lay.logOff : r.lay.logOff+int(used)]
		var err error
		recs, end, err = parseLog(log, int(cur.Pos), cur.Seq)
		if err != nil {
			why = err
			return errDamaged
		}
		last := cur.Seq
		if len(recs) > 0 {
			last = recs[len(recs)-1].Seq
		}
		if count < last {
			why = fmt.Errorf("log_count %d is behind the records below log_used (up to %d)", count, last)
			return errDamaged
		}
		// A record after log_used means the host is publishing it right
		// now, or the counters were rewound: look again in either case,
		// so that a reader never stops short of the real end.
		if rest := uint64(r.lay.logCap) - used; rest >= recHeader {
			next := r.mem[r.lay.logOff+int(used):]
			if *(*uint32)(unsafe.Pointer(&next[recLen])) != 0 && *(*uint64)(unsafe.Pointer(&next[recSeq])) == last+1 {
				why = fmt.Errorf("record %d lies past log_used %d (log_used and log_count rewound?)", last+1, used)
				return errDamaged
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ipc: %s: damaged change log (still so after %v): %v", r.path, waited, why)
	}
	advance(cur, recs, end)
	return recs, nil
}

func advance(cur *LogCursor, recs []LogRecord, off int) {
	cur.Pos = uint64(off)
	if len(recs) > 0 {
		cur.Seq = recs[len(recs)-1].Seq
	}
}
