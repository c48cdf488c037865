package record

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"

	"github.com/foxglove/mcap/go/mcap"
)

// summary is what a complete file's summary section says.
type summary struct {
	schemas  map[uint16]*mcap.Schema
	channels map[uint16]*mcap.Channel
	stats    *mcap.Statistics
	chunks   []*mcap.ChunkIndex // by offset
	atts     []*mcap.AttachmentIndex
	metas    []*mcap.MetadataIndex
	dataEnd  int64 // where the summary starts
}

// readSummary reads the summary section of f (size bytes) through its
// footer: nil without one (a file cut short, or written without).
func readSummary(f *os.File, size int64, opts ReadOptions) (*summary, error) {
	const footer = 1 + 8 + 20
	if size < 8+footer+8 {
		return nil, nil
	}
	var b [footer + 8]byte
	if _, err := f.ReadAt(b[:], size-int64(len(b))); err != nil {
		return nil, err
	}
	if string(b[footer:]) != mcapMagic || mcap.OpCode(b[0]) != mcap.OpFooter || binary.LittleEndian.Uint64(b[1:]) != 20 {
		return nil, nil
	}
	start := binary.LittleEndian.Uint64(b[9:])
	end := size - int64(len(b))
	if start == 0 {
		return nil, nil
	}
	if start < 8 || start > uint64(end) {
		return nil, fmt.Errorf("the footer's summary start %d lies outside the file", start)
	}
	sm := &summary{schemas: map[uint16]*mcap.Schema{}, channels: map[uint16]*mcap.Channel{}, dataEnd: int64(start)}
	s := newScanner(f, int64(start), end)
	defer s.close()
	var kept int64
	for {
		op, n, err := s.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("summary: %w", err)
		}
		if op == mcap.OpChunk || op == mcap.OpMessage {
			return nil, fmt.Errorf("summary: %s: not a summary record", s.where())
		}
		if int64(n) > opts.KeptBytes-kept {
			return nil, fmt.Errorf("summary: %s: %d bytes after %d are %s", s.where(), n, kept,
				over("what a reader keeps of a recording", opts.KeptBytes, "KeptBytes", FlagRecordingMiB))
		}
		kept += int64(n)
		switch op {
		case mcap.OpSchema:
			v, err := parseRecord(s, opts.RecordBytes, mcap.ParseSchema)
			if err != nil {
				return nil, err
			}
			sm.schemas[v.ID] = v
		case mcap.OpChannel:
			v, err := parseRecord(s, opts.RecordBytes, mcap.ParseChannel)
			if err != nil {
				return nil, err
			}
			sm.channels[v.ID] = v
		case mcap.OpStatistics:
			if sm.stats, err = parseRecord(s, opts.RecordBytes, mcap.ParseStatistics); err != nil {
				return nil, err
			}
		case mcap.OpChunkIndex:
			v, err := parseRecord(s, opts.RecordBytes, mcap.ParseChunkIndex)
			if err != nil {
				return nil, err
			}
			if v.ChunkStartOffset < 8 || v.ChunkLength > start || v.ChunkStartOffset > start-v.ChunkLength ||
				v.MessageIndexLength > start-v.ChunkStartOffset-v.ChunkLength {
				return nil, fmt.Errorf("summary: %s: a chunk index outside the data section", s.where())
			}
			sm.chunks = append(sm.chunks, v)
		case mcap.OpAttachmentIndex:
			v, err := parseRecord(s, opts.RecordBytes, mcap.ParseAttachmentIndex)
			if err != nil {
				return nil, err
			}
			sm.atts = append(sm.atts, v)
		case mcap.OpMetadataIndex:
			v, err := parseRecord(s, opts.RecordBytes, mcap.ParseMetadataIndex)
			if err != nil {
				return nil, err
			}
			sm.metas = append(sm.metas, v)
		}
	}
	sort.Slice(sm.chunks, func(i, j int) bool { return sm.chunks[i].ChunkStartOffset < sm.chunks[j].ChunkStartOffset })
	return sm, nil
}

