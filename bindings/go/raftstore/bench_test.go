// bench_test.go -- hashicorp/raft's own store benchmarks (raftbench), run
// on a Store as raft-boltdb's bench_test.go runs them on a BoltStore.  The
// comparison with raft-boltdb and raft-wal is in benchcmp/ (its own module)
// and scripts/bench-raftstore.sh.

package raftstore_test

import (
	"testing"

	raftbench "github.com/hashicorp/raft/bench"
	"github.com/ravel-kv/ravel/bindings/go/raftstore"
)

// benchStore opens a fresh store, runs bench on it, and closes it
// untimed.
func benchStore(b *testing.B, bench func(*testing.B, *raftstore.Store)) {
	s, err := raftstore.Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	bench(b, s)
	b.StopTimer()
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkStore_FirstIndex(b *testing.B) {
	benchStore(b, func(b *testing.B, s *raftstore.Store) { raftbench.FirstIndex(b, s) })
}

func BenchmarkStore_LastIndex(b *testing.B) {
	benchStore(b, func(b *testing.B, s *raftstore.Store) { raftbench.LastIndex(b, s) })
}

func BenchmarkStore_GetLog(b *testing.B) {
	benchStore(b, func(b *testing.B, s *raftstore.Store) { raftbench.GetLog(b, s) })
}

func BenchmarkStore_StoreLog(b *testing.B) {
	benchStore(b, func(b *testing.B, s *raftstore.Store) { raftbench.StoreLog(b, s) })
}

func BenchmarkStore_StoreLogs(b *testing.B) {
	benchStore(b, func(b *testing.B, s *raftstore.Store) { raftbench.StoreLogs(b, s) })
}

func BenchmarkStore_DeleteRange(b *testing.B) {
	benchStore(b, func(b *testing.B, s *raftstore.Store) { raftbench.DeleteRange(b, s) })
}

func BenchmarkStore_Set(b *testing.B) {
	benchStore(b, func(b *testing.B, s *raftstore.Store) { raftbench.Set(b, s) })
}

func BenchmarkStore_Get(b *testing.B) {
	benchStore(b, func(b *testing.B, s *raftstore.Store) { raftbench.Get(b, s) })
}

func BenchmarkStore_SetUint64(b *testing.B) {
	benchStore(b, func(b *testing.B, s *raftstore.Store) { raftbench.SetUint64(b, s) })
}

func BenchmarkStore_GetUint64(b *testing.B) {
	benchStore(b, func(b *testing.B, s *raftstore.Store) { raftbench.GetUint64(b, s) })
}
