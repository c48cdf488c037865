// Package ipc is simvis's shared-array interface (paper III-G): a host
// publishes its scene's element descriptors and parameter values in one
// memory-mapped file (LAYOUT.md, readable without Go), and clients attach to
// it, look up an element's value index once and then read and write its
// values in place.
//
// Built so far: the region (header with an epoch that changes when a host
// restarts, descriptors under a sequence lock, the values as the scene's
// own parameter table). The change-request log, the change log, the host
// loop, clients and mirrors are to come.
package ipc
