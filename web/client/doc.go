// Package client is the client side of the web viewer's protocol
// (docs/web.md): the messages both sides exchange over the WebSocket, and
// Conn, an ipc.Conn over it, through which the page in the browser (this
// package compiled to WebAssembly) or a Go program mirrors a host with
// ipc.Mirror, as a desktop mirror does over shared memory or NATS.
package client
