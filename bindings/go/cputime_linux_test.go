// cputime_linux_test.go -- the calling thread's CPU time, for the get
// benchmarks' cpu-ns/op (bench_test.go): on a loaded machine it moves far
// less than wall time with what other processes do.

package ravel_test

import "syscall"

// rusageThread is Linux's RUSAGE_THREAD (not in package syscall).
const rusageThread = 1

// threadCPU is the CPU time (user + system, ns) the calling OS thread has
// used; the caller holds its thread (runtime.LockOSThread).
func threadCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(rusageThread, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
