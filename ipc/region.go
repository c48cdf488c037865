package ipc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
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

	stateRunning  = 1
	stateStopped  = 2
	stateReplaced = 3

	nameField = 96
	atField   = 64
	typeField = 32
)

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

// Region is the shared-array file mapped into this process: by the host
// that created it (Create) or a client that attached (Attach).
type Region struct {
	path string
	mem  []byte
	host bool
	file os.FileInfo // the file mapped, to tell it from a successor at path
}

func roundPage(n int) int { return (n + pageSize - 1) / pageSize * pageSize }

// Create makes a new region at path with a new epoch, for a host. It writes
// a new file and renames it over path, so a client still mapping a previous
// host's file never reads a half-written one; that file is marked replaced,
// which its clients see (Client.Check).
func Create(path string, sz Sizes) (*Region, error) {
	if sz.Elements <= 0 || sz.NameBytes <= 0 || sz.Values <= 0 || sz.Values > 1<<28 || sz.Elements > 1<<24 ||
		sz.NameBytes > 1<<30 || sz.Requests <= 0 || sz.Requests > 1<<20 || sz.RequestBytes < 256 ||
		sz.RequestBytes > 64<<20 || sz.RequestBytes%8 != 0 || sz.LogBytes < 4096 || sz.LogBytes > 1<<40 {
		return nil, fmt.Errorf("ipc: %s: sizes %+v out of range", path, sz)
	}
	descOff := pageSize
	namesOff := descOff + roundPage(sz.Elements*descSize)
	valuesOff := namesOff + roundPage(sz.NameBytes)
	reqOff := valuesOff + roundPage(sz.Values*8)
	logOff := reqOff + roundPage(sz.Requests*sz.RequestBytes)
	size := logOff + roundPage(sz.LogBytes)
	tmp := fmt.Sprintf("%s.new-%d", path, os.Getpid())
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("ipc: %w", err)
	}
	defer f.Close() // the mapping outlives the descriptor
	if err := f.Truncate(int64(size)); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("ipc: %s: %w", path, err)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("ipc: mapping %s: %w", path, err)
	}
	r := &Region{path: path, mem: mem, host: true}
	if r.file, err = f.Stat(); err != nil {
		syscall.Munmap(mem)
		os.Remove(tmp)
		return nil, fmt.Errorf("ipc: %w", err)
	}
	copy(mem, magic)
	r.put32(offVersion, layoutVer)
	r.put32(offHeaderSz, pageSize)
	r.put32(offPID, uint32(os.Getpid()))
	r.put64(offDescOff, uint64(descOff))
	r.put32(offDescCap, uint32(sz.Elements))
	r.put32(offDescSize, descSize)
	r.put64(offNamesOff, uint64(namesOff))
	r.put32(offNamesCap, uint32(sz.NameBytes))
	r.put64(offValuesOff, uint64(valuesOff))
	r.put32(offValuesCap, uint32(sz.Values))
	r.put64(offReqOff, uint64(reqOff))
	r.put32(offReqSlots, uint32(sz.Requests))
	r.put32(offReqSize, uint32(sz.RequestBytes))
	r.put64(offLogOff, uint64(logOff))
	r.put64(offLogCap, uint64(sz.LogBytes))
	r.store32(offState, stateRunning)
	// The epoch goes last: a client that sees it has a complete header.
	r.store64(offEpoch, uint64(time.Now().UnixNano())|1)
	old := markable(path)
	if err := os.Rename(tmp, path); err != nil {
		syscall.Munmap(mem)
		os.Remove(tmp)
		if old != nil {
			syscall.Munmap(old)
		}
		return nil, fmt.Errorf("ipc: %w", err)
	}
	if old != nil {
		// Clients of the previous host learn it is gone for good.
		atomic.StoreUint32((*uint32)(unsafe.Pointer(&old[offState])), stateReplaced)
		syscall.Munmap(old)
	}
	return r, nil
}

