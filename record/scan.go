package record

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// The scanner reads an MCAP file one record at a time without the MCAP
// library's lexer, which reads every record whole and, checking a chunk's
// CRC, decompresses the whole chunk into a buffer twice its declared size
// first: a small file of zstd chunks, each holding one huge message, took
// gigabytes that way. Here a chunk is decompressed as a stream (its CRC
// computed on the way), a record's header is read before its body, and a
// body is read only when the caller asks for it, within a bound it names;
// a body nobody wants is skipped without being held. Memory is one
// decoder (a zstd window of at most maxZstdWindow) and what the caller
// keeps.

// mcapMagic opens and closes every MCAP file.
const mcapMagic = "\x89MCAP0\r\n"

// maxZstdWindow bounds the zstd window a chunk may declare: the decoder
// holds that much history. MCAP writers use 8 MiB (zstd's default for every
// level up to 19).
const maxZstdWindow = 64 << 20

// errTruncated marks a file that ends before what it declares: the reader
// got everything up to its last whole record.
var errTruncated = errors.New("the file ends inside a record")

// countReader counts the bytes read from the file and notes its end.
type countReader struct {
	r   io.Reader
	n   int64
	eof bool
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err == io.EOF {
		c.eof = true
	}
	return n, err
}

type scanner struct {
	base int64 // file offset of the section read
	end  int64 // and of its end
	raw  *countReader
	src  *bufio.Reader
	body io.LimitedReader // the current record's unread body
	op   mcap.OpCode
	at   int64 // file offset of the current (top-level) record or chunk
	// A chunk being read: its decompressed records.
	inChunk   bool
	chunkAt   int64
	chunkLeft uint64 // decompressed bytes not yet read
	chunkCRC  uint32
	crc       hash.Hash32
	comp      io.LimitedReader // its compressed bytes
	dec       io.Reader
	zd        *zstd.Decoder
	lz        *lz4.Reader
}

// newScanner reads the records of f from offset off (a record's start) to
// end (-1: the end of the file).
func newScanner(f *os.File, off, end int64) *scanner {
	if end < 0 {
		end = 1 << 62
		if st, err := f.Stat(); err == nil {
			end = st.Size()
		}
	}
	end = max(end, off)
	r := io.NewSectionReader(f, off, end-off)
	s := &scanner{base: off, end: end, raw: &countReader{r: r}, crc: crc32.NewIEEE()}
	s.src = bufio.NewReaderSize(s.raw, 64<<10)
	return s
}

// pos is the file offset of the next top-level byte.
func (s *scanner) pos() int64 { return s.base + s.raw.n - int64(s.src.Buffered()) }

func (s *scanner) close() {
	if s.zd != nil {
		s.zd.Close()
		s.zd = nil
	}
}

// magic reads the leading magic bytes.
func (s *scanner) magic() error {
	var b [8]byte
	if _, err := io.ReadFull(s.src, b[:]); err != nil || string(b[:]) != mcapMagic {
		return errors.New("not an MCAP file: no leading magic bytes")
	}
	return nil
}

