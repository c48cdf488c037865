package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/simvis/simvis/sensors/ros2"
)

// bagMetadata is the "serialized_metadata" of rosbag2's metadata record:
// the bag's metadata.yaml (version 9, storage mcap, this one file) in the
// form rosbag2's YAML encoder writes (rosbag2_storage/yaml.hpp). rosbag2
// reads it back from the MCAP file (Jazzy and later: version, topics with
// their QoS, files, distribution) and every field is required there.
func (w *Writer) bagMetadata() string {
	start, dur := w.firstLog, uint64(0)
	if w.messages > 0 {
		dur = w.lastLog - w.firstLog
	} else {
		start = 0
	}
	q := func(s string) string { return fmt.Sprintf("%q", s) } // names are printable: JSON quoting is YAML's
	var b strings.Builder
	topics := ""
	if len(w.order) == 0 {
		topics = " []"
	}
	fmt.Fprintf(&b, "version: 9\nstorage_identifier: mcap\nduration:\n  nanoseconds: %d\nstarting_time:\n  nanoseconds_since_epoch: %d\n"+
		"message_count: %d\ntopics_with_message_count:%s\n", dur, start, w.messages, topics)
	for _, t := range w.order {
		fmt.Fprintf(&b, "  - topic_metadata:\n      name: %s\n      type: %s\n      serialization_format: cdr\n      offered_qos_profiles:\n",
			q(t.topic), q(t.typ))
		durability, depth := "volatile", 10
		if ros2.Latched(t.topic, t.typ) { // as its channel offers it (Writer.channel)
			durability, depth = "transient_local", 1
		}
		fmt.Fprintf(&b, "        - history: keep_last\n          depth: %d\n          reliability: reliable\n          durability: %s\n", depth, durability)
		for _, d := range []string{"deadline", "lifespan"} {
			fmt.Fprintf(&b, "          %s:\n            sec: 0\n            nsec: 0\n", d)
		}
		b.WriteString("          liveliness: automatic\n          liveliness_lease_duration:\n            sec: 0\n            nsec: 0\n" +
			"          avoid_ros_namespace_conventions: false\n      type_description_hash: \"\"\n")
		fmt.Fprintf(&b, "    message_count: %d\n", w.seq[t.id])
	}
	name := q(filepath.Base(w.path))
	fmt.Fprintf(&b, "compression_format: \"\"\ncompression_mode: \"\"\nrelative_file_paths:\n  - %s\nfiles:\n  - path: %s\n"+
		"    starting_time:\n      nanoseconds_since_epoch: %d\n    duration:\n      nanoseconds: %d\n    message_count: %d\n"+
		"custom_data: {}\nros_distro: \"\"\n", name, name, start, dur, w.messages)
	return b.String()
}

// fixStatistics writes start into the message_start_time of the Statistics
// record of a closed MCAP file and brings the footer's summary CRC up to
// date. The MCAP Go writer (v1.9.0) takes a start time of 0 for "unset"
// when it closes each chunk, so a recording whose first message is at
// scene time 0 (epoch 0, as ROS simulation time starts) would say it
// starts at its second chunk; ros2 bag info and players read that record.
func fixStatistics(path string, start uint64) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	const footerLen = 1 + 8 + 20 // opcode, length, summary start, summary offset start, CRC
	footerAt := st.Size() - int64(len(mcap.Magic)) - footerLen
	if footerAt < 0 {
		return errors.New("recording: no footer to fix")
	}
	footer := make([]byte, footerLen)
	if _, err := f.ReadAt(footer, footerAt); err != nil {
		return err
	}
	if mcap.OpCode(footer[0]) != mcap.OpFooter {
		return errors.New("recording: no footer to fix")
	}
	summaryStart := int64(binary.LittleEndian.Uint64(footer[9:]))
	if summaryStart == 0 || summaryStart > footerAt {
		return nil // no summary
	}
	summary := make([]byte, footerAt+footerLen-4-summaryStart) // up to the CRC, which covers the footer's fields too
	if _, err := f.ReadAt(summary, summaryStart); err != nil {
		return err
	}
	for off := int64(0); off+9 <= footerAt-summaryStart; {
		op, n := mcap.OpCode(summary[off]), int64(binary.LittleEndian.Uint64(summary[off+1:]))
		body := off + 9
		if n < 0 || body+n > footerAt-summaryStart {
			return errors.New("recording: malformed summary")
		}
		if op == mcap.OpStatistics && n >= 34 {
			at := body + 8 + 2 + 4 + 4 + 4 + 4 // message count, schema, channel, attachment, metadata and chunk counts
			if binary.LittleEndian.Uint64(summary[at:]) == start {
				return nil
			}
			binary.LittleEndian.PutUint64(summary[at:], start)
			if _, err := f.WriteAt(summary[at:at+8], summaryStart+at); err != nil {
				return err
			}
			if binary.LittleEndian.Uint32(footer[footerLen-4:]) != 0 { // 0: no CRC written
				var crc [4]byte
				binary.LittleEndian.PutUint32(crc[:], crc32.ChecksumIEEE(summary))
				if _, err := f.WriteAt(crc[:], footerAt+footerLen-4); err != nil {
					return err
				}
			}
			return nil
		}
		off = body + n
	}
	return nil
}
