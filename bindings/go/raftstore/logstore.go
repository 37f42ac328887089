// logstore.go -- the raft.LogStore methods: FirstIndex and LastIndex from
// memory, GetLog as one point get, StoreLogs as one synced batch,
// DeleteRange as one synced batch (see deleterange.go).

package raftstore

import (
	"errors"

	"github.com/hashicorp/raft"
	ravel "github.com/ravel-kv/ravel/bindings/go"
)

// FirstIndex returns the smallest index stored, 0 for an empty log.  It
// reads no disk.  (An entry stored at index 0, which raft never writes, is
// reported as 0 too.)
func (s *Store) FirstIndex() (uint64, error) {
	if s.closed.Load() {
		return 0, ErrClosed
	}
	_, first, _, _ := s.bounds.snapshot()
	return first, nil
}

// LastIndex returns the largest index stored, 0 for an empty log.  It reads
// no disk.
func (s *Store) LastIndex() (uint64, error) {
	if s.closed.Load() {
		return 0, ErrClosed
	}
	_, _, last, _ := s.bounds.snapshot()
	return last, nil
}

// GetLog reads the entry at index into log with one point get.  An absent
// entry is raft.ErrLogNotFound; an entry that does not decode is an error
// matching ErrUnknownEncoding or ErrCorruptEntry, and log is then unchanged.
func (s *Store) GetLog(index uint64, log *raft.Log) error {
	if s.closed.Load() {
		return ErrClosed
	}
	var keyBuf [64]byte
	value, err := s.db.Get(appendLogKey(keyBuf[:0], s.logPre, index))
	if err == ravel.ErrNotFound {
		return raft.ErrLogNotFound
	}
	if err != nil {
		return checkErr(err)
	}
	return decodeLog(index, value, log)
}

// StoreLog stores one entry: StoreLogs of one.
func (s *Store) StoreLog(log *raft.Log) error {
	return s.StoreLogs([]*raft.Log{log})
}

// writeBuffer is a ravel batch and a scratch buffer, recycled between
// writes through Store.batches.
type writeBuffer struct {
	batch *ravel.Batch
	buf   []byte
}

// StoreLogs stores the entries as one batch written with ravel.Sync: one
// fdatasync however many entries, all of them or none, and calls made at
// once by several goroutines share their sync through ravel's write group.
// An entry at an index already stored replaces it.  It returns once the
// entries are on stable storage.
func (s *Store) StoreLogs(logs []*raft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	s.writeMu.RLock()
	defer s.writeMu.RUnlock()
	if s.closed.Load() {
		return ErrClosed
	}
	wb := s.batches.Get().(*writeBuffer)
	defer s.recycle(wb)
	lo, hi, dense := logs[0].Index, logs[0].Index, true
	for i, l := range logs {
		wb.buf = appendLogKey(wb.buf[:0], s.logPre, l.Index)
		key := len(wb.buf)
		wb.buf = appendLogValue(wb.buf, l)
		if err := wb.batch.Put(wb.buf[:key], wb.buf[key:]); err != nil {
			return err
		}
		lo, hi = min(lo, l.Index), max(hi, l.Index)
		dense = dense && (i == 0 || l.Index == logs[i-1].Index+1)
	}
	if err := s.db.Write(wb.batch, ravel.Sync); err != nil {
		return checkErr(err)
	}
	s.bounds.stored(lo, hi, dense)
	return nil
}

// recycle empties wb and puts it back for the next write; a batch that
// cannot be cleared is dropped (its finalizer frees it).
func (s *Store) recycle(wb *writeBuffer) {
	if wb.batch.Clear() != nil {
		return
	}
	if cap(wb.buf) > 1<<20 {
		wb.buf = nil // one huge entry does not pin its buffer forever
	}
	s.batches.Put(wb)
}

// DeleteRange deletes the entries from min to max, both included, as one
// range delete written with ravel.Sync, and returns once that is on stable
// storage.  Indexes outside the stored range cost nothing; a range holding
// no stored index writes nothing.  It waits for the StoreLogs calls in
// progress and StoreLogs calls wait for it.
func (s *Store) DeleteRange(minIndex, maxIndex uint64) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	empty, first, last, contiguous := s.bounds.snapshot()
	if empty || minIndex > maxIndex || maxIndex < first || minIndex > last {
		return nil
	}
	lo, hi := max(minIndex, first), min(maxIndex, last)
	if err := s.deleteLogRange(lo, hi); err != nil {
		// The batch may be applied though not durable: read the bounds
		// again so that they say what reads see.
		return s.reloadBounds(checkErr(err))
	}
	return s.narrowBounds(lo, hi, first, last, contiguous)
}

// narrowBounds sets the bounds after [lo, hi] (within [first, last]) was
// deleted: the new first is the next index stored after hi, the new last
// the one before lo, read from the database only when the log has gaps.
func (s *Store) narrowBounds(lo, hi, first, last uint64, contiguous bool) error {
	switch {
	case lo == first && hi == last:
		s.bounds.set(true, 0, 0, true)
	case lo == first && contiguous:
		s.bounds.set(false, hi+1, last, true)
	case hi == last && contiguous:
		s.bounds.set(false, first, lo-1, true)
	case lo == first:
		next, ok, err := s.seekIndex(appendLogKey(nil, s.logPre, hi+1), false)
		if err != nil {
			return s.reloadBounds(err)
		}
		s.bounds.set(!ok, next, last, false)
	case hi == last:
		prev, ok, err := s.seekIndex(appendLogKey(nil, s.logPre, lo), true)
		if err != nil {
			return s.reloadBounds(err)
		}
		s.bounds.set(!ok, first, prev, false)
	default: // a hole in the middle: first and last stay
		s.bounds.set(false, first, last, false)
	}
	return nil
}

// reloadBounds reads the bounds again after a failed write or seek and
// returns its error (joined with the reload's, if that fails too).
func (s *Store) reloadBounds(cause error) error {
	return errors.Join(cause, s.loadBounds())
}

// IsMonotonic reports true: raft then deletes the whole log after
// restoring a snapshot instead of leaving a gap before the new entries, so
// the log stays dense and DeleteRange never needs a seek.  (The store
// itself tolerates gaps: FirstIndex and LastIndex stay exact.)
func (s *Store) IsMonotonic() bool {
	return true
}
