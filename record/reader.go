package record

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/simvis/simvis/sensors/ros2"
)

// labelsFromCDR is a simvis_msgs/msg/Labels as Labels (ids decimal).
func labelsFromCDR(d *ros2.Labels) Labels {
	l := Labels{Sensor: d.Sensor, Instances: map[string]InstanceLabel{}, Classes: map[string]string{}}
	for _, in := range d.Instances {
		l.Instances[strconv.Itoa(int(in.ID))] = InstanceLabel{Name: in.Name, Class: in.ClassName, ClassID: int(in.ClassID)}
	}
	for _, c := range d.Classes {
		l.Classes[strconv.Itoa(int(c.ID))] = c.Name
	}
	return l
}

// Read bounds: a recording is hostile input like any other file. These
// are the defaults of ReadOptions (docs/recordings.md, "Reading is
// bounded").
const (
	// MaxRecordBytes bounds one record: a message (a sensor message that
	// play republishes is held one at a time), a schema, channel or
	// metadata record, an index record.
	MaxRecordBytes = 512 << 20
	// MaxAttachmentBytes bounds all attachments together, which Read
	// holds in memory.
	MaxAttachmentBytes = 1 << 30
	// MaxJSONMessages bounds the change, values and labels messages Read
	// holds.
	MaxJSONMessages = 10_000_000
	// MaxChangeBytes bounds one /simvis/changes message (one command).
	MaxChangeBytes = 1 << 20
	// MaxValuesBytes bounds one /simvis/values message.
	MaxValuesBytes = 16 << 20
	// MaxLabelsBytes bounds one segmentation labels message.
	MaxLabelsBytes = 16 << 20
	// MaxKeptBytes bounds what Read keeps of the messages it decodes and
	// the definitions it reads (schemas, channels, metadata), counted as
	// their bytes in the file plus keptOverhead for each message and each
	// value or label in one.
	MaxKeptBytes = 1 << 30
)

// keptOverhead is what a decoded message, and each value or label in it,
// costs beyond its bytes in the file (Go's map and slice headers).
const keptOverhead = 64

// ReadOptions bound what a reader holds (zero fields take the Max*
// defaults, negative ones lift a bound). Each refusal names the field and
// the simvis play/info flag that raises it.
type ReadOptions struct {
	RecordBytes     int64 // one record (--max-mcap-record-mib)
	ChangeBytes     int64 // one /simvis/changes message (--max-change-mib)
	ValuesBytes     int64 // one /simvis/values message (--max-values-mib)
	LabelsBytes     int64 // one labels message (--max-labels-mib)
	KeptBytes       int64 // everything kept (--max-recording-mib)
	AttachmentBytes int64 // all attachments (--max-attachments-mib)
	Messages        int   // change, values and labels messages kept (--max-recording-messages)

	countOnly bool // Info: count messages and attachments, keep none
}

// The flags of simvis play and info that raise the bounds.
const (
	FlagRecordMiB      = "--max-mcap-record-mib"
	FlagChangeMiB      = "--max-change-mib"
	FlagValuesMiB      = "--max-values-mib"
	FlagLabelsMiB      = "--max-labels-mib"
	FlagRecordingMiB   = "--max-recording-mib"
	FlagAttachmentsMiB = "--max-attachments-mib"
	FlagMessages       = "--max-recording-messages"
)

func bound(v, def int64) int64 {
	switch {
	case v == 0:
		return def
	case v < 0:
		return math.MaxInt64
	}
	return v
}

// withDefaults fills zero fields and makes negative ones unlimited.
func (o ReadOptions) withDefaults() ReadOptions {
	o.RecordBytes = bound(o.RecordBytes, MaxRecordBytes)
	o.ChangeBytes = bound(o.ChangeBytes, MaxChangeBytes)
	o.ValuesBytes = bound(o.ValuesBytes, MaxValuesBytes)
	o.LabelsBytes = bound(o.LabelsBytes, MaxLabelsBytes)
	o.KeptBytes = bound(o.KeptBytes, MaxKeptBytes)
	o.AttachmentBytes = bound(o.AttachmentBytes, MaxAttachmentBytes)
	o.Messages = int(bound(int64(o.Messages), MaxJSONMessages))
	return o
}

