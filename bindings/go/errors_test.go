// errors_test.go -- one test per result code ravel can be made to return
// here: each error wraps its code and carries ravel's message.

package ravel_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ravel "github.com/ravel-kv/ravel/bindings/go"
)

func TestErrorShape(t *testing.T) {
	_, err := ravel.Open(filepath.Join(t.TempDir(), "absent"), nil)
	e := wantError(t, err, ravel.ErrInvalid, "absent", "create_if_missing")
	if e.Op != "open" {
		t.Fatalf("Op %q", e.Op)
	}
	if !strings.HasPrefix(err.Error(), "ravel: open: ") || !strings.Contains(err.Error(), e.Msg) {
		t.Fatalf("Error() %q", err.Error())
	}
	if errors.Is(err, ravel.ErrNotFound) || errors.Is(err, ravel.ErrClosed) {
		t.Fatal("an ErrInvalid matches other sentinels")
	}
	if ravel.ErrNotFound.Error() != "ravel: not found" || ravel.ErrLocked.String() != "database is locked" {
		t.Fatalf("code texts %q, %q", ravel.ErrNotFound.Error(), ravel.ErrLocked.String())
	}
}

func TestErrLocked(t *testing.T) {
	_, dir := openFresh(t, "")
	_, err := ravel.Open(dir, nil)
	wantError(t, err, ravel.ErrLocked, dir)
}

func TestErrIO(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain-file")
	os.WriteFile(file, []byte("x"), 0o644)
	var o ravel.Options
	o.Set("create_if_missing", "true")
	_, err := ravel.Open(filepath.Join(file, "db"), &o)
	wantError(t, err, ravel.ErrIO, "plain-file", "errno")
}

func TestErrReadOnly(t *testing.T) {
	db, dir := openFresh(t, "")
	mustPut(t, db, "k", "v")
	db.Close()
	ro := openAt(t, dir, "read_only=true")
	if got := mustGet(t, ro, "k"); got != "v" {
		t.Fatalf("read-only get: %q", got)
	}
	wantError(t, ro.Put([]byte("k"), []byte("w")), ravel.ErrReadOnly)
	wantError(t, ro.Flush(), ravel.ErrReadOnly)
}

// A damaged table file is ErrCorrupt, naming the file.
func TestErrCorrupt(t *testing.T) {
	db, dir := openFresh(t, "")
	for i := 0; i < 1000; i++ {
		mustPut(t, db, fmt.Sprintf("key%04d", i), strings.Repeat("v", 50))
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(tables) != 1 {
		t.Fatalf("table files: %v", tables)
	}
	data, err := os.ReadFile(tables[0])
	if err != nil {
		t.Fatal(err)
	}
	data[100] ^= 0xff // inside the first data block
	if err := os.WriteFile(tables[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
	db = openAt(t, dir, "")
	wantError(t, db.Verify(), ravel.ErrCorrupt, filepath.Base(tables[0]))
	_, err = db.Get([]byte("key0000"))
	wantError(t, err, ravel.ErrCorrupt, filepath.Base(tables[0]))
	it, _ := db.NewIterator(nil)
	defer it.Close()
	var last error
	for _, err := range it.All() {
		last = err
	}
	wantError(t, last, ravel.ErrCorrupt, filepath.Base(tables[0]))
	wantError(t, it.Err(), ravel.ErrCorrupt, filepath.Base(tables[0]))
}
