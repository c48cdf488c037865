// Package webguard holds the checks the project's HTTP doors (the Foxglove
// WebSocket server, the web viewer) make before they serve anyone: is an
// address or a Host header loopback, is a browser's Origin accepted, which
// token does a request carry, and does it equal a configured one (in
// constant time).
package webguard
