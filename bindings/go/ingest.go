// ingest.go -- bulk ingest: SSTWriter builds table files outside any
// database, DB.Ingest adds them to one atomically.

package ravel

/*
#include "shim_ops.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// SSTWriter writes a table file for DB.Ingest, outside any database.
// Keys are added in strictly increasing bytewise order, each once, as puts
// or deletes.  Finish completes the file and makes it durable; Close
// abandons a writer not finished (its file is removed).  An SSTWriter is
// not safe for concurrent use: one goroutine at a time.  (A finalizer
// frees a forgotten one, as a safety net only.)
type SSTWriter struct {
	c       *C.ravel_sst_writer
	path    string
	cleanup runtime.Cleanup
}

// NewSSTWriter creates the file path (ErrInvalid if it exists) and a
// writer for it.  Its blocks are laid out as opts says (block_size,
// compression, bloom_bits_per_key; nil: the defaults).
func NewSSTWriter(path string, opts *Options) (*SSTWriter, error) {
	cpath, err := cPath("sst writer open", path)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cpath))
	copt, err := opts.build("sst writer open")
	if err != nil {
		return nil, err
	}
	defer C.ravel_options_free(copt)
	h := C.shim_sst_writer_open(cpath, copt)
	if err := callError("sst writer open", h.rc, h.msg); err != nil {
		return nil, err
	}
	w := &SSTWriter{c: (*C.ravel_sst_writer)(h.handle), path: path}
	w.cleanup = runtime.AddCleanup(w, func(p *C.ravel_sst_writer) {
		C.ravel_sst_writer_free(p)
	}, w.c)
	return w, nil
}

// Put adds a put of key with value.  A key not greater than the one added
// before it is ErrInvalid, and nothing is added.
func (w *SSTWriter) Put(key, value []byte) error {
	defer runtime.KeepAlive(w)
	if w.c == nil {
		return closedError("sst writer put", "sst writer "+w.path)
	}
	return statusError("sst writer put", C.shim_sst_writer_put(w.c,
		bytesPtr(key), cSize(key), bytesPtr(value), cSize(value)))
}

// Delete adds a delete of key (it hides the key's older values once
// ingested), in the same order as puts.
func (w *SSTWriter) Delete(key []byte) error {
	defer runtime.KeepAlive(w)
	if w.c == nil {
		return closedError("sst writer delete", "sst writer "+w.path)
	}
	return statusError("sst writer delete", C.shim_sst_writer_delete(w.c,
		bytesPtr(key), cSize(key)))
}

// Finish writes the rest of the file, makes it durable, frees the writer
// and returns the number of keys added.  A writer given no key is
// ErrInvalid (its file is removed).  After a failed Finish, Close the
// writer.
func (w *SSTWriter) Finish() (uint64, error) {
	defer runtime.KeepAlive(w)
	if w.c == nil {
		return 0, closedError("sst writer finish", "sst writer "+w.path)
	}
	v := C.shim_sst_writer_finish(w.c)
	if err := callError("sst writer finish", v.rc, v.msg); err != nil {
		return 0, err
	}
	w.free()
	return uint64(v.value), nil
}

// Close frees the writer; a file it did not finish is removed.  Close
// after Finish, or a second Close, returns an error matching ErrClosed.
func (w *SSTWriter) Close() error {
	if w.c == nil {
		return closedError("sst writer close", "sst writer "+w.path)
	}
	w.free()
	return nil
}

func (w *SSTWriter) free() {
	w.cleanup.Stop()
	C.ravel_sst_writer_free(w.c)
	w.c = nil
}

// IngestFlags change how Ingest adds files.
type IngestFlags int

// IngestMove removes the source files once the ingest is durable, and
// hard-links them where they can go in as they are (without it they are
// copied and kept).
const IngestMove IngestFlags = C.RAVEL_INGEST_MOVE

// Ingest adds the table files paths (written by an SSTWriter) to the
// database atomically: every reader sees all of them or none, and their
// keys replace every value written before the call.  Overlapping files,
// no files, unsorted or damaged ones are refused (ErrInvalid, ErrCorrupt,
// ErrNotFound naming the file) with nothing ingested.
func (db *DB) Ingest(paths []string, flags ...IngestFlags) error {
	cpaths := make([]*C.char, len(paths))
	defer func() {
		for _, p := range cpaths {
			C.free(unsafe.Pointer(p))
		}
	}()
	for i, p := range paths {
		c, err := cPath("ingest", p)
		if err != nil {
			return err
		}
		cpaths[i] = c
	}
	var f IngestFlags
	for _, x := range flags {
		f |= x
	}
	if !db.gate.enter() {
		return closedError("ingest", "database "+db.path)
	}
	defer db.gate.leave()
	// the array of C pointers is itself C memory: cgo forbids passing Go
	// memory holding pointers
	n := len(cpaths)
	arr := (**C.char)(C.calloc(C.size_t(max(n, 1)), C.size_t(unsafe.Sizeof(uintptr(0)))))
	if arr == nil {
		return &Error{Op: "ingest", Code: ErrNoMem, Msg: "no memory for the paths"}
	}
	defer C.free(unsafe.Pointer(arr))
	copy(unsafe.Slice(arr, max(n, 1)), cpaths)
	return statusError("ingest", C.shim_ingest(db.c, arr, C.size_t(n),
		C.int(f)))
}
