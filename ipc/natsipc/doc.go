// Package natsipc carries simvis's shared-array interface over NATS, for
// clients and mirrors on other machines (NATS.md documents the subjects,
// encodings and roles). It is the only package besides the command line
// that imports NATS.
//
//   - StartServer embeds a NATS server with JetStream (loopback by default;
//     credentials required to expose it) that enforces the host, driver
//     and viewer roles (Permissions) and writes the driver's and viewer's
//     credentials for local clients next to the region (SecretsPath).
//     nats-server.conf gives an external nats-server the same roles.
//   - Publish serves an ipc.Host: it takes part in the host's cycles,
//     applying remote value writes and requests and publishing changed
//     values, the change log (a JetStream stream, recreated and refilled
//     when a server comes back without it), the files logged commands
//     loaded, and sensor frames (in chunks where larger than the server's
//     message limit; Assembler puts them together).
//   - Dial and DialAs (and ipc.Dial, for nats:// and tls:// URLs once this
//     package is imported) connect a client: the ipc.Client API works
//     unchanged.
package natsipc
