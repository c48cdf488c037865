// Package ipc is simvis's shared-array interface (paper III-G): a host
// publishes its scene in one memory-mapped file (LAYOUT.md, usable without
// Go) holding the four arrays: element descriptors, parameter values (the
// scene's own table, mapped), a change-request log and a change log.
//
//   - Host runs a scene as the host process: every cycle it applies the
//     values clients wrote (refusing and counting bad ones), executes their
//     requests in order and logs every command it executes.
//   - Client attaches by name: Param looks an index up once, Set and Get
//     are single atomic accesses, Request sends an XML command and waits for
//     its outcome, Follow reads the change log.
//   - Mirror replays the change log on a scene of its own and copies the
//     values: a replica for remote viewpoints, with overlay commands of its
//     own, rebuilt when the host restarts.
//
// The host trusts nothing in the region (LAYOUT.md, "Trust model"): it
// keeps its layout, counters, descriptors and change log privately,
// re-asserts them every cycle, and checks every value, request claim and
// request slot clients write. Clients check what they read and that the
// host's process lives. Region files are created exclusively, never
// through symbolic links, and opened only if the calling user owns them.
//
// The package knows nothing of rendering: simvis serve and simvis mirror
// (package cli) render sensors around Host and Mirror.
package ipc
