// bench_test.go -- hashicorp/raft's own store benchmarks (raftbench), run
// on a Store as raft-boltdb's bench_test.go runs them on a BoltStore.  The
// comparison with raft-boltdb and raft-wal is in benchcmp/ (its own module)
// and scripts/bench-raftstore.sh.

package raftstore_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/raft"
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

// BenchmarkStore_StoreLogsParallel stores batches of 8 entries from
// GOMAXPROCS*4 goroutines at once, each in its own range of indexes: the
// case of several raft groups sharing one database, whose syncs ravel's
// write group shares.  It reports the writers acknowledged per fsync.
func BenchmarkStore_StoreLogsParallel(b *testing.B) {
	benchStore(b, func(b *testing.B, s *raftstore.Store) {
		var next atomic.Uint64
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			base := next.Add(1) << 40
			for i := uint64(0); pb.Next(); i++ {
				logs := make([]*raft.Log, 8)
				for j := range logs {
					logs[j] = &raft.Log{Index: base + i*8 + uint64(j), Data: []byte("data")}
				}
				if err := s.StoreLogs(logs); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.StopTimer()
		if perSync, ok := writersPerFsync(s); ok {
			b.ReportMetric(perSync, "writers/fsync")
		}
	})
}

// writersPerFsync reads ravel's count of sync writers acknowledged per
// fsync from the ravel.stats property.
func writersPerFsync(s *raftstore.Store) (float64, bool) {
	stats, err := s.DB().Property("ravel.stats")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(stats, "\n") {
		var issued, acked uint64
		var per float64
		if n, _ := fmt.Sscanf(line, "fsync: %d issued, %d sync writers acknowledged, %g writers per fsync",
			&issued, &acked, &per); n == 3 {
			return per, true
		}
	}
	return 0, false
}
