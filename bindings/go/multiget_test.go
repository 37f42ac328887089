// multiget_test.go -- DB.MultiGet and Snapshot.MultiGet: values in the
// caller's order, nil for absent and deleted keys, repeated keys, memtable
// and table files, a snapshot's state, no values on an error or a closed
// handle, and -- with a writer keeping every key equal in each batch --
// one state per call (run with -race by ci.sh).

package ravel_test

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"

	ravel "github.com/ravel-kv/ravel/bindings/go"
)

func byteKeys(names ...string) [][]byte {
	out := make([][]byte, len(names))
	for i, n := range names {
		out[i] = []byte(n)
	}
	return out
}

// wantValues checks got against want, where "<nil>" stands for an absent
// key (a nil value) and "" for an empty, non-nil one.
func wantValues(t *testing.T, got [][]byte, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d values, want %d", len(got), len(want))
	}
	for i, w := range want {
		switch {
		case w == "<nil>" && got[i] != nil:
			t.Errorf("value %d: %q, want nil", i, got[i])
		case w != "<nil>" && (got[i] == nil || string(got[i]) != w):
			t.Errorf("value %d: %q (nil %v), want %q", i, got[i], got[i] == nil, w)
		}
	}
}

func TestMultiGetInCallersOrder(t *testing.T) {
	db, _ := openFresh(t, "")
	for _, kv := range [][2]string{{"b", "vb"}, {"a", "va"}, {"d", "vd"}, {"gone", "x"}, {"empty", ""}} {
		if err := db.Put([]byte(kv[0]), []byte(kv[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Delete([]byte("gone")); err != nil {
		t.Fatal(err)
	}
	keys := byteKeys("d", "zz", "a", "gone", "b", "a", "empty", "")
	want := []string{"vd", "<nil>", "va", "<nil>", "vb", "va", "", "<nil>"}
	for round := 0; round < 2; round++ {
		got, err := db.MultiGet(keys)
		if err != nil {
			t.Fatal(err)
		}
		wantValues(t, got, want...)
		if err := db.Flush(); err != nil { // the second round reads a table file
			t.Fatal(err)
		}
	}
	got, err := db.MultiGet(nil)
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("no keys: %v, %v; want an empty slice", got, err)
	}
}

func TestMultiGetSnapshot(t *testing.T) {
	db, _ := openFresh(t, "")
	db.Put([]byte("a"), []byte("old"))
	db.Put([]byte("b"), []byte("old"))
	s, err := db.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	db.Put([]byte("a"), []byte("new"))
	db.Delete([]byte("b"))
	db.Put([]byte("c"), []byte("new"))
	got, err := s.MultiGet(byteKeys("a", "b", "c"))
	if err != nil {
		t.Fatal(err)
	}
	wantValues(t, got, "old", "old", "<nil>")
	got, err = db.MultiGet(byteKeys("a", "b", "c"))
	if err != nil {
		t.Fatal(err)
	}
	wantValues(t, got, "new", "<nil>", "new")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = s.MultiGet(byteKeys("a"))
	if e := wantError(t, err, ravel.ErrInvalid, "snapshot is closed"); e.Op != "multi get" {
		t.Errorf("Op %q, want \"multi get\"", e.Op)
	}
}

func TestMultiGetErrors(t *testing.T) {
	db, _ := openFresh(t, "")
	db.Put([]byte("a"), []byte("va"))
	got, err := db.MultiGet([][]byte{[]byte("a"), bytes.Repeat([]byte("k"), 1<<20+1)})
	if e := wantError(t, err, ravel.ErrInvalid, "ravel_multi_get", "RAVEL_MAX_KEY_SIZE"); e.Op != "multi get" {
		t.Errorf("Op %q, want \"multi get\"", e.Op)
	}
	if got != nil {
		t.Errorf("values with an error: %q", got)
	}
	got, err = db.MultiGet(byteKeys("a")) // the handle is still fine
	if err != nil {
		t.Fatal(err)
	}
	wantValues(t, got, "va")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = db.MultiGet(byteKeys("a"))
	if !errors.Is(err, ravel.ErrClosed) {
		t.Errorf("after Close: %v, want an error matching ErrClosed", err)
	}
}

// TestMultiGetOneState: a writer sets every key to round r in one batch,
// round after round; every MultiGet must see one round for all its keys
// (Get key by key would not).
func TestMultiGetOneState(t *testing.T) {
	db, _ := openFresh(t, "")
	const nkeys, rounds = 16, 2000
	keys := make([][]byte, nkeys)
	b := ravel.NewBatch()
	defer b.Close()
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("k%02d", i))
		b.Put(keys[i], []byte("0"))
	}
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	var done atomic.Bool
	errc := make(chan error, 1)
	go func() {
		defer done.Store(true)
		wb := ravel.NewBatch()
		defer wb.Close()
		for r := 1; r <= rounds; r++ {
			wb.Clear()
			v := []byte(strconv.Itoa(r))
			for _, k := range keys {
				wb.Put(k, v)
			}
			if err := db.Write(wb); err != nil {
				errc <- err
				return
			}
			if r%500 == 0 {
				if err := db.Flush(ravel.FlushNoWait); err != nil {
					errc <- err
					return
				}
			}
		}
		errc <- nil
	}()
	last, calls := 0, 0
	for !done.Load() || calls < 100 {
		got, err := db.MultiGet(keys)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if !bytes.Equal(got[i], got[0]) {
				t.Fatalf("call %d: %s = %q but %s = %q: two states in one call",
					calls, keys[i], got[i], keys[0], got[0])
			}
		}
		r, err := strconv.Atoi(string(got[0]))
		if err != nil || r < last {
			t.Fatalf("call %d: round %q after %d", calls, got[0], last)
		}
		last = r
		calls++
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}
