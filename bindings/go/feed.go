// feed.go -- the change feed: DB.UpdatesSince and Updates, reading the
// committed batches back from the WAL in commit order; and what a
// follower needs of a Batch: its operations, its sequence, its bytes, and
// a Batch made from bytes.

package ravel

/*
#include "shim_ops.h"
*/
import "C"

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// OpKind is what an operation of a batch does.
type OpKind int

// The kinds of operations of a batch.
const (
	OpDelete OpKind = C.RAVEL_OP_DELETE // remove the key
	OpPut    OpKind = C.RAVEL_OP_PUT    // set the key to the value
)

// Op is one operation of a batch: a put of Key to Value, or a delete of
// Key (Value nil).  Key and Value are copies.
type Op struct {
	Kind  OpKind
	Key   []byte
	Value []byte
}

// Ops returns the operations of the batch, in the order they were added
// (and are applied).
func (b *Batch) Ops() ([]Op, error) {
	defer runtime.KeepAlive(b)
	if b.c == nil {
		return nil, closedError("batch ops", "batch")
	}
	var ops []Op
	pos := C.size_t(0)
	for {
		o := C.shim_batch_next_op(b.c, pos)
		if o.rc == C.RAVEL_NOTFOUND {
			return ops, nil
		}
		if err := callError("batch ops", o.rc, o.msg); err != nil {
			return nil, err
		}
		op := Op{Kind: OpKind(o.op), Key: copyBytes(o.key, o.klen)}
		if op.Kind != OpDelete { // a put's value, a range delete's end
			op.Value = copyBytes(o.val, o.vlen)
			if op.Value == nil {
				op.Value = []byte{}
			}
		}
		if op.Key == nil {
			op.Key = []byte{}
		}
		ops = append(ops, op)
		pos = o.pos
	}
}

// copyBytes copies n bytes of C memory at p into Go memory (nil for none).
func copyBytes(p unsafe.Pointer, n C.size_t) []byte {
	if n == 0 {
		return nil
	}
	return append([]byte(nil), cBytes(p, n)...)
}

// Sequence returns the sequence number of the batch's first operation for
// a batch from the change feed (operation i has Sequence() + i), and 0 for
// a batch never written.
func (b *Batch) Sequence() uint64 {
	defer runtime.KeepAlive(b)
	if b.c == nil {
		return 0
	}
	return uint64(C.ravel_batch_sequence(b.c))
}

// Data returns a copy of the batch's bytes (its sequence, count and
// operations): BatchFromData makes the same batch again, in this process
// or another.
func (b *Batch) Data() []byte {
	defer runtime.KeepAlive(b)
	if b.c == nil {
		return nil
	}
	var n C.size_t
	p := C.ravel_batch_data(b.c, &n)
	return append([]byte{}, cBytes(p, n)...)
}

// BatchFromData returns a new batch holding a copy of data (from
// Batch.Data), checked whole first: ErrCorrupt names what is wrong and its
// byte offset.
func BatchFromData(data []byte) (*Batch, error) {
	h := C.shim_batch_from_data(bytesPtr(data), cSize(data))
	if err := callError("batch from data", h.rc, h.msg); err != nil {
		return nil, err
	}
	return wrapBatch((*C.ravel_batch)(h.handle)), nil
}

// wrapBatch makes a Batch of a C batch it now owns.
func wrapBatch(c *C.ravel_batch) *Batch {
	b := &Batch{c: c}
	b.cleanup = runtime.AddCleanup(b, func(p *C.ravel_batch) {
		C.ravel_batch_free(p)
	}, b.c)
	return b
}

// Updates is the change feed of a database, from UpdatesSince: the
// batches committed to it, in commit order, each with its sequence and
// its operations, read back from the write-ahead log (a database opened
// read_only can be followed too).  The loop of a follower:
//
//	for u.Next() {
//		b := u.Batch()
//		err := replica.Write(b)
//		b.Close()
//		...
//	}
//	if err := u.Err(); err != nil { ... } // nil: caught up for now
//
// Next returns false at the end of what the WAL holds now, with Err nil;
// calling Next again later goes on with the batches committed since.  A
// follower too far behind gets an error matching ErrExpired, after which
// Next always fails.
//
// An Updates is not safe for concurrent use: one goroutine at a time.
// Close it when done: DB.Close counts it as an iterator and refuses to
// close a database with one still open.  (A finalizer frees a forgotten
// one, as a safety net only.)
type Updates struct {
	c       *C.ravel_updates
	db      *DB
	batch   *Batch
	err     error
	cleanup runtime.Cleanup
}

