// deleterange.go -- deleteLogRange, the one function that turns "delete
// the entries lo..hi" into a ravel write.  It is alone in its file because
// it is the one place to change when ravel_delete_range reaches the Go
// binding: its body then becomes a single range delete,
//
//	return s.db.DeleteRange(appendLogKey(nil, s.logPre, lo),
//		s.logKeyAfter(hi), ravel.Sync)
//
// (one tombstone for the whole range, written with ravel.Sync), and
// maxPointDeleteSpan, deleteStoredKeys and the contiguous parameter go.
// Until then it writes ONE batch of point deletes: one per index in
// [lo, hi], keys computed from the indexes without reading the database.

package raftstore

import (
	ravel "github.com/ravel-kv/ravel/bindings/go"
)

// maxPointDeleteSpan is the widest range deleted index by index when the
// log may have gaps: past it the stored keys are listed instead, so that a
// log holding indexes 1 and 1e12 is not deleted with 1e12 tombstones.  A
// dense log (raft's, since the store is monotonic) never reaches it: there
// every index in [lo, hi] is stored.
const maxPointDeleteSpan = 1 << 20

// deleteLogRange deletes the entries lo..hi (both included, lo <= hi,
// within the stored bounds) as one batch written with ravel.Sync.
// contiguous says every index in [lo, hi] is stored.
func (s *Store) deleteLogRange(lo, hi uint64, contiguous bool) error {
	wb := s.batches.Get().(*writeBuffer)
	defer s.recycle(wb)
	if !contiguous && hi-lo >= maxPointDeleteSpan {
		if err := s.deleteStoredKeys(wb.batch, lo, hi); err != nil {
			return err
		}
	} else {
		for index := lo; ; index++ {
			wb.buf = appendLogKey(wb.buf[:0], s.logPre, index)
			if err := wb.batch.Delete(wb.buf); err != nil {
				return err
			}
			if index == hi {
				break
			}
		}
	}
	return s.db.Write(wb.batch, ravel.Sync)
}

// deleteStoredKeys adds a delete of every log key stored in [lo, hi] to b.
func (s *Store) deleteStoredKeys(b *ravel.Batch, lo, hi uint64) error {
	it, err := s.db.NewIterator(&ravel.IterOptions{
		Start: appendLogKey(nil, s.logPre, lo), Stop: s.logKeyAfter(hi)})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.SeekToFirst(); it.Valid(); it.Next() {
		if err := b.Delete(it.Key()); err != nil {
			return err
		}
	}
	return it.Err()
}

// logKeyAfter is the smallest key past the log key of hi: the key of hi+1,
// or the end of the log prefix for the largest index.
func (s *Store) logKeyAfter(hi uint64) []byte {
	if hi == ^uint64(0) {
		return s.logEnd
	}
	return appendLogKey(nil, s.logPre, hi+1)
}