// over names a bound and what raises it.
func over(what string, limit int64, field, flag string) string {
	return fmt.Sprintf("over the bound of %d bytes for %s (raise it with record.ReadOptions.%s / %s)", limit, what, field, flag)
}

// Timed is a change or values message with its log time (ns).
type Timed[T any] struct {
	Time int64
	Msg  T
}

// Attachment is one attached file, named DIR/PATH (see Change.Dir).
type Attachment struct {
	Name string
	Size int64  // bytes
	Data []byte // nil from Info
}

// TopicStats counts one topic's messages.
type TopicStats struct {
	Topic, Schema, Encoding string
	Messages                int
	First, Last             int64 // log times, ns
}

// Recording is what Read found in a file.
type Recording struct {
	Meta    Meta
	HasMeta bool
	Profile string
	Changes []Timed[Change]
	Values  []Timed[Values]
	// Labels are the segmentation labels messages by topic (NAME/labels),
	// in log-time order.
	Labels      map[string][]Timed[Labels]
	Attachments []Attachment
	// PackagePath lists where the recorded URDF parts' packages lie among
	// the attachments (MetadataPackages): directories relative to them.
	PackagePath []string
	Topics      []TopicStats // sorted by topic
	Start, End  int64        // first and last log time, ns
	Messages    int
	// ChangeMessages counts the /simvis/changes messages (Info keeps no
	// Changes).
	ChangeMessages int
	// Complete is true for a file read to its footer; false for one that
	// ends early (a recorder killed mid-file): everything up to its last
	// whole chunk was read, and Truncation says so.
	Complete   bool
	Truncation string

	labels int // labels messages held
}

// LabelsAt returns the labels of topic (NAME/labels) logged last at or
// before t (ns), or false if none was.
func (r *Recording) LabelsAt(topic string, t int64) (Labels, bool) {
	list := r.Labels[topic]
	i := sort.Search(len(list), func(i int) bool { return list[i].Time > t })
	if i == 0 {
		return Labels{}, false
	}
	return list[i-1].Msg, true
}

// check refuses labels a segmentation sensor cannot have made: ids out
// of the uint16 range an id image holds, names with control characters.
func (l *Labels) check() error {
	id := func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > math.MaxUint16 || strconv.Itoa(n) != s {
			return fmt.Errorf("id %q: want a decimal 1 to %d", s, math.MaxUint16)
		}
		return nil
	}
	printable := func(s string) bool { return strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 }
	if !printable(l.Sensor) {
		return errors.New("sensor name holds a control character")
	}
	for k, in := range l.Instances {
		if err := id(k); err != nil {
			return fmt.Errorf("instance %w", err)
		}
		if in.ClassID < 0 || in.ClassID > math.MaxUint16 || !printable(in.Name) || !printable(in.Class) {
			return fmt.Errorf("instance %s: class id %d out of range or a name with a control character", k, in.ClassID)
		}
	}
	for k, c := range l.Classes {
		if err := id(k); err != nil {
			return fmt.Errorf("class %w", err)
		}
		if !printable(c) {
			return fmt.Errorf("class %s: a name with a control character", k)
		}
	}
	return nil
}

// MessageFunc sees every message in file order with its channel's topic,
// schema name and message encoding. Its data is valid during the call.
type MessageFunc func(topic, schema, encoding string, m *mcap.Message) error

// Read reads a recording in one pass under the default ReadOptions.
func Read(file string, fn MessageFunc) (*Recording, error) { return ReadWith(file, fn, ReadOptions{}) }

