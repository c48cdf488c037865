// Package live runs scenes: a host that serves its scene (Serve), a replica
// of another host's scene (Mirror) and a recording played as a host (Play),
// each with the loop that renders sensors on the scene's clock and hands
// every frame to its sinks (files, NATS, Foxglove, an MCAP recording, a
// window).
//
// It is what the simvis commands run: package cli only turns flags into
// the option structs here. A Go program calls Serve, Mirror or Play the
// same way, and may add sinks of its own (Sink) to take the frames.
//
// Errors in the options themselves are *OptionError, which the commands
// report as usage errors.
package live
