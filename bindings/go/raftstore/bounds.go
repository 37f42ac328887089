// bounds.go -- the log's first and last index, kept in memory so that
// FirstIndex and LastIndex read no disk: set at open from the first and last
// keys under the log prefix, widened by StoreLogs and narrowed by
// DeleteRange after their writes succeed.
//
// Invariant (between writes): when empty is false, first and last are the
// smallest and largest index stored; when contiguous is true, every index
// between them is stored too.  StoreLogs only adds keys, so first = min and
// last = max keep the invariant in any order of concurrent calls.
// DeleteRange runs alone (it holds Store.writeMu exclusively) and so may
// read the database to find the new first or last when the log has gaps.

package raftstore

import (
	"fmt"
	"sync"

	ravel "github.com/ravel-kv/ravel/bindings/go"
)

// bounds are the log's first and last index.  Every field is protected by
// mu; StoreLogs (after its write) and DeleteRange (after its write, holding
// Store.writeMu exclusively) write them, FirstIndex and LastIndex read them.
type bounds struct {
	mu         sync.Mutex
	empty      bool   // no entry is stored (first and last are 0)
	first      uint64 // the smallest index stored
	last       uint64 // the largest index stored
	contiguous bool   // every index in [first, last] is stored
}

// snapshot returns the bounds as they are now.
func (b *bounds) snapshot() (empty bool, first, last uint64, contiguous bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.empty, b.first, b.last, b.contiguous
}

// stored widens the bounds by a batch of entries that is now stored: lo
// and hi are its smallest and largest index, dense says it holds every
// index in between.
func (b *bounds) stored(lo, hi uint64, dense bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.empty {
		b.empty, b.first, b.last, b.contiguous = false, lo, hi, dense
		return
	}
	// Two dense ranges that overlap or touch make one dense range.
	touches := lo <= addSat(b.last, 1) && b.first <= addSat(hi, 1)
	b.contiguous = b.contiguous && dense && touches
	b.first = min(b.first, lo)
	b.last = max(b.last, hi)
}

// set replaces the bounds (DeleteRange and loading at open).
func (b *bounds) set(empty bool, first, last uint64, contiguous bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if empty {
		first, last, contiguous = 0, 0, true
	}
	b.empty, b.first, b.last, b.contiguous = empty, first, last, contiguous
}

// addSat is a+b, or the largest uint64 if that overflows.
func addSat(a, b uint64) uint64 {
	if a+b < a {
		return ^uint64(0)
	}
	return a + b
}

// loadBounds sets the bounds from the first and last keys under the log
// prefix (two seeks at open).  Whether the log has gaps is not known
// without reading it all, so it is taken to have some: DeleteRange then
// seeks for the new first or last index.
func (s *Store) loadBounds() error {
	first, ok, err := s.seekIndex(s.logPre, false)
	if err != nil || !ok {
		s.bounds.set(true, 0, 0, true)
		return err
	}
	last, _, err := s.seekIndex(s.logPre, true)
	if err != nil {
		return err
	}
	s.bounds.set(false, first, last, first == last)
	return nil
}

// seekIndex finds the index of the first log key at or after from
// (backward false) or of the last log key before from (backward true; from
// = the prefix means "the last log key of all").  ok is false when there is
// none.
func (s *Store) seekIndex(from []byte, backward bool) (index uint64, ok bool, err error) {
	opts := &ravel.IterOptions{Start: from, Stop: s.logEnd}
	if backward {
		opts.Start = s.logPre
		if len(from) > len(s.logPre) {
			opts.Stop = from
		}
	}
	it, err := s.db.NewIterator(opts)
	if err != nil {
		return 0, false, checkErr(err)
	}
	defer it.Close()
	var valid bool
	if backward {
		valid = it.SeekToLast()
	} else {
		valid = it.SeekToFirst()
	}
	if !valid {
		return 0, false, checkErr(it.Err())
	}
	index, ok = logIndexOfKey(it.Key(), s.logPre)
	if !ok {
		return 0, false, fmt.Errorf("raftstore: key %q under the log prefix "+
			"%q is not a log key (8 bytes of index after the prefix): "+
			"is another program writing under this prefix?", it.Key(), s.logPre)
	}
	return index, true, nil
}
