// Package ravel is the Go binding of ravel, an embedded key-value storage
// engine written in C (an LSM tree: write-ahead log, memtable, sorted
// table files, compaction).  It is a thin layer over the C API of
// include/ravel.h, built with cgo and linked through pkg-config
// ("#cgo pkg-config: ravel").
//
// Open a database with Open and Options; read and write with DB.Put,
// DB.Get, DB.Delete and DB.Write (a Batch); read a fixed state with a
// Snapshot or an Iterator; read, decide and write atomically in a Txn
// (DB.Begin, or DB.Update, which retries on ErrConflict, ErrTimedOut and
// ErrDeadlock); and close everything you open with its Close method: DB,
// Snapshot, Iterator, Txn, Batch, Cache and WriteController are each an
// io.Closer.
//
// # Errors
//
// A failed call returns an *Error holding the operation, the result code
// (Code) and ravel's detailed message.  The codes are also sentinel
// errors: errors.Is(err, ravel.ErrCorrupt) and the like work, and
// errors.Is(err, ravel.ErrClosed) tells a use after Close.  DB.Get of an
// absent key returns ErrNotFound itself.
//
// ravel keeps its message per OS thread, and a goroutine can move to
// another OS thread between two cgo calls.  So this package never reads
// the message in a call of its own: every ravel call that can fail goes
// through a small C function (shim.c) that makes the call and, on
// failure, copies the message before returning.  The message of an error
// is therefore always the failing call's own, whatever other goroutines
// fail at the same time.
//
// # Concurrency
//
// DB, Snapshot, Cache and WriteController are safe for concurrent use;
// their Close waits for the calls in progress, and later calls return an
// error matching ErrClosed.  Batch, Iterator, Txn and Options are used by
// one goroutine at a time, like most Go values.
//
// DB.Close refuses (ErrInvalid, naming how many) while snapshots,
// iterators or transactions of the database are still open, and leaves
// the database open: close them and call Close again.
package ravel
