// destroy_test.go -- Destroy: a closed database goes with its directory; a
// file of another name keeps the directory; an open database is refused
// with ErrLocked and nothing deleted; a missing directory is no error; a
// NUL byte in the path is ErrInvalid.

package ravel_test

import (
	"os"
	"path/filepath"
	"testing"

	ravel "github.com/ravel-kv/ravel/bindings/go"
)

// closedDBWithData makes a database in a new directory with a table file
// and a WAL, closes it, and returns its path.
func closedDBWithData(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "db")
	db := openAt(t, dir, "create_if_missing=true")
	mustPut(t, db, "flushed", "1")
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	mustPut(t, db, "in-wal", "2")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestDestroyClosedDatabaseRemovesDirectory(t *testing.T) {
	dir := closedDBWithData(t)
	if _, err := os.Stat(filepath.Join(dir, "CURRENT")); err != nil {
		t.Fatalf("no database to destroy: %v", err)
	}
	if err := ravel.Destroy(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s still there (stat: %v)", dir, err)
	}
	if _, err := os.Stat(filepath.Dir(dir)); err != nil {
		t.Fatalf("the parent went too: %v", err)
	}
}

func TestDestroyKeepsForeignFileAndDirectory(t *testing.T) {
	dir := closedDBWithData(t)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ravel.Destroy(dir); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "notes.txt" {
		t.Fatalf("left in %s: %v, want only notes.txt", dir, entries)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(b) != "mine" {
		t.Fatalf("notes.txt: %q, %v", b, err)
	}
	// no database left: opening without create_if_missing fails
	_, err = ravel.Open(dir, nil)
	wantError(t, err, ravel.ErrInvalid)
}

func TestDestroyOpenDatabaseIsLockedAndKept(t *testing.T) {
	dir := closedDBWithData(t)
	db := openAt(t, dir, "")
	err := ravel.Destroy(dir)
	if e := wantError(t, err, ravel.ErrLocked); e == nil || e.Op != "destroy" || e.Msg == "" {
		t.Fatalf("error %#v: want an *ravel.Error of op destroy with a message", err)
	}
	if got := mustGet(t, db, "flushed"); got != "1" {
		t.Fatalf("flushed = %q after a refused Destroy", got)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openAt(t, dir, "")
	if got := mustGet(t, db, "flushed"); got != "1" {
		t.Fatalf("flushed = %q after reopening", got)
	}
	if got := mustGet(t, db, "in-wal"); got != "2" {
		t.Fatalf("in-wal = %q after reopening", got)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ravel.Destroy(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s still there once closed (stat: %v)", dir, err)
	}
}

func TestDestroyMissingDirectoryIsNoError(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "never-made")
	if err := ravel.Destroy(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s made by Destroy (stat: %v)", dir, err)
	}
}

func TestDestroyRefusesNULByte(t *testing.T) {
	// C would see "<dir>" alone and destroy that database.
	dir := closedDBWithData(t)
	wantError(t, ravel.Destroy(dir+"\x00/elsewhere"), ravel.ErrInvalid, "NUL byte")
	if _, err := os.Stat(filepath.Join(dir, "CURRENT")); err != nil {
		t.Fatalf("the database before the NUL byte was touched: %v", err)
	}
}