// Info describes a recording for simvis info: profile, metadata, topics
// with counts and times, attachments' names and sizes. It keeps no message
// or attachment data. A complete file is described from its summary and
// message indexes, without decompressing a chunk; a file without them (cut
// short, or written without an index) is read in one pass, chunks
// decompressed as a stream and every message's data skipped.
func Info(file string, opts ReadOptions) (rec *Recording, err error) {
	opts = opts.withDefaults()
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	defer guard(file, &err)
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	rec, err = infoFromIndex(f, st.Size(), opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if rec != nil {
		return rec, nil
	}
	opts.countOnly = true
	return ReadWith(file, nil, opts)
}

// infoFromIndex is Info from the summary and message indexes: nil where
// the file lacks them or they do not add up to the statistics' count.
func infoFromIndex(f *os.File, size int64, opts ReadOptions) (*Recording, error) {
	s := newScanner(f, 0, -1)
	defer s.close()
	if err := s.magic(); err != nil {
		return nil, err
	}
	sm, err := readSummary(f, size, opts)
	if err != nil || sm == nil || sm.stats == nil {
		return nil, err
	}
	rec := &Recording{Start: math.MaxInt64, Complete: true}
	// The header is the first record.
	if op, _, err := s.next(); err == nil && op == mcap.OpHeader {
		h, err := parseRecord(s, opts.RecordBytes, mcap.ParseHeader)
		if err != nil {
			return nil, fmt.Errorf("header: %v", err)
		}
		rec.Profile = h.Profile
	}
	stats := map[uint16]*TopicStats{}
	var total uint64
	for _, ci := range sm.chunks {
		from := int64(ci.ChunkStartOffset + ci.ChunkLength)
		is := newScanner(f, from, from+int64(ci.MessageIndexLength))
		for {
			op, _, err := is.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				is.close()
				return nil, fmt.Errorf("message index: %w", err)
			}
			if op != mcap.OpMessageIndex {
				continue
			}
			mi, err := parseRecord(is, opts.RecordBytes, mcap.ParseMessageIndex)
			if err != nil {
				is.close()
				return nil, err
			}
			c := sm.channels[mi.ChannelID]
			if c == nil || len(mi.Records) == 0 {
				if c == nil && len(mi.Records) > 0 {
					is.close()
					return nil, nil // an index of a channel the summary lacks: read the file
				}
				continue
			}
			ts := stats[mi.ChannelID]
			if ts == nil {
				name := ""
				if sc := sm.schemas[c.SchemaID]; sc != nil {
					name = sc.Name
				}
				ts = &TopicStats{Topic: c.Topic, Schema: name, Encoding: c.MessageEncoding, First: math.MaxInt64, Last: math.MinInt64}
				stats[mi.ChannelID] = ts
			}
			for _, e := range mi.Records {
				if e.Timestamp > math.MaxInt64 {
					is.close()
					return nil, fmt.Errorf("%s: log time %d out of range", c.Topic, e.Timestamp)
				}
				t := int64(e.Timestamp)
				ts.First, ts.Last = min(ts.First, t), max(ts.Last, t)
				rec.Start, rec.End = min(rec.Start, t), max(rec.End, t)
			}
			ts.Messages += len(mi.Records)
			total += uint64(len(mi.Records))
		}
		is.close()
	}
	if total != sm.stats.MessageCount {
		return nil, nil // messages outside chunks, or chunks without an index: read the file
	}
	rec.Messages = int(total)
	for _, ts := range stats {
		rec.Topics = append(rec.Topics, *ts)
		if ts.Topic == TopicChanges {
			rec.ChangeMessages += ts.Messages
		}
	}
	sort.Slice(rec.Topics, func(i, j int) bool { return rec.Topics[i].Topic < rec.Topics[j].Topic })
	if rec.Messages == 0 {
		rec.Start = 0
	}
	for _, a := range sm.atts {
		if a.DataSize > math.MaxInt64 {
			return nil, fmt.Errorf("attachment %q: size %d out of range", a.Name, a.DataSize)
		}
		rec.Attachments = append(rec.Attachments, Attachment{Name: a.Name, Size: int64(a.DataSize)})
	}
	for _, mi := range sm.metas {
		if mi.Name != MetadataName {
			continue
		}
		if mi.Offset < 8 || mi.Length > uint64(sm.dataEnd) || mi.Offset > uint64(sm.dataEnd)-mi.Length {
			return nil, fmt.Errorf("metadata index: record outside the data section")
		}
		ms := newScanner(f, int64(mi.Offset), int64(mi.Offset+mi.Length))
		op, _, err := ms.next()
		if err == nil && op != mcap.OpMetadata {
			err = fmt.Errorf("%s: not a metadata record", ms.where())
		}
		var md *mcap.Metadata
		if err == nil {
			md, err = parseRecord(ms, min(opts.RecordBytes, opts.KeptBytes), mcap.ParseMetadata)
		}
		ms.close()
		if err != nil {
			return nil, fmt.Errorf("metadata: %w", err)
		}
		if err := json.Unmarshal([]byte(md.Metadata["json"]), &rec.Meta); err != nil {
			return nil, fmt.Errorf("metadata %q: %v", MetadataName, err)
		}
		rec.HasMeta = true
	}
	return rec, nil
}
