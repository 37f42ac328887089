// errors.go -- how ravel's result codes and messages become Go errors.
//
// Owns: Code (a result code, itself an error so that it can be matched
// with errors.Is), the sentinel codes ErrNotFound ... ErrReadOnly, the
// *Error type carrying a failed call's code and ravel's detailed message,
// and ErrClosed for a handle used after Close.

package ravel

/*
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// Code is one of ravel's result codes.  The codes below are also the
// sentinel errors of this package: every error from a ravel call wraps
// its code, so
//
//	if errors.Is(err, ravel.ErrNotFound) { ... }
//
// works whatever the call.  Use errors.As with an *Error to read the
// detailed message.
type Code int

// The result codes of ravel.h, as sentinel errors.
const (
	ErrNotFound Code = C.RAVEL_NOTFOUND // the key (or property) is absent
	ErrInvalid  Code = C.RAVEL_INVALID  // bad argument, bad option, or misuse
	ErrIO       Code = C.RAVEL_IOERR    // an I/O call failed
	ErrCorrupt  Code = C.RAVEL_CORRUPT  // a file failed a checksum or format check
	ErrNoMem    Code = C.RAVEL_NOMEM    // an allocation failed
	ErrBusy     Code = C.RAVEL_BUSY     // a NoSlowdown write would have had to wait
	ErrLocked   Code = C.RAVEL_LOCKED   // the database directory is open elsewhere
	ErrReadOnly Code = C.RAVEL_READONLY // writes are refused (read_only, or after a failure)

	// ErrConflict: a key the transaction read for update or wrote was
	// written by another after its snapshot.  Retriable.
	ErrConflict Code = C.RAVEL_CONFLICT
	// ErrTimedOut: a pessimistic transaction's lock wait passed the option
	// txn_lock_timeout; the message names the key and the holder.
	// Retriable.
	ErrTimedOut Code = C.RAVEL_TIMEDOUT
	// ErrDeadlock: the transaction was the youngest in a cycle of lock
	// waits and was chosen to fail; the message names the cycle.
	// Retriable.
	ErrDeadlock Code = C.RAVEL_DEADLOCK
	// ErrExpired: the change feed's sequence is no longer in the WAL
	// (flushed and deleted, or past the retention options
	// wal_ttl_seconds and wal_size_limit_mb); the message names the
	// oldest available.  Start the follower again from a checkpoint.
	ErrExpired Code = C.RAVEL_EXPIRED
)

// Retriable reports whether a transaction that failed with the code may
// succeed if run again: ErrConflict, ErrTimedOut and ErrDeadlock.
func (c Code) Retriable() bool {
	return c == ErrConflict || c == ErrTimedOut || c == ErrDeadlock
}

// IsRetriable reports whether err (or an error it wraps) is ErrConflict,
// ErrTimedOut or ErrDeadlock: roll the transaction back and run it again,
// which DB.Update does.
func IsRetriable(err error) bool {
	var c Code
	return errors.As(err, &c) && c.Retriable()
}

// String returns ravel's static description of the code ("not found", ...).
func (c Code) String() string {
	return C.GoString(C.ravel_errstr(C.int(c)))
}

// Error returns "ravel: " and the code's description.
func (c Code) Error() string {
	return "ravel: " + c.String()
}

// ErrClosed is matched (errors.Is) by the error of any call on a handle
// (database, snapshot, iterator, batch, cache, write controller) after its
// Close.  Such errors are *Error values with Code ErrInvalid.
var ErrClosed = errors.New("ravel: use of a closed handle")

// Error is a failed ravel call: which call, its result code, and ravel's
// detailed message for that failure (naming the file, option, key size,
// errno ... that was wrong).  The message is read inside the same C call
// that failed, so it is always this call's own, whichever goroutines fail
// at the same time.
//
// Error unwraps to its Code, so errors.Is(err, ravel.ErrIO) works.
type Error struct {
	Op   string // the operation: "open", "put", "options set", ...
	Code Code   // the result code
	Msg  string // ravel's message (or the binding's, for misuse it detects)

	closed bool // a use after Close: matches ErrClosed
}

// Error returns "ravel: ", the operation and ravel's message, or the
// code's description when there is no message.
func (e *Error) Error() string {
	msg := e.Msg
	if msg == "" {
		msg = e.Code.String()
	}
	return "ravel: " + e.Op + ": " + msg
}

// Unwrap returns the result code.
func (e *Error) Unwrap() error {
	return e.Code
}

// Is reports whether e is a use after Close when target is ErrClosed (the
// code is matched through Unwrap).
func (e *Error) Is(target error) bool {
	return target == ErrClosed && e.closed
}

// callError turns a shim's result into an error (nil for RAVEL_OK), taking
// and freeing the message the shim copied.
func callError(op string, rc C.int, msg *C.char) error {
	if rc == C.RAVEL_OK {
		return nil
	}
	e := &Error{Op: op, Code: Code(rc)}
	if msg != nil {
		e.Msg = C.GoString(msg)
		C.free(unsafe.Pointer(msg))
	}
	return e
}

// statusError is callError for a shim_status.
func statusError(op string, s C.shim_status) error {
	return callError(op, s.rc, s.msg)
}

// closedError is the error of the operation op on a handle (what)
// already closed.
func closedError(op, what string) error {
	return &Error{Op: op, Code: ErrInvalid, Msg: what + " is closed",
		closed: true}
}

// misuseError is an ErrInvalid found by the binding itself.
func misuseError(op, format string, args ...any) error {
	return &Error{Op: op, Code: ErrInvalid, Msg: fmt.Sprintf(format, args...)}
}
