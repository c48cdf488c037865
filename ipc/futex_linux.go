package ipc

import (
	"syscall"
	"time"
	"unsafe"
)

// Linux futexes on the shared mapping: a requester sleeps on its slot's
// state word and the host wakes it when it writes the outcome, across
// processes (the futex is keyed by the file page, not the address).
const (
	futexWaitOp = 0 // FUTEX_WAIT, not _PRIVATE: shared between processes
	futexWakeOp = 1 // FUTEX_WAKE
)

// futexWait sleeps while *addr holds val, for at most d. Early or spurious
// returns are fine: callers look at the word again.
func futexWait(addr *uint32, val uint32, d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWaitOp, uintptr(val),
		uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// futexWake wakes every process sleeping on addr.
func futexWake(addr *uint32) {
	syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWakeOp, 1<<30, 0, 0, 0)
}

// sleepPrecise sleeps d with the kernel's high-resolution timers (Go's own
// timers round up to about a millisecond on Linux).
func sleepPrecise(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	syscall.Nanosleep(&ts, nil)
}
