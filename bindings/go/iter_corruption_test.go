// iter_corruption_test.go -- an error ends an iteration with the error,
// never with a silent early end, and no entry follows it.
//
// The database is layered so that going on past damage would show wrong
// data (as tests/test_iter_corruption.c builds it): every key written at
// version 1 and compacted to the last level, then every key rewritten at
// version 2 (every fifth one deleted instead) and flushed to level 0
// above it.  One bit of a data block in the middle of a table file is
// flipped.  The database is then read with the loops a user writes --
// range over All and Backward, with and without bounds, and the
// low-level for it.Seek(k); it.Valid(); it.Next() -- and every entry
// yielded must be the version 2 entry of the next live key, the loop must
// end with ErrCorrupt, nothing may be yielded after it, and every later
// call on the stopped iterator must fail with that same error.

package ravel_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	ravel "github.com/ravel-kv/ravel/bindings/go"
)

const (
	corruptKeys = 2000
	corruptOpts = "write_buffer_size=64K;target_file_size_base=64K;" +
		"disable_auto_compactions=true"
)

func corruptKey(i int) string { return fmt.Sprintf("key%06d", i) }

func corruptValue(i, version int) string {
	return fmt.Sprintf("v%d-%d-%060d", version, i, i)
}

// corruptLive reports whether key I is live at the end (version 2
// deleted every fifth key).
func corruptLive(i int) bool { return i%5 != 0 }

// tablesByLevel reads the ravel.sstables property: level -> file names.
func tablesByLevel(t *testing.T, db *ravel.DB) map[int][]string {
	t.Helper()
	text, err := db.Property("ravel.sstables")
	if err != nil {
		t.Fatal(err)
	}
	levels := map[int][]string{}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		// "level 1: 000006.sst 67711 bytes, ..."
		f := strings.Fields(line)
		level, err := strconv.Atoi(strings.TrimSuffix(f[1], ":"))
		if err != nil {
			t.Fatalf("ravel.sstables line %q", line)
		}
		levels[level] = append(levels[level], f[2])
	}
	return levels
}

