// ravel_test.go -- behaviour of the binding: reads and writes, batches,
// snapshots, options, properties, maintenance calls, persistence.

package ravel_test

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	ravel "github.com/ravel-kv/ravel/bindings/go"
)

func TestLibVersion(t *testing.T) {
	v := ravel.LibVersion()
	if !regexp.MustCompile(`^\d+\.\d+\.\d+`).MatchString(v) {
		t.Fatalf("LibVersion %q is not a version", v)
	}
	var major, minor, patch int
	fmt.Sscanf(v, "%d.%d.%d", &major, &minor, &patch)
	if n := ravel.LibVersionNumber(); n != major*1000000+minor*1000+patch {
		t.Fatalf("LibVersionNumber %d does not match %q", n, v)
	}
}

func TestPutGetDeleteRoundTrip(t *testing.T) {
	db, _ := openFresh(t, "")
	big := bytes.Repeat([]byte("0123456789abcdef"), 10000) // past Get's stack buffer
	cases := []struct{ name, key, value []byte }{
		{[]byte("plain"), []byte("hello"), []byte("world")},
		{[]byte("empty key"), []byte{}, []byte("value of the empty key")},
		{[]byte("empty value"), []byte("k-empty"), []byte{}},
		{[]byte("NUL bytes"), []byte("a\x00b\x00"), []byte("\x00\x01\x00\xff")},
		{[]byte("big value"), []byte("big"), big},
		{[]byte("value of 512"), []byte("v512"), bytes.Repeat([]byte{7}, 512)},
		{[]byte("value of 513"), []byte("v513"), bytes.Repeat([]byte{8}, 513)},
	}
	for _, c := range cases {
		if err := db.Put(c.key, c.value); err != nil {
			t.Fatalf("%s: put: %v", c.name, err)
		}
	}
	for _, c := range cases {
		got, err := db.Get(c.key)
		if err != nil {
			t.Fatalf("%s: get: %v", c.name, err)
		}
		if !bytes.Equal(got, c.value) || got == nil {
			t.Fatalf("%s: got %d bytes %q, want %d bytes", c.name, len(got),
				truncate(got), len(c.value))
		}
		// AppendGet onto a prefix, with too little and with enough room
		for _, room := range []int{0, 1 << 20} {
			dst := append(make([]byte, 0, 3+room), "pre"...)
			out, err := db.AppendGet(dst, c.key)
			if err != nil {
				t.Fatalf("%s: append get: %v", c.name, err)
			}
			if string(out[:3]) != "pre" || !bytes.Equal(out[3:], c.value) {
				t.Fatalf("%s: append get gave %q", c.name, truncate(out))
			}
		}
	}
	// nil and empty keys are the same key
	if v, err := db.Get(nil); err != nil || string(v) != "value of the empty key" {
		t.Fatalf("get nil key: %q, %v", v, err)
	}

	// the empty key and the key "\x00" are different keys
	if _, err := db.Get([]byte{0}); err != ravel.ErrNotFound {
		t.Fatalf("get of absent \\x00: %v", err)
	}
	for _, c := range cases {
		if err := db.Delete(c.key); err != nil {
			t.Fatalf("%s: delete: %v", c.name, err)
		}
		v, err := db.Get(c.key)
		if v != nil || err != ravel.ErrNotFound || !errors.Is(err, ravel.ErrNotFound) {
			t.Fatalf("%s: get after delete: %q, %v", c.name, v, err)
		}
		dst := []byte("keep")
		out, err := db.AppendGet(dst, c.key)
		if err != ravel.ErrNotFound || string(out) != "keep" {
			t.Fatalf("%s: append get after delete: %q, %v", c.name, out, err)
		}
	}
	// deleting an absent key succeeds
	if err := db.Delete([]byte("never there")); err != nil {
		t.Fatalf("delete of an absent key: %v", err)
	}
}

func truncate(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}

