package ipc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/simvis/simvis/scene"
)

// Header field offsets; LAYOUT.md documents them.
const (
	magic        = "SIMVIS1\x00"
	layoutVer    = 1
	pageSize     = 4096
	descSize     = 256
	offVersion   = 8
	offHeaderSz  = 12
	offEpoch     = 16
	offPID       = 24
	offState     = 28
	offDescOff   = 32
	offDescCap   = 40
	offDescSize  = 44
	offNamesOff  = 48
	offNamesCap  = 56
	offValuesOff = 64
	offValuesCap = 72
	offReqOff    = 80
	offReqSlots  = 88
	offReqSize   = 92
	offLogOff    = 96
	offLogCap    = 104
	offLogUsed   = 112
	offLogCount  = 120
	offDescSeq   = 128
	offDescCount = 132
	offValuesUse = 136
	offNamesUsed = 140
	offRejected  = 144
	offReqClaim  = 152
	offReqDone   = 160
	offCycle     = 168
	offPeriod    = 176
	offCycleAt   = 184
	offRejCycle  = 192 // the host's last refusal of values (rejection_*)
	offRejFirst  = 200
	offRejCount  = 204
	offRejLen    = 208
	offRejText   = 216
	headerUsed   = offRejText + RejectionTextBytes // bytes of the header page that hold fields

	stateRunning  = 1
	stateStopped  = 2
	stateReplaced = 3

	nameField = 96
	atField   = 64
	typeField = 32
)

// hostFields are the header fields the host owns, as (offset, size): every
// field but request_claim, which producers advance. The host re-asserts
// them from its private image every cycle.
var hostFields = [][2]int{
	{0, 8}, {offVersion, 4}, {offHeaderSz, 4}, {offEpoch, 8}, {offPID, 4}, {offState, 4},
	{offDescOff, 8}, {offDescCap, 4}, {offDescSize, 4}, {offNamesOff, 8}, {offNamesCap, 4}, {60, 4},
	{offValuesOff, 8}, {offValuesCap, 4}, {76, 4}, {offReqOff, 8}, {offReqSlots, 4}, {offReqSize, 4},
	{offLogOff, 8}, {offLogCap, 8}, {offLogUsed, 8}, {offLogCount, 8}, {offDescSeq, 4}, {offDescCount, 4},
	{offValuesUse, 4}, {offNamesUsed, 4}, {offRejected, 8}, {offReqDone, 8}, {offCycle, 8}, {offPeriod, 8},
	{offCycleAt, 8}, {offRejCycle, 8}, {offRejFirst, 4}, {offRejCount, 4}, {offRejLen, 4}, {212, 4},
}

// Sizes fixes a region's capacities when a host creates it.
type Sizes struct {
	Elements     int // descriptor records
	NameBytes    int // bytes for parameter names (each name plus a NUL)
	Values       int // float64 slots: the scene's parameter capacity
	Requests     int // change-request slots
	RequestBytes int // bytes per request slot, its 64-byte header included
	LogBytes     int // bytes of the change log
}

// DefaultSizes suit scenes of a few thousand elements. Files in /dev/shm
// are sparse: pages never written cost no memory.
var DefaultSizes = Sizes{
	Elements: 4096, NameBytes: 1 << 20, Values: scene.DefaultParamCapacity,
	Requests: 256, RequestBytes: 16 << 10, LogBytes: 64 << 20,
}

// Path returns where the region named name lives: /dev/shm/simvis-NAME. A
// name holding a '/' is taken as a path itself.
func Path(name string) string {
	if strings.Contains(name, "/") {
		return name
	}
	return "/dev/shm/simvis-" + name
}

// layout is where a region's sections are. The host computes it; a client
// reads it once, at Attach, and checks it against the file: neither reads
// it from the shared header again, so a process that rewrites the header
// later cannot send either out of the mapping.
type layout struct {
	descOff, descCap     int
	namesOff, namesCap   int
	valuesOff, valuesCap int
	reqOff, reqSlots     int
	reqSize              int
	logOff, logCap       int
}

