// example_test.go -- the package's examples, run and checked by go test.

package raftstore_test

import (
	"fmt"
	"log"
	"os"

	"github.com/hashicorp/raft"
	ravel "github.com/ravel-kv/ravel/bindings/go"
	"github.com/ravel-kv/ravel/bindings/go/raftstore"
)

// A store of its own in a directory: what raft.NewRaft takes as its log
// store and its stable store.
func Example() {
	dir, _ := os.MkdirTemp("", "raftstore-example")
	defer os.RemoveAll(dir)

	store, err := raftstore.Open(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	// raft.NewRaft(conf, fsm, store, store, snapshots, transport) makes
	// these calls; here they are made by hand.
	store.StoreLogs([]*raft.Log{
		{Index: 1, Term: 1, Type: raft.LogCommand, Data: []byte("x=1")},
		{Index: 2, Term: 1, Type: raft.LogCommand, Data: []byte("y=2")},
	})
	store.SetUint64([]byte("CurrentTerm"), 1)

	var entry raft.Log
	store.GetLog(2, &entry)
	first, _ := store.FirstIndex()
	last, _ := store.LastIndex()
	term, _ := store.GetUint64([]byte("CurrentTerm"))
	fmt.Printf("log [%d, %d], entry 2 = %s, term %d\n", first, last, entry.Data, term)
	fmt.Println(store.GetLog(3, &entry) == raft.ErrLogNotFound)
	// Output:
	// log [1, 2], entry 2 = y=2, term 1
	// true
}

// One database for raft's log and stable store and the application's
// state machine, which keeps its keys outside "raft/".
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "raftstore-example")
	defer os.RemoveAll(dir)

	var opts ravel.Options
	opts.Set("create_if_missing", "true")
	db, err := ravel.Open(dir, &opts)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close() // after the store's Close (defers run last first)

	store, err := raftstore.New(db, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	store.StoreLog(&raft.Log{Index: 1, Term: 1, Data: []byte("set x 1")})
	db.Put([]byte("kv/x"), []byte("1")) // the state machine applies it

	last, _ := store.LastIndex()
	x, _ := db.Get([]byte("kv/x"))
	fmt.Printf("last index %d, x = %s\n", last, x)
	// Output:
	// last index 1, x = 1
}