func TestWriteFlagsAndReopen(t *testing.T) {
	db, dir := openFresh(t, "")
	if err := db.Put([]byte("synced"), []byte("1"), ravel.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Put([]byte("unlogged"), []byte("2"), ravel.NoWAL); err != nil {
		t.Fatal(err)
	}
	if err := db.Put([]byte("both"), []byte("3"), ravel.Sync, ravel.NoSlowdown); err != nil {
		t.Fatal(err)
	}
	if err := db.Delete([]byte("both"), ravel.Sync|ravel.NoSlowdown); err != nil {
		t.Fatal(err)
	}
	b := ravel.NewBatch()
	defer b.Close()
	b.Put([]byte("batched"), []byte("4"))
	if err := db.Write(b, ravel.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// everything written survives the reopen (the NoWAL write through
	// the flush at close)
	db = openAt(t, dir, "")
	for k, want := range map[string]string{"synced": "1", "unlogged": "2", "batched": "4"} {
		if got := mustGet(t, db, k); got != want {
			t.Fatalf("%s after reopen: %q, want %q", k, got, want)
		}
	}
	if _, err := db.Get([]byte("both")); err != ravel.ErrNotFound {
		t.Fatalf("deleted key after reopen: %v", err)
	}
}

func TestPersistenceAcrossReopens(t *testing.T) {
	dir := t.TempDir()
	for round := 0; round < 3; round++ {
		db := openAt(t, dir, "create_if_missing=true")
		for i := 0; i < round*100; i++ {
			want := fmt.Sprintf("round%d-%d", round-1, i)
			if got := mustGet(t, db, fmt.Sprintf("k%04d", i)); got != want {
				t.Fatalf("round %d key %d: %q, want %q", round, i, got, want)
			}
		}
		for i := 0; i < (round+1)*100; i++ {
			mustPut(t, db, fmt.Sprintf("k%04d", i), fmt.Sprintf("round%d-%d", round, i))
		}
		if round == 1 {
			if err := db.Flush(); err != nil { // part in table files
				t.Fatal(err)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestBatch(t *testing.T) {
	db, _ := openFresh(t, "")
	mustPut(t, db, "doomed", "x")
	b := ravel.NewBatch()
	defer b.Close()
	if b.Count() != 0 {
		t.Fatalf("new batch counts %d", b.Count())
	}
	// an empty batch is a no-op that succeeds
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	b.Put([]byte("a"), []byte("1"))
	b.Put([]byte("b"), []byte("2"))
	b.Put([]byte{}, []byte("empty"))
	b.Delete([]byte("doomed"))
	b.Put([]byte("a"), []byte("1 again")) // later wins
	if b.Count() != 5 {
		t.Fatalf("count %d, want 5", b.Count())
	}
	if _, err := db.Get([]byte("a")); err != ravel.ErrNotFound {
		t.Fatal("a batch's put is visible before Write")
	}
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"a": "1 again", "b": "2", "": "empty"} {
		if got := mustGet(t, db, k); got != want {
			t.Fatalf("%q: %q, want %q", k, got, want)
		}
	}
	if _, err := db.Get([]byte("doomed")); err != ravel.ErrNotFound {
		t.Fatalf("batch delete: %v", err)
	}
	// Write does not change the batch; Clear empties it
	if b.Count() != 5 {
		t.Fatalf("count after write %d", b.Count())
	}
	if err := b.Clear(); err != nil || b.Count() != 0 {
		t.Fatalf("clear: %v, count %d", err, b.Count())
	}
	b.Put([]byte("c"), []byte("3"))
	if err := db.Write(b); err != nil || mustGet(t, db, "c") != "3" {
		t.Fatalf("reused batch: %v", err)
	}
	// a key over 1 MiB is refused by the batch with a message
	err := b.Put(make([]byte, 1<<20+1), nil)
	wantError(t, err, ravel.ErrInvalid)
}

// A batch is atomic: a reader at any snapshot sees all of it or none.
func TestBatchAtomicUnderConcurrentReads(t *testing.T) {
	db, _ := openFresh(t, "")
	const rounds = 300
	done := make(chan error)
	go func() {
		b := ravel.NewBatch()
		defer b.Close()
		for n := 0; n < rounds; n++ {
			b.Clear()
			v := []byte(fmt.Sprint(n))
			for _, k := range []string{"x", "y", "z"} {
				b.Put([]byte(k), v)
			}
			if err := db.Write(b); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for finished := false; !finished; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			finished = true
		default:
		}
		s, err := db.NewSnapshot()
		if err != nil {
			t.Fatal(err)
		}
		var seen []string
		for _, k := range []string{"x", "y", "z"} {
			v, err := s.Get([]byte(k))
			if err != nil && err != ravel.ErrNotFound {
				t.Fatal(err)
			}
			seen = append(seen, string(v))
		}
		s.Close()
		if seen[0] != seen[1] || seen[1] != seen[2] {
			t.Fatalf("a snapshot saw part of a batch: %q", seen)
		}
	}
}

func TestSnapshotIsolation(t *testing.T) {
	db, _ := openFresh(t, "")
	mustPut(t, db, "k", "old")
	mustPut(t, db, "gone", "here")
	s, err := db.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, db, "k", "new")
	mustPut(t, db, "later", "x")
	db.Delete([]byte("gone"))
	if err := db.Flush(); err != nil { // the snapshot survives a flush too
		t.Fatal(err)
	}

	if v, err := s.Get([]byte("k")); err != nil || string(v) != "old" {
		t.Fatalf("snapshot get k: %q, %v", v, err)
	}
	if v, err := s.Get([]byte("gone")); err != nil || string(v) != "here" {
		t.Fatalf("snapshot get gone: %q, %v", v, err)
	}
	if _, err := s.Get([]byte("later")); err != ravel.ErrNotFound {
		t.Fatalf("snapshot sees a later write: %v", err)
	}
	if out, err := s.AppendGet([]byte(">"), []byte("k")); err != nil || string(out) != ">old" {
		t.Fatalf("snapshot append get: %q, %v", out, err)
	}
	if got := mustGet(t, db, "k"); got != "new" {
		t.Fatalf("latest k: %q", got)
	}
	// an iterator at the snapshot sees the old state
	it, err := db.NewIterator(&ravel.IterOptions{Snapshot: s})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for e, err := range it.All() {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, string(e.Key)+"="+string(e.Value))
	}
	if strings.Join(keys, ",") != "gone=here,k=old" {
		t.Fatalf("snapshot iterator: %v", keys)
	}
	// the iterator outlives the snapshot it was made from
	s2, _ := db.NewSnapshot()
	if s2.Sequence() <= s.Sequence() {
		t.Fatalf("sequences %d then %d", s.Sequence(), s2.Sequence())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !it.SeekToLast() || string(it.Key()) != "k" || string(it.Value()) != "old" {
		t.Fatal("iterator after its snapshot's close")
	}
	it.Close()
	s2.Close()

	// a closed snapshot refuses reads
	_, err = s.Get([]byte("k"))
	if e := wantError(t, err, ravel.ErrInvalid, "snapshot is closed"); e == nil || !errors.Is(err, ravel.ErrClosed) {
		t.Fatalf("get on a closed snapshot: %v", err)
	}
	if err := s.Close(); !errors.Is(err, ravel.ErrClosed) {
		t.Fatalf("second close: %v", err)
	}
	if _, err := db.NewIterator(&ravel.IterOptions{Snapshot: s}); !errors.Is(err, ravel.ErrClosed) {
		t.Fatalf("iterator on a closed snapshot: %v", err)
	}
}

func TestOptions(t *testing.T) {
	var o ravel.Options
	if v, err := o.Get("write_buffer_size"); err != nil || v == "" {
		t.Fatalf("default write_buffer_size: %q, %v", v, err)
	}
	if err := o.Set("write_buffer_size", "4M"); err != nil {
		t.Fatal(err)
	}
	if err := o.Set("write_buffer_size", "8M"); err != nil { // replaces
		t.Fatal(err)
	}
	v8, _ := o.Get("write_buffer_size")
	var p ravel.Options
	p.Set("write_buffer_size", "8388608")
	if v, _ := p.Get("write_buffer_size"); v != v8 {
		t.Fatalf("8M reads %q, 8388608 reads %q", v8, v)
	}
	if err := o.Parse(" create_if_missing = yes ; ; bloom_bits_per_key=0"); err != nil {
		t.Fatal(err)
	}
	if v, _ := o.Get("create_if_missing"); v != "true" {
		t.Fatalf("create_if_missing after parse: %q", v)
	}

	// errors name the option
	wantError(t, o.Set("no_such_option", "1"), ravel.ErrInvalid, "no_such_option")
	wantError(t, o.Set("write_bufer_size", "1"), ravel.ErrInvalid, "write_bufer_size", "write_buffer_size")
	wantError(t, o.Set("write_buffer_size", "lots"), ravel.ErrInvalid, "write_buffer_size")
	wantError(t, o.Set("max_subcompactions", "2"), ravel.ErrInvalid, "max_subcompactions")
	wantError(t, o.Parse("num_levels=3;bogus_item=1"), ravel.ErrInvalid, "bogus_item")
	_, err := o.Get("no_such_option")
	wantError(t, err, ravel.ErrInvalid, "no_such_option")
	// a failed Set or Parse keeps nothing
	if v, _ := o.Get("num_levels"); v != "7" {
		t.Fatalf("num_levels after a failed parse: %q", v)
	}

	// the options reach the database
	dir := t.TempDir()
	db, err := ravel.Open(dir, &o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	text, err := db.Property("ravel.options")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"bloom_bits_per_key=0", "create_if_missing=true"} {
		if !strings.Contains(text, want) {
			t.Fatalf("ravel.options lacks %q:\n%s", want, text)
		}
	}
	// inconsistent options are refused by Open
	var bad ravel.Options
	bad.Parse("create_if_missing=true;level0_slowdown_writes_trigger=30;level0_stop_writes_trigger=10")
	_, err = ravel.Open(t.TempDir(), &bad)
	wantError(t, err, ravel.ErrInvalid, "level0_")
}

func TestProperties(t *testing.T) {
	db, _ := openFresh(t, "")
	for i := 0; i < 50; i++ {
		mustPut(t, db, fmt.Sprintf("key%02d", i), "v")
	}
	if n, err := db.Property("ravel.estimate-num-keys"); err != nil || n != "50" {
		t.Fatalf("estimate-num-keys: %q, %v", n, err)
	}
	if s, err := db.Property("ravel.stats"); err != nil || s == "" {
		t.Fatalf("stats: %q, %v", s, err)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if n, err := db.Property("ravel.num-files-at-level0"); err != nil || n != "1" {
		t.Fatalf("files at level 0 after a flush: %q, %v", n, err)
	}
	_, err := db.Property("ravel.no-such-thing")
	wantError(t, err, ravel.ErrNotFound, "ravel.no-such-thing", "estimate-num-keys")
}

func TestFlushCompactVerify(t *testing.T) {
	db, _ := openFresh(t, "")
	for round := 0; round < 3; round++ {
		for i := 0; i < 200; i++ {
			mustPut(t, db, fmt.Sprintf("k%03d", i), fmt.Sprintf("v%d", round))
		}
		if err := db.FlushWAL(round%2 == 0); err != nil {
			t.Fatal(err)
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Flush(ravel.FlushNoWait); err != nil { // empty memtable
		t.Fatal(err)
	}
	if err := db.CompactRange([]byte{}, []byte("k050")); err != nil {
		t.Fatal(err)
	}
	// an empty END is the empty key, not an open end
	wantError(t, db.CompactRange([]byte("k050"), []byte{}), ravel.ErrInvalid, "begin is after end")
	if err := db.CompactRange(nil, nil); err != nil {
		t.Fatal(err)
	}
	if n, _ := db.Property("ravel.num-files-at-level0"); n != "0" {
		t.Fatalf("level 0 after a full compaction: %s files", n)
	}
	if err := db.Verify(); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, db, "k123"); got != "v2" {
		t.Fatalf("after compaction: %q", got)
	}
}

func TestCacheAndWriteController(t *testing.T) {
	cache, err := ravel.NewCache(8 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if cache.Capacity() != 8<<20 {
		t.Fatalf("capacity %d", cache.Capacity())
	}
	wc, err := ravel.NewWriteController(4 << 20)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ravel.NewWriteController(1)
	wantError(t, err, ravel.ErrInvalid)

	var o ravel.Options
	o.Set("create_if_missing", "true")
	o.SetCache(cache)
	o.SetWriteController(wc)
	a, err := ravel.Open(t.TempDir(), &o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ravel.Open(t.TempDir(), &o)
	if err != nil {
		t.Fatal(err)
	}
	// the databases keep their references when ours are dropped
	if err := cache.Close(); err != nil {
		t.Fatal(err)
	}
	if err := wc.Close(); err != nil {
		t.Fatal(err)
	}
	for _, db := range []*ravel.DB{a, b} {
		mustPut(t, db, "k", "v")
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
		if got := mustGet(t, db, "k"); got != "v" {
			t.Fatalf("got %q", got)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// a closed cache cannot be given to Open, nor closed again
	if cache.Usage() != 0 || cache.Capacity() != 0 {
		t.Fatal("a closed cache reports a size")
	}
	_, err = ravel.Open(t.TempDir(), &o)
	if !errors.Is(err, ravel.ErrClosed) {
		t.Fatalf("open with a closed cache: %v", err)
	}
	if !errors.Is(cache.Close(), ravel.ErrClosed) || !errors.Is(wc.Close(), ravel.ErrClosed) {
		t.Fatal("second close of a cache or write controller")
	}
}

// A cache shared by a database fills as it reads table files.
func TestCacheUsage(t *testing.T) {
	cache, err := ravel.NewCache(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	var o ravel.Options
	o.Set("create_if_missing", "true")
	o.SetCache(cache)
	db, err := ravel.Open(t.TempDir(), &o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := 0; i < 100; i++ {
		mustPut(t, db, fmt.Sprintf("k%03d", i), strings.Repeat("v", 100))
	}
	db.Flush()
	mustGet(t, db, "k050")
	if cache.Usage() == 0 {
		t.Fatal("a read from a table file left nothing in the shared cache")
	}
}