// Region is the shared-array file mapped into this process: by the host
// that created it (Create) or a client that attached (Attach).
type Region struct {
	path string
	mem  []byte
	lay  layout
	file os.FileInfo // the file mapped, to tell it from a successor at path
	own  *owned      // the host's private state; nil for clients
	// hostPID is host_pid as read at Create or Attach: one file has one
	// host, so liveness checks never read the field again, which any
	// client could overwrite.
	hostPID uint32
}

// owned is what the host publishes, kept where no client can write: the
// header image and counters, the descriptor records, the names and the
// change log in use. The shared copies are only ever written from it.
type owned struct {
	hdr      [headerUsed]byte
	desc     []byte       // descriptor records in use
	names    []byte       // parameter-name bytes in use
	log      []byte       // change-log bytes in use
	logCheck int          // where the next rolling check of the log starts
	files    pendingFiles // the file list logFits worked out, for appendLog (changelog.go)
}

func roundPage(n int) int { return (n + pageSize - 1) / pageSize * pageSize }

// Create makes a new region at path with a new epoch, for a host. It writes
// a new file under an unpredictable name and renames it over path, so a
// client still mapping a previous host's file never reads a half-written
// one; that file is marked replaced, which its clients see (Client.Check).
func Create(path string, sz Sizes) (*Region, error) {
	r, tmp, err := createUnnamed(path, sz)
	if err != nil {
		return nil, err
	}
	if err := r.takeName(tmp); err != nil {
		return nil, err
	}
	return r, nil
}

// createUnnamed is Create but for the name: the region lies at tmp, beside
// path, until takeName gives it path. A host building a new run (a
// removal) fills it there while its clients go on with the old one.
func createUnnamed(path string, sz Sizes) (*Region, string, error) {
	if sz.Elements <= 0 || sz.NameBytes <= 0 || sz.Values <= 0 || sz.Values > 1<<28 || sz.Elements > 1<<24 ||
		sz.NameBytes > 1<<30 || sz.Requests <= 0 || sz.Requests > 1<<20 || sz.RequestBytes < 256 ||
		sz.RequestBytes > 64<<20 || sz.RequestBytes%8 != 0 || sz.LogBytes < 4096 || sz.LogBytes > 1<<40 {
		return nil, "", fmt.Errorf("ipc: %s: sizes %+v out of range", path, sz)
	}
	var l layout
	l.descOff, l.descCap = pageSize, sz.Elements
	l.namesOff, l.namesCap = l.descOff+roundPage(sz.Elements*descSize), sz.NameBytes
	l.valuesOff, l.valuesCap = l.namesOff+roundPage(sz.NameBytes), sz.Values
	l.reqOff, l.reqSlots, l.reqSize = l.valuesOff+roundPage(sz.Values*8), sz.Requests, sz.RequestBytes
	l.logOff, l.logCap = l.reqOff+roundPage(sz.Requests*sz.RequestBytes), sz.LogBytes
	size := l.logOff + roundPage(sz.LogBytes)
	f, tmp, err := createExclusive(path)
	if err != nil {
		return nil, "", fmt.Errorf("ipc: %w", err)
	}
	defer f.Close() // the mapping outlives the descriptor
	fail := func(err error) (*Region, string, error) {
		os.Remove(tmp)
		return nil, "", err
	}
	if err := f.Truncate(int64(size)); err != nil {
		return fail(fmt.Errorf("ipc: %s: %w", path, err))
	}
	mem, err := mapShared(f, size)
	if err != nil {
		return fail(fmt.Errorf("ipc: mapping %s: %w", path, err))
	}
	r := &Region{path: path, mem: mem, lay: l, own: &owned{}}
	if r.file, err = f.Stat(); err != nil {
		unmap(mem)
		return fail(fmt.Errorf("ipc: %w", err))
	}
	copy(r.own.hdr[:], magic)
	copy(mem, magic)
	r.hput32(offVersion, layoutVer)
	r.hput32(offHeaderSz, pageSize)
	r.hostPID = uint32(os.Getpid())
	r.hput32(offPID, r.hostPID)
	r.hput64(offDescOff, uint64(l.descOff))
	r.hput32(offDescCap, uint32(l.descCap))
	r.hput32(offDescSize, descSize)
	r.hput64(offNamesOff, uint64(l.namesOff))
	r.hput32(offNamesCap, uint32(l.namesCap))
	r.hput64(offValuesOff, uint64(l.valuesOff))
	r.hput32(offValuesCap, uint32(l.valuesCap))
	r.hput64(offReqOff, uint64(l.reqOff))
	r.hput32(offReqSlots, uint32(l.reqSlots))
	r.hput32(offReqSize, uint32(l.reqSize))
	r.hput64(offLogOff, uint64(l.logOff))
	r.hput64(offLogCap, uint64(l.logCap))
	r.hput32(offState, stateRunning)
	// The epoch goes last: a client that sees it has a complete header.
	r.hput64(offEpoch, uint64(time.Now().UnixNano())|1)
	return r, tmp, nil
}