// updatesRef is what the safety-net cleanup needs.
type updatesRef struct {
	c     *C.ravel_updates
	count *atomic.Int64
}

// UpdatesSince returns the change feed from sequence seq on: the first
// batch shown is the one holding seq (whole, even when seq is inside it),
// or the first after it; 0 means from the first.  It is not positioned:
// call Next.  It fails with an error matching ErrExpired if seq is no
// longer in the WAL.
func (db *DB) UpdatesSince(seq uint64) (*Updates, error) {
	if !db.gate.enter() {
		return nil, closedError("updates since", "database "+db.path)
	}
	defer db.gate.leave()
	h := C.shim_updates_since(db.c, C.uint64_t(seq))
	if err := callError("updates since", h.rc, h.msg); err != nil {
		return nil, err
	}
	db.iterators.Add(1)
	u := &Updates{c: (*C.ravel_updates)(h.handle), db: db}
	u.cleanup = runtime.AddCleanup(u, func(r updatesRef) {
		C.ravel_updates_free(r.c)
		r.count.Add(-1)
	}, updatesRef{c: u.c, count: &db.iterators})
	return u, nil
}

// Next moves to the next committed batch and reports whether there is
// one.  False with Err nil: nothing more for now (call again later).
func (u *Updates) Next() bool {
	defer runtime.KeepAlive(u)
	u.batch = nil
	if u.c == nil {
		u.err = closedError("updates next", "updates iterator")
		return false
	}
	if !u.db.gate.enter() {
		u.err = closedError("updates next", "database "+u.db.path)
		return false
	}
	defer u.db.gate.leave()
	s := C.shim_updates_next(u.c)
	if s.rc == C.RAVEL_NOTFOUND {
		u.err = nil
		return false
	}
	if err := statusError("updates next", s); err != nil {
		u.err = err
		return false
	}
	u.err = nil
	var n C.size_t
	p := C.ravel_batch_data(C.ravel_updates_batch(u.c), &n)
	h := C.shim_batch_from_data(p, n)
	if err := callError("updates next", h.rc, h.msg); err != nil {
		u.err = err
		return false
	}
	u.batch = wrapBatch((*C.ravel_batch)(h.handle))
	return true
}

// Batch returns the batch Next moved to (nil if none): a copy the caller
// owns, to apply with DB.Write, read with Ops, or send with Data; close it
// when done.
func (u *Updates) Batch() *Batch {
	return u.batch
}

// Sequence returns the sequence of the batch Next moved to (0 if none).
func (u *Updates) Sequence() uint64 {
	if u.batch == nil {
		return 0
	}
	return u.batch.Sequence()
}

// LastSequence returns the last sequence the feed has passed: the last
// batch's last one, or more when it passed records the feed does not show
// (a transaction's prepare, a rollback); 0 before the first.  A follower
// that stops resumes with UpdatesSince(LastSequence() + 1).
func (u *Updates) LastSequence() uint64 {
	defer runtime.KeepAlive(u)
	if u.c == nil {
		return 0
	}
	return uint64(C.ravel_updates_last_sequence(u.c))
}

// Err returns the error that ended the last Next, or nil if it ended
// because the feed is caught up.
func (u *Updates) Err() error {
	return u.err
}

// Close frees the feed.  A second Close returns an error matching
// ErrClosed.
func (u *Updates) Close() error {
	if u.c == nil {
		return closedError("updates close", "updates iterator")
	}
	u.cleanup.Stop()
	u.db.iterators.Add(-1)
	C.ravel_updates_free(u.c)
	u.c = nil
	u.batch = nil
	return nil
}
