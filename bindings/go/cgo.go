// cgo.go -- the package's link to the C library: the pkg-config line, the
// cgo directives for the shims of shim.h, and the helpers that hand Go
// memory to C.
//
// Every ravel call that can fail goes through a shim (shim.c) which reads
// ravel's per-thread error message inside the same C call; nothing in this
// package calls ravel_errmsg or ravel_errmsg_r from Go.

package ravel

/*
#cgo pkg-config: ravel

// The shims keep no pointer they are given and never call back into Go, so
// Go memory passed to them (keys, values, read buffers) may stay on the
// stack.
#cgo noescape shim_put
#cgo noescape shim_delete
#cgo noescape shim_get_copy
#cgo noescape shim_batch_put
#cgo noescape shim_batch_delete
#cgo noescape shim_compact_range
#cgo noescape shim_iter_move
#cgo noescape shim_iter_new
#cgo noescape shim_multi_get
#cgo noescape shim_free_values
#cgo noescape shim_txn_get
#cgo noescape shim_txn_put
#cgo noescape shim_txn_delete
#cgo noescape shim_txn_iter_new
#cgo nocallback shim_put
#cgo nocallback shim_delete
#cgo nocallback shim_get_copy
#cgo nocallback shim_write
#cgo nocallback shim_batch_put
#cgo nocallback shim_batch_delete
#cgo nocallback shim_iter_move
#cgo nocallback shim_iter_new
#cgo nocallback shim_multi_get
#cgo nocallback shim_free_values
#cgo nocallback shim_txn_get
#cgo nocallback shim_txn_put
#cgo nocallback shim_txn_delete
#cgo nocallback shim_txn_iter_new

#include "shim.h"
*/
import "C"

import "unsafe"

// bytesPtr is the address of b's first byte for C, or nil for an empty
// slice (ravel accepts NULL with a zero length).  C only reads or writes
// the bytes during the call: no Go pointer is kept.
func bytesPtr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(unsafe.SliceData(b))
}

// cSize is len(b) as a size_t.
func cSize(b []byte) C.size_t {
	return C.size_t(len(b))
}

// cBytes is a view (not a copy) of n bytes of C memory at p.  The view is
// only good while the C memory is: it is never returned to callers.
func cBytes(p unsafe.Pointer, n C.size_t) []byte {
	if p == nil || n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(p), int(n))
}

// takeCString returns the C string s as a Go string and frees it with
// ravel_free (it was allocated by ravel or by a shim with malloc).
func takeCString(s unsafe.Pointer, n C.size_t) string {
	if s == nil {
		return ""
	}
	out := C.GoStringN((*C.char)(s), C.int(n))
	C.ravel_free(s)
	return out
}
