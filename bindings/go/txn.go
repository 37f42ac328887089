// txn.go -- Txn: transactions (ravel.h "transactions"): reads through the
// transaction's snapshot and own writes, writes, iterators, savepoints,
// two-phase commit, commit and rollback; and DB.Begin, DB.Update and
// DB.UpdateWith (retrying on the retriable errors), DB.View, DB.RecoverTxn
// and DB.PreparedTxns.

package ravel

/*
#include "shim.h"
*/
import "C"

import (
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"
)

// TxnOptions choose how a transaction runs.  The zero value (or nil) is a
// pessimistic transaction whose commit does not wait for stable storage.
type TxnOptions struct {
	// Optimistic takes no locks: the keys read with GetForUpdate or
	// written are checked at commit instead, which fails with ErrConflict
	// if another wrote one after the transaction's snapshot.  Without
	// it (pessimistic), GetForUpdate and every write lock the key at once
	// (waiting up to the option txn_lock_timeout) and check it then.
	Optimistic bool
	// Sync makes Commit (and Prepare, and the rollback of a prepared
	// transaction) return only once durable: it survives kill -9 and
	// power loss.
	Sync bool
	// MaxAttempts bounds how many times UpdateWith runs its function in
	// all (0: 10).  Begin ignores it.
	MaxAttempts int
}

// flags is the ravel_txn_begin flags of o (nil: none).
func (o *TxnOptions) flags() C.int {
	var f C.int
	if o != nil && o.Optimistic {
		f |= C.RAVEL_TXN_OPTIMISTIC
	}
	if o != nil && o.Sync {
		f |= C.RAVEL_SYNC
	}
	return f
}

// txnState is where a Txn stands.
type txnState int

const (
	txnOpen       txnState = iota // reads and writes allowed
	txnPrepared                   // reads, Commit and Rollback allowed
	txnCommitted                  // over
	txnRolledBack                 // over
	txnClosed                     // freed unfinished by Close
)

var txnStateNames = [...]string{"open", "prepared", "committed",
	"rolled back", "closed"}

// Txn is a transaction: its reads see the database as of its begin plus
// its own writes, and its writes become visible to others together, at
// Commit, and only if no key it read with GetForUpdate or wrote was
// written by another after its snapshot (snapshot isolation: lost updates
// are impossible; write skew is possible for keys only read with Get).
//
// A Txn must not be used from two goroutines at once, nor its iterators
// while it is used: one goroutine at a time, as ravel requires (a second
// goroutine calling it during a call gets an ErrInvalid error rather than
// a crash, but nothing makes such use correct).  Many transactions may run
// at once in many goroutines.
//
// End every Txn with Commit, Rollback or Close: DB.Close refuses to close
// a database with transactions still open, and a pessimistic transaction
// holds its keys' locks until it ends.  Close after Commit or Rollback
// does nothing, so
//
//	tx, err := db.Begin(nil)
//	if err != nil {
//		return err
//	}
//	defer tx.Close()
//	...
//	return tx.Commit()
//
// is the usual shape; DB.Update does it, with retries.
type Txn struct {
	db       *DB
	c        *C.ravel_txn
	res      *txnResources
	state    txnState
	name     string
	inUse    atomic.Bool
	managed  string // "Update" or "View" for theirs: they end it
	readOnly bool   // View's: no writes
	iters    map[*Iterator]struct{}
	cleanup  runtime.Cleanup
}

// txnResources is what the safety-net cleanup frees for a Txn that became
// unreachable unfinished: its C iterators, then the C transaction (rolled
// back if open, left prepared if prepared).
type txnResources struct {
	c     *C.ravel_txn
	iters map[*C.ravel_iter]struct{}
	count *atomic.Int64
}

// freeForgottenTxn is the cleanup of a Txn nobody ended.
func freeForgottenTxn(r *txnResources) {
	for it := range r.iters {
		C.ravel_iter_free(it)
	}
	C.ravel_txn_free(r.c)
	r.count.Add(-1)
}

