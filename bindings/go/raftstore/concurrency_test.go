// concurrency_test.go -- concurrent StoreLogs from several goroutines, and
// raft-wal's appender, truncator and readers, with invariants checked by
// every reader on every step.  Meant for -race (ci.sh runs it so).  Each
// loop is bounded by a count, never by time.

package raftstore_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/ravel-kv/ravel/bindings/go/raftstore"
)

// Writers store disjoint runs of entries at once (their syncs share write
// groups) while readers check that the bounds they see name stored
// entries: a bound never runs ahead of an acknowledged write.
func TestConcurrentStoreLogs(t *testing.T) {
	const writers, batches, perBatch = 8, 40, 5
	dir := t.TempDir()
	s := openStore(t, dir)
	base := func(w int) uint64 { return uint64(w)*100000 + 1 }

	var wg sync.WaitGroup
	var done atomic.Bool
	errs := make(chan error, 64)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				lo := base(w) + uint64(b*perBatch)
				if err := s.StoreLogs(entries(lo, lo+perBatch-1)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var readers sync.WaitGroup
	for range 3 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for ; !done.Load(); time.Sleep(100 * time.Microsecond) {
				if err := checkBoundsAreStored(s); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	done.Store(true)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	if perSync, ok := writersPerFsync(s); ok {
		t.Logf("%.2f sync writers acknowledged per fsync", perSync) // told, not asserted
	}
	present := map[uint64]bool{}
	for w := range writers {
		for i := range uint64(batches * perBatch) {
			present[base(w)+i] = true
		}
	}
	wantBounds(t, s, base(0), base(writers-1)+batches*perBatch-1)
	s = reopen(t, s, dir)
	wantBounds(t, s, base(0), base(writers-1)+batches*perBatch-1)
	for i := range present {
		wantLog(t, s, i)
	}
}

// checkBoundsAreStored checks that the first and last index reported are
// stored and hold their entries (no deletes run meanwhile).
func checkBoundsAreStored(s *raftstore.Store) error {
	first, err := s.FirstIndex()
	if err != nil {
		return err
	}
	last, err := s.LastIndex()
	if err != nil {
		return err
	}
	if first == 0 || last == 0 {
		return nil // read while the log was empty (no delete runs here)
	}
	if first > last {
		return fmt.Errorf("first %d > last %d", first, last)
	}
	for _, i := range []uint64{first, last} {
		if err := checkEntry(s, i); err != nil {
			return err
		}
	}
	return nil
}

// checkEntry reads the entry at i and checks it is entry(i).
func checkEntry(s *raftstore.Store, i uint64) error {
	var l raft.Log
	if err := s.GetLog(i, &l); err != nil {
		return fmt.Errorf("get log %d: %v", i, err)
	}
	if diff := sameLog(&l, entry(i)); diff != "" {
		return fmt.Errorf("log %d: %s", i, diff)
	}
	return nil
}

// raft-wal's TestConcurrentReadersAndWriter, bounded by counts: one
// appender (which now and then truncates its own tail and writes it again),
// one truncator keeping the last 100 entries, and readers.  Whatever a
// reader finds at an index is that index's entry or ErrLogNotFound (a
// truncation may pass between reading a bound and the entry); the bounds
// never cross; and at the end the log is exactly [first, last].
func TestConcurrentAppendTruncateRead(t *testing.T) {
	const appends = 800
	dir := t.TempDir()
	s := openStore(t, dir)
	var stop atomic.Bool
	errs := make(chan error, 16)
	report := func(err error) {
		select {
		case errs <- err:
		default:
		}
		stop.Store(true)
	}

	var writers, readers sync.WaitGroup
	writers.Add(2)
	go func() { // the appender
		defer writers.Done()
		defer stop.Store(true)
		for i := uint64(1000); i < 1000+appends && !stop.Load(); i++ {
			if err := s.StoreLogs(entries(i, i)); err != nil {
				report(err)
				return
			}
			if i%97 != 0 {
				continue
			}
			if err := s.DeleteRange(i, i); err != nil {
				report(err)
				return
			}
			if last, _ := s.LastIndex(); last != i-1 {
				report(fmt.Errorf("after truncating %d the last index is %d", i, last))
				return
			}
			if err := s.StoreLogs(entries(i, i)); err != nil {
				report(err)
				return
			}
		}
	}()
	go func() { // the truncator: keeps the last 100 once 150 are stored
		defer writers.Done()
		for n := 0; !stop.Load(); n++ {
			first, _ := s.FirstIndex()
			last, _ := s.LastIndex()
			if last < first+150 {
				time.Sleep(time.Millisecond) // not a timing assumption: a pause
				continue
			}
			if err := s.DeleteRange(0, last-100); err != nil {
				report(err)
				return
			}
			if first, _ := s.FirstIndex(); first < last-99 {
				report(fmt.Errorf("after deleting up to %d the first index is %d", last-100, first))
				return
			}
		}
	}()
	var good atomic.Int64
	for range 3 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for ; !stop.Load(); time.Sleep(100 * time.Microsecond) {
				first, _ := s.FirstIndex()
				last, _ := s.LastIndex()
				if first > last+1 {
					report(fmt.Errorf("bounds crossed: first %d, last %d", first, last))
					return
				}
				for _, i := range []uint64{first, (first + last) / 2, last} {
					var l raft.Log
					err := s.GetLog(i, &l)
					if err == raft.ErrLogNotFound {
						continue
					}
					if err != nil {
						report(err)
						return
					}
					if diff := sameLog(&l, entry(i)); diff != "" {
						report(fmt.Errorf("log %d: %s", i, diff))
						return
					}
					good.Add(1)
				}
			}
		}()
	}
	writers.Wait()
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if good.Load() == 0 {
		t.Fatal("the readers never found an entry")
	}

	first, _ := s.FirstIndex()
	last, _ := s.LastIndex()
	if last != 1000+appends-1 {
		t.Fatalf("last index %d, want %d", last, 1000+appends-1)
	}
	s = reopen(t, s, dir)
	wantExactly(t, s, set(first, last), 990, last+5)
}
