package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/foxglove/mcap/go/mcap"
)

// Read bounds: a recording is hostile input like any other file.
const (
	// MaxRecordBytes bounds one record (a chunk, decompressed or not, or
	// an attachment).
	MaxRecordBytes = 512 << 20
	// MaxAttachmentBytes bounds all attachments together, which Read
	// holds in memory.
	MaxAttachmentBytes = 1 << 30
	// MaxJSONMessages bounds the change, values and labels messages Read
	// holds.
	MaxJSONMessages = 10_000_000
)

// Timed is a change or values message with its log time (ns).
type Timed[T any] struct {
	Time int64
	Msg  T
}

// Attachment is one attached file, named DIR/PATH (see Change.Dir).
type Attachment struct {
	Name string
	Data []byte
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
	Topics      []TopicStats // sorted by topic
	Start, End  int64        // first and last log time, ns
	Messages    int
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

// Read reads a recording in one pass (no index needed, so a truncated file
// reads up to its last whole chunk): metadata, simvis's change and values
// channels, attachments and per-topic counts; fn (may be nil) sees every
// message.
func Read(file string, fn MessageFunc) (_ *Recording, err error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rec := &Recording{Start: math.MaxInt64}
	inFn := false
	defer func() {
		// A panic in the MCAP library on the file's bytes is an error (see
		// guard); one in fn is the caller's and goes on.
		if r := recover(); r != nil {
			if inFn {
				panic(r)
			}
			err = malformed(file, r)
		}
	}()
	attBytes := 0
	var attErr error
	lex, err := mcap.NewLexer(f, &mcap.LexerOptions{ValidateChunkCRCs: true, MaxDecompressedChunkSize: MaxRecordBytes,
		MaxRecordSize: MaxRecordBytes,
		AttachmentCallback: func(ar *mcap.AttachmentReader) error {
			if ar.DataSize > uint64(MaxAttachmentBytes-attBytes) {
				attErr = fmt.Errorf("attachments exceed %d bytes", MaxAttachmentBytes)
				return attErr
			}
			data, err := io.ReadAll(ar.Data())
			if err != nil {
				return err
			}
			attBytes += len(data)
			rec.Attachments = append(rec.Attachments, Attachment{Name: ar.Name, Data: data})
			return nil
		}})
	if err != nil {
		return nil, fmt.Errorf("%s: not an MCAP file: %w", file, err)
	}
	defer lex.Close()
	schemas := map[uint16]*mcap.Schema{}
	channels := map[uint16]*mcap.Channel{}
	stats := map[uint16]*TopicStats{}
	buf := make([]byte, 1<<20)
	fail := func(format string, args ...any) (*Recording, error) {
		return nil, fmt.Errorf("%s: %s", file, fmt.Sprintf(format, args...))
	}
	for {
		tok, data, err := lex.Next(buf)
		if err != nil {
			if attErr != nil {
				return fail("%v", attErr)
			}
			if errors.Is(err, io.EOF) && rec.Complete {
				break
			}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				rec.Truncation = "the file ends before its footer (a recorder stopped mid-file): read up to its last whole chunk"
				break
			}
			return fail("%v", err)
		}
		if len(data) > len(buf) {
			buf = data
		}
		switch tok {
		case mcap.TokenHeader:
			h, err := mcap.ParseHeader(data)
			if err != nil {
				return fail("header: %v", err)
			}
			rec.Profile = h.Profile
		case mcap.TokenSchema:
			s, err := mcap.ParseSchema(data)
			if err != nil {
				return fail("schema: %v", err)
			}
			schemas[s.ID] = s
		case mcap.TokenChannel:
			c, err := mcap.ParseChannel(data)
			if err != nil {
				return fail("channel: %v", err)
			}
			if _, ok := schemas[c.SchemaID]; !ok && c.SchemaID != 0 {
				return fail("channel %d (%s) names schema %d, which is not defined before it", c.ID, c.Topic, c.SchemaID)
			}
			channels[c.ID] = c
		case mcap.TokenMetadata:
			md, err := mcap.ParseMetadata(data)
			if err != nil {
				return fail("metadata: %v", err)
			}
			if md.Name == MetadataName {
				if err := json.Unmarshal([]byte(md.Metadata["json"]), &rec.Meta); err != nil {
					return fail("metadata %q: %v", MetadataName, err)
				}
				rec.HasMeta = true
			}
		case mcap.TokenMessage:
			m, err := mcap.ParseMessage(data)
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
			st := stats[m.ChannelID]
			if st == nil {
				name := ""
				if s := schemas[c.SchemaID]; s != nil {
					name = s.Name
				}
				st = &TopicStats{Topic: c.Topic, Schema: name, Encoding: c.MessageEncoding, First: t}
				stats[m.ChannelID] = st
			}
			st.Messages++
			st.Last = t
			rec.Messages++
			rec.Start, rec.End = min(rec.Start, t), max(rec.End, t)
			if s := schemas[c.SchemaID]; s != nil && s.Name == TypeLabels && c.MessageEncoding == "json" {
				if len(rec.Changes)+len(rec.Values)+rec.labels >= MaxJSONMessages {
					return fail("more than %d change, values and labels messages", MaxJSONMessages)
				}
				var l Labels
				if err := json.Unmarshal(m.Data, &l); err != nil {
					return fail("%s message %d: %v", c.Topic, m.Sequence, err)
				}
				if err := l.check(); err != nil {
					return fail("%s message %d: %v", c.Topic, m.Sequence, err)
				}
				if rec.Labels == nil {
					rec.Labels = map[string][]Timed[Labels]{}
				}
				if prev := rec.Labels[c.Topic]; len(prev) > 0 && prev[len(prev)-1].Time > t {
					return fail("%s message %d: logged before the one before it", c.Topic, m.Sequence)
				}
				rec.Labels[c.Topic] = append(rec.Labels[c.Topic], Timed[Labels]{t, l})
				rec.labels++
			}
			switch c.Topic {
			case TopicChanges, TopicValues:
				if len(rec.Changes)+len(rec.Values) >= MaxJSONMessages {
					return fail("more than %d change and values messages", MaxJSONMessages)
				}
				if c.Topic == TopicChanges {
					var ch Change
					if err := json.Unmarshal(m.Data, &ch); err != nil {
						return fail("%s message %d: %v", c.Topic, m.Sequence, err)
					}
					if bad := strings.IndexFunc(ch.Source+ch.Dir, func(r rune) bool { return !unicode.IsPrint(r) }); bad >= 0 {
						return fail("%s message %d: source or dir holds a control character", c.Topic, m.Sequence)
					}
					if ch.Dir == "" || path.IsAbs(ch.Dir) || path.Clean(ch.Dir) != ch.Dir || ch.Dir == ".." || len(ch.Dir) > 2 && ch.Dir[:3] == "../" {
						return fail("%s message %d: dir %q is not a relative directory inside the recording", c.Topic, m.Sequence, ch.Dir)
					}
					rec.Changes = append(rec.Changes, Timed[Change]{t, ch})
				} else {
					var v Values
					if err := json.Unmarshal(m.Data, &v); err != nil {
						return fail("%s message %d: %v", c.Topic, m.Sequence, err)
					}
					rec.Values = append(rec.Values, Timed[Values]{t, v})
				}
			}
			if fn != nil {
				name := ""
				if s := schemas[c.SchemaID]; s != nil {
					name = s.Name
				}
				inFn = true
				err := fn(c.Topic, name, c.MessageEncoding, m)
				inFn = false
				if err != nil {
					return nil, err
				}
			}
		case mcap.TokenFooter:
			rec.Complete = true
		}
	}
	for _, st := range stats {
		rec.Topics = append(rec.Topics, *st)
	}
	sort.Slice(rec.Topics, func(i, j int) bool { return rec.Topics[i].Topic < rec.Topics[j].Topic })
	if rec.Messages == 0 {
		rec.Start = 0
	}
	return rec, nil
}