// newTxn wraps the C transaction c of db, in state.
func newTxn(db *DB, c *C.ravel_txn, state txnState, name string) *Txn {
	db.txns.Add(1)
	res := &txnResources{c: c, iters: map[*C.ravel_iter]struct{}{},
		count: &db.txns}
	tx := &Txn{db: db, c: c, res: res, state: state, name: name,
		iters: map[*Iterator]struct{}{}}
	tx.cleanup = runtime.AddCleanup(tx, freeForgottenTxn, res)
	return tx
}

// Begin starts a transaction with the options opts (nil: pessimistic, no
// sync).  End it with Commit, Rollback or Close.
func (db *DB) Begin(opts *TxnOptions) (*Txn, error) {
	if !db.gate.enter() {
		return nil, closedError("txn begin", "database "+db.path)
	}
	defer db.gate.leave()
	h := C.shim_txn_begin(db.c, opts.flags())
	if err := callError("txn begin", h.rc, h.msg); err != nil {
		return nil, err
	}
	return newTxn(db, (*C.ravel_txn)(h.handle), txnOpen, ""), nil
}

// RecoverTxn returns the prepared transaction named name (left by a
// crash, a Close of the database, or Txn.Close after Prepare), to Commit
// or Rollback.  An *Error matching ErrNotFound if there is none of that
// name; PreparedTxns lists them.
func (db *DB) RecoverTxn(name string) (*Txn, error) {
	if strings.IndexByte(name, 0) >= 0 {
		return nil, misuseError("txn recover", "name %q contains a NUL byte", name)
	}
	if !db.gate.enter() {
		return nil, closedError("txn recover", "database "+db.path)
	}
	defer db.gate.leave()
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	h := C.shim_txn_recover(db.c, cname)
	if err := callError("txn recover", h.rc, h.msg); err != nil {
		return nil, err
	}
	return newTxn(db, (*C.ravel_txn)(h.handle), txnPrepared, name), nil
}

// PreparedTxns returns the names of the prepared transactions not yet
// committed or rolled back (the property ravel.prepared-transactions),
// empty if there are none.
func (db *DB) PreparedTxns() ([]string, error) {
	text, err := db.Property("ravel.prepared-transactions")
	if err != nil {
		return nil, err
	}
	names := []string{}
	for _, line := range strings.Split(text, "\n") {
		if line != "" {
			names = append(names, line)
		}
	}
	return names, nil
}

// Update runs fn in a new pessimistic transaction and commits it, as
// UpdateWith(nil, fn) does.
func (db *DB) Update(fn func(tx *Txn) error) error {
	return db.UpdateWith(nil, fn)
}

// UpdateWith runs fn in a new transaction with the options opts and
// commits it if fn returns nil, as bbolt's and Badger's Update do.  If fn
// or the commit fails with a retriable error (ErrConflict, ErrTimedOut,
// ErrDeadlock, or an error wrapping one: IsRetriable), the transaction is
// rolled back and, after a short random sleep that doubles with each try
// (below 50µs·2^attempt, at most 50ms: ravel_txn_run's policy), run again,
// at most opts.MaxAttempts times in all (0: 10); then that error is
// returned.  Any other error from fn rolls back and is returned
// unchanged, not retried; so is a panic, after the rollback.
//
// fn may run more than once: it must have no effects outside the
// transaction that a second run would repeat.  It must not Commit,
// Rollback, Prepare or Close tx (UpdateWith does), nor keep tx after it
// returns.
func (db *DB) UpdateWith(opts *TxnOptions, fn func(tx *Txn) error) error {
	attempts := 10
	if opts != nil && opts.MaxAttempts != 0 {
		attempts = opts.MaxAttempts
	}
	if attempts < 0 {
		return misuseError("update", "MaxAttempts is %d (0 means 10)", attempts)
	}
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			backoff(attempt)
		}
		err := db.runTxn(opts, "Update", fn)
		if err == nil || !IsRetriable(err) || attempt+1 >= attempts {
			return err
		}
	}
}

