// Package record writes and reads simvis recordings: MCAP files in the ROS 2
// profile (schemas ros2msg, messages CDR through package sensors/ros2) that
// ros2 bag play, Foxglove and any MCAP reader open, plus simvis's own JSON
// channels (the change log and the values that changed each cycle) and the
// model files as attachments, so that `simvis play` rebuilds the scene on a
// machine that has nothing else. docs/recordings.md describes the format.
//
// A Writer takes a scene once per cycle (Cycle) and the sensor frames
// rendered in it (Frame); it knows no transport. A scene that takes the
// place of the one recorded (a mirror rebuilt after a host restart) is
// recorded from its first command after a Reset marker unless its change
// log continues the recorded one. Chunks are compressed
// (zstd or lz4) and closed at least every Options.ChunkInterval, so a
// process killed mid-recording leaves a file readable up to its last
// chunk; Close adds the summary and index readers seek with.
//
// Reading treats a file as hostile and streams it with its own scanner
// (scan.go; chunks decompressed as a stream, a record's body read only when
// kept): ReadWith (one pass, for play) bounds each kind of message, what
// it keeps in all, records and attachments (ReadOptions), and checks the
// change log's directories and segmentation labels; Info (for info) keeps
// no message data and reads a complete file's index instead of its
// chunks; Cursor hands play's republishers the messages up to a playback
// position, one at a time; Frames turns those messages back into the
// sensor frames the host published (byte for byte where the recording has
// each frame's description, Options.Descriptions), for a player to publish
// through the live host's own transport encoders. A panic of the MCAP library's record parsers
// on a malformed file is turned into an error (FuzzRead found one).
package record
