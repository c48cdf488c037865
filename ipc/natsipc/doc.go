// Package natsipc carries simvis's shared-array interface over NATS, for
// clients and mirrors on other machines (NATS.md documents the subjects
// and encodings). It is the only package besides the command line that
// imports NATS.
//
//   - StartServer embeds a NATS server with JetStream (loopback by default;
//     credentials required to expose it).
//   - Publish serves an ipc.Host: it takes part in the host's cycles,
//     applying remote value writes and requests and publishing changed
//     values, the change log (a JetStream stream) and sensor frames.
//   - Dial (and ipc.Dial, for nats:// and tls:// URLs once this package is
//     imported) connects a client: the ipc.Client API works unchanged.
package natsipc
