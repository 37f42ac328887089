// Package benchcmp measures raftstore against raft-boltdb/v2 and raft-wal
// with hashicorp/raft's own benchmark package (github.com/hashicorp/raft/
// bench, run as raft-boltdb's bench_test.go runs it), each store opened with
// its defaults (every write synced: raft-boltdb commits a bolt transaction,
// raft-wal fsyncs its segment, raftstore writes with ravel.Sync).  It is a
// module of its own so that raftstore's users do not inherit bbolt and
// raft-wal.  scripts/bench-raftstore.sh runs it, the stores alternating.
//
// Every benchmark's second level is store=NAME, NAME one of ravel, bolt,
// wal, so that -test.bench='/^store=ravel$' picks one store's runs.
package benchcmp

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	wal "github.com/hashicorp/raft-wal"
	raftbench "github.com/hashicorp/raft/bench"
	ravel "github.com/ravel-kv/ravel/bindings/go"
	"github.com/ravel-kv/ravel/bindings/go/raftstore"
)

// store is a log store under test and how to close it.
type store interface {
	raft.LogStore
	Close() error
}

// opener makes a fresh store in a new directory of b's.
type opener func(b *testing.B) store

var stores = []struct {
	name string
	open opener
}{
	{"ravel", func(b *testing.B) store {
		var opts ravel.Options
		if text := os.Getenv("RAVEL_OPTIONS"); text != "" {
			check(b, opts.Parse(text)) // e.g. RAVEL_OPTIONS="wal_io=sync"
		}
		s, err := raftstore.Open(b.TempDir(), &raftstore.Options{Ravel: &opts})
		check(b, err)
		return s
	}},
	{"bolt", func(b *testing.B) store {
		s, err := raftboltdb.NewBoltStore(filepath.Join(b.TempDir(), "raft.db"))
		check(b, err)
		return s
	}},
	{"wal", func(b *testing.B) store {
		s, err := wal.Open(b.TempDir())
		check(b, err)
		return s
	}},
}

func check(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}

// forEachStore runs bench on a fresh store of each kind.
func forEachStore(b *testing.B, bench func(b *testing.B, s store)) {
	for _, st := range stores {
		b.Run("store="+st.name, func(b *testing.B) { runOn(b, st.open, bench) })
	}
}

// runOn opens a fresh store, runs bench on it and closes it.  Opening and
// closing are not timed (ravel's Close flushes its memtable).
func runOn(b *testing.B, open opener, bench func(b *testing.B, s store)) {
	s := open(b)
	b.ResetTimer()
	bench(b, s)
	b.StopTimer()
	check(b, s.Close())
}

// BenchmarkStoreLogs is raftbench.StoreLogs with a batch size chosen: each
// op stores the next batch of consecutive entries (payload "data", as
// raftbench's) and returns once it is synced.
func BenchmarkStoreLogs(b *testing.B) {
	for _, st := range stores {
		b.Run("store="+st.name, func(b *testing.B) {
			for _, batch := range []int{1, 16, 64} {
				b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
					runOn(b, st.open, func(b *testing.B, s store) {
						storeLogsBatch(b, s, batch)
					})
				})
			}
		})
	}
}

func storeLogsBatch(b *testing.B, s store, batch int) {
	logs := make([]*raft.Log, batch)
	for n := 0; n < b.N; n++ {
		b.StopTimer()
		for i := range logs {
			logs[i] = &raft.Log{Index: uint64(n*batch + i + 1), Data: []byte("data")}
		}
		b.StartTimer()
		if err := s.StoreLogs(logs); err != nil {
			b.Fatalf("err: %s", err)
		}
	}
}

// BenchmarkGetLog is raftbench.GetLog: one entry of nine, read again and
// again.
func BenchmarkGetLog(b *testing.B) {
	forEachStore(b, func(b *testing.B, s store) { raftbench.GetLog(b, s) })
}

// BenchmarkFirstIndex and BenchmarkLastIndex are raftbench's.
func BenchmarkFirstIndex(b *testing.B) {
	forEachStore(b, func(b *testing.B, s store) { raftbench.FirstIndex(b, s) })
}

func BenchmarkLastIndex(b *testing.B) {
	forEachStore(b, func(b *testing.B, s store) { raftbench.LastIndex(b, s) })
}

// BenchmarkDeleteRange is raftbench.DeleteRange, which stores runs of 3
// entries 10 indexes apart and deletes them a run at a time.  raft-wal
// refuses entries with gaps ("non-monotonic log entries"), so it is not run
// there: BenchmarkDeleteRangeHead is the shape all three take.
func BenchmarkDeleteRange(b *testing.B) {
	forEachStore(b, func(b *testing.B, s store) {
		if _, isWAL := s.(*wal.WAL); isWAL {
			b.Skip("raft-wal refuses raftbench.DeleteRange's gaps")
		}
		raftbench.DeleteRange(b, s)
	})
}

// BenchmarkDeleteRangeHead is raft's own truncation: a dense log of 10
// entries per op is stored first, then each op deletes the next 10 from the
// head (as a snapshot's compaction does), synced.
func BenchmarkDeleteRangeHead(b *testing.B) {
	forEachStore(b, func(b *testing.B, s store) {
		const per = 10
		var logs []*raft.Log
		for i := 1; i <= b.N*per; i++ {
			logs = append(logs, &raft.Log{Index: uint64(i), Data: []byte("data")})
			if len(logs) == 1024 || i == b.N*per {
				check(b, s.StoreLogs(logs))
				logs = logs[:0]
			}
		}
		b.ResetTimer()
		for n := 0; n < b.N; n++ {
			if err := s.DeleteRange(uint64(n*per+1), uint64(n*per+per)); err != nil {
				b.Fatalf("err: %s", err)
			}
		}
	})
}
