// batch.go -- Batch: puts and deletes applied together by DB.Write.

package ravel

/*
#include "shim.h"
*/
import "C"

import "runtime"

// Batch collects puts and deletes that DB.Write applies atomically.  The
// keys and values are copied into the batch.  A Batch is not safe for
// concurrent use: one goroutine at a time (as with a bytes.Buffer).  Close
// it when done (a finalizer frees a forgotten one, as a safety net only).
type Batch struct {
	c       *C.ravel_batch
	cleanup runtime.Cleanup
}

// NewBatch returns an empty batch.  It panics if memory runs out, as a Go
// allocation would.
func NewBatch() *Batch {
	h := C.shim_batch_new()
	if err := callError("batch new", h.rc, h.msg); err != nil {
		panic(err)
	}
	b := &Batch{c: (*C.ravel_batch)(h.handle)}
	b.cleanup = runtime.AddCleanup(b, func(p *C.ravel_batch) {
		C.ravel_batch_free(p)
	}, b.c)
	return b
}

// Every method that hands b.c to C keeps b alive until the call returns
// (runtime.KeepAlive): otherwise, when b is not used after the call, the
// collector may find b unreachable during it and its cleanup free the
// batch C is reading.

// Put adds "set key to value" to the batch.
func (b *Batch) Put(key, value []byte) error {
	defer runtime.KeepAlive(b)
	if b.c == nil {
		return closedError("batch put", "batch")
	}
	return statusError("batch put", C.shim_batch_put(b.c, bytesPtr(key),
		cSize(key), bytesPtr(value), cSize(value)))
}

// Delete adds "remove key" to the batch.
func (b *Batch) Delete(key []byte) error {
	defer runtime.KeepAlive(b)
	if b.c == nil {
		return closedError("batch delete", "batch")
	}
	return statusError("batch delete", C.shim_batch_delete(b.c,
		bytesPtr(key), cSize(key)))
}

// Clear empties the batch, keeping its memory for reuse.
func (b *Batch) Clear() error {
	defer runtime.KeepAlive(b)
	if b.c == nil {
		return closedError("batch clear", "batch")
	}
	return statusError("batch clear", C.shim_batch_clear(b.c))
}

// Count returns the number of puts and deletes in the batch (0 after
// Close).
func (b *Batch) Count() int {
	defer runtime.KeepAlive(b)
	if b.c == nil {
		return 0
	}
	return int(C.ravel_batch_count(b.c))
}

// Close frees the batch.  A second Close returns an error matching
// ErrClosed.
func (b *Batch) Close() error {
	if b.c == nil {
		return closedError("batch close", "batch")
	}
	b.cleanup.Stop()
	C.ravel_batch_free(b.c)
	b.c = nil
	return nil
}
