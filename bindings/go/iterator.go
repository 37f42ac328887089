// iterator.go -- Iterator: ordered scans over a fixed state, with optional
// bounds (ravel's iterate_lower_bound and iterate_upper_bound, enforced by
// the engine), and the range-over-func forms All and Backward.

package ravel

/*
#include "shim.h"
*/
import "C"

import (
	"iter"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// IterOptions choose what an iterator reads.  The zero value (or nil)
// reads every key of the latest state.
type IterOptions struct {
	// Snapshot, if not nil, is the state read; else the latest state
	// when the iterator is made.  The iterator does not need the snapshot
	// afterwards: it may be closed while the iterator lives.
	Snapshot *Snapshot
	// Start is the lower bound, included (nil: from the first key).
	Start []byte
	// Stop is the upper bound, excluded (nil: to the last key).  A
	// non-nil empty Stop excludes every key.
	Stop []byte
}

// Iterator reads the keys of a fixed state in order (bytewise, a shorter
// key first on a common prefix), forward or backward, within the bounds
// of its IterOptions.  It stays valid and unchanged while writes go on.
//
// The moves (SeekToFirst, Seek, Next, ...) return whether the iterator is
// then positioned at an entry (Valid).  A move that fails leaves it
// invalid and the error in Err.  An error from ravel (ErrCorrupt at a
// damaged block, ErrIO at a failed read) stops the iterator for good, as
// in C: it never shows another entry, and every later move fails with
// that same error.  Next or Prev on an iterator not positioned at an
// entry is an error too (ErrInvalid, unless it stopped at an earlier
// one), which the next Seek clears.  The usual loops:
//
//	for e, err := range it.All() {
//		if err != nil {
//			return err // the damage; nothing past it is yielded
//		}
//		use(e.Key, e.Value)
//	}
//
//	for it.SeekToFirst(); it.Valid(); it.Next() { use(it.Key(), it.Value()) }
//	if err := it.Err(); err != nil { ... } // an iteration ends both at the last key and at a failure
//
// An Iterator is not safe for concurrent use: one goroutine at a time.
// Close it when done: DB.Close refuses to close a database with iterators
// still open.  (A finalizer frees a forgotten one, as a safety net only.)
// An iterator made by Txn.NewIterator reads through its transaction, is
// used by the transaction's goroutine, and is closed when the transaction
// ends.
type Iterator struct {
	c       *C.ravel_iter
	db      *DB
	txn     *Txn // the transaction it reads through, or nil
	pos     C.shim_position
	valid   bool // pos is an entry
	err     error
	cleanup runtime.Cleanup
}

// iteratorRef is what the safety-net cleanup needs to free an iterator
// nobody closed.
type iteratorRef struct {
	c     *C.ravel_iter
	count *atomic.Int64
}

// NewIterator makes an iterator over the state opts chooses (nil: every
// key of the latest state).  It starts unpositioned: call a Seek method or
// range over All or Backward.
func (db *DB) NewIterator(opts *IterOptions) (*Iterator, error) {
	if opts == nil {
		opts = &IterOptions{}
	}
	var snap *C.ravel_snapshot
	if s := opts.Snapshot; s != nil {
		if err := s.enter("iterator new"); err != nil {
			return nil, err
		}
		defer s.gate.leave()
		if s.db != db {
			return nil, misuseError("iterator new", "the snapshot belongs "+
				"to database %s, not %s", s.db.path, db.path)
		}
		snap = s.c
	}
	if !db.gate.enter() {
		return nil, closedError("iterator new", "database "+db.path)
	}
	defer db.gate.leave()
	// ravel copies the bounds; nil is no bound, empty is one
	h := C.shim_iter_new(db.c, snap,
		bytesPtr(opts.Start), cSize(opts.Start), cBool(opts.Start != nil),
		bytesPtr(opts.Stop), cSize(opts.Stop), cBool(opts.Stop != nil))
	if err := callError("iterator new", h.rc, h.msg); err != nil {
		return nil, err
	}
	db.iterators.Add(1)
	it := &Iterator{c: (*C.ravel_iter)(h.handle), db: db}
	it.cleanup = runtime.AddCleanup(it, freeForgotten,
		iteratorRef{c: it.c, count: &db.iterators})
	return it, nil
}

// cBool is b as a C int.
func cBool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// freeForgotten frees an iterator that became unreachable unclosed.
func freeForgotten(r iteratorRef) {
	C.ravel_iter_free(r.c)
	r.count.Add(-1)
}

// Close frees the iterator.  A second Close returns an error matching
// ErrClosed.
func (it *Iterator) Close() error {
	if it.c == nil {
		return closedError("iterator close", "iterator")
	}
	if it.txn != nil {
		if err := it.txn.enter("iterator close"); err != nil {
			return err
		}
		defer it.txn.leave()
	}
	it.freeC()
	return nil
}

// freeC frees the C iterator (the caller checked it is not freed yet).
func (it *Iterator) freeC() {
	if it.txn != nil {
		it.txn.dropIterator(it)
	} else {
		it.cleanup.Stop()
		it.db.iterators.Add(-1)
	}
	C.ravel_iter_free(it.c)
	it.c = nil
	it.pos = C.shim_position{}
	it.valid = false
}

// move makes one C move and records where it landed.
func (it *Iterator) move(op string, how C.int, key []byte) bool {
	if it.txn != nil {
		// a move reads the transaction's writes: a call on it
		if err := it.txn.enter(op); err != nil {
			return it.fail(err)
		}
		defer it.txn.leave()
	}
	it.pos = C.shim_iter_move(it.c, how, bytesPtr(key), cSize(key))
	if err := callError(op, it.pos.rc, it.pos.msg); err != nil {
		// (a refused seek leaves ravel's iterator where it was: not
		// where the caller asked, so not valid here)
		it.pos = C.shim_position{}
		return it.fail(err)
	}
	it.valid = it.pos.valid != 0
	return it.valid
}

// seekMove starts a new positioning: it clears the error of earlier moves.
func (it *Iterator) seekMove(op string, how C.int, key []byte) bool {
	it.err = nil
	if it.c == nil {
		return it.fail(closedError(op, "iterator"))
	}
	return it.move(op, how, key)
}

// stepMove is Next or Prev, which need a valid iterator.
func (it *Iterator) stepMove(op string, how C.int) bool {
	if it.c == nil {
		return it.fail(closedError(op, "iterator"))
	}
	if !it.valid {
		return it.fail(misuseError(op, "the iterator is not positioned "+
			"at an entry"))
	}
	return it.move(op, how, nil)
}

// fail records err (unless an earlier error is kept) and leaves the
// iterator invalid.
func (it *Iterator) fail(err error) bool {
	if it.err == nil {
		it.err = err
	}
	it.valid = false
	return false
}

// SeekToFirst positions at the first key (within the bounds).
func (it *Iterator) SeekToFirst() bool {
	return it.seekMove("iterator seek to first", C.SHIM_SEEK_TO_FIRST, nil)
}

// SeekToLast positions at the last key (within the bounds).
func (it *Iterator) SeekToLast() bool {
	return it.seekMove("iterator seek to last", C.SHIM_SEEK_TO_LAST, nil)
}

// Seek positions at the first key >= key (within the bounds: a key below
// Start positions at the first key >= Start).
func (it *Iterator) Seek(key []byte) bool {
	return it.seekMove("iterator seek", C.SHIM_SEEK, key)
}

// SeekForPrev positions at the last key <= key (within the bounds: a key
// at or above Stop positions at the last key < Stop).
func (it *Iterator) SeekForPrev(key []byte) bool {
	return it.seekMove("iterator seek for prev", C.SHIM_SEEK_FOR_PREV, key)
}

// Next moves to the next key and reports whether the iterator is then
// positioned at one.  On an iterator not positioned at an entry it fails
// (see Err).
func (it *Iterator) Next() bool {
	return it.stepMove("iterator next", C.SHIM_NEXT)
}

// Prev moves to the previous key and reports whether the iterator is then
// positioned at one.  On an iterator not positioned at an entry it fails
// (see Err).
func (it *Iterator) Prev() bool {
	return it.stepMove("iterator prev", C.SHIM_PREV)
}

// Valid reports whether the iterator is positioned at an entry.
func (it *Iterator) Valid() bool {
	return it.valid
}

// rawKey is a view of the current key in the iterator's C memory.
func (it *Iterator) rawKey() []byte {
	return cBytes(unsafe.Pointer(it.pos.key), it.pos.klen)
}

// Key returns a copy of the current key (nil if not Valid).
func (it *Iterator) Key() []byte {
	if !it.valid {
		return nil
	}
	key := append([]byte{}, it.rawKey()...)
	runtime.KeepAlive(it) // the bytes copied are the C iterator's (batch.go)
	return key
}

// Value returns a copy of the current value (nil if not Valid).
func (it *Iterator) Value() []byte {
	if !it.valid {
		return nil
	}
	value := append([]byte{}, cBytes(unsafe.Pointer(it.pos.value), it.pos.vlen)...)
	runtime.KeepAlive(it) // as in Key
	return value
}

// Err returns the error that stopped the iterator, or nil.  Check it after a
// loop: an iteration ends both at the last key and at a failure.
func (it *Iterator) Err() error {
	return it.err
}

// Entry is one key and its value, as All and Backward yield them: copies,
// the caller's to keep.
type Entry struct {
	Key, Value []byte
}

// All ranges over the entries from the first to the last (within the
// bounds).  Each iteration yields an Entry and a nil error, except that a
// failure ends the loop with one last iteration that yields a zero Entry
// and the error (also kept in Err): an error cannot pass for the end of
// the keys, and no entry follows it.  Range with both values:
//
//	for e, err := range it.All() {
//		if err != nil {
//			return err
//		}
//		use(e.Key, e.Value)
//	}
func (it *Iterator) All() iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		it.scan(yield, it.SeekToFirst, it.Next)
	}
}

// Backward ranges over the entries from the last to the first (within
// the bounds), as All does: a failure is the loop's last iteration,
// yielding a zero Entry and the error.
func (it *Iterator) Backward() iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		it.scan(yield, it.SeekToLast, it.Prev)
	}
}

// scan is the loop of All and Backward: first positions, step moves on.
func (it *Iterator) scan(yield func(Entry, error) bool, first, step func() bool) {
	for ok := first(); ok; ok = step() {
		if !yield(Entry{Key: it.Key(), Value: it.Value()}, nil) {
			return
		}
	}
	if err := it.Err(); err != nil {
		yield(Entry{}, err)
	}
}
