package record

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Report describes a recording for people and programs: what `simvis info`
// prints, as text (WriteText) or as JSON (its field tags).
type Report struct {
	File        string             `json:"file"`
	Profile     string             `json:"profile"`
	Complete    bool               `json:"complete"`
	Truncation  string             `json:"truncation,omitempty"`
	Start       float64            `json:"start"`    // s
	Duration    float64            `json:"duration"` // s
	Messages    int                `json:"messages"`
	Changes     int                `json:"changes"`
	Topics      []TopicReport      `json:"topics"`
	Attachments []AttachmentReport `json:"attachments"`
	Meta        *Meta              `json:"simvis,omitempty"`
}

// TopicReport is one topic of a Report.
type TopicReport struct {
	Topic    string  `json:"topic"`
	Schema   string  `json:"schema"`
	Encoding string  `json:"encoding"`
	Messages int     `json:"messages"`
	Hz       float64 `json:"hz"` // messages per second between its first and last
}

// AttachmentReport is one attachment of a Report.
type AttachmentReport struct {
	Name  string `json:"name"`
	Bytes int    `json:"bytes"`
}

// Report sums up a recording read by Info (file names it).
func (rec *Recording) Report(file string) *Report {
	r := &Report{File: file, Profile: rec.Profile, Complete: rec.Complete, Truncation: rec.Truncation,
		Start: float64(rec.Start) / 1e9, Duration: float64(rec.End-rec.Start) / 1e9, Messages: rec.Messages, Changes: rec.ChangeMessages}
	if rec.HasMeta {
		r.Meta = &rec.Meta
	}
	for _, t := range rec.Topics {
		hz := 0.0
		if t.Messages > 1 && t.Last > t.First {
			hz = float64(t.Messages-1) / (float64(t.Last-t.First) / 1e9)
		}
		r.Topics = append(r.Topics, TopicReport{t.Topic, t.Schema, t.Encoding, t.Messages, hz})
	}
	for _, a := range rec.Attachments {
		r.Attachments = append(r.Attachments, AttachmentReport{a.Name, int(a.Size)})
	}
	sort.Slice(r.Attachments, func(i, j int) bool { return r.Attachments[i].Name < r.Attachments[j].Name })
	return r
}

// WriteText prints the report for people, a topic or attachment a line.
// Names come from the file: anything unprintable is quoted, so that
// control sequences never reach a terminal.
func (r *Report) WriteText(w io.Writer) error {
	state := "complete (summary and index)"
	if !r.Complete {
		state = "incomplete: " + r.Truncation
	}
	fmt.Fprintf(w, "%s: profile %q, %s\n", r.File, r.Profile, state)
	fmt.Fprintf(w, "start %.9f s, duration %.3f s, %d messages, %d change-log commands\n", r.Start, r.Duration, r.Messages, r.Changes)
	if r.Meta != nil {
		fmt.Fprintf(w, "simvis: scene %s, %g Hz, epoch %d ns, realtime %v\n", printable(r.Meta.Scene), r.Meta.Rate, r.Meta.EpochNs, r.Meta.Realtime)
	}
	for _, t := range r.Topics {
		fmt.Fprintf(w, "  %-32s %-34s %-4s %7d msgs %8.2f Hz\n", printable(t.Topic), printable(t.Schema), printable(t.Encoding), t.Messages, t.Hz)
	}
	for _, a := range r.Attachments {
		if _, err := fmt.Fprintf(w, "  attachment %s (%d bytes)\n", printable(a.Name), a.Bytes); err != nil {
			return err
		}
	}
	return nil
}

// printable returns s, quoted where it holds anything but printable
// characters.
func printable(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}
