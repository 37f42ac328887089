// store_test.go -- the conformance suite of a raft log and stable store,
// modelled on raft-boltdb's bolt_store_test.go and raft-wal's wal_test.go
// (hashicorp/raft ships none): the empty store, store and get, the bounds,
// deletes at the head, the tail, the middle and outside the log, reopening,
// the stable store, Close, a shared database, and a random model check.

package raftstore_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	ravel "github.com/ravel-kv/ravel/bindings/go"
	"github.com/ravel-kv/ravel/bindings/go/raftstore"
)

func TestImplements(t *testing.T) {
	var store any = &raftstore.Store{}
	if _, ok := store.(raft.LogStore); !ok {
		t.Fatal("Store is not a raft.LogStore")
	}
	if _, ok := store.(raft.StableStore); !ok {
		t.Fatal("Store is not a raft.StableStore")
	}
	m, ok := store.(raft.MonotonicLogStore)
	if !ok || !m.IsMonotonic() {
		t.Fatal("Store is not a monotonic raft.MonotonicLogStore")
	}
}

func TestEmptyStore(t *testing.T) {
	s := openStore(t, t.TempDir())
	wantBounds(t, s, 0, 0)
	wantNoLog(t, s, 0)
	wantNoLog(t, s, 1)
	wantNoLog(t, s, ^uint64(0))
	deleteRange(t, s, 0, ^uint64(0)) // nothing to delete: no error
	wantBounds(t, s, 0, 0)
	if err := s.StoreLogs(nil); err != nil {
		t.Fatalf("store no logs: %v", err)
	}
	wantBounds(t, s, 0, 0)
}

func TestStoreAndGetLog(t *testing.T) {
	s := openStore(t, t.TempDir())
	if err := s.StoreLog(entry(1)); err != nil {
		t.Fatalf("store log: %v", err)
	}
	storeLogs(t, s, entries(2, 40))
	wantExactly(t, s, set(1, 40), 0, 45)

	// Every field comes back, as reflect.DeepEqual sees it when
	// AppendedAt is zero (raft-boltdb's own check).
	want := &raft.Log{Index: 41, Term: 9, Type: raft.LogCommand,
		Data: []byte("log41"), Extensions: []byte("ext")}
	storeLogs(t, s, []*raft.Log{want})
	got := new(raft.Log)
	if err := s.GetLog(41, got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}

	// A stored entry replaces the one at its index.
	replaced := &raft.Log{Index: 5, Term: 99, Data: []byte("new")}
	storeLogs(t, s, []*raft.Log{replaced})
	if err := s.GetLog(5, got); err != nil || sameLog(got, replaced) != "" {
		t.Fatalf("replaced log 5: %v %+v", err, got)
	}
	wantBounds(t, s, 1, 41)
}

func TestFieldsRoundTrip(t *testing.T) {
	s := openStore(t, t.TempDir())
	appended := time.Date(2026, 11, 27, 3, 4, 5, 123456789, time.UTC)
	cases := []*raft.Log{
		{Index: 1},
		{Index: 2, Term: ^uint64(0), Type: raft.LogConfiguration},
		{Index: 3, Data: bytes.Repeat([]byte{0xab}, 1<<20)},
		{Index: 4, Extensions: []byte{0, 1, 2}, AppendedAt: appended},
		{Index: 5, AppendedAt: time.Unix(-62135596800, 1)}, // near year 1
		{Index: 6, Type: raft.LogType(255), Data: []byte{}},
	}
	storeLogs(t, s, cases)
	for _, want := range cases {
		var got raft.Log
		if err := s.GetLog(want.Index, &got); err != nil {
			t.Fatalf("log %d: %v", want.Index, err)
		}
		if diff := sameLog(&got, want); diff != "" {
			t.Fatalf("log %d: %s", want.Index, diff)
		}
	}
}

func TestBoundsStartAnywhere(t *testing.T) {
	s := openStore(t, t.TempDir())
	storeLogs(t, s, entries(10000, 10004))
	wantBounds(t, s, 10000, 10004)
	storeLogs(t, s, entries(10005, 10005))
	wantBounds(t, s, 10000, 10005)
	storeLogs(t, s, []*raft.Log{entry(^uint64(0))})
	wantBounds(t, s, 10000, ^uint64(0))
	wantLog(t, s, ^uint64(0))
}

