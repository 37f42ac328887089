// deleterange.go -- deleteLogRange, the one function that turns "delete
// the entries lo..hi" into a ravel write: one range delete of the log
// keys [key(lo), key(hi+1)), written with ravel.Sync.  One operation in
// the WAL however many entries it covers, and no read of the database
// (ravel turns it into point deletions of the keys it covers when the
// memtable is flushed: docs/design.md, "Range deletes").

package raftstore

import (
	ravel "github.com/ravel-kv/ravel/bindings/go"
)

// deleteLogRange deletes the entries lo..hi (both included, lo <= hi) as
// one range delete written with ravel.Sync.
func (s *Store) deleteLogRange(lo, hi uint64) error {
	return s.db.DeleteRange(appendLogKey(nil, s.logPre, lo), s.logKeyAfter(hi),
		ravel.Sync)
}

// logKeyAfter is the smallest key past the log key of hi: the key of hi+1,
// or the end of the log prefix for the largest index.
func (s *Store) logKeyAfter(hi uint64) []byte {
	if hi == ^uint64(0) {
		return s.logEnd
	}
	return appendLogKey(nil, s.logPre, hi+1)
}
