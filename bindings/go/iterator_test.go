// iterator_test.go -- iteration forward and backward, with and without
// bounds, seeks, and the iterator's errors.

package ravel_test

import (
	"errors"
	"iter"
	"strings"
	"testing"

	ravel "github.com/ravel-kv/ravel/bindings/go"
)

// collect returns the entries of SEQ as "k=v,...", with ERROR:... at the
// end if it yields an error.
func collect(seq iter.Seq2[ravel.Entry, error]) string {
	var items []string
	for e, err := range seq {
		if err != nil {
			items = append(items, "ERROR:"+err.Error())
			continue // (the error is the loop's last iteration)
		}
		items = append(items, string(e.Key)+"="+string(e.Value))
	}
	return strings.Join(items, ",")
}

// keysOf returns the keys of IT's loop from FIRST on with STEP.
func keysOf(it *ravel.Iterator, first, step func() bool) string {
	var keys []string
	for ok := first(); ok; ok = step() {
		keys = append(keys, string(it.Key()))
	}
	return strings.Join(keys, ",")
}

func fillLetters(t *testing.T, db *ravel.DB) {
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		mustPut(t, db, k, strings.ToUpper(k))
	}
}

func TestIteratorWhole(t *testing.T) {
	db, _ := openFresh(t, "")
	fillLetters(t, db)
	db.Delete([]byte("d"))
	it, err := db.NewIterator(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if it.Valid() || it.Key() != nil || it.Value() != nil {
		t.Fatal("a new iterator is positioned")
	}
	if got := collect(it.All()); got != "a=A,b=B,c=C,e=E,f=F,g=G,h=H" {
		t.Fatalf("forward: %s", got)
	}
	if got := collect(it.Backward()); got != "h=H,g=G,f=F,e=E,c=C,b=B,a=A" {
		t.Fatalf("backward: %s", got)
	}
	if got := keysOf(it, it.SeekToFirst, it.Next); got != "a,b,c,e,f,g,h" {
		t.Fatalf("loop: %s", got)
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	// seeks
	if !it.Seek([]byte("d")) || string(it.Key()) != "e" {
		t.Fatalf("seek d: %q", it.Key())
	}
	if !it.SeekForPrev([]byte("d")) || string(it.Key()) != "c" {
		t.Fatalf("seek for prev d: %q", it.Key())
	}
	if !it.Prev() || string(it.Key()) != "b" || !it.Next() || string(it.Key()) != "c" {
		t.Fatal("prev then next")
	}
	if it.Seek([]byte("i")) || it.SeekForPrev([]byte("0")) {
		t.Fatal("seek past the ends is valid")
	}
	// writes after the iterator was made are not seen
	mustPut(t, db, "bb", "new")
	if it.Seek([]byte("b")); !it.Next() || string(it.Key()) != "c" {
		t.Fatalf("iterator saw a later write: %q", it.Key())
	}
	// an early break leaves the iterator where the loop stopped
	for e, err := range it.All() {
		if err != nil {
			t.Fatal(err)
		}
		if string(e.Key) == "c" {
			break
		}
	}
	if string(it.Key()) != "c" {
		t.Fatalf("after break: %q", it.Key())
	}
}

func TestIteratorBounds(t *testing.T) {
	db, _ := openFresh(t, "")
	fillLetters(t, db)
	it, err := db.NewIterator(&ravel.IterOptions{Start: []byte("c"), Stop: []byte("g")})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if got := collect(it.All()); got != "c=C,d=D,e=E,f=F" {
		t.Fatalf("forward [c,g): %s", got)
	}
	if got := collect(it.Backward()); got != "f=F,e=E,d=D,c=C" {
		t.Fatalf("backward [c,g): %s", got)
	}
	checks := []struct {
		name string
		move func() bool
		want string // "" for invalid
	}{
		{"seek before start", func() bool { return it.Seek([]byte("a")) }, "c"},
		{"seek inside", func() bool { return it.Seek([]byte("dd")) }, "e"},
		{"seek at stop", func() bool { return it.Seek([]byte("g")) }, ""},
		{"seek for prev past stop", func() bool { return it.SeekForPrev([]byte("z")) }, "f"},
		{"seek for prev at stop", func() bool { return it.SeekForPrev([]byte("g")) }, "f"},
		{"seek for prev inside", func() bool { return it.SeekForPrev([]byte("dd")) }, "d"},
		{"seek for prev before start", func() bool { return it.SeekForPrev([]byte("b")) }, ""},
		{"next past stop", func() bool { it.SeekToLast(); return it.Next() }, ""},
		{"prev past start", func() bool { it.SeekToFirst(); return it.Prev() }, ""},
	}
	for _, c := range checks {
		ok := c.move()
		if ok != (c.want != "") || string(it.Key()) != c.want || it.Valid() != ok {
			t.Fatalf("%s: valid %v key %q, want %q", c.name, ok, it.Key(), c.want)
		}
	}

	// a stop bound between keys, and a start bound alone
	it2, _ := db.NewIterator(&ravel.IterOptions{Stop: []byte("bb")})
	defer it2.Close()
	if got := keysOf(it2, it2.SeekToLast, it2.Prev); got != "b,a" {
		t.Fatalf("backward to bb: %s", got)
	}
	it3, _ := db.NewIterator(&ravel.IterOptions{Start: []byte("gg")})
	defer it3.Close()
	if got := keysOf(it3, it3.SeekToFirst, it3.Next); got != "h" {
		t.Fatalf("forward from gg: %s", got)
	}
	// an empty stop excludes every key; an empty start excludes none
	it4, _ := db.NewIterator(&ravel.IterOptions{Start: []byte{}, Stop: []byte{}})
	defer it4.Close()
	if it4.SeekToFirst() || it4.SeekToLast() || it4.Err() != nil {
		t.Fatal("an empty stop bound let a key through")
	}
	it5, _ := db.NewIterator(&ravel.IterOptions{Start: []byte{}})
	defer it5.Close()
	if got := keysOf(it5, it5.SeekToFirst, it5.Next); got != "a,b,c,d,e,f,g,h" {
		t.Fatalf("empty start: %s", got)
	}
	// the bounds were copied
	start := []byte("c")
	it6, _ := db.NewIterator(&ravel.IterOptions{Start: start})
	defer it6.Close()
	start[0] = 'f'
	if !it6.SeekToFirst() || string(it6.Key()) != "c" {
		t.Fatal("the iterator shares the caller's bound")
	}
}

func TestIteratorBinaryKeysOrder(t *testing.T) {
	db, _ := openFresh(t, "")
	keys := []string{"", "\x00", "\x00\x00", "\x00\x01", "a", "a\x00", "a\x00b", "b", "\xff", "\xff\xff"}
	for i := len(keys) - 1; i >= 0; i-- {
		mustPut(t, db, keys[i], "v"+keys[i])
	}
	it, _ := db.NewIterator(nil)
	defer it.Close()
	i := 0
	for e, err := range it.All() {
		if err != nil {
			t.Fatal(err)
		}
		if string(e.Key) != keys[i] || string(e.Value) != "v"+keys[i] {
			t.Fatalf("entry %d: %q=%q, want key %q", i, e.Key, e.Value, keys[i])
		}
		i++
	}
	if i != len(keys) || it.Err() != nil {
		t.Fatalf("%d entries, err %v", i, it.Err())
	}
	// Key and Value are copies: they survive the next move
	it.SeekToFirst()
	k, v := it.Key(), it.Value()
	it.Next()
	if string(k) != "" || string(v) != "v" || k == nil {
		t.Fatalf("copied entry changed: %q=%q", k, v)
	}
}

func TestIteratorMisuse(t *testing.T) {
	db, _ := openFresh(t, "")
	fillLetters(t, db)
	it, _ := db.NewIterator(nil)
	// Next on an unpositioned iterator is an error, kept until a seek
	if it.Next() {
		t.Fatal("next on an unpositioned iterator")
	}
	wantError(t, it.Err(), ravel.ErrInvalid, "not positioned")
	if it.Prev(); !errors.Is(it.Err(), ravel.ErrInvalid) {
		t.Fatal("error lost")
	}
	if !it.SeekToFirst() || it.Err() != nil {
		t.Fatalf("a seek did not clear the error: %v", it.Err())
	}
	// running off the end, then Next again
	for it.Valid() {
		it.Next()
	}
	if it.Err() != nil {
		t.Fatalf("the end of the keys is an error: %v", it.Err())
	}
	it.Next()
	wantError(t, it.Err(), ravel.ErrInvalid)
	// a key over the 1 MiB limit is refused by ravel, with its message,
	// and the iterator is not left valid where it was
	it.SeekToFirst()
	if it.Seek(make([]byte, 1<<20+1)) || it.Valid() || it.Key() != nil {
		t.Fatal("a refused seek left the iterator valid")
	}
	wantError(t, it.Err(), ravel.ErrInvalid, "1048577")

	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if it.SeekToFirst() || it.Valid() || it.Key() != nil {
		t.Fatal("a closed iterator moved")
	}
	if !errors.Is(it.Err(), ravel.ErrClosed) {
		t.Fatalf("error of a closed iterator: %v", it.Err())
	}
	if !errors.Is(it.Close(), ravel.ErrClosed) {
		t.Fatal("second close")
	}
	// a snapshot of another database
	other, _ := openFresh(t, "")
	s, _ := other.NewSnapshot()
	defer s.Close()
	_, err := db.NewIterator(&ravel.IterOptions{Snapshot: s})
	wantError(t, err, ravel.ErrInvalid, "belongs to database")
}