func TestDeleteRange(t *testing.T) {
	cases := []struct {
		name   string
		lo, hi uint64
		left   map[uint64]bool
	}{
		{"head", 1, 30, set(31, 100)},
		{"head from before the log", 0, 30, set(31, 100)},
		{"head exactly the first", 1, 1, set(2, 100)},
		{"tail", 71, 100, set(1, 70)},
		{"tail past the log", 71, ^uint64(0), set(1, 70)},
		{"tail exactly the last", 100, 100, set(1, 99)},
		{"all", 1, 100, nil},
		{"all and more", 0, ^uint64(0), nil},
		{"before the log", 0, 0, set(1, 100)},
		{"after the log", 101, 5000, set(1, 100)},
		{"empty range", 50, 49, set(1, 100)},
		{"middle", 40, 60, union(set(1, 39), set(61, 100))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir)
			storeLogs(t, s, entries(1, 100))
			deleteRange(t, s, tc.lo, tc.hi)
			wantExactly(t, s, tc.left, 0, 102)
			s = reopen(t, s, dir)
			wantExactly(t, s, tc.left, 0, 102)
		})
	}
}

// The raft pattern: a follower truncates a conflicting tail and appends in
// its place; a snapshot truncates the head; restoring a snapshot deletes
// everything and starts again past it.
func TestRaftTruncations(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	storeLogs(t, s, entries(1, 50))
	deleteRange(t, s, 41, 50)
	storeLogs(t, s, entries(41, 60))
	wantExactly(t, s, set(1, 60), 0, 61)
	deleteRange(t, s, 0, 30)
	wantExactly(t, s, set(31, 60), 0, 61)
	deleteRange(t, s, 31, 60)
	wantBounds(t, s, 0, 0)
	storeLogs(t, s, entries(1001, 1010))
	wantExactly(t, s, set(1001, 1010), 990, 1011)
	s = reopen(t, s, dir)
	wantExactly(t, s, set(1001, 1010), 990, 1011)
	storeLogs(t, s, entries(1011, 1012))
	wantExactly(t, s, set(1001, 1012), 990, 1013)
}

// Logs with gaps (which raft does not write to a monotonic store, but
// which the LogStore contract allows): the bounds stay exact.
func TestGaps(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	present := union(set(1, 10), set(20, 30), set(50, 50), set(70, 80))
	for _, r := range [][2]uint64{{70, 80}, {1, 10}, {50, 50}, {20, 30}} {
		storeLogs(t, s, entries(r[0], r[1]))
	}
	wantExactly(t, s, present, 0, 90)
	deleteRange(t, s, 0, 12) // the head, ending in a gap
	present = union(set(20, 30), set(50, 50), set(70, 80))
	wantExactly(t, s, present, 0, 90)
	deleteRange(t, s, 60, 100) // the tail, starting in a gap
	present = union(set(20, 30), set(50, 50))
	wantExactly(t, s, present, 0, 90)
	s = reopen(t, s, dir)
	wantExactly(t, s, present, 0, 90)
	deleteRange(t, s, 25, 49) // the middle: the bounds stay
	present = union(set(20, 24), set(50, 50))
	wantExactly(t, s, present, 0, 90)
	deleteRange(t, s, 21, 50) // the tail: down to 20
	wantExactly(t, s, set(20, 20), 0, 90)

	// A wide sparse range: the stored keys are listed, not every index.
	storeLogs(t, s, []*raft.Log{entry(1 << 40)})
	wantBounds(t, s, 20, 1<<40)
	deleteRange(t, s, 21, ^uint64(0))
	wantExactly(t, s, set(20, 20), 0, 90)
	deleteRange(t, s, 0, ^uint64(0))
	wantBounds(t, s, 0, 0)
}

func TestReopenKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	storeLogs(t, s, entries(1, 500))
	deleteRange(t, s, 1, 99)
	if err := s.SetUint64([]byte("CurrentTerm"), 7); err != nil {
		t.Fatal(err)
	}
	if err := s.Set([]byte("LastVoteCand"), []byte("node-2")); err != nil {
		t.Fatal(err)
	}
	// Once from the WAL, once after a flush to table files.
	for _, flush := range []bool{false, true} {
		if flush {
			if err := s.DB().Flush(); err != nil {
				t.Fatal(err)
			}
		}
		s = reopen(t, s, dir)
		wantExactly(t, s, set(100, 500), 90, 510)
		if term, err := s.GetUint64([]byte("CurrentTerm")); err != nil || term != 7 {
			t.Fatalf("CurrentTerm: %d, %v", term, err)
		}
		if cand, err := s.Get([]byte("LastVoteCand")); err != nil || string(cand) != "node-2" {
			t.Fatalf("LastVoteCand: %q, %v", cand, err)
		}
	}
}