// takeName renames the region from tmp (createUnnamed) to its path; an
// earlier region there is marked replaced, so that its clients open this
// one.
func (r *Region) takeName(tmp string) error {
	path := r.path
	old := markable(path)
	if err := os.Rename(tmp, path); err != nil {
		unmap(r.mem)
		r.mem = nil
		if old != nil {
			unmap(old)
		}
		os.Remove(tmp)
		return fmt.Errorf("ipc: %w", err)
	}
	if old != nil {
		// Clients of the previous host learn it is gone for good.
		atomic.StoreUint32((*uint32)(unsafe.Pointer(&old[offState])), stateReplaced)
		unmap(old)
	}
	return nil
}

// markable maps the header page of an earlier region at path, if there is
// one of this user's, so that Create can mark it replaced.
func markable(path string) []byte {
	f, st, err := openOwned(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if st.Size() < pageSize {
		return nil
	}
	mem, err := mapShared(f, pageSize)
	if err != nil {
		return nil
	}
	if !bytes.Equal(mem[:8], []byte(magic)) {
		unmap(mem)
		return nil
	}
	return mem
}

// Attach maps an existing region for a client: a regular file of this
// user's, never reached through a symbolic link.
func Attach(path string) (*Region, error) {
	f, st, err := openOwned(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() < pageSize || st.Size() > 1<<41 {
		return nil, fmt.Errorf("ipc: %s: %d bytes is not a simvis region", path, st.Size())
	}
	mem, err := mapShared(f, int(st.Size()))
	if err != nil {
		return nil, fmt.Errorf("ipc: mapping %s: %w", path, err)
	}
	r := &Region{path: path, mem: mem, file: st}
	// A region whose header is damaged is repaired by its host within a
	// cycle: look again for a while before reporting it. A file that is
	// not a simvis region, or whose host says it stopped or is gone, is
	// reported at once: nobody will repair it.
	deadline := time.Now().Add(readPatience)
	for {
		err := r.check()
		if err == nil {
			return r, nil
		}
		if !bytes.Equal(mem[:8], []byte(magic)) || r.get32(offState) != stateRunning || processGone(r.get32(offPID)) ||
			time.Now().After(deadline) {
			unmap(mem)
			return nil, err
		}
		if attachDamaged != nil {
			attachDamaged()
		}
		time.Sleep(time.Millisecond)
	}
}

// attachDamaged, when set (by tests), runs each time Attach finds a
// damaged header and is about to look again.
var attachDamaged func()

// check validates the header against the mapping and caches the layout, so
// that a foreign or damaged file is an error rather than out-of-range
// accesses.
func (r *Region) check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("ipc: %s: %s", r.path, fmt.Sprintf(format, args...))
	}
	if !bytes.Equal(r.mem[:8], []byte(magic)) {
		return bad("not a simvis region (magic %q)", r.mem[:8])
	}
	if v := r.get32(offVersion); v != layoutVer {
		return bad("layout version %d, this program reads %d", v, layoutVer)
	}
	if r.Epoch() == 0 {
		return bad("the host has not finished creating it")
	}
	size := uint64(len(r.mem))
	l := layout{
		descOff: int(r.get64(offDescOff) & (1<<42 - 1)), descCap: int(r.get32(offDescCap)),
		namesOff: int(r.get64(offNamesOff) & (1<<42 - 1)), namesCap: int(r.get32(offNamesCap)),
		valuesOff: int(r.get64(offValuesOff) & (1<<42 - 1)), valuesCap: int(r.get32(offValuesCap)),
		reqOff: int(r.get64(offReqOff) & (1<<42 - 1)), reqSlots: int(r.get32(offReqSlots)), reqSize: int(r.get32(offReqSize)),
		logOff: int(r.get64(offLogOff) & (1<<42 - 1)),
	}
	logCap := r.get64(offLogCap)
	sections := []struct {
		name       string
		off, bytes uint64
		raw        uint64
	}{
		{"descriptors", uint64(l.descOff), uint64(l.descCap) * descSize, r.get64(offDescOff)},
		{"names", uint64(l.namesOff), uint64(l.namesCap), r.get64(offNamesOff)},
		{"values", uint64(l.valuesOff), uint64(l.valuesCap) * 8, r.get64(offValuesOff)},
		{"requests", uint64(l.reqOff), uint64(l.reqSlots) * uint64(l.reqSize), r.get64(offReqOff)},
		{"change log", uint64(l.logOff), logCap, r.get64(offLogOff)},
	}
	for _, s := range sections {
		if s.raw != s.off || s.off%pageSize != 0 || s.off < pageSize || s.bytes > size || s.off+s.bytes > size {
			return bad("%s section [%d, +%d) is outside the %d-byte file", s.name, s.raw, s.bytes, size)
		}
	}
	l.logCap = int(logCap)
	if r.get32(offDescSize) != descSize {
		return bad("descriptor size %d, want %d", r.get32(offDescSize), descSize)
	}
	if l.reqSlots == 0 || l.reqSize < slotHeader+8 || l.reqSize%8 != 0 {
		return bad("request slots %d of %d bytes", l.reqSlots, l.reqSize)
	}
	r.lay = l
	r.hostPID = r.get32(offPID)
	return nil
}

