// Package web is the web viewer's server (docs/web.md): an HTTP server
// whose page shows a host's scene live in any browser, with nothing
// installed on the viewing machine. The page is the project's own scene
// graph compiled to WebAssembly (web/browser) and drawn with g3n's WebGL
// backend; it mirrors the host with ipc.Mirror over a WebSocket
// (web/client), so that it shows what a desktop mirror shows.
//
// The server follows the host as a client of its own (it never holds up
// the host's cycle), sends each page the newest state at most Rate times a
// second (a slow page skips states, nothing queues up), serves the model
// files the change log names, and carries out a driver page's sets and
// requests. Tokens give roles: a driver token drives, a viewer token
// watches, and without tokens only loopback pages are served, as viewers.
package web