// fail reports a read that ended early: truncation where the file ended.
func (s *scanner) fail(err error) error {
	if s.raw.eof && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || s.inChunk) {
		return errTruncated
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// where names the record being read in errors.
func (s *scanner) where() string {
	if s.inChunk {
		return fmt.Sprintf("record %#x in the chunk at offset %d", byte(s.op), s.chunkAt)
	}
	return fmt.Sprintf("record %#x at offset %d", byte(s.op), s.at)
}

// chunkData reads a chunk's decompressed records, checking its size.
type chunkData struct{ s *scanner }

func (c chunkData) Read(p []byte) (int, error) {
	s := c.s
	if s.chunkLeft == 0 {
		return 0, io.EOF
	}
	if uint64(len(p)) > s.chunkLeft {
		p = p[:s.chunkLeft]
	}
	n, err := s.dec.Read(p)
	s.crc.Write(p[:n])
	s.chunkLeft -= uint64(n)
	if err == io.EOF && s.chunkLeft > 0 {
		err = io.ErrUnexpectedEOF
	}
	if err == io.EOF {
		err = nil
	}
	return n, err
}

// next moves to the next record (past the rest of the current one's body),
// entering chunks: io.EOF at the end of the section between records,
// errTruncated inside one.
func (s *scanner) next() (mcap.OpCode, uint64, error) {
	if s.body.N > 0 {
		if _, err := io.Copy(io.Discard, &s.body); err != nil {
			return 0, 0, s.fail(err)
		}
		if s.body.N > 0 {
			return 0, 0, s.fail(io.ErrUnexpectedEOF)
		}
	}
	var h [9]byte
	if s.inChunk {
		if s.chunkLeft == 0 {
			if err := s.endChunk(); err != nil {
				return 0, 0, err
			}
		} else {
			if _, err := io.ReadFull(chunkData{s}, h[:]); err != nil {
				return 0, 0, s.chunkErr(err)
			}
			s.op = mcap.OpCode(h[0])
			n := binary.LittleEndian.Uint64(h[1:])
			if n > s.chunkLeft {
				return 0, 0, fmt.Errorf("%s: %d bytes overrun the chunk's %d left", s.where(), n, s.chunkLeft)
			}
			s.body = io.LimitedReader{R: chunkData{s}, N: int64(n)}
			return s.op, n, nil
		}
	}
	s.at = s.pos()
	if _, err := io.ReadFull(s.src, h[:1]); err != nil {
		if err == io.EOF {
			return 0, 0, io.EOF
		}
		return 0, 0, s.fail(err)
	}
	if _, err := io.ReadFull(s.src, h[1:]); err != nil {
		return 0, 0, s.fail(err)
	}
	s.op = mcap.OpCode(h[0])
	n := binary.LittleEndian.Uint64(h[1:])
	if n > 1<<62 {
		return 0, 0, fmt.Errorf("%s: length %d out of range", s.where(), n)
	}
	s.body = io.LimitedReader{R: s.src, N: int64(n)}
	if s.op == mcap.OpChunk {
		if err := s.openChunk(n); err != nil {
			return 0, 0, err
		}
		return s.next()
	}
	return s.op, n, nil
}

func (s *scanner) chunkErr(err error) error {
	if err = s.fail(err); err == errTruncated {
		return err
	}
	return fmt.Errorf("the chunk at offset %d: %v", s.chunkAt, err)
}

// openChunk reads a chunk's header and starts decompressing its records.
func (s *scanner) openChunk(n uint64) error {
	var h [32]byte
	if _, err := io.ReadFull(&s.body, h[:]); err != nil {
		return s.fail(err)
	}
	s.chunkAt = s.at
	s.chunkLeft = binary.LittleEndian.Uint64(h[16:])
	s.chunkCRC = binary.LittleEndian.Uint32(h[24:])
	clen := binary.LittleEndian.Uint32(h[28:])
	if clen > 32 {
		return fmt.Errorf("%s: a compression name of %d bytes", s.where(), clen)
	}
	c := make([]byte, clen+8)
	if _, err := io.ReadFull(&s.body, c); err != nil {
		return s.fail(err)
	}
	comp := string(c[:clen])
	m := binary.LittleEndian.Uint64(c[clen:])
	if m != uint64(s.body.N) || 32+uint64(clen)+8+m != n {
		return fmt.Errorf("%s: records of %d bytes in a chunk of %d", s.where(), m, n)
	}
	s.comp = s.body
	s.body = io.LimitedReader{}
	s.crc.Reset()
	switch comp {
	case "":
		s.dec = &s.comp
	case "zstd":
		if s.zd == nil {
			zd, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
				zstd.WithDecoderMaxWindow(maxZstdWindow))
			if err != nil {
				return err
			}
			s.zd = zd
		}
		if err := s.zd.Reset(&s.comp); err != nil {
			return s.chunkErr(err)
		}
		s.dec = s.zd
	case "lz4":
		if s.lz == nil {
			s.lz = lz4.NewReader(&s.comp)
		} else {
			s.lz.Reset(&s.comp)
		}
		s.dec = s.lz
	default:
		return fmt.Errorf("%s: unsupported compression %q", s.where(), comp)
	}
	s.inChunk = true
	return nil
}