func (r *Region) ptr32(off int) *uint32 { return (*uint32)(unsafe.Pointer(&r.mem[off])) }
func (r *Region) ptr64(off int) *uint64 { return (*uint64)(unsafe.Pointer(&r.mem[off])) }

// Shared fields are read and written whole, atomically (a native
// little-endian machine is assumed, as for the float64 values).
func (r *Region) get32(off int) uint32      { return atomic.LoadUint32(r.ptr32(off)) }
func (r *Region) get64(off int) uint64      { return atomic.LoadUint64(r.ptr64(off)) }
func (r *Region) store32(off int, v uint32) { atomic.StoreUint32(r.ptr32(off), v) }
func (r *Region) store64(off int, v uint64) { atomic.StoreUint64(r.ptr64(off), v) }

// The host's header fields: set in its private image and published; read
// from the image only.
func (r *Region) hput32(off int, v uint32) {
	*(*uint32)(unsafe.Pointer(&r.own.hdr[off])) = v
	r.store32(off, v)
}
func (r *Region) hput64(off int, v uint64) {
	*(*uint64)(unsafe.Pointer(&r.own.hdr[off])) = v
	r.store64(off, v)
}
func (r *Region) hget32(off int) uint32 { return *(*uint32)(unsafe.Pointer(&r.own.hdr[off])) }
func (r *Region) hget64(off int) uint64 { return *(*uint64)(unsafe.Pointer(&r.own.hdr[off])) }