// View runs fn in a new transaction that may only read (Put, Delete and
// GetForUpdate fail with ErrInvalid) and ends it when fn returns: a
// consistent view of the database as of its begin, as bbolt's View.  It
// returns fn's error; it never retries.
func (db *DB) View(fn func(tx *Txn) error) error {
	return db.runTxn(nil, "View", fn)
}

// runTxn runs fn once in a new transaction managed by the helper named
// by managed, committing it ("Update") or rolling it back ("View").
func (db *DB) runTxn(opts *TxnOptions, managed string, fn func(tx *Txn) error) error {
	tx, err := db.Begin(opts)
	if err != nil {
		return err
	}
	tx.managed = managed
	tx.readOnly = managed == "View"
	defer tx.end(txnRolledBack) // rolls back if fn failed or panicked
	if err := fn(tx); err != nil {
		return err
	}
	if managed == "View" {
		return nil
	}
	return tx.control("txn commit", C.SHIM_TXN_COMMIT)
}

// backoff sleeps a random time below 50µs·2^attempt, at most 50ms, as
// ravel_txn_run does between runs, so that transactions that conflicted
// do not meet again in step.
func backoff(attempt int) {
	limit := 50 * time.Microsecond << min(attempt, 10)
	limit = min(limit, 50*time.Millisecond)
	time.Sleep(rand.N(limit))
}

// enter admits a call on tx: not in use by another goroutine, not over,
// its database open.  The caller calls tx.leave afterwards.
func (tx *Txn) enter(op string) error {
	if !tx.inUse.CompareAndSwap(false, true) {
		return misuseError(op, "the transaction is in use by another goroutine")
	}
	if tx.c == nil {
		tx.inUse.Store(false)
		return tx.overError(op)
	}
	if !tx.db.gate.enter() {
		tx.inUse.Store(false)
		return closedError(op, "database "+tx.db.path)
	}
	return nil
}

// leave ends a call admitted by enter.
func (tx *Txn) leave() {
	tx.db.gate.leave()
	tx.inUse.Store(false)
}

// overError is the error of a call on a transaction that has ended.
func (tx *Txn) overError(op string) error {
	return closedError(op, "the transaction ("+txnStateNames[tx.state]+")")
}

// end frees the C transaction (rolled back if open, left prepared if
// prepared) and its iterators, and records state.  Nothing if it has
// ended already.
func (tx *Txn) end(state txnState) {
	if tx.c == nil {
		return
	}
	for it := range tx.iters {
		it.freeC()
	}
	tx.cleanup.Stop()
	C.ravel_txn_free(tx.c)
	tx.c = nil
	tx.state = state
	tx.db.txns.Add(-1)
}

// Get returns a copy of the value of key as the transaction sees it (its
// snapshot and its own writes), locking nothing.  An absent key returns
// ErrNotFound itself, as DB.Get does.
func (tx *Txn) Get(key []byte) ([]byte, error) {
	return tx.get("txn get", key, 0)
}

// GetForUpdate is Get, and makes key the transaction's: locked now
// (pessimistic) or checked at commit (optimistic).  It fails with
// ErrConflict if another wrote key after the transaction's snapshot, and
// (pessimistic) with ErrTimedOut or ErrDeadlock from the lock wait; the
// transaction is still open after any of them.
func (tx *Txn) GetForUpdate(key []byte) ([]byte, error) {
	if tx.readOnly {
		return nil, misuseError("txn get for update", "a View transaction is read-only")
	}
	return tx.get("txn get for update", key, 1)
}

