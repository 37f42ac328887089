// misuse_test.go -- closing with live snapshots and iterators, use after
// Close, Close racing with calls in progress, and the safety-net cleanup of
// forgotten handles.  Misuse must give an error, never a crash.

package ravel_test

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	ravel "github.com/ravel-kv/ravel/bindings/go"
)

func TestCloseWithLiveHandles(t *testing.T) {
	db, _ := openFresh(t, "")
	mustPut(t, db, "k", "v")
	s, _ := db.NewSnapshot()
	it1, _ := db.NewIterator(nil)
	it2, _ := db.NewIterator(&ravel.IterOptions{Snapshot: s})

	wantError(t, db.Close(), ravel.ErrInvalid, "1 snapshot(s)", "2 iterator(s)")
	// the database stays open and usable, and so do the handles
	mustPut(t, db, "k2", "v2")
	if !it1.SeekToFirst() || string(it1.Key()) != "k" {
		t.Fatal("iterator after a refused close")
	}
	s.Close()
	it1.Close()
	wantError(t, db.Close(), ravel.ErrInvalid, "0 snapshot(s)", "1 iterator(s)")
	it2.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestUseAfterClose(t *testing.T) {
	db, _ := openFresh(t, "")
	b := ravel.NewBatch()
	defer b.Close()
	b.Put([]byte("k"), []byte("v"))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	k := []byte("k")
	calls := map[string]error{
		"close":         db.Close(),
		"put":           db.Put(k, k),
		"delete":        db.Delete(k),
		"write":         db.Write(b),
		"flush":         db.Flush(),
		"flush wal":     db.FlushWAL(true),
		"compact range": db.CompactRange(nil, nil),
		"verify":        db.Verify(),
	}
	_, calls["get"] = db.Get(k)
	_, calls["append get"] = db.AppendGet(nil, k)
	_, calls["property"] = db.Property("ravel.stats")
	_, calls["snapshot"] = db.NewSnapshot()
	_, calls["iterator new"] = db.NewIterator(nil)
	for name, err := range calls {
		if !errors.Is(err, ravel.ErrClosed) || !errors.Is(err, ravel.ErrInvalid) {
			t.Errorf("%s after close: %v", name, err)
		}
	}
}

func TestBatchAfterClose(t *testing.T) {
	db, _ := openFresh(t, "")
	b := ravel.NewBatch()
	b.Put([]byte("k"), []byte("v"))
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"put":    b.Put([]byte("k"), nil),
		"delete": b.Delete([]byte("k")),
		"clear":  b.Clear(),
		"close":  b.Close(),
		"write":  db.Write(b),
		"nil":    db.Write(nil),
	} {
		if !errors.Is(err, ravel.ErrClosed) {
			t.Errorf("batch %s after close: %v", name, err)
		}
	}
	if b.Count() != 0 {
		t.Fatal("a closed batch counts entries")
	}
}

// Close waits for the calls in progress; calls after it fail cleanly.
func TestCloseWhileCallsInProgress(t *testing.T) {
	for round := 0; round < 5; round++ {
		db, _ := openFresh(t, "")
		const workers = 16
		var wg sync.WaitGroup
		started := make(chan struct{}, workers)
		errs := make(chan error, workers)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				key := []byte(fmt.Sprintf("w%d", w))
				for i := 0; ; i++ {
					err := db.Put(key, key)
					if err == nil {
						_, err = db.Get(key)
					}
					if err == nil && i%8 == 0 {
						var s *ravel.Snapshot
						if s, err = db.NewSnapshot(); err == nil {
							_, err = s.Get(key)
							s.Close()
						}
					}
					if i == 10 {
						started <- struct{}{}
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		for w := 0; w < workers; w++ {
			<-started
		}
		var closeErr error
		for { // a worker's snapshot may be live at that instant
			closeErr = db.Close()
			if closeErr == nil || !errors.Is(closeErr, ravel.ErrInvalid) || errors.Is(closeErr, ravel.ErrClosed) {
				break
			}
		}
		if closeErr != nil {
			t.Fatalf("close: %v", closeErr)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if !errors.Is(err, ravel.ErrClosed) {
				t.Fatalf("a call racing with close: %v", err)
			}
		}
	}
}

// A forgotten iterator, snapshot or batch is freed by its cleanup once
// unreachable, so that Close eventually succeeds.  (A safety net only:
// the documented way is Close.)
func TestForgottenHandlesAreCleanedUp(t *testing.T) {
	db, _ := openFresh(t, "")
	mustPut(t, db, "k", "v")
	func() {
		it, _ := db.NewIterator(nil)
		it.SeekToFirst()
		s, _ := db.NewSnapshot()
		_ = s.Sequence()
		_ = ravel.NewBatch()
	}()
	var err error
	for try := 0; try < 200; try++ {
		runtime.GC()
		if err = db.Close(); err == nil {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("close after the handles became unreachable: %v", err)
}

// Values not made by the constructors are refused, not dereferenced.
func TestZeroValues(t *testing.T) {
	db, _ := openFresh(t, "")
	var s ravel.Snapshot
	if _, err := s.Get([]byte("k")); !errors.Is(err, ravel.ErrClosed) {
		t.Fatalf("zero snapshot get: %v", err)
	}
	if _, err := db.NewIterator(&ravel.IterOptions{Snapshot: &s}); !errors.Is(err, ravel.ErrClosed) {
		t.Fatalf("iterator on a zero snapshot: %v", err)
	}
	if err := s.Close(); !errors.Is(err, ravel.ErrClosed) {
		t.Fatalf("zero snapshot close: %v", err)
	}
	var b ravel.Batch
	if err := b.Put([]byte("k"), nil); !errors.Is(err, ravel.ErrClosed) {
		t.Fatalf("zero batch put: %v", err)
	}
	if err := db.Write(&b); !errors.Is(err, ravel.ErrClosed) {
		t.Fatalf("write of a zero batch: %v", err)
	}
	var it ravel.Iterator
	if it.SeekToFirst() || !errors.Is(it.Err(), ravel.ErrClosed) {
		t.Fatalf("zero iterator: %v", it.Err())
	}
	var zdb ravel.DB
	if err := zdb.Put([]byte("k"), nil); !errors.Is(err, ravel.ErrInvalid) {
		t.Fatalf("zero database put: %v", err)
	}
	var c ravel.Cache
	if c.Usage() != 0 || c.Capacity() != 0 {
		t.Fatal("zero cache reports a size")
	}
}
