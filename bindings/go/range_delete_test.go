// range_delete_test.go -- DB.DeleteRange and Batch.DeleteRange: the keys
// of [begin, end) are gone for gets and iterators, a snapshot taken before
// still sees them, the batch reads back as OpDeleteRange, bad ranges are
// ErrInvalid.

package ravel_test

import (
	"errors"
	"fmt"
	"testing"

	ravel "github.com/ravel-kv/ravel/bindings/go"
)

func TestDeleteRange(t *testing.T) {
	db, _ := openFresh(t, "")
	for i := 0; i < 10; i++ {
		k := []byte(fmt.Sprintf("k%d", i))
		if err := db.Put(k, k); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := db.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if err := db.DeleteRange([]byte("k2"), []byte("k7")); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		k := []byte(fmt.Sprintf("k%d", i))
		_, err := db.Get(k)
		deleted := i >= 2 && i < 7
		if deleted != errors.Is(err, ravel.ErrNotFound) {
			t.Fatalf("get %s: %v (deleted %v)", k, err, deleted)
		}
		if _, err := snap.Get(k); err != nil {
			t.Fatalf("snapshot get %s: %v", k, err)
		}
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Get([]byte("k3")); !errors.Is(err, ravel.ErrNotFound) {
		t.Fatalf("after flush: get k3: %v", err)
	}
	if err := db.DeleteRange([]byte("b"), []byte("a")); !errors.Is(err, ravel.ErrInvalid) {
		t.Fatalf("reversed range: %v, want ErrInvalid", err)
	}
	if err := db.DeleteRange([]byte("a"), []byte("a")); err != nil {
		t.Fatalf("empty range: %v", err)
	}
	b := ravel.NewBatch()
	defer b.Close()
	if err := b.DeleteRange([]byte("k0"), []byte("k2")); err != nil {
		t.Fatal(err)
	}
	ops, err := b.Ops()
	if err != nil || len(ops) != 1 || ops[0].Kind != ravel.OpDeleteRange ||
		string(ops[0].Key) != "k0" || string(ops[0].Value) != "k2" {
		t.Fatalf("ops: %+v %v", ops, err)
	}
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Get([]byte("k1")); !errors.Is(err, ravel.ErrNotFound) {
		t.Fatalf("after the batch: get k1: %v", err)
	}
}
