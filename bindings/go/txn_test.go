// txn_test.go -- transactions: reads see the transaction's own writes,
// commit and rollback, conflicts between two transactions, the retriable
// errors (errors.Is with ErrConflict, ErrTimedOut, ErrDeadlock), Update
// retrying with real goroutines incrementing one counter, View, savepoints,
// iterators, one goroutine at a time, and two-phase commit across a
// reopen.

package ravel_test

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	ravel "github.com/ravel-kv/ravel/bindings/go"
)

// begin starts a transaction or fails the test.
func begin(t *testing.T, db *ravel.DB, opts *ravel.TxnOptions) *ravel.Txn {
	t.Helper()
	tx, err := db.Begin(opts)
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// valueOf reads key from db, "" if absent.
func valueOf(t *testing.T, db *ravel.DB, key string) string {
	t.Helper()
	v, err := db.Get([]byte(key))
	if errors.Is(err, ravel.ErrNotFound) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(v)
}

func TestTxnReadsOwnWritesAndCommits(t *testing.T) {
	db, _ := openFresh(t, "")
	if err := db.Put([]byte("a"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	tx := begin(t, db, nil)
	for _, err := range []error{
		tx.Put([]byte("b"), []byte("2")),
		tx.Delete([]byte("a")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if v, err := tx.Get([]byte("b")); err != nil || string(v) != "2" {
		t.Fatalf("own write: %q, %v", v, err)
	}
	if _, err := tx.Get([]byte("a")); err != ravel.ErrNotFound {
		t.Fatalf("own delete: got %v, want ErrNotFound", err)
	}
	if valueOf(t, db, "b") != "" || valueOf(t, db, "a") != "1" {
		t.Fatal("the transaction's writes are visible before its commit")
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if valueOf(t, db, "b") != "2" || valueOf(t, db, "a") != "" {
		t.Fatal("the commit did not publish the writes")
	}
	_, err := tx.Get([]byte("b"))
	wantError(t, err, ravel.ErrInvalid, "committed")
	if !errors.Is(err, ravel.ErrClosed) {
		t.Fatalf("a call after Commit: %v, want ErrClosed", err)
	}
	if err := tx.Close(); err != nil {
		t.Fatalf("Close after Commit: %v", err)
	}
}

func TestTxnSnapshotIsolation(t *testing.T) {
	db, _ := openFresh(t, "")
	db.Put([]byte("k"), []byte("old"))
	tx := begin(t, db, nil)
	defer tx.Close()
	db.Put([]byte("k"), []byte("new"))
	if v, _ := tx.Get([]byte("k")); string(v) != "old" {
		t.Fatalf("the transaction read %q, want its snapshot's old", v)
	}
}

func TestTxnRollbackCloseAndDBClose(t *testing.T) {
	db, dir := openFresh(t, "")
	tx := begin(t, db, nil)
	tx.Put([]byte("x"), []byte("1"))
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if valueOf(t, db, "x") != "" {
		t.Fatal("a rolled back write is visible")
	}
	tx = begin(t, db, nil)
	tx.Put([]byte("y"), []byte("1"))
	wantError(t, db.Close(), ravel.ErrInvalid, "1 transaction(s)")
	if err := tx.Close(); err != nil { // rolls back
		t.Fatal(err)
	}
	if err := tx.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openAt(t, dir, "")
	if valueOf(t, db, "y") != "" {
		t.Fatal("a closed transaction's write is visible")
	}
}

func TestTxnConflict(t *testing.T) {
	db, _ := openFresh(t, "")
	db.Put([]byte("acct"), []byte("100"))
	t1 := begin(t, db, nil)
	t2 := begin(t, db, nil)
	defer t2.Close()
	if _, err := t1.GetForUpdate([]byte("acct")); err != nil {
		t.Fatal(err)
	}
	t1.Put([]byte("acct"), []byte("90"))
	if err := t1.Commit(); err != nil {
		t.Fatal(err)
	}
	_, err := t2.GetForUpdate([]byte("acct"))
	wantError(t, err, ravel.ErrConflict, "acct")
	if !ravel.IsRetriable(err) || !ravel.IsRetriable(fmt.Errorf("wrapped: %w", err)) {
		t.Fatalf("%v is not retriable", err)
	}
	// still open after a retriable error
	if _, err := t2.Get([]byte("acct")); err != nil {
		t.Fatalf("t2 after the conflict: %v", err)
	}
}

func TestTxnOptimisticConflictAtCommit(t *testing.T) {
	db, _ := openFresh(t, "")
	db.Put([]byte("k"), []byte("0"))
	tx := begin(t, db, &ravel.TxnOptions{Optimistic: true})
	if _, err := tx.GetForUpdate([]byte("k")); err != nil {
		t.Fatal(err)
	}
	tx.Put([]byte("k"), []byte("1"))
	db.Put([]byte("k"), []byte("other"))
	wantError(t, tx.Commit(), ravel.ErrConflict)
	if valueOf(t, db, "k") != "other" {
		t.Fatal("a conflicting commit wrote")
	}
}

func TestTxnLockTimeout(t *testing.T) {
	db, _ := openFresh(t, "txn_lock_timeout=50")
	t1 := begin(t, db, nil)
	defer t1.Close()
	t1.Put([]byte("held"), []byte("1"))
	t2 := begin(t, db, nil)
	defer t2.Close()
	err := t2.Put([]byte("held"), []byte("2"))
	wantError(t, err, ravel.ErrTimedOut, "held")
	if !ravel.IsRetriable(err) || errors.Is(err, ravel.ErrConflict) {
		t.Fatalf("%v: want retriable, not a conflict", err)
	}
}

func TestTxnDeadlock(t *testing.T) {
	// a long lock timeout: the cycle, not a timeout, must end the wait
	db, _ := openFresh(t, "txn_lock_timeout=60000")
	var locked sync.WaitGroup
	locked.Add(2)
	results := make([]error, 2)
	var wg sync.WaitGroup
	for i, keys := range [][2]string{{"a", "b"}, {"b", "a"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tx, err := db.Begin(nil)
			if err != nil {
				results[i] = err
				locked.Done()
				return
			}
			defer tx.Close()
			name := []byte(strconv.Itoa(i))
			err = tx.Put([]byte(keys[0]), name)
			locked.Done()
			locked.Wait()
			if err == nil {
				err = tx.Put([]byte(keys[1]), name)
			}
			if err == nil {
				err = tx.Commit()
			}
			results[i] = err // a failed tx is rolled back by Close
		}()
	}
	wg.Wait()
	failed, winner := 0, -1
	for i, err := range results {
		switch {
		case err == nil:
			winner = i
		case errors.Is(err, ravel.ErrDeadlock):
			failed++
			wantError(t, err, ravel.ErrDeadlock, "deadlock")
			if !ravel.IsRetriable(err) {
				t.Fatalf("%v is not retriable", err)
			}
		default:
			t.Fatalf("transaction %d: %v", i, err)
		}
	}
	if failed != 1 || winner < 0 {
		t.Fatalf("results %v: want one deadlock and one commit", results)
	}
	w := strconv.Itoa(winner)
	if valueOf(t, db, "a") != w || valueOf(t, db, "b") != w {
		t.Fatalf("a=%q b=%q, want both the winner's %q", valueOf(t, db, "a"),
			valueOf(t, db, "b"), w)
	}
}

func TestRetriableCodes(t *testing.T) {
	for _, c := range []ravel.Code{ravel.ErrConflict, ravel.ErrTimedOut, ravel.ErrDeadlock} {
		if !c.Retriable() || !ravel.IsRetriable(c) {
			t.Errorf("%v is not retriable", c)
		}
		if strings.Contains(c.String(), "unknown") {
			t.Errorf("code %d has no description: %q", int(c), c.String())
		}
	}
	for _, c := range []ravel.Code{ravel.ErrInvalid, ravel.ErrNotFound, ravel.ErrBusy} {
		if c.Retriable() || ravel.IsRetriable(c) {
			t.Errorf("%v is retriable", c)
		}
	}
	if ravel.IsRetriable(errors.New("other")) || ravel.IsRetriable(nil) {
		t.Error("a non-ravel error is retriable")
	}
	if int(ravel.ErrConflict) != 9 || int(ravel.ErrTimedOut) != 10 || int(ravel.ErrDeadlock) != 11 {
		t.Error("the codes differ from ravel.h's")
	}
}

func TestTxnSavepoints(t *testing.T) {
	db, _ := openFresh(t, "")
	tx := begin(t, db, nil)
	tx.Put([]byte("a"), []byte("1"))
	tx.Savepoint()
	tx.Put([]byte("b"), []byte("2"))
	tx.Savepoint()
	tx.Put([]byte("c"), []byte("3"))
	if err := tx.RollbackToSavepoint(); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Get([]byte("c")); err != ravel.ErrNotFound {
		t.Fatalf("c after the rollback to savepoint: %v", err)
	}
	if v, _ := tx.Get([]byte("b")); string(v) != "2" {
		t.Fatal("b was undone too")
	}
	tx.RollbackToSavepoint()
	wantError(t, tx.RollbackToSavepoint(), ravel.ErrNotFound)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if valueOf(t, db, "a") != "1" || valueOf(t, db, "b") != "" {
		t.Fatal("the savepoints' rollbacks were not kept")
	}
}

func TestTxnIteratorSeesOwnWrites(t *testing.T) {
	db, _ := openFresh(t, "")
	for _, k := range []string{"a", "c", "e"} {
		db.Put([]byte(k), []byte("db"))
	}
	tx := begin(t, db, nil)
	defer tx.Close()
	tx.Put([]byte("b"), []byte("txn"))
	tx.Put([]byte("c"), []byte("txn"))
	tx.Delete([]byte("e"))
	db.Put([]byte("d"), []byte("later")) // after the snapshot: unseen
	it, err := tx.NewIterator(nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for e, err := range it.All() {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(e.Key)+"="+string(e.Value))
	}
	if want := []string{"a=db", "b=txn", "c=txn"}; !slices.Equal(got, want) {
		t.Fatalf("iterated %v, want %v", got, want)
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	bounded, err := tx.NewIterator(&ravel.IterOptions{Start: []byte("b"), Stop: []byte("c")})
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for e, err := range bounded.Backward() {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(e.Key))
	}
	if !slices.Equal(got, []string{"b"}) {
		t.Fatalf("bounded: %v, want [b]", got)
	}
	snap, _ := db.NewSnapshot()
	defer snap.Close()
	_, err = tx.NewIterator(&ravel.IterOptions{Snapshot: snap})
	wantError(t, err, ravel.ErrInvalid, "Snapshot")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	// the transaction's end closed the iterator
	if bounded.SeekToFirst() || !errors.Is(bounded.Err(), ravel.ErrClosed) {
		t.Fatalf("an iterator after its transaction's end: %v", bounded.Err())
	}
}

func TestUpdateCommitsAndReturnsOtherErrorsUnchanged(t *testing.T) {
	db, _ := openFresh(t, "")
	if err := db.Update(func(tx *ravel.Txn) error {
		return tx.Put([]byte("k"), []byte("v"))
	}); err != nil {
		t.Fatal(err)
	}
	if valueOf(t, db, "k") != "v" {
		t.Fatal("Update did not commit")
	}
	mine := errors.New("mine")
	runs := 0
	err := db.Update(func(tx *ravel.Txn) error {
		runs++
		tx.Put([]byte("k"), []byte("dropped"))
		return mine
	})
	if err != mine || runs != 1 {
		t.Fatalf("Update returned %v after %d runs, want mine after 1", err, runs)
	}
	if valueOf(t, db, "k") != "v" {
		t.Fatal("a failed Update wrote")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the panic did not propagate")
			}
		}()
		db.Update(func(tx *ravel.Txn) error {
			tx.Put([]byte("k"), []byte("panicked"))
			panic("boom")
		})
	}()
	if valueOf(t, db, "k") != "v" {
		t.Fatal("a panicking Update wrote")
	}
	if err := db.Close(); err != nil { // nothing left open
		t.Fatal(err)
	}
}

func TestUpdateRetriesThenGivesUp(t *testing.T) {
	db, _ := openFresh(t, "")
	db.Put([]byte("k"), []byte("0"))
	runs := 0
	err := db.UpdateWith(&ravel.TxnOptions{MaxAttempts: 3}, func(tx *ravel.Txn) error {
		runs++
		tx.Get([]byte("k"))
		db.Put([]byte("k"), []byte(strconv.Itoa(runs))) // another writer
		_, err := tx.GetForUpdate([]byte("k"))
		return fmt.Errorf("reading k: %w", err)
	})
	if !errors.Is(err, ravel.ErrConflict) || runs != 3 {
		t.Fatalf("got %v after %d runs, want ErrConflict after 3", err, runs)
	}
	runs = 0
	err = db.Update(func(tx *ravel.Txn) error {
		runs++
		if runs == 1 {
			db.Put([]byte("k"), []byte("x"))
		}
		v, err := tx.GetForUpdate([]byte("k"))
		if err != nil {
			return err
		}
		return tx.Put([]byte("k"), append(v, '!'))
	})
	if err != nil || runs != 2 || valueOf(t, db, "k") != "x!" {
		t.Fatalf("got %v after %d runs, k=%q", err, runs, valueOf(t, db, "k"))
	}
}

func TestUpdateCounterFromGoroutines(t *testing.T) {
	for _, optimistic := range []bool{false, true} {
		t.Run(fmt.Sprintf("optimistic=%v", optimistic), func(t *testing.T) {
			db, _ := openFresh(t, "")
			const goroutines, each = 8, 50
			var runs atomic.Int64
			opts := &ravel.TxnOptions{Optimistic: optimistic, MaxAttempts: 1000}
			var wg sync.WaitGroup
			errs := make(chan error, goroutines)
			for range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range each {
						err := db.UpdateWith(opts, func(tx *ravel.Txn) error {
							runs.Add(1)
							n := 0
							v, err := tx.GetForUpdate([]byte("counter"))
							if err == nil {
								n, _ = strconv.Atoi(string(v))
							} else if err != ravel.ErrNotFound {
								return err
							}
							return tx.Put([]byte("counter"), []byte(strconv.Itoa(n+1)))
						})
						if err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if got := valueOf(t, db, "counter"); got != strconv.Itoa(goroutines*each) {
				t.Fatalf("counter %s, want %d (runs: %d)", got, goroutines*each, runs.Load())
			}
			t.Logf("%d increments took %d runs", goroutines*each, runs.Load())
		})
	}
}

func TestUpdateAndViewEndTheirTransaction(t *testing.T) {
	db, _ := openFresh(t, "")
	db.Put([]byte("k"), []byte("v"))
	var kept *ravel.Txn
	err := db.Update(func(tx *ravel.Txn) error {
		kept = tx
		return tx.Commit()
	})
	wantError(t, err, ravel.ErrInvalid, "Update")
	_, err = kept.Get([]byte("k"))
	wantError(t, err, ravel.ErrInvalid)
	err = db.View(func(tx *ravel.Txn) error {
		if v, err := tx.Get([]byte("k")); err != nil || string(v) != "v" {
			t.Fatalf("View read %q, %v", v, err)
		}
		wantError(t, tx.Put([]byte("k"), []byte("w")), ravel.ErrInvalid, "read-only")
		_, err := tx.GetForUpdate([]byte("k"))
		wantError(t, err, ravel.ErrInvalid, "read-only")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantError(t, db.UpdateWith(&ravel.TxnOptions{MaxAttempts: -1},
		func(*ravel.Txn) error { return nil }), ravel.ErrInvalid)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestTxnOneGoroutineAtATime(t *testing.T) {
	db, _ := openFresh(t, "txn_lock_timeout=60000")
	holder := begin(t, db, nil)
	holder.Put([]byte("k"), []byte("holder"))
	tx := begin(t, db, nil)
	defer tx.Close()
	done := make(chan error)
	go func() { // waits for the lock
		for {
			err := tx.Put([]byte("k"), []byte("tx"))
			if err == nil || !strings.Contains(err.Error(), "another goroutine") {
				done <- err
				return
			} // refused while the loop below was in a call: again
		}
	}()
	var refused error
	for range 10_000_000 { // until that Put is in progress
		if _, err := tx.Get([]byte("other")); err != nil && err != ravel.ErrNotFound {
			refused = err
			break
		}
	}
	holder.Rollback() // lets the Put through
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	wantError(t, refused, ravel.ErrInvalid, "another goroutine")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func TestTwoPhaseCommitSurvivesReopen(t *testing.T) {
	db, dir := openFresh(t, "")
	prepare := func(name, key, value string) *ravel.Txn {
		tx := begin(t, db, &ravel.TxnOptions{Sync: true})
		if err := tx.SetName(name); err != nil {
			t.Fatal(err)
		}
		if tx.Name() != name {
			t.Fatalf("Name() = %q", tx.Name())
		}
		tx.Put([]byte(key), []byte(value))
		if err := tx.Prepare(); err != nil {
			t.Fatal(err)
		}
		return tx
	}
	tx := prepare("xfer-1", "acct", "prepared value")
	if valueOf(t, db, "acct") != "" {
		t.Fatal("a prepared write is visible")
	}
	if v, err := tx.Get([]byte("acct")); err != nil || string(v) != "prepared value" {
		t.Fatalf("the prepared transaction reads %q, %v", v, err)
	}
	wantError(t, tx.Put([]byte("more"), []byte("x")), ravel.ErrInvalid)
	if err := tx.Close(); err != nil { // stays prepared
		t.Fatal(err)
	}
	tx2 := prepare("xfer-2", "other", "rolled back later")
	if err := tx2.Close(); err != nil {
		t.Fatal(err)
	}
	if names, err := db.PreparedTxns(); err != nil || !slices.Equal(sorted(names), []string{"xfer-1", "xfer-2"}) {
		t.Fatalf("PreparedTxns: %v, %v", names, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = openAt(t, dir, "")
	if names, err := db.PreparedTxns(); err != nil || !slices.Equal(sorted(names), []string{"xfer-1", "xfer-2"}) {
		t.Fatalf("PreparedTxns after the reopen: %v, %v", names, err)
	}
	if valueOf(t, db, "acct") != "" || valueOf(t, db, "other") != "" {
		t.Fatal("a prepared write is visible after the reopen")
	}
	_, err := db.RecoverTxn("no-such")
	wantError(t, err, ravel.ErrNotFound)
	r, err := db.RecoverTxn("xfer-1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Name() != "xfer-1" {
		t.Fatalf("recovered Name() = %q", r.Name())
	}
	if err := r.Commit(); err != nil {
		t.Fatal(err)
	}
	if valueOf(t, db, "acct") != "prepared value" {
		t.Fatal("the recovered transaction's commit did not publish its write")
	}
	r2, err := db.RecoverTxn("xfer-2")
	if err != nil {
		t.Fatal(err)
	}
	if err := r2.Rollback(); err != nil {
		t.Fatal(err)
	}
	if valueOf(t, db, "other") != "" {
		t.Fatal("a rolled back prepared write is visible")
	}
	if names, err := db.PreparedTxns(); err != nil || len(names) != 0 {
		t.Fatalf("PreparedTxns after the commit and rollback: %v, %v", names, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openAt(t, dir, "")
	if names, _ := db.PreparedTxns(); len(names) != 0 || valueOf(t, db, "acct") != "prepared value" ||
		valueOf(t, db, "other") != "" {
		t.Fatalf("after another reopen: prepared %v, acct %q, other %q", names,
			valueOf(t, db, "acct"), valueOf(t, db, "other"))
	}
}

// sorted returns a sorted copy of names.
func sorted(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return out
}

func TestTxnSetNameChecks(t *testing.T) {
	db, _ := openFresh(t, "")
	tx := begin(t, db, nil)
	defer tx.Close()
	wantError(t, tx.SetName("nul\x00inside"), ravel.ErrInvalid, "NUL")
	wantError(t, tx.SetName(""), ravel.ErrInvalid)
	if err := tx.SetName("ok"); err != nil {
		t.Fatal(err)
	}
	wantError(t, tx.SetName("again"), ravel.ErrInvalid)
}
