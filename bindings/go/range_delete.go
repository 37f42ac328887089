// range_delete.go -- range deletes: DB.DeleteRange and Batch.DeleteRange,
// RocksDB's DeleteRange (ravel_delete_range in ravel.h).

package ravel

/*
#include "shim_range.h"
*/
import "C"

import "runtime"

// OpDeleteRange is a range delete in a batch read back (Batch.Ops, the
// change feed): Key is its begin, Value its end (excluded).
const OpDeleteRange OpKind = C.RAVEL_OP_DELETE_RANGE

// DeleteRange deletes every key k with begin <= k < end (bytewise) as one
// operation, at the write's sequence: a snapshot taken before it still
// sees the keys.  begin after end is ErrInvalid; begin equal to end is an
// empty range, a no-op.  Refused (ErrInvalid) once a transaction has
// begun on the database: the lock table locks keys, not ranges.
func (db *DB) DeleteRange(begin, end []byte, flags ...WriteFlags) error {
	if !db.gate.enter() {
		return closedError("delete range", "database "+db.path)
	}
	defer db.gate.leave()
	return statusError("delete range", C.shim_delete_range(db.c,
		flagsOf(flags), bytesPtr(begin), cSize(begin), bytesPtr(end),
		cSize(end)))
}

// DeleteRange adds a range delete of [begin, end) to the batch, as
// DB.DeleteRange writes it.
func (b *Batch) DeleteRange(begin, end []byte) error {
	defer runtime.KeepAlive(b)
	if b.c == nil {
		return closedError("batch delete range", "batch")
	}
	return statusError("batch delete range",
		C.shim_batch_delete_range(b.c, bytesPtr(begin), cSize(begin),
			bytesPtr(end), cSize(end)))
}
