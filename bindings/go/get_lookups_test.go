// get_lookups_test.go -- every get-like call reads a value of any size
// (empty, small, larger than the stack buffer, 1 MiB) correctly and with
// ONE engine lookup, counted by the shims (lookups.go).

package ravel_test

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	ravel "github.com/ravel-kv/ravel/bindings/go"
)

// getSizes are the value sizes read: empty, below and at the Go stack
// buffer (512), just past it, a block, 64 KiB and 1 MiB.
var getSizes = []int{0, 1, 511, 512, 513, 4096, 65536, 1 << 20}

// patterned is N bytes that differ with N and position, so a value cut
// short or read from another key does not compare equal.
func patterned(n int) []byte {
	v := make([]byte, n)
	for i := range v {
		v[i] = byte(i*7 + n)
	}
	return v
}

// lookupsOf runs f on one OS thread and returns the engine lookups it made.
func lookupsOf(f func()) uint64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := ravel.EngineLookups()
	f()
	return ravel.EngineLookups() - before
}

// checkRead calls read and checks the value (non-nil even when empty) and
// that it took want lookups.
func checkRead(t *testing.T, what string, want uint64, value []byte,
	read func() ([]byte, error)) {
	t.Helper()
	var got []byte
	var err error
	n := lookupsOf(func() { got, err = read() })
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !bytes.Equal(got, value) || (got == nil && !appendCall(what)) {
		t.Fatalf("%s: got %d bytes (nil: %v), want %d", what, len(got), got == nil, len(value))
	}
	if n != want {
		t.Fatalf("%s: %d engine lookups, want %d", what, n, want)
	}
}

// appendCall: an AppendGet of an empty value to a nil dst returns nil, as
// strconv's Append functions do.
func appendCall(what string) bool {
	return strings.Contains(what, "AppendGet")
}

func TestGetAnySizeOneLookup(t *testing.T) {
	db, _ := openFresh(t, "")
	for _, flush := range []bool{false, true} {
		for _, size := range getSizes {
			key := []byte(fmt.Sprint("key-", size))
			value := patterned(size)
			if err := db.Put(key, value); err != nil {
				t.Fatal(err)
			}
			if flush {
				if err := db.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			name := fmt.Sprintf("size %d (flushed %v)", size, flush)
			checkRead(t, name+": Get", 1, value, func() ([]byte, error) { return db.Get(key) })
			checkRead(t, name+": AppendGet(nil)", 1, value, func() ([]byte, error) { return db.AppendGet(nil, key) })
			prefix := []byte("prefix")
			checkRead(t, name+": AppendGet(fitting)", 1, append(prefix, value...), func() ([]byte, error) {
				return db.AppendGet(append(make([]byte, 0, len(prefix)+size+1), prefix...), key)
			})
			snap, err := db.NewSnapshot()
			if err != nil {
				t.Fatal(err)
			}
			checkRead(t, name+": Snapshot.Get", 1, value, func() ([]byte, error) { return snap.Get(key) })
			checkRead(t, name+": Snapshot.AppendGet(nil)", 1, value, func() ([]byte, error) { return snap.AppendGet(nil, key) })
			snap.Close()
			var vals [][]byte
			n := lookupsOf(func() {
				var err error
				if vals, err = db.MultiGet([][]byte{key, []byte("absent")}); err != nil {
					t.Fatal(err)
				}
			})
			if !bytes.Equal(vals[0], value) || vals[0] == nil || vals[1] != nil || n != 2 {
				t.Fatalf("%s: MultiGet: %d bytes, absent %v, %d lookups (want 2)", name, len(vals[0]), vals[1], n)
			}
			tx, err := db.Begin(nil)
			if err != nil {
				t.Fatal(err)
			}
			checkRead(t, name+": Txn.Get", 1, value, func() ([]byte, error) { return tx.Get(key) })
			checkRead(t, name+": Txn.GetForUpdate", 1, value, func() ([]byte, error) { return tx.GetForUpdate(key) })
			tx.Rollback()
		}
	}
	n := lookupsOf(func() {
		if _, err := db.Get([]byte("absent")); !errors.Is(err, ravel.ErrNotFound) {
			t.Fatalf("absent key: %v", err)
		}
	})
	if n != 1 {
		t.Fatalf("absent key: %d lookups", n)
	}
}

// A buffer too small for the value: AppendGet still returns it whole
// (with the allocating call as its second and last lookup) and keeps the
// bytes dst had.
func TestAppendGetTooSmallBuffer(t *testing.T) {
	db, _ := openFresh(t, "")
	value := patterned(1 << 20)
	if err := db.Put([]byte("k"), value); err != nil {
		t.Fatal(err)
	}
	dst := append(make([]byte, 0, 10), "abc"...)
	checkRead(t, "AppendGet(small)", 2, append([]byte("abc"), value...), func() ([]byte, error) {
		return db.AppendGet(dst, []byte("k"))
	})
}