// field64 reads a header counter: the host's from its private image, a
// client's from the shared header (to be checked by the caller).
func (r *Region) field64(off int) uint64 {
	if r.own != nil {
		return r.hget64(off)
	}
	return r.get64(off)
}

// Path is the file the region maps.
func (r *Region) Path() string { return r.path }

// isFileAt reports whether path still names the file this region maps (a
// new host renames its own file over it).
func (r *Region) isFileAt(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && os.SameFile(st, r.file)
}

// Epoch identifies the host run that created the region; it changes when a
// host restarts.
func (r *Region) Epoch() uint64 { return r.field64(offEpoch) }

// HostRunning reports whether the host has neither stopped nor been
// replaced by a new host (it may still have died without saying so:
// Client.Check also looks for the process).
func (r *Region) HostRunning() bool { return r.get32(offState) == stateRunning }

// Rejected is the number of parameter values the host refused and reset.
func (r *Region) Rejected() uint64 { return r.field64(offRejected) }

// Cycles is the number of host cycles completed.
func (r *Region) Cycles() uint64 { return r.field64(offCycle) }

// Values returns the mapped parameter values: the whole capacity, for
// clients to read and write slots in place (a host keeps its scene's table
// to itself and copies values in and out every cycle).
func (r *Region) Values() []float64 {
	return unsafe.Slice((*float64)(unsafe.Pointer(&r.mem[r.lay.valuesOff])), r.lay.valuesCap)
}

// SceneOptions returns options for a scene whose parameter table is this
// region's values (for a process that trusts every writer of the region;
// Host does not use it).
func (r *Region) SceneOptions() scene.Options { return scene.Options{ParamStorage: r.Values()} }

// Publish appends descriptors for the elements of s not yet published and
// the number of value slots in use. Elements are only ever added, so
// records already written stay. A full region is an error; nothing is
// dropped.
func (r *Region) Publish(s *scene.Scene) error {
	o := r.own
	if o == nil {
		return errors.New("ipc: only the host publishes descriptors")
	}
	elems := s.Elements()
	count := len(o.desc) / descSize
	if count > len(elems) {
		return fmt.Errorf("ipc: %s holds %d descriptors, the scene %d elements", r.path, count, len(elems))
	}
	if len(elems) > r.lay.descCap {
		return fmt.Errorf("ipc: %s: %d elements do not fit the %d descriptor records", r.path, len(elems), r.lay.descCap)
	}
	need := 0
	for _, e := range elems[count:] {
		for _, p := range e.Params {
			need += len(p.Name) + 1
		}
		for _, f := range []struct {
			v   string
			max int
		}{{e.Name, nameField}, {e.At, atField}, {e.Type, typeField}} {
			if len(f.v) >= f.max {
				return fmt.Errorf("ipc: element %q: %q is longer than the layout's %d bytes", e.Name, f.v, f.max-1)
			}
		}
	}
	if len(o.names)+need > r.lay.namesCap {
		return fmt.Errorf("ipc: %s: parameter names need %d bytes, %d are left", r.path, need, r.lay.namesCap-len(o.names))
	}
	for _, e := range elems[count:] {
		var rec [descSize]byte
		copy(rec[0:nameField], e.Name)
		copy(rec[nameField:nameField+atField], e.At)
		copy(rec[nameField+atField:nameField+atField+typeField], e.Type)
		start := len(o.names)
		for _, p := range e.Params {
			o.names = append(append(o.names, p.Name...), 0)
		}
		put := func(at int, v uint32) { *(*uint32)(unsafe.Pointer(&rec[at])) = v }
		put(192, uint32(e.Start))
		put(196, uint32(len(e.Params)))
		put(200, uint32(start))
		put(204, uint32(len(o.names)-start))
		o.desc = append(o.desc, rec[:]...)
	}
	r.writeDescriptors(uint32(len(s.Values())))
	return nil
}