// buildDamaged builds the layered database and flips a bit in a data
// block in the middle of the middle table file of level 0 (lastLevel
// false) or of the last level; it returns the database's directory.
func buildDamaged(t *testing.T, lastLevel bool) string {
	t.Helper()
	dir := t.TempDir()
	db := openAt(t, dir, "create_if_missing=true;"+corruptOpts)
	for i := 0; i < corruptKeys; i++ {
		mustPut(t, db, corruptKey(i), corruptValue(i, 1))
	}
	if err := db.CompactRange(nil, nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < corruptKeys; i++ {
		if corruptLive(i) {
			mustPut(t, db, corruptKey(i), corruptValue(i, 2))
		} else if err := db.Delete([]byte(corruptKey(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	levels := tablesByLevel(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	deepest := 0
	for l := range levels {
		deepest = max(deepest, l)
	}
	if len(levels) != 2 || deepest == 0 {
		t.Fatalf("want files at level 0 and one other level: %v", levels)
	}
	files := levels[0]
	if lastLevel {
		files = levels[deepest]
	}
	if len(files) < 3 {
		t.Fatalf("want entries on both sides of the damaged file: %v", levels)
	}
	path := filepath.Join(dir, files[len(files)/2])
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// the 80-byte footer starts with the index block's offset; the data
	// blocks lie before it
	indexOff := binary.LittleEndian.Uint64(data[len(data)-80:])
	if indexOff == 0 || indexOff >= uint64(len(data)-80) {
		t.Fatalf("%s: index block offset %d", path, indexOff)
	}
	data[indexOff/2] ^= 0x10
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// liveKeys returns the live keys from FIRST (included) on, stepping by
// STEP, while in [0, corruptKeys) and before STOP (excluded; -2: none).
func liveKeys(first, step, stop int) []int {
	var out []int
	for i := first; i >= 0 && i < corruptKeys && i != stop; i += step {
		if corruptLive(i) {
			out = append(out, i)
		}
	}
	return out
}

// checkEntries checks that GOT (what a loop yielded before its error) is
// a proper prefix of the entries WANT (key numbers) at version 2.
func checkEntries(t *testing.T, got []ravel.Entry, want []int) {
	t.Helper()
	if len(got) >= len(want) {
		t.Fatalf("%d entries of %d: the loop went on to the end past the damage", len(got), len(want))
	}
	for n, e := range got {
		k, v := corruptKey(want[n]), corruptValue(want[n], 2)
		if string(e.Key) != k {
			t.Fatalf("entry %d: key %q where %q is the next live key", n, e.Key, k)
		}
		if string(e.Value) != v {
			t.Fatalf("entry %d: %s = %.12q..., not its version 2", n, k, e.Value)
		}
	}
}

// rangeOver is the loop a user writes over All or Backward, except that
// it records everything instead of returning at the error: the entries
// before the error, the error, and how many iterations came after it.
func rangeOver(seq func(yield func(ravel.Entry, error) bool)) (entries []ravel.Entry, loopErr error, after int) {
	for e, err := range seq {
		if loopErr != nil {
			after++
			continue
		}
		if err != nil {
			loopErr = err
			continue
		}
		entries = append(entries, e)
	}
	return entries, loopErr, after
}

// expectStopped checks that the stopped iterator shows nothing and that
// every move on it fails with FIRST (same code and message), and that
// ranging over it again yields that error alone.
func expectStopped(t *testing.T, it *ravel.Iterator, first *ravel.Error) {
	t.Helper()
	mid := []byte(corruptKey(corruptKeys / 2))
	moves := []struct {
		name string
		move func() bool
	}{
		{"Next", it.Next}, {"Prev", it.Prev},
		{"SeekToFirst", it.SeekToFirst}, {"SeekToLast", it.SeekToLast},
		{"Seek", func() bool { return it.Seek(mid) }},
		{"SeekForPrev", func() bool { return it.SeekForPrev(mid) }},
		{"Next", it.Next},
	}
	for _, m := range moves {
		if m.move() || it.Valid() || it.Key() != nil || it.Value() != nil {
			t.Fatalf("%s on the stopped iterator showed an entry (%q)", m.name, it.Key())
		}
		e := wantError(t, it.Err(), ravel.ErrCorrupt)
		if e.Msg != first.Msg {
			t.Fatalf("%s on the stopped iterator: %q, not its error %q", m.name, e.Msg, first.Msg)
		}
	}
	for name, seq := range map[string]func(func(ravel.Entry, error) bool){"All": it.All(), "Backward": it.Backward()} {
		entries, err, after := rangeOver(seq)
		if len(entries) != 0 || after != 0 {
			t.Fatalf("%s over the stopped iterator yielded %d entries", name, len(entries)+after)
		}
		if e := wantError(t, err, ravel.ErrCorrupt); e.Msg != first.Msg {
			t.Fatalf("%s over the stopped iterator: %q, not %q", name, e.Msg, first.Msg)
		}
	}
}

func TestIteratorStopsAtCorruption(t *testing.T) {
	lo, hi := 7, corruptKeys-7 // bounds for the bounded loops
	loops := []struct {
		name  string
		opts  ravel.IterOptions
		back  bool
		want  []int
		empty bool // the error may come before any entry
	}{
		{"All", ravel.IterOptions{}, false, liveKeys(0, 1, -2), false},
		{"Backward", ravel.IterOptions{}, true, liveKeys(corruptKeys-1, -1, -2), false},
		{"All from Start", ravel.IterOptions{Start: []byte(corruptKey(corruptKeys / 3))}, false,
			liveKeys(corruptKeys/3, 1, -2), true},
		{"Backward from Stop", ravel.IterOptions{Stop: []byte(corruptKey(2 * corruptKeys / 3))}, true,
			liveKeys(2*corruptKeys/3-1, -1, -2), true},
		{"All bounded", ravel.IterOptions{Start: []byte(corruptKey(lo)), Stop: []byte(corruptKey(hi))}, false,
			liveKeys(lo, 1, hi), true},
		{"Backward bounded", ravel.IterOptions{Start: []byte(corruptKey(lo)), Stop: []byte(corruptKey(hi))}, true,
			liveKeys(hi-1, -1, lo-1), true},
	}
	for _, lastLevel := range []bool{false, true} {
		where := map[bool]string{false: "level 0", true: "last level"}[lastLevel]
		dir := buildDamaged(t, lastLevel)
		db := openAt(t, dir, corruptOpts)
		for _, l := range loops {
			t.Run(where+"/"+l.name, func(t *testing.T) {
				it, err := db.NewIterator(&l.opts)
				if err != nil {
					t.Fatal(err)
				}
				defer it.Close()
				seq := it.All()
				if l.back {
					seq = it.Backward()
				}
				entries, loopErr, after := rangeOver(seq)
				if loopErr == nil {
					t.Fatalf("the loop ended without an error after %d of %d entries", len(entries), len(l.want))
				}
				first := wantError(t, loopErr, ravel.ErrCorrupt, ".sst")
				if after != 0 {
					t.Fatalf("%d iterations after the error %v", after, loopErr)
				}
				checkEntries(t, entries, l.want)
				if !l.empty && len(entries) == 0 {
					t.Fatal("no entry before the damage in the middle of the keys")
				}
				if e := wantError(t, it.Err(), ravel.ErrCorrupt); e.Msg != first.Msg {
					t.Fatalf("Err %q, the loop's error %q", e.Msg, first.Msg)
				}
				expectStopped(t, it, first)
			})
		}

		// the low-level loops: position, step while Valid, check Err
		lowLevel := []struct {
			name  string
			first func(*ravel.Iterator) bool
			back  bool
			want  []int
		}{
			{"SeekToFirst/Next", (*ravel.Iterator).SeekToFirst, false, liveKeys(0, 1, -2)},
			{"SeekToLast/Prev", (*ravel.Iterator).SeekToLast, true, liveKeys(corruptKeys-1, -1, -2)},
			{"Seek/Next", func(it *ravel.Iterator) bool { return it.Seek([]byte(corruptKey(corruptKeys / 3))) },
				false, liveKeys(corruptKeys/3, 1, -2)},
			{"SeekForPrev/Prev", func(it *ravel.Iterator) bool {
				return it.SeekForPrev([]byte(corruptKey(2 * corruptKeys / 3)))
			}, true, liveKeys(2*corruptKeys/3, -1, -2)},
		}
		for _, l := range lowLevel {
			t.Run(where+"/"+l.name, func(t *testing.T) {
				it, err := db.NewIterator(nil)
				if err != nil {
					t.Fatal(err)
				}
				defer it.Close()
				var entries []ravel.Entry
				step := it.Next
				if l.back {
					step = it.Prev
				}
				for l.first(it); it.Valid(); step() {
					entries = append(entries, ravel.Entry{Key: it.Key(), Value: it.Value()})
				}
				if it.Err() == nil {
					t.Fatalf("the loop ended without an error after %d of %d entries", len(entries), len(l.want))
				}
				first := wantError(t, it.Err(), ravel.ErrCorrupt, ".sst")
				checkEntries(t, entries, l.want)
				expectStopped(t, it, first)
			})
		}
	}
}
