//go:build js

package models

// nonblock is 0 in a browser: its files are what the page fetched, never
// FIFOs or devices (openFlags).
const nonblock = 0
