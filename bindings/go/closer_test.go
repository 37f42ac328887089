// closer_test.go -- every handle closes the same way: each is an io.Closer
// whose second Close returns an error matching ErrClosed; Snapshot.Release
// is kept as a deprecated alias of Snapshot.Close.

package ravel_test

import (
	"errors"
	"io"
	"testing"

	ravel "github.com/ravel-kv/ravel/bindings/go"
)

// Compile-time: every handle of the package is an io.Closer.
var (
	_ io.Closer = (*ravel.DB)(nil)
	_ io.Closer = (*ravel.Snapshot)(nil)
	_ io.Closer = (*ravel.Iterator)(nil)
	_ io.Closer = (*ravel.Batch)(nil)
	_ io.Closer = (*ravel.Cache)(nil)
	_ io.Closer = (*ravel.WriteController)(nil)
)

func TestEveryHandleIsAnIOCloser(t *testing.T) {
	db, _ := openFresh(t, "")
	snap, err := db.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	it, err := db.NewIterator(nil)
	if err != nil {
		t.Fatal(err)
	}
	cache, err := ravel.NewCache(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	wc, err := ravel.NewWriteController(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	// in the order Close needs: the database last
	handles := []struct {
		name string
		c    io.Closer
	}{
		{"snapshot", snap}, {"iterator", it}, {"batch", ravel.NewBatch()},
		{"cache", cache}, {"write controller", wc}, {"database", db},
	}
	for _, h := range handles {
		if err := h.c.Close(); err != nil {
			t.Fatalf("%s: Close: %v", h.name, err)
		}
		if err := h.c.Close(); !errors.Is(err, ravel.ErrClosed) {
			t.Fatalf("%s: second Close: %v, want an error matching ErrClosed", h.name, err)
		}
	}
}

// Release, the former name, still closes the snapshot and is refused on a
// closed one, whichever of the two closed it.
func TestSnapshotReleaseIsClose(t *testing.T) {
	db, _ := openFresh(t, "")
	s1, _ := db.NewSnapshot()
	s2, _ := db.NewSnapshot()
	if err := s1.Release(); err != nil { //lint:ignore SA1019 the alias is what is tested
		t.Fatal(err)
	}
	if err := s1.Close(); !errors.Is(err, ravel.ErrClosed) {
		t.Fatalf("Close after Release: %v", err)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s2.Release(); !errors.Is(err, ravel.ErrClosed) {
		t.Fatalf("Release after Close: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("close once both snapshots are closed: %v", err)
	}
}