// get is Get or GetForUpdate.
func (tx *Txn) get(op string, key []byte, forUpdate C.int) ([]byte, error) {
	if err := tx.enter(op); err != nil {
		return nil, err
	}
	defer tx.leave()
	var small [smallValue]byte
	v := C.shim_txn_get(tx.c, forUpdate, bytesPtr(key), cSize(key),
		unsafe.Pointer(&small[0]), smallValue)
	if v.rc == C.RAVEL_NOTFOUND {
		return nil, ErrNotFound
	}
	if err := callError(op, v.rc, v.msg); err != nil {
		return nil, err
	}
	return ownValue(v, small[:]), nil
}

// Put sets key to value in the transaction: seen by its reads at once, by
// others once it commits.  Pessimistic, it locks key (errors as
// GetForUpdate's).
func (tx *Txn) Put(key, value []byte) error {
	if tx.readOnly {
		return misuseError("txn put", "a View transaction is read-only")
	}
	if err := tx.enter("txn put"); err != nil {
		return err
	}
	defer tx.leave()
	return statusError("txn put", C.shim_txn_put(tx.c, bytesPtr(key),
		cSize(key), bytesPtr(value), cSize(value)))
}

// Delete removes key in the transaction (an absent key is not an error);
// it locks key as Put does.
func (tx *Txn) Delete(key []byte) error {
	if tx.readOnly {
		return misuseError("txn delete", "a View transaction is read-only")
	}
	if err := tx.enter("txn delete"); err != nil {
		return err
	}
	defer tx.leave()
	return statusError("txn delete", C.shim_txn_delete(tx.c, bytesPtr(key),
		cSize(key)))
}

// NewIterator makes an iterator over the database as the transaction
// sees it: its snapshot with its own writes merged in (a key it writes
// later is shown when the iterator reaches it), within opts.Start and
// opts.Stop (opts.Snapshot must be nil).  The iterator is closed when the
// transaction ends; close it earlier with its Close.  It is used by the
// transaction's goroutine only.
func (tx *Txn) NewIterator(opts *IterOptions) (*Iterator, error) {
	if opts == nil {
		opts = &IterOptions{}
	}
	if opts.Snapshot != nil {
		return nil, misuseError("txn iterator new", "a transaction's "+
			"iterator reads the transaction's snapshot: IterOptions.Snapshot "+
			"must be nil")
	}
	if err := tx.enter("txn iterator new"); err != nil {
		return nil, err
	}
	defer tx.leave()
	h := C.shim_txn_iter_new(tx.c,
		bytesPtr(opts.Start), cSize(opts.Start), cBool(opts.Start != nil),
		bytesPtr(opts.Stop), cSize(opts.Stop), cBool(opts.Stop != nil))
	if err := callError("txn iterator new", h.rc, h.msg); err != nil {
		return nil, err
	}
	it := &Iterator{c: (*C.ravel_iter)(h.handle), db: tx.db, txn: tx}
	tx.iters[it] = struct{}{}
	tx.res.iters[it.c] = struct{}{}
	return it, nil
}

// dropIterator forgets it (closed by its Close or the transaction's end).
func (tx *Txn) dropIterator(it *Iterator) {
	delete(tx.iters, it)
	delete(tx.res.iters, it.c)
}

// control runs one of the calls of shim_txn_control and records where
// the transaction then stands.
func (tx *Txn) control(op string, which C.int) error {
	if err := tx.enter(op); err != nil {
		return err
	}
	ending := which == C.SHIM_TXN_COMMIT || which == C.SHIM_TXN_ROLLBACK
	if ending {
		// ravel wants the iterators freed before the transaction ends
		for it := range tx.iters {
			it.freeC()
		}
	}
	err := statusError(op, C.shim_txn_control(tx.c, which))
	tx.leave()
	switch {
	case which == C.SHIM_TXN_PREPARE && err == nil:
		tx.state = txnPrepared
	case !ending:
	case err != nil && tx.state == txnPrepared:
		// a prepared transaction whose commit or rollback failed stays
		// prepared: commit or roll it back again, or Close and recover it
	case which == C.SHIM_TXN_COMMIT && err == nil:
		tx.end(txnCommitted)
	default:
		tx.end(txnRolledBack)
	}
	return err
}

