// db.go -- DB: opening and closing a database, single writes, point reads,
// and the maintenance calls (properties, flushes, compaction, verify); and
// Destroy, deleting a closed database.

package ravel

/*
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"strings"
	"sync/atomic"
	"unsafe"
)

// DB is an open database.  Its methods are safe for concurrent use by many
// goroutines.  Close it when done: it holds the directory's LOCK and its
// data until then (there is no finalizer for a DB).
type DB struct {
	gate gate
	c    *C.ravel_db
	path string

	// snapshots, iterators and transactions not yet closed, counted here
	// so that Close can refuse to free the database under them
	snapshots atomic.Int64
	iterators atomic.Int64
	txns      atomic.Int64
}

// WriteFlags change how Put, Delete and Write write.  Several may be
// given; they are combined.
type WriteFlags int

const (
	// Sync returns only once the write is on stable storage: it survives
	// kill -9 and power loss.
	Sync WriteFlags = C.RAVEL_SYNC
	// NoWAL skips the write-ahead log: the write is lost by a crash,
	// kept by a flush (Flush, Close).
	NoWAL WriteFlags = C.RAVEL_NO_WAL
	// NoSlowdown makes a write the write controller would delay fail at
	// once with ErrBusy instead, with nothing of it written.
	NoSlowdown WriteFlags = C.RAVEL_NO_SLOWDOWN
)

// FlushFlags change how Flush works.
type FlushFlags int

// FlushNoWait starts the flush and returns without waiting for it.
const FlushNoWait FlushFlags = C.RAVEL_FLUSH_NO_WAIT

// LibVersion returns the version of the linked ravel library, such as
// "0.1.0".
func LibVersion() string {
	return C.GoString(C.ravel_libversion())
}

// LibVersionNumber returns the linked library's version as
// major*1000000 + minor*1000 + patch.
func LibVersionNumber() int {
	return int(C.ravel_libversion_number())
}

// Open opens the database in the directory path with the options opts.
// With nil opts (the defaults) the database must already exist: set
// create_if_missing to make it.  Open fails with ErrLocked if path is open
// elsewhere (in this process too), ErrCorrupt if recovery finds damage the
// wal_recovery_mode does not tolerate, and ErrInvalid if path holds no
// database and create_if_missing is false or an option is inconsistent.
func Open(path string, opts *Options) (*DB, error) {
	copt, err := opts.build("open")
	if err != nil {
		return nil, err
	}
	defer C.ravel_options_free(copt)
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	h := C.shim_open(cpath, copt)
	if err := callError("open", h.rc, h.msg); err != nil {
		return nil, err
	}
	return &DB{c: (*C.ravel_db)(h.handle), path: path}, nil
}

// Destroy deletes the database in the directory path, as RocksDB's
// DestroyDB: its files (CURRENT, IDENTITY, LOG, LOG.old, MANIFEST-*,
// wal-*.log, *.sst, their .tmp files, lost/ and what it holds) and its
// LOCK, then path itself if nothing else is left in it.  Files of other
// names stay, and so does path with them.
//
// Destroy fails with ErrLocked, deleting nothing, if the database is open,
// in this process (a DB not yet closed) or another.  A path that does not
// exist is not an error.  An ErrIO error names the file that could not be
// removed (the files before it are gone).  A path containing a NUL byte is
// ErrInvalid: C would see only the part before it.
func Destroy(path string) error {
	if strings.IndexByte(path, 0) >= 0 {
		return misuseError("destroy", "path %q contains a NUL byte", path)
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	return statusError("destroy", C.shim_destroy(cpath))
}

// Path returns the directory the database was opened in.
func (db *DB) Path() string {
	return db.path
}

// Close closes the database: it waits for the calls in progress on it,
// flushes the memtables when worthwhile, makes the WAL durable and
// releases the directory's LOCK.
//
// Every Snapshot, Iterator and Txn of the database must be closed (a Txn
// committed, rolled back or closed) first.  If any are still open, Close
// does nothing but return an *Error with Code ErrInvalid saying how many;
// the database stays open and usable, and Close may be called again once
// they are closed.  (Closing them on the caller's behalf could free an
// iterator another goroutine is reading.)
//
// An ErrIO error means the final sync failed; the database is closed all
// the same.  Calls after Close, and a second Close, return an error
// matching ErrClosed.
func (db *DB) Close() error {
	if !db.gate.lock() {
		return closedError("close", "database "+db.path)
	}
	snaps, iters, txns := db.snapshots.Load(), db.iterators.Load(), db.txns.Load()
	if snaps > 0 || iters > 0 || txns > 0 {
		db.gate.unlock(false)
		return misuseError("close", "database %s still has %d snapshot(s), "+
			"%d iterator(s) and %d transaction(s) open; close them first",
			db.path, snaps, iters, txns)
	}
	s := C.shim_close(db.c)
	if s.rc == C.RAVEL_INVALID {
		// ravel_close's one failure that leaves the database open
		db.gate.unlock(false)
		return statusError("close", s)
	}
	db.c = nil
	db.gate.unlock(true)
	return statusError("close", s)
}

// flagsOf combines write flags.
func flagsOf(flags []WriteFlags) C.int {
	var f WriteFlags
	for _, x := range flags {
		f |= x
	}
	return C.int(f)
}

// Put sets key to value.  Keys are at most 1 MiB, values 256 MiB; empty
// keys and values are allowed.
func (db *DB) Put(key, value []byte, flags ...WriteFlags) error {
	if !db.gate.enter() {
		return closedError("put", "database "+db.path)
	}
	defer db.gate.leave()
	return statusError("put", C.shim_put(db.c, flagsOf(flags),
		bytesPtr(key), cSize(key), bytesPtr(value), cSize(value)))
}

// Delete removes key.  Deleting an absent key succeeds.
func (db *DB) Delete(key []byte, flags ...WriteFlags) error {
	if !db.gate.enter() {
		return closedError("delete", "database "+db.path)
	}
	defer db.gate.leave()
	return statusError("delete", C.shim_delete(db.c, flagsOf(flags),
		bytesPtr(key), cSize(key)))
}

// Write applies the batch b atomically: every reader sees all of it or
// none of it.  The batch is not changed and may be written again.  After an ErrIO
// or ErrNoMem failure the database refuses writes (ErrReadOnly) until it
// is reopened.
func (db *DB) Write(b *Batch, flags ...WriteFlags) error {
	if b == nil || b.c == nil {
		return closedError("write", "batch")
	}
	if !db.gate.enter() {
		return closedError("write", "database "+db.path)
	}
	defer db.gate.leave()
	defer runtime.KeepAlive(b) // its cleanup must not free it mid-write (batch.go)
	return statusError("write", C.shim_write(db.c, flagsOf(flags), b.c))
}

// Get returns a copy of the value of key.  An absent (or deleted) key returns
// the error ErrNotFound itself (err == ravel.ErrNotFound, and
// errors.Is(err, ravel.ErrNotFound)); it is not an *Error, since ravel
// has no message for it.  An empty value is a non-nil empty slice.
func (db *DB) Get(key []byte) ([]byte, error) {
	if !db.gate.enter() {
		return nil, closedError("get", "database "+db.path)
	}
	defer db.gate.leave()
	return getValue(db.c, nil, key)
}

// AppendGet appends the value of key to dst and returns the extended
// slice, as the strconv.Append functions do: reading into dst[:0] again
// and again reads values without allocating.  Its errors are those of Get;
// dst is then returned unchanged.
func (db *DB) AppendGet(dst, key []byte) ([]byte, error) {
	if !db.gate.enter() {
		return dst, closedError("get", "database "+db.path)
	}
	defer db.gate.leave()
	return appendValue(db.c, nil, dst, key)
}

// MultiGet returns copies of the values of keys, in their order, all read
// from one state of the database: a batch written meanwhile is seen whole
// or not at all, which Get called for each key does not promise.  An
// absent (or deleted) key has a nil value; an empty value is a non-nil
// empty slice.  Keys may repeat and come in any order.  It costs about
// what as many calls of Get cost; its point is the one state.  An error
// (a key longer than 1 MiB is ErrInvalid, a damaged table file ErrCorrupt)
// returns no values.
func (db *DB) MultiGet(keys [][]byte) ([][]byte, error) {
	if !db.gate.enter() {
		return nil, closedError("multi get", "database "+db.path)
	}
	defer db.gate.leave()
	return multiGetValues(db.c, nil, keys)
}

// smallValue is the size of the stack buffer Get has ravel copy a value
// into; a longer value is copied from ravel's allocation.  Either way the
// key is looked up once.
const smallValue = 512

// getValue reads key as of snap (nil: the latest state) into a new slice
// of the value's size, with one lookup whatever the size.
func getValue(cdb *C.ravel_db, snap *C.ravel_snapshot, key []byte) ([]byte, error) {
	var small [smallValue]byte
	v := C.shim_get_copy(cdb, snap, bytesPtr(key), cSize(key),
		unsafe.Pointer(&small[0]), smallValue, 0)
	if err := getError(v); err != nil {
		return nil, err
	}
	return ownValue(v, small[:]), nil
}

// ownValue is a new slice holding the value a shim_get_copy or
// shim_txn_get found: copied from buf when it fit there, else from
// ravel's allocation, which is then freed.  An empty value is a non-nil
// empty slice.
func ownValue(v C.shim_value, buf []byte) []byte {
	out := make([]byte, int(v.len))
	if v.data == nil {
		copy(out, buf[:v.len])
		return out
	}
	copy(out, cBytes(v.data, v.len))
	C.ravel_free(v.data)
	return out
}

// multiGetValues reads keys as of snap (nil: the latest state, taken
// once) with one ravel_multi_get.  The keys' bytes are pinned, as C reads
// the array of their addresses; the values ravel allocated are copied
// into Go slices and freed.
func multiGetValues(cdb *C.ravel_db, snap *C.ravel_snapshot, keys [][]byte) ([][]byte, error) {
	n := len(keys)
	if n == 0 {
		return [][]byte{}, nil
	}
	var pinner runtime.Pinner
	defer pinner.Unpin()
	ptrs := make([]unsafe.Pointer, n)
	klens := make([]C.size_t, n)
	for i, k := range keys {
		if p := bytesPtr(k); p != nil {
			pinner.Pin(p)
			ptrs[i] = p
		}
		klens[i] = cSize(k)
	}
	vals := make([]unsafe.Pointer, n)
	vlens := make([]C.size_t, n)
	rcs := make([]C.int, n)
	s := C.shim_multi_get(cdb, snap, C.size_t(n),
		&ptrs[0], &klens[0],
		&vals[0], &vlens[0], &rcs[0])
	if err := statusError("multi get", s); err != nil {
		return nil, err // ravel left no value to free
	}
	out := make([][]byte, n)
	for i, v := range vals {
		if rcs[i] == C.RAVEL_OK {
			out[i] = append(make([]byte, 0, int(vlens[i])), cBytes(v, vlens[i])...)
		}
	}
	C.shim_free_values(&vals[0], C.size_t(n))
	return out, nil
}

// appendValue appends the value of key as of snap to dst.  The value is
// read into dst's spare capacity; one too long for it is read again with
// the allocating call (a second lookup, once: dst has then grown), and
// with no spare capacity it is read once with that call.
func appendValue(cdb *C.ravel_db, snap *C.ravel_snapshot, dst, key []byte) ([]byte, error) {
	n := len(dst)
	room := dst[n:cap(dst)]
	v := C.shim_get_copy(cdb, snap, bytesPtr(key), cSize(key),
		bytesPtr(room), cSize(room), 1)
	if err := getError(v); err != nil {
		return dst[:n], err
	}
	if v.data == nil {
		return dst[:n+int(v.len)], nil
	}
	dst = append(dst[:n], cBytes(v.data, v.len)...)
	C.ravel_free(v.data)
	return dst, nil
}

// getError is the error of a get: the bare ErrNotFound for an absent key.
func getError(v C.shim_value) error {
	if v.rc == C.RAVEL_NOTFOUND {
		return ErrNotFound
	}
	return callError("get", v.rc, v.msg)
}

// Property returns ravel's text about the database for name, such as
// "ravel.stats", "ravel.estimate-num-keys" or "ravel.num-files-at-level0"
// (the list is in ravel.h, above ravel_property).  An unknown name is an
// *Error with Code ErrNotFound whose message lists the known names.
func (db *DB) Property(name string) (string, error) {
	if !db.gate.enter() {
		return "", closedError("property", "database "+db.path)
	}
	defer db.gate.leave()
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	v := C.shim_property(db.c, cname)
	if err := callError("property", v.rc, v.msg); err != nil {
		return "", err
	}
	return takeCString(v.data, v.len), nil
}

// FlushWAL makes the WAL reach the operating system and, if sync is
// true, stable storage: once it returns nil, every write acknowledged
// before the call survives kill -9 (and power loss, with sync).  It matters most
// with manual_wal_flush=true.
func (db *DB) FlushWAL(sync bool) error {
	if !db.gate.enter() {
		return closedError("flush wal", "database "+db.path)
	}
	defer db.gate.leave()
	csync := C.int(0)
	if sync {
		csync = 1
	}
	return statusError("flush wal", C.shim_flush_wal(db.c, csync))
}

// Flush writes the memtables to table files and, without FlushNoWait,
// waits until they are on stable storage and in the manifest.
func (db *DB) Flush(flags ...FlushFlags) error {
	if !db.gate.enter() {
		return closedError("flush", "database "+db.path)
	}
	defer db.gate.leave()
	var f FlushFlags
	for _, x := range flags {
		f |= x
	}
	return statusError("flush", C.shim_flush(db.c, C.int(f)))
}

// CompactRange compacts the keys from begin to end, both included, down
// to the last level holding data, and returns when it is done.  A nil
// begin means from the first key, a nil end to the last; an empty non-nil
// slice is the empty key.
func (db *DB) CompactRange(begin, end []byte) error {
	if !db.gate.enter() {
		return closedError("compact range", "database "+db.path)
	}
	defer db.gate.leave()
	return statusError("compact range", C.shim_compact_range(db.c,
		bytesPtr(begin), cSize(begin), boolInt(begin != nil),
		bytesPtr(end), cSize(end), boolInt(end != nil)))
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// Verify reads every block of every table file and checks it: nil, or an
// error with Code ErrCorrupt naming the first damaged file and offset
// (ErrIO if a file cannot be read).
func (db *DB) Verify() error {
	if !db.gate.enter() {
		return closedError("verify", "database "+db.path)
	}
	defer db.gate.leave()
	return statusError("verify", C.shim_verify(db.c))
}