// markable maps the header page of an earlier region at path, if there is
// one, so that Create can mark it replaced.
func markable(path string) []byte {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() < pageSize {
		return nil
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, pageSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	if !bytes.Equal(mem[:8], []byte(magic)) {
		syscall.Munmap(mem)
		return nil
	}
	return mem
}

// Attach maps an existing region for a client.
func Attach(path string) (*Region, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("ipc: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("ipc: %w", err)
	}
	if st.Size() < pageSize || st.Size() > 1<<40 {
		return nil, fmt.Errorf("ipc: %s: %d bytes is not a simvis region", path, st.Size())
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("ipc: mapping %s: %w", path, err)
	}
	r := &Region{path: path, mem: mem, file: st}
	if err := r.check(); err != nil {
		syscall.Munmap(mem)
		return nil, err
	}
	return r, nil
}

// check validates the header against the mapping, so that a foreign or
// damaged file is an error rather than out-of-range accesses.
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
	sections := []struct {
		name       string
		off, bytes uint64
	}{
		{"descriptors", r.get64(offDescOff), uint64(r.get32(offDescCap)) * descSize},
		{"names", r.get64(offNamesOff), uint64(r.get32(offNamesCap))},
		{"values", r.get64(offValuesOff), uint64(r.get32(offValuesCap)) * 8},
		{"requests", r.get64(offReqOff), uint64(r.get32(offReqSlots)) * uint64(r.get32(offReqSize))},
		{"change log", r.get64(offLogOff), r.get64(offLogCap)},
	}
	for _, s := range sections {
		if s.off%pageSize != 0 || s.off < pageSize || s.off+s.bytes > size {
			return bad("%s section [%d, +%d) is outside the %d-byte file", s.name, s.off, s.bytes, size)
		}
	}
	if r.get32(offDescSize) != descSize {
		return bad("descriptor size %d, want %d", r.get32(offDescSize), descSize)
	}
	if r.get32(offReqSlots) == 0 || r.get32(offReqSize) < slotHeader+8 || r.get32(offReqSize)%8 != 0 {
		return bad("request slots %d of %d bytes", r.get32(offReqSlots), r.get32(offReqSize))
	}
	return nil
}

func (r *Region) ptr32(off int) *uint32 { return (*uint32)(unsafe.Pointer(&r.mem[off])) }
func (r *Region) ptr64(off int) *uint64 { return (*uint64)(unsafe.Pointer(&r.mem[off])) }

// Plain accesses are for fields written before the epoch publishes them
// (a native little-endian machine is assumed, as for the float64 values).
func (r *Region) put32(off int, v uint32)   { *r.ptr32(off) = v }
func (r *Region) put64(off int, v uint64)   { *r.ptr64(off) = v }
func (r *Region) get32(off int) uint32      { return atomic.LoadUint32(r.ptr32(off)) }
func (r *Region) get64(off int) uint64      { return atomic.LoadUint64(r.ptr64(off)) }
func (r *Region) store32(off int, v uint32) { atomic.StoreUint32(r.ptr32(off), v) }
func (r *Region) store64(off int, v uint64) { atomic.StoreUint64(r.ptr64(off), v) }

// Path is the file the region maps.
func (r *Region) Path() string { return r.path }

// isFileAt reports whether path still names the file this region maps (a
// new host renames its own file over it).
func (r *Region) isFileAt(path string) bool {
	st, err := os.Stat(path)
	return err == nil && os.SameFile(st, r.file)
}

// Epoch identifies the host run that created the region; it changes when a
// host restarts.
func (r *Region) Epoch() uint64 { return r.get64(offEpoch) }

// HostRunning reports whether the host has neither stopped nor been
// replaced by a new host (it may still have died without saying so:
// Client.Check also looks for the process).
func (r *Region) HostRunning() bool { return r.get32(offState) == stateRunning }

// Rejected is the number of parameter values the host refused and reset.
func (r *Region) Rejected() uint64 { return r.get64(offRejected) }

// Cycles is the number of host cycles completed.
func (r *Region) Cycles() uint64 { return r.get64(offCycle) }

// Values returns the mapped parameter values: the whole capacity, for a
// host to pass as scene.Options.ParamStorage, and for clients to read and
// write slots in place.
func (r *Region) Values() []float64 {
	off, n := int(r.get64(offValuesOff)), int(r.get32(offValuesCap))
	return unsafe.Slice((*float64)(unsafe.Pointer(&r.mem[off])), n)
}

// SceneOptions returns options for a scene whose parameter table is this
// region's values.
func (r *Region) SceneOptions() scene.Options { return scene.Options{ParamStorage: r.Values()} }

