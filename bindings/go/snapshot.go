// snapshot.go -- Snapshot: a fixed state of the database to read from.

package ravel

/*
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Snapshot pins the database's state when it was made: reads through it
// (Get, AppendGet, MultiGet, and iterators made with IterOptions.Snapshot) never
// see later writes.  It is safe for concurrent use.  Close it when done:
// DB.Close refuses to close a database with snapshots still open.  (A
// finalizer releases a forgotten one, as a safety net only.)
type Snapshot struct {
	gate    gate
	db      *DB
	cdb     *C.ravel_db
	c       *C.ravel_snapshot
	seq     uint64
	cleanup runtime.Cleanup
}

// snapshotRef is what the safety-net cleanup needs to release a snapshot
// nobody closed.
type snapshotRef struct {
	cdb   *C.ravel_db
	c     *C.ravel_snapshot
	count *atomic.Int64
}

// NewSnapshot returns a snapshot of the current state of the database.
// Close it when done.
func (db *DB) NewSnapshot() (*Snapshot, error) {
	if !db.gate.enter() {
		return nil, closedError("snapshot", "database "+db.path)
	}
	defer db.gate.leave()
	h := C.shim_snapshot_acquire(db.c)
	if err := callError("snapshot", h.rc, h.msg); err != nil {
		return nil, err
	}
	c := (*C.ravel_snapshot)(h.handle)
	db.snapshots.Add(1)
	s := &Snapshot{db: db, cdb: db.c, c: c,
		seq: uint64(C.ravel_snapshot_sequence(c))}
	s.cleanup = runtime.AddCleanup(s, releaseForgotten,
		snapshotRef{cdb: db.c, c: c, count: &db.snapshots})
	return s, nil
}

// releaseForgotten releases a snapshot that became unreachable unclosed
// (the database cannot have been closed: it counts the snapshot).
func releaseForgotten(r snapshotRef) {
	s := C.shim_snapshot_release(r.cdb, r.c)
	if s.msg != nil {
		C.free(unsafe.Pointer(s.msg))
	}
	r.count.Add(-1)
}

// Sequence returns the sequence number the snapshot reads at.
func (s *Snapshot) Sequence() uint64 {
	return s.seq
}

// Get returns a copy of the value of key as of the snapshot, as DB.Get
// does for the latest state.
func (s *Snapshot) Get(key []byte) ([]byte, error) {
	if err := s.enter("get"); err != nil {
		return nil, err
	}
	defer s.gate.leave()
	return getValue(s.cdb, s.c, key)
}

// AppendGet appends the value of key as of the snapshot to dst, as
// DB.AppendGet does for the latest state.
func (s *Snapshot) AppendGet(dst, key []byte) ([]byte, error) {
	if err := s.enter("get"); err != nil {
		return dst, err
	}
	defer s.gate.leave()
	return appendValue(s.cdb, s.c, dst, key)
}

// MultiGet returns copies of the values of keys as of the snapshot, as
// DB.MultiGet does for the latest state.
func (s *Snapshot) MultiGet(keys [][]byte) ([][]byte, error) {
	if err := s.enter("multi get"); err != nil {
		return nil, err
	}
	defer s.gate.leave()
	return multiGetValues(s.cdb, s.c, keys)
}

// enter admits a call through the snapshot (the caller then calls
// s.gate.leave): an error if it was closed, or is a Snapshot not made by
// NewSnapshot.
func (s *Snapshot) enter(op string) error {
	if !s.gate.enter() {
		return closedError(op, "snapshot")
	}
	if s.c == nil {
		s.gate.leave()
		return closedError(op, "snapshot")
	}
	return nil
}

// Close unpins the snapshot, waiting for reads through it in progress.
// Iterators made from the snapshot stay usable: they hold the state they
// read themselves.  A second Close returns an error matching ErrClosed, as
// does any later call through the snapshot.
func (s *Snapshot) Close() error {
	if !s.gate.lock() {
		return closedError("snapshot close", "snapshot")
	}
	if s.c == nil { // a Snapshot not made by NewSnapshot
		s.gate.unlock(true)
		return closedError("snapshot close", "snapshot")
	}
	s.cleanup.Stop()
	err := statusError("snapshot close", C.shim_snapshot_release(s.cdb, s.c))
	s.c = nil
	s.gate.unlock(true)
	s.db.snapshots.Add(-1)
	return err
}

// Release closes the snapshot: it is Close under its former name, the
// name of ravel_snapshot_release in C.
//
// Deprecated: use Close, which every handle of this package has (each is
// an io.Closer).
func (s *Snapshot) Release() error {
	return s.Close()
}