func TestStableStore(t *testing.T) {
	s := openStore(t, t.TempDir())
	if _, err := s.Get([]byte("absent")); err != raftstore.ErrKeyNotFound {
		t.Fatalf("get absent: %v", err)
	}
	// hashicorp/raft tells a new server by this text (api.go, raft.go).
	if _, err := s.GetUint64([]byte("absent")); err == nil || err.Error() != "not found" {
		t.Fatalf("get uint64 absent: %v", err)
	}
	if err := s.Set([]byte("k"), []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if err := s.Set([]byte("k"), []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Get([]byte("k")); err != nil || string(v) != "v2" {
		t.Fatalf("get k: %q %v", v, err)
	}
	if err := s.Set([]byte("empty"), nil); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Get([]byte("empty")); err != nil || len(v) != 0 {
		t.Fatalf("get empty: %q %v", v, err)
	}
	for _, v := range []uint64{0, 1, 1 << 40, ^uint64(0)} {
		if err := s.SetUint64([]byte("n"), v); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetUint64([]byte("n")); err != nil || got != v {
			t.Fatalf("get uint64: %d %v, want %d", got, err, v)
		}
	}
	if _, err := s.GetUint64([]byte("k")); err == nil {
		t.Fatal("GetUint64 of a 2-byte value: no error")
	}
	// The stable store and the log do not see each other's keys.
	storeLogs(t, s, entries(1, 3))
	if _, err := s.Get([]byte{0, 0, 0, 0, 0, 0, 0, 1}); err != raftstore.ErrKeyNotFound {
		t.Fatalf("a log key seen through the stable store: %v", err)
	}
	wantBounds(t, s, 1, 3)
}

func TestClose(t *testing.T) {
	s := openStore(t, t.TempDir())
	storeLogs(t, s, entries(1, 3))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var l raft.Log
	_, err1 := s.FirstIndex()
	_, err2 := s.LastIndex()
	_, err3 := s.Get([]byte("k"))
	_, err4 := s.GetUint64([]byte("k"))
	for i, err := range []error{err1, err2, s.GetLog(1, &l), s.StoreLog(entry(4)),
		s.StoreLogs(entries(4, 5)), s.DeleteRange(1, 2), err3, err4,
		s.Set([]byte("k"), nil), s.SetUint64([]byte("k"), 1), s.Close()} {
		if !errors.Is(err, raftstore.ErrClosed) {
			t.Errorf("call %d after Close: %v, want ErrClosed", i, err)
		}
	}
}

func TestOpenOptions(t *testing.T) {
	dir := t.TempDir()
	if _, err := raftstore.Open(dir, &raftstore.Options{MustExist: true}); err == nil {
		t.Fatal("MustExist opened an empty directory")
	}
	var ropts ravel.Options
	if err := ropts.Set("write_buffer_size", "1M"); err != nil {
		t.Fatal(err)
	}
	s, err := raftstore.Open(dir, &raftstore.Options{Ravel: &ropts})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := ropts.Get("create_if_missing"); got != "false" {
		t.Errorf("the caller's options were changed: create_if_missing=%s", got)
	}
	storeLogs(t, s, entries(1, 10))
	s.Close()
	s, err = raftstore.Open(dir, &raftstore.Options{Ravel: &ropts, MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wantExactly(t, s, set(1, 10), 0, 11)
	if _, err := raftstore.Open(dir, nil); !errors.Is(err, ravel.ErrLocked) {
		t.Fatalf("a second Open of an open directory: %v, want ErrLocked", err)
	}
}

// One database holds the log, the stable store and the application's
// state machine; a second pair of prefixes holds a second, separate log.
func TestSharedDatabase(t *testing.T) {
	var ropts ravel.Options
	ropts.Set("create_if_missing", "true")
	dir := t.TempDir()
	db, err := ravel.Open(dir, &ropts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	if _, err := raftstore.New(db, &raftstore.Options{
		LogPrefix: []byte("r/"), StablePrefix: []byte("r/s/")}); err == nil {
		t.Fatal("overlapping prefixes were accepted")
	}
	a, err := raftstore.New(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := raftstore.New(db, &raftstore.Options{
		LogPrefix: []byte("group2/log/"), StablePrefix: []byte("group2/stable/")})
	if err != nil {
		t.Fatal(err)
	}
	storeLogs(t, a, entries(1, 20))
	storeLogs(t, b, entries(500, 510))
	a.SetUint64([]byte("CurrentTerm"), 1)
	b.SetUint64([]byte("CurrentTerm"), 2)
	if err := db.Put([]byte("kv/x"), []byte("state machine"), ravel.Sync); err != nil {
		t.Fatal(err)
	}
	wantExactly(t, a, set(1, 20), 0, 21)
	wantExactly(t, b, set(500, 510), 490, 520)
	deleteRange(t, a, 0, ^uint64(0))
	wantExactly(t, b, set(500, 510), 490, 520)
	if term, _ := b.GetUint64([]byte("CurrentTerm")); term != 2 {
		t.Fatalf("b's term: %d", term)
	}

	// Closing a store leaves the shared database open.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if v, err := db.Get([]byte("kv/x")); err != nil || string(v) != "state machine" {
		t.Fatalf("the application's key after the store closed: %q %v", v, err)
	}
	if _, err := a.FirstIndex(); !errors.Is(err, raftstore.ErrClosed) {
		t.Fatalf("closed shared store: %v", err)
	}
	b.Close()

	// A store made again on the database finds its log.
	b, err = raftstore.New(db, &raftstore.Options{
		LogPrefix: []byte("group2/log/"), StablePrefix: []byte("group2/stable/")})
	if err != nil {
		t.Fatal(err)
	}
	wantExactly(t, b, set(500, 510), 490, 520)
	b.Close()
}

// A key under the log prefix that is not a log key is reported at open.
func TestForeignKeyUnderLogPrefix(t *testing.T) {
	var ropts ravel.Options
	ropts.Set("create_if_missing", "true")
	db, err := ravel.Open(t.TempDir(), &ropts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.Put([]byte(raftstore.DefaultLogPrefix+"oops"), nil)
	if _, err := raftstore.New(db, nil); err == nil {
		t.Fatal("a 4-byte key under the log prefix was accepted")
	}
}

// A random sequence of appends, overwrites, gaps, deletes and reopens,
// checked after each step against a model: the set of indexes stored.
func TestModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 2))
	dir := t.TempDir()
	s := openStore(t, dir)
	present := map[uint64]bool{}
	next := uint64(1)
	for step := 0; step < 200; step++ {
		switch op := rng.IntN(10); {
		case op < 5: // append, sometimes after a gap
			if rng.IntN(8) == 0 {
				next += uint64(rng.IntN(20))
			}
			n := uint64(1 + rng.IntN(20))
			storeLogs(t, s, entries(next, next+n-1))
			for i := next; i < next+n; i++ {
				present[i] = true
			}
			next += n
		case op < 6: // overwrite some stored entries
			lo := uint64(1 + rng.IntN(int(next)))
			hi := lo + uint64(rng.IntN(10))
			storeLogs(t, s, entries(lo, hi))
			for i := lo; i <= hi; i++ {
				present[i] = true
			}
			next = max(next, hi+1)
		case op < 9: // delete a range anywhere, sometimes past the ends
			lo := uint64(rng.IntN(int(next + 5)))
			hi := lo + uint64(rng.IntN(60))
			deleteRange(t, s, lo, hi)
			for i := lo; i <= hi; i++ {
				delete(present, i)
			}
		default:
			s = reopen(t, s, dir)
		}
		wantExactly(t, s, present, 0, next+2)
	}
}

// set is {lo, ..., hi}.
func set(lo, hi uint64) map[uint64]bool {
	m := map[uint64]bool{}
	for i := lo; i <= hi; i++ {
		m[i] = true
	}
	return m
}

// union is the union of the sets.
func union(sets ...map[uint64]bool) map[uint64]bool {
	m := map[uint64]bool{}
	for _, s := range sets {
		for i := range s {
			m[i] = true
		}
	}
	return m
}
