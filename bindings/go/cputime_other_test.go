//go:build !linux

// cputime_other_test.go -- no per-thread CPU time here: the get
// benchmarks report cpu-ns/op as 0 (see cputime_linux_test.go).

package ravel_test

func threadCPU() int64 { return 0 }