// endChunk checks the chunk read (its CRC, where it has one) and skips
// what is left of its compressed bytes.
func (s *scanner) endChunk() error {
	s.inChunk = false
	if s.chunkCRC != 0 && s.crc.Sum32() != s.chunkCRC {
		return fmt.Errorf("the chunk at offset %d: CRC %08x, the chunk says %08x", s.chunkAt, s.crc.Sum32(), s.chunkCRC)
	}
	if _, err := io.Copy(io.Discard, &s.comp); err != nil {
		return s.fail(err)
	}
	if s.comp.N > 0 {
		return s.fail(io.ErrUnexpectedEOF)
	}
	return nil
}

// read fills p from the current record's body.
func (s *scanner) read(p []byte) error {
	if int64(len(p)) > s.body.N {
		return fmt.Errorf("%s: %d bytes, too short", s.where(), s.body.N)
	}
	if _, err := io.ReadFull(&s.body, p); err != nil {
		if err = s.fail(err); err == errTruncated {
			return err
		}
		return fmt.Errorf("%s: %v", s.where(), err)
	}
	return nil
}

// left is what remains of the current record's body.
func (s *scanner) left() int64 { return s.body.N }

// rest reads the rest of the current record's body. A body the file
// cannot hold (a top-level record longer than the bytes left) is not
// allocated; one in a chunk over 1 MiB, whose decompressed length no
// length in the file bounds, grows as its bytes arrive (at most doubling),
// so a lying length costs what the file really holds.
func (s *scanner) rest() ([]byte, error) {
	n := s.body.N
	if !s.inChunk && n > s.end-s.pos() {
		return nil, s.fail(io.ErrUnexpectedEOF)
	}
	if !s.inChunk || n <= 1<<20 {
		b := make([]byte, n)
		return b, s.read(b)
	}
	b := make([]byte, 1<<20)
	if err := s.read(b); err != nil {
		return nil, err
	}
	for int64(len(b)) < n {
		grown := make([]byte, min(2*int64(len(b)), n))
		copy(grown, b)
		if err := s.read(grown[len(b):]); err != nil {
			return nil, err
		}
		b = grown
	}
	return b, nil
}

// string reads a length-prefixed string of at most max bytes.
func (s *scanner) string(max uint32, what string) (string, error) {
	var l [4]byte
	if err := s.read(l[:]); err != nil {
		return "", err
	}
	n := binary.LittleEndian.Uint32(l[:])
	if n > max {
		return "", fmt.Errorf("%s: a %s of %d bytes, over %d", s.where(), what, n, max)
	}
	b := make([]byte, n)
	return string(b), s.read(b)
}

// messageHeader reads a message record's header: the body left is its
// data.
func (s *scanner) messageHeader() (*mcap.Message, error) {
	var h [22]byte
	if err := s.read(h[:]); err != nil {
		return nil, err
	}
	return &mcap.Message{ChannelID: binary.LittleEndian.Uint16(h[0:]), Sequence: binary.LittleEndian.Uint32(h[2:]),
		LogTime: binary.LittleEndian.Uint64(h[6:]), PublishTime: binary.LittleEndian.Uint64(h[14:])}, nil
}

// parse reads the current record whole (at most max bytes) and parses it
// with the MCAP library's parser for its opcode.
func parseRecord[T any](s *scanner, max int64, parse func([]byte) (T, error)) (v T, err error) {
	if s.left() > max {
		return v, fmt.Errorf("%s: %d bytes, over the bound of %d", s.where(), s.left(), max)
	}
	b, err := s.rest()
	if err != nil {
		return v, err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: malformed (%v)", s.where(), r)
		}
	}()
	v, err = parse(b)
	if err != nil {
		err = fmt.Errorf("%s: %v", s.where(), err)
	}
	return v, err
}