// Publish appends descriptors for the elements of s not yet published and
// the number of value slots in use. Elements are only ever added, so
// records already written stay. A full region is an error; nothing is
// dropped.
func (r *Region) Publish(s *scene.Scene) error {
	if !r.host {
		return errors.New("ipc: only the host publishes descriptors")
	}
	elems := s.Elements()
	count := int(r.get32(offDescCount))
	if count > len(elems) {
		return fmt.Errorf("ipc: %s holds %d descriptors, the scene %d elements", r.path, count, len(elems))
	}
	descOff, descCap := int(r.get64(offDescOff)), int(r.get32(offDescCap))
	namesOff, namesCap := int(r.get64(offNamesOff)), int(r.get32(offNamesCap))
	used := int(r.get32(offNamesUsed))
	if len(elems) > descCap {
		return fmt.Errorf("ipc: %s: %d elements do not fit the %d descriptor records", r.path, len(elems), descCap)
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
	if used+need > namesCap {
		return fmt.Errorf("ipc: %s: parameter names need %d bytes, %d are left", r.path, need, namesCap-used)
	}
	seq := r.get32(offDescSeq)
	r.store32(offDescSeq, seq+1) // odd: writing
	for i, e := range elems[count:] {
		rec := r.mem[descOff+(count+i)*descSize : descOff+(count+i+1)*descSize]
		clear(rec)
		copy(rec[0:nameField], e.Name)
		copy(rec[nameField:nameField+atField], e.At)
		copy(rec[nameField+atField:nameField+atField+typeField], e.Type)
		start := used
		for _, p := range e.Params {
			copy(r.mem[namesOff+used:], p.Name)
			r.mem[namesOff+used+len(p.Name)] = 0
			used += len(p.Name) + 1
		}
		put := func(at int, v uint32) { *(*uint32)(unsafe.Pointer(&rec[at])) = v }
		put(192, uint32(e.Start))
		put(196, uint32(len(e.Params)))
		put(200, uint32(start))
		put(204, uint32(used-start))
	}
	r.store32(offNamesUsed, uint32(used))
	r.store32(offDescCount, uint32(len(elems)))
	r.store32(offValuesUse, uint32(len(s.Values())))
	r.store32(offDescSeq, seq+2) // even: consistent
	return nil
}

// Descriptor describes one element of the host's scene.
type Descriptor struct {
	Name   string
	At     string // insertion point
	Type   string
	Start  int      // index of the first value
	Params []string // parameter names, in value order
}

// Descriptors returns a consistent snapshot of the published elements and
// the number of value slots in use.
func (r *Region) Descriptors() ([]Descriptor, int, error) {
	descOff := int(r.get64(offDescOff))
	namesOff, namesCap := int(r.get64(offNamesOff)), int(r.get32(offNamesCap))
	descCap := int(r.get32(offDescCap))
	for try := 0; try < 1000; try++ {
		seq := r.get32(offDescSeq)
		if seq%2 == 1 {
			time.Sleep(time.Microsecond)
			continue
		}
		count := int(r.get32(offDescCount))
		used := int(r.get32(offValuesUse))
		if count > descCap {
			return nil, 0, fmt.Errorf("ipc: %s: %d descriptors in a %d-record section", r.path, count, descCap)
		}
		out := make([]Descriptor, count)
		ok := true
		for i := range out {
			rec := r.mem[descOff+i*descSize : descOff+(i+1)*descSize]
			get := func(at int) int { return int(*(*uint32)(unsafe.Pointer(&rec[at]))) }
			d := Descriptor{
				Name:  cstring(rec[0:nameField]),
				At:    cstring(rec[nameField : nameField+atField]),
				Type:  cstring(rec[nameField+atField : nameField+atField+typeField]),
				Start: get(192),
			}
			n, off, ln := get(196), get(200), get(204)
			if off+ln > namesCap {
				ok = false // torn read; the sequence check below decides
				break
			}
			names := strings.Split(strings.TrimSuffix(string(r.mem[namesOff+off:namesOff+off+ln]), "\x00"), "\x00")
			if n == 0 {
				names = nil
			}
			if len(names) != n {
				ok = false
				break
			}
			d.Params = names
			out[i] = d
		}
		if r.get32(offDescSeq) != seq {
			continue
		}
		if !ok {
			return nil, 0, fmt.Errorf("ipc: %s: a descriptor's parameter names are damaged", r.path)
		}
		return out, used, nil
	}
	return nil, 0, fmt.Errorf("ipc: %s: descriptors kept changing while being read", r.path)
}

func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// Close unmaps the region; a host marks it stopped first.
func (r *Region) Close() error {
	if r.mem == nil {
		return nil
	}
	if r.host {
		// A successor may have marked it replaced already; that stays.
		atomic.CompareAndSwapUint32(r.ptr32(offState), stateRunning, stateStopped)
	}
	err := syscall.Munmap(r.mem)
	r.mem = nil
	return err
}
