package testkit

import (
	"syscall"
	"testing"
	"time"
)

// LoopCycles runs one cycle per iteration of b's loop and reports cycles/s,
// rays/s where rays (a cycle's) is above 0, and the process's CPU time per
// cycle (user and system, all threads, llvmpipe's included: on a machine
// shared with other work it moves less than the wall time); it returns the
// page faults over the loop.
func LoopCycles(b *testing.B, rays int, one func()) (faults int64) {
	var r0, r1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	for b.Loop() {
		one()
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	cpu := time.Duration(r1.Utime.Nano() + r1.Stime.Nano() - r0.Utime.Nano() - r0.Stime.Nano())
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
	if rays > 0 {
		b.ReportMetric(float64(b.N*rays)/b.Elapsed().Seconds(), "rays/s")
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/cycle")
	return r1.Minflt - r0.Minflt
}
