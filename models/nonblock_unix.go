//go:build !js

package models

import "syscall"

// nonblock opens without blocking (openFlags).
const nonblock = syscall.O_NONBLOCK