// writeDescriptors copies the private descriptors and names into the
// region under the sequence lock and publishes the counters.
func (r *Region) writeDescriptors(valuesUsed uint32) {
	o := r.own
	seq := r.hget32(offDescSeq) &^ 1
	r.store32(offDescSeq, seq+1) // odd: writing
	copy(r.mem[r.lay.descOff:], o.desc)
	copy(r.mem[r.lay.namesOff:], o.names)
	r.hput32(offNamesUsed, uint32(len(o.names)))
	r.hput32(offDescCount, uint32(len(o.desc)/descSize))
	r.hput32(offValuesUse, valuesUsed)
	r.hput32(offDescSeq, seq+2) // even: consistent
}

// Descriptor describes one element of the host's scene.
type Descriptor struct {
	Name   string
	At     string // insertion point
	Type   string
	Start  int      // index of the first value
	Params []string // parameter names, in value order
}

// errDamaged marks a read that found the region inconsistent: a reader
// retries (the host repairs what it owns every cycle) and reports it if it
// stays.
var errDamaged = errors.New("damaged")

// Descriptors returns a consistent snapshot of the published elements and
// the number of value slots in use. A client that finds the descriptors
// locked or damaged retries for a while (the host repairs them every
// cycle), then says what it found.
func (r *Region) Descriptors() ([]Descriptor, int, error) {
	if o := r.own; o != nil {
		used := int(r.hget32(offValuesUse))
		out, err := parseDescriptors(o.desc, len(o.desc)/descSize, o.names, used)
		return out, used, err
	}
	var out []Descriptor
	var used int
	var why error
	// The host rewrites the descriptors whole every cycle: two cycles
	// cover one in progress.
	waited, err := r.retry(2, func() error {
		seq := r.get32(offDescSeq)
		if seq%2 == 1 {
			why = fmt.Errorf("the descriptor sequence (desc_seq) stays odd (%d): locked by a writer that never finished", seq)
			return errDamaged
		}
		count := int(r.get32(offDescCount))
		used = int(r.get32(offValuesUse))
		var err error
		if count > r.lay.descCap || used > r.lay.valuesCap {
			err = fmt.Errorf("desc_count %d (capacity %d) or values_used %d (capacity %d) is out of range",
				count, r.lay.descCap, used, r.lay.valuesCap)
		} else {
			desc := r.mem[r.lay.descOff : r.lay.descOff+count*descSize]
			names := r.mem[r.lay.namesOff : r.lay.namesOff+r.lay.namesCap]
			out, err = parseDescriptors(desc, count, names, used)
			// Every element has a name and the host only appends, so a
			// named record just past desc_count means it was rewound:
			// reading on would silently miss elements.
			if err == nil && count < r.lay.descCap && r.mem[r.lay.descOff+count*descSize] != 0 {
				err = fmt.Errorf("a descriptor record lies past desc_count %d (desc_count rewound?)", count)
			}
		}
		if r.get32(offDescSeq) != seq {
			return errRetry // torn: the host was writing
		}
		if err != nil {
			why = err
			return errDamaged
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, errDamaged) {
			return nil, 0, fmt.Errorf("ipc: %s: damaged region (still so after %v): %v", r.path, waited, why)
		}
		return nil, 0, fmt.Errorf("ipc: %s: %w", r.path, err)
	}
	return out, used, nil
}

// parseDescriptors decodes count records, checking every field against
// the layout: names inside the blob, the declared number of names, values
// inside the slots in use. Shared memory is read through copies, so what
// was checked is what is returned.
func parseDescriptors(desc []byte, count int, names []byte, used int) ([]Descriptor, error) {
	out := make([]Descriptor, count)
	for i := range out {
		rec := desc[i*descSize : (i+1)*descSize]
		get := func(at int) int { return int(*(*uint32)(unsafe.Pointer(&rec[at]))) }
		d := Descriptor{
			Name:  cstring(rec[0:nameField]),
			At:    cstring(rec[nameField : nameField+atField]),
			Type:  cstring(rec[nameField+atField : nameField+atField+typeField]),
			Start: get(192),
		}
		n, off, ln := get(196), get(200), get(204)
		if off > len(names) || ln > len(names)-off {
			return nil, fmt.Errorf("descriptor %d (%q): names [%d, +%d) outside the %d-byte blob", i, d.Name, off, ln, len(names))
		}
		if d.Start > used || n > used-d.Start {
			return nil, fmt.Errorf("descriptor %d (%q): values [%d, +%d) beyond the %d in use", i, d.Name, d.Start, n, used)
		}
		blob := string(names[off : off+ln])
		if n == 0 && ln == 0 {
			d.Params = nil
		} else {
			if !strings.HasSuffix(blob, "\x00") {
				return nil, fmt.Errorf("descriptor %d (%q): parameter names not NUL-terminated", i, d.Name)
			}
			d.Params = strings.Split(strings.TrimSuffix(blob, "\x00"), "\x00")
		}
		if len(d.Params) != n {
			return nil, fmt.Errorf("descriptor %d (%q): %d parameter names for %d values", i, d.Name, len(d.Params), n)
		}
		out[i] = d
	}
	return out, nil
}

func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// errRetry is a torn read: try again at once.
var errRetry = errors.New("retry")

// readPatience is how long at least a client retries a read that finds
// the region damaged before it reports it: several cycles of a host at its
// slowest usual rate, which repairs what it owns every cycle.
var readPatience = 2 * time.Second

// maxPatience bounds the wait for a host that needs many cycles to repair
// (a slow one, or a large change log checked a window a cycle).
var maxPatience = time.Minute

// readDamaged, when set (by tests), runs each time a read found damage and
// is about to look again.
var readDamaged func()

// retry runs read until it succeeds. A torn read (errRetry) is repeated;
// damage (errDamaged) is repeated after a pause until the host had the
// time to repair it: readPatience has passed and the host completed
// cycles more cycles since the damage was first seen (at most
// maxPatience). It stops sooner if the host stopped or its process is
// gone, and returns the damage error with how long it waited.
func (r *Region) retry(cycles uint64, read func() error) (time.Duration, error) {
	var start time.Time
	var from uint64
	for try := 0; ; try++ {
		err := read()
		switch {
		case err == nil:
			return 0, nil
		case errors.Is(err, errRetry) && try < 100000:
			continue
		case errors.Is(err, errDamaged):
			now := time.Now()
			if start.IsZero() {
				start, from = now, r.get64(offCycle)
			}
			waited := now.Sub(start)
			// A cycles field written backwards reads as far ahead: the
			// wait is then readPatience, as if the host had cycled.
			repaired := r.get64(offCycle)-from >= cycles
			if waited > readPatience && repaired || waited > maxPatience ||
				r.get32(offState) != stateRunning || processGone(r.hostPID) {
				return waited.Round(time.Millisecond), err
			}
			if readDamaged != nil {
				readDamaged()
			}
			time.Sleep(100 * time.Microsecond)
		default:
			if errors.Is(err, errRetry) {
				return 0, errors.New("the region kept changing while being read")
			}
			return 0, err
		}
	}
}

// Close unmaps the region; a host marks it stopped first.
func (r *Region) Close() error {
	if r.mem == nil {
		return nil
	}
	if r.own != nil {
		// A successor may have marked it replaced already; that stays.
		atomic.CompareAndSwapUint32(r.ptr32(offState), stateRunning, stateStopped)
	}
	err := unmap(r.mem)
	r.mem = nil
	return err
}