// refuseManaged is the error of ending, by hand, a transaction Update or
// View ends itself.
func (tx *Txn) refuseManaged(op string) error {
	if tx.managed == "" {
		return nil
	}
	return misuseError(op, "the transaction of %s is ended by %s itself: "+
		"return from the function instead", tx.managed, tx.managed)
}

// Savepoint sets a savepoint (they nest): RollbackToSavepoint undoes the
// writes made after it and releases the locks taken since.
func (tx *Txn) Savepoint() error {
	return tx.control("txn savepoint", C.SHIM_TXN_SAVEPOINT)
}

// RollbackToSavepoint undoes the writes made since the last savepoint and
// forgets it; an *Error matching ErrNotFound if none is set.
func (tx *Txn) RollbackToSavepoint() error {
	return tx.control("txn rollback to savepoint", C.SHIM_TXN_ROLLBACK_TO_SAVEPOINT)
}

// SetName names the transaction for two-phase commit: 1 to 255 bytes,
// unique among the database's open and prepared transactions; once,
// before Prepare.
func (tx *Txn) SetName(name string) error {
	if strings.IndexByte(name, 0) >= 0 {
		return misuseError("txn set name", "name %q contains a NUL byte", name)
	}
	if err := tx.enter("txn set name"); err != nil {
		return err
	}
	defer tx.leave()
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	if err := statusError("txn set name", C.shim_txn_set_name(tx.c, cname)); err != nil {
		return err
	}
	tx.name = name
	return nil
}

// Name returns the name SetName gave the transaction (or RecoverTxn found
// it by), or "".
func (tx *Txn) Name() string {
	return tx.name
}

// Prepare is the first phase of a two-phase commit (SetName first): the
// transaction's writes go to the WAL and the memtable, invisible to
// readers, its keys stay locked, and it survives a crash (with Sync,
// power loss too): after a reopen PreparedTxns lists it and RecoverTxn
// returns it.  Afterwards it can be read from, committed or rolled back,
// not written to.
func (tx *Txn) Prepare() error {
	if err := tx.refuseManaged("txn prepare"); err != nil {
		return err
	}
	return tx.control("txn prepare", C.SHIM_TXN_PREPARE)
}

// Commit writes the transaction's writes atomically, or nothing
// (ErrConflict, ErrTimedOut, ErrDeadlock: run it again).  The transaction
// is over either way, except that a prepared one whose commit failed
// stays prepared.  Its iterators are closed.
func (tx *Txn) Commit() error {
	if err := tx.refuseManaged("txn commit"); err != nil {
		return err
	}
	return tx.control("txn commit", C.SHIM_TXN_COMMIT)
}

// Rollback discards the writes and releases the locks; a prepared
// transaction's writes become invisible for good (if that fails, it stays
// prepared).  Its iterators are closed.
func (tx *Txn) Rollback() error {
	if err := tx.refuseManaged("txn rollback"); err != nil {
		return err
	}
	return tx.control("txn rollback", C.SHIM_TXN_ROLLBACK)
}

// Close frees the transaction, rolling it back if it is still open; a
// prepared one stays prepared (RecoverTxn gives it back, after a reopen
// too).  Close after Commit or Rollback, or a second Close, does nothing
// and returns nil, so that it can be deferred.
func (tx *Txn) Close() error {
	if tx.c == nil {
		return nil
	}
	if err := tx.refuseManaged("txn close"); err != nil {
		return err
	}
	if !tx.inUse.CompareAndSwap(false, true) {
		return misuseError("txn close", "the transaction is in use by another goroutine")
	}
	defer tx.inUse.Store(false)
	tx.end(txnClosed)
	return nil
}