// ReadWith reads a recording in one pass (no index needed, so a truncated
// file reads up to its last whole record): metadata, simvis's change,
// values and labels channels, attachments and per-topic counts; fn (may be
// nil) sees every message. Chunks are decompressed as a stream and a
// message's data is read only when it is kept or fn wants it, within
// opts: a message over its bound is refused before its data is read.
func ReadWith(file string, fn MessageFunc, opts ReadOptions) (_ *Recording, err error) {
	opts = opts.withDefaults()
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rec := &Recording{Start: math.MaxInt64}
	inFn := false
	defer func() {
		// A panic on the file's bytes is an error (see guard); one in fn
		// is the caller's and goes on.
		if r := recover(); r != nil {
			if inFn {
				panic(r)
			}
			err = malformed(file, r)
		}
	}()
	s := newScanner(f, 0, -1)
	defer s.close()
	if err := s.magic(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	schemas := map[uint16]*mcap.Schema{}
	channels := map[uint16]*mcap.Channel{}
	stats := map[uint16]*TopicStats{}
	fail := func(format string, args ...any) (*Recording, error) {
		return nil, fmt.Errorf("%s: %s", file, fmt.Sprintf(format, args...))
	}
	var kept, attBytes int64
	keep := func(n int64) error {
		if n > opts.KeptBytes-kept {
			return fmt.Errorf("%s: %d bytes kept and %d more are %s", s.where(), kept, n,
				over("what a reader keeps of a recording", opts.KeptBytes, "KeptBytes", FlagRecordingMiB))
		}
		kept += n
		return nil
	}
	jsonMessages := 0
	for {
		op, _, err := s.next()
		if err != nil {
			if errors.Is(err, io.EOF) || err == errTruncated {
				rec.Truncation = "the file ends before its footer (a recorder stopped mid-file): read up to its last whole record"
				break
			}
			return fail("%v", err)
		}
		switch op {
		case mcap.OpHeader:
			h, err := parseRecord(s, opts.RecordBytes, mcap.ParseHeader)
			if err != nil {
				return fail("header: %v", err)
			}
			rec.Profile = h.Profile
		case mcap.OpSchema:
			if err := keep(s.left()); err != nil {
				return fail("%v", err)
			}
			sc, err := parseRecord(s, opts.RecordBytes, mcap.ParseSchema)
			if err != nil {
				return fail("schema: %v", err)
			}
			schemas[sc.ID] = sc
		case mcap.OpChannel:
			if err := keep(s.left()); err != nil {
				return fail("%v", err)
			}
			c, err := parseRecord(s, opts.RecordBytes, mcap.ParseChannel)
			if err != nil {
				return fail("channel: %v", err)
			}
			if _, ok := schemas[c.SchemaID]; !ok && c.SchemaID != 0 {
				return fail("channel %d (%s) names schema %d, which is not defined before it", c.ID, c.Topic, c.SchemaID)
			}
			channels[c.ID] = c
		case mcap.OpMetadata:
			if err := keep(s.left()); err != nil {
				return fail("%v", err)
			}
			md, err := parseRecord(s, opts.RecordBytes, mcap.ParseMetadata)
			if err != nil {
				return fail("metadata: %v", err)
			}
			if md.Name == MetadataName {
				if err := json.Unmarshal([]byte(md.Metadata["json"]), &rec.Meta); err != nil {
					return fail("metadata %q: %v", MetadataName, err)
				}
				rec.HasMeta = true
			}
			if md.Name == MetadataPackages {
				if err := json.Unmarshal([]byte(md.Metadata["json"]), &rec.PackagePath); err != nil {
					return fail("metadata %q: %v", MetadataPackages, err)
				}
				for _, p := range rec.PackagePath {
					if p != "." && !filepath.IsLocal(filepath.FromSlash(p)) {
						return fail("metadata %q: entry %q is not a relative path inside the recording", MetadataPackages, p)
					}
				}
			}
		case mcap.OpAttachment:
			a, err := readAttachment(s, opts, &attBytes)
			if err != nil {
				return fail("%v", err)
			}
			rec.Attachments = append(rec.Attachments, a)
		case mcap.OpMessage:
			m, err := s.messageHeader()
			if err != nil {
				return fail("message: %v", err)
			}
			c, ok := channels[m.ChannelID]
			if !ok {
				return fail("a message on channel %d, which is not defined before it", m.ChannelID)
			}
			if m.LogTime > math.MaxInt64 {
				return fail("%s: log time %d out of range", c.Topic, m.LogTime)
			}
			t := int64(m.LogTime)
			sc := schemas[c.SchemaID]
			st := stats[m.ChannelID]
			if st == nil {
				name := ""
				if sc != nil {
					name = sc.Name
				}
				st = &TopicStats{Topic: c.Topic, Schema: name, Encoding: c.MessageEncoding, First: t}
				stats[m.ChannelID] = st
			}
			st.Messages++
			st.Last = t
			rec.Messages++
			rec.Start, rec.End = min(rec.Start, t), max(rec.End, t)
			if c.Topic == TopicChanges {
				rec.ChangeMessages++
			}
			// simvis's JSON channels are kept: each message within its
			// kind's bound, all of them within KeptBytes.
			isLabels := sc != nil && (sc.Name == TypeLabels || sc.Name == typeLabelsJSON) && (c.MessageEncoding == "cdr" || c.MessageEncoding == "json")
			kind, limit, field, flag := "", int64(0), "", ""
			switch {
			case c.Topic == TopicChanges:
				kind, limit, field, flag = "one "+TopicChanges+" message", opts.ChangeBytes, "ChangeBytes", FlagChangeMiB
			case c.Topic == TopicValues:
				kind, limit, field, flag = "one "+TopicValues+" message", opts.ValuesBytes, "ValuesBytes", FlagValuesMiB
			case isLabels:
				kind, limit, field, flag = "one labels message", opts.LabelsBytes, "LabelsBytes", FlagLabelsMiB
			}
			msgName := fmt.Sprintf("%s message %d", c.Topic, m.Sequence)
			bigName := fmt.Sprintf("%s message %d (log time %.9f s)", c.Topic, m.Sequence, float64(t)/1e9)
			if kind != "" && !opts.countOnly {
				if s.left() > limit {
					return fail("%s: %d bytes, %s", bigName, s.left(), over(kind, limit, field, flag))
				}
				if jsonMessages >= opts.Messages {
					return fail("%s: more than %d change, values and labels messages (raise the bound with record.ReadOptions.Messages / %s)",
						bigName, opts.Messages, FlagMessages)
				}
				jsonMessages++
				if err := keep(s.left() + keptOverhead); err != nil {
					return fail("%s: %v", bigName, err)
				}
			} else if fn == nil {
				continue // next skips the data
			}
			if s.left() > opts.RecordBytes {
				return fail("%s: %d bytes, %s", bigName, s.left(), over("one record", opts.RecordBytes, "RecordBytes", FlagRecordMiB))
			}
			if m.Data, err = s.rest(); err != nil {
				if err == errTruncated {
					rec.Truncation = "the file ends before its footer (a recorder stopped mid-file): read up to its last whole record"
					rec.Messages-- // not read whole
					st.Messages--
					if c.Topic == TopicChanges {
						rec.ChangeMessages--
					}
					break
				}
				return fail("%s: %v", msgName, err)
			}
			if kind != "" && !opts.countOnly {
				if err := rec.keepJSON(c.Topic, c.MessageEncoding, isLabels, t, m, keep); err != nil {
					return fail("%s: %v", msgName, err)
				}
			}
			if fn != nil {
				name := ""
				if sc != nil {
					name = sc.Name
				}
				inFn = true
				err := fn(c.Topic, name, c.MessageEncoding, m)
				inFn = false
				if err != nil {
					return nil, err
				}
			}
		case mcap.OpFooter:
			var b [20]byte
			if err := s.read(b[:]); err != nil {
				if err == errTruncated {
					rec.Truncation = "the file ends before its footer (a recorder stopped mid-file): read up to its last whole record"
					break
				}
				return fail("footer: %v", err)
			}
			rec.Complete = true
		}
		if rec.Complete || rec.Truncation != "" {
			break
		}
	}
	for id, st := range stats {
		if st.Messages == 0 {
			delete(stats, id)
			continue
		}
		rec.Topics = append(rec.Topics, *st)
	}
	sort.Slice(rec.Topics, func(i, j int) bool { return rec.Topics[i].Topic < rec.Topics[j].Topic })
	if rec.Messages == 0 {
		rec.Start = 0
	}
	return rec, nil
}

// keepJSON decodes and checks one of simvis's own messages (CDR, or JSON
// in recordings made before they were CDR) and keeps it.
func (rec *Recording) keepJSON(topic, encoding string, isLabels bool, t int64, m *mcap.Message, keep func(int64) error) error {
	cdr := encoding == ros2.MessageEncoding
	if isLabels {
		var l Labels
		if cdr {
			d, err := ros2.DecodeLabels(m.Data)
			if err != nil {
				return err
			}
			l = labelsFromCDR(d)
		} else if err := json.Unmarshal(m.Data, &l); err != nil {
			return err
		}
		if err := l.check(); err != nil {
			return err
		}
		if err := keep(keptOverhead * int64(len(l.Instances)+len(l.Classes))); err != nil {
			return err
		}
		if rec.Labels == nil {
			rec.Labels = map[string][]Timed[Labels]{}
		}
		if prev := rec.Labels[topic]; len(prev) > 0 && prev[len(prev)-1].Time > t {
			return errors.New("logged before the one before it")
		}
		rec.Labels[topic] = append(rec.Labels[topic], Timed[Labels]{t, l})
		rec.labels++
		return nil
	}
	switch topic {
	case TopicChanges:
		var ch Change
		if cdr {
			d, err := ros2.DecodeChange(m.Data)
			if err != nil {
				return err
			}
			ch = Change{Seq: int(d.Seq), Source: d.Source, Dir: d.Dir, XML: d.XML, Reset: d.Reset}
		} else if err := json.Unmarshal(m.Data, &ch); err != nil {
			return err
		}
		if bad := strings.IndexFunc(ch.Source+ch.Dir, func(r rune) bool { return !unicode.IsPrint(r) }); bad >= 0 {
			return errors.New("source or dir holds a control character")
		}
		if ch.Dir == "" || path.IsAbs(ch.Dir) || path.Clean(ch.Dir) != ch.Dir || ch.Dir == ".." || len(ch.Dir) > 2 && ch.Dir[:3] == "../" {
			return fmt.Errorf("dir %q is not a relative directory inside the recording", ch.Dir)
		}
		rec.Changes = append(rec.Changes, Timed[Change]{t, ch})
	case TopicValues:
		var v Values
		if cdr {
			d, err := ros2.DecodeValues(m.Data)
			if err != nil {
				return err
			}
			v.Values = make(map[string]float64, len(d.Names))
			for i, n := range d.Names {
				v.Values[n] = d.Values[i]
			}
		} else if err := json.Unmarshal(m.Data, &v); err != nil {
			return err
		}
		if err := keep(keptOverhead * int64(len(v.Values))); err != nil {
			return err
		}
		rec.Values = append(rec.Values, Timed[Values]{t, v})
	}
	return nil
}

// readAttachment reads an attachment record: its data within the
// attachments' bound (*total so far), or only its name and size for Info.
func readAttachment(s *scanner, opts ReadOptions, total *int64) (Attachment, error) {
	var a Attachment
	var times [16]byte
	if err := s.read(times[:]); err != nil {
		return a, err
	}
	name, err := s.string(4096, "name")
	if err != nil {
		return a, err
	}
	if _, err := s.string(4096, "media type"); err != nil {
		return a, err
	}
	var l [8]byte
	if err := s.read(l[:]); err != nil {
		return a, err
	}
	n := binary.LittleEndian.Uint64(l[:])
	if n > uint64(s.left()) || uint64(s.left())-n != 4 {
		return a, fmt.Errorf("%s: attachment %q: %d data bytes in a record of %d left", s.where(), name, n, s.left())
	}
	a.Name, a.Size = name, int64(n)
	if opts.countOnly {
		return a, nil
	}
	if a.Size > opts.AttachmentBytes-*total {
		return a, fmt.Errorf("%s: attachment %q: %d bytes after %d are %s", s.where(), name, a.Size, *total,
			over("all attachments", opts.AttachmentBytes, "AttachmentBytes", FlagAttachmentsMiB))
	}
	a.Data = make([]byte, n)
	if err := s.read(a.Data); err != nil {
		return a, err
	}
	*total += a.Size
	return a, nil
}
