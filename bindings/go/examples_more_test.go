// examples_more_test.go -- the examples of the API documentation beyond
// the README's (Example, in example_test.go).

package ravel_test

import (
	"errors"
	"fmt"
	"log"
	"os"

	ravel "github.com/ravel-kv/ravel/bindings/go"
)

// exampleDB opens a new database for an example; the returned function
// closes and removes it.
func exampleDB() (*ravel.DB, func()) {
	dir, err := os.MkdirTemp("", "ravel-example")
	if err != nil {
		log.Fatal(err)
	}
	var opts ravel.Options
	opts.Set("create_if_missing", "true")
	db, err := ravel.Open(dir, &opts)
	if err != nil {
		log.Fatal(err)
	}
	return db, func() { db.Close(); os.RemoveAll(dir) }
}

func ExampleIterator_All() {
	db, done := exampleDB()
	defer done()
	for _, k := range []string{"apple", "banana", "cherry", "date"} {
		db.Put([]byte(k), []byte("fruit"))
	}

	it, err := db.NewIterator(&ravel.IterOptions{Start: []byte("b"), Stop: []byte("d")})
	if err != nil {
		log.Fatal(err)
	}
	defer it.Close()
	for e, err := range it.All() {
		if err != nil { // a damaged block ends the loop here: nothing is yielded past it
			log.Fatal(err)
		}
		fmt.Println(string(e.Key))
	}
	// Output:
	// banana
	// cherry
}

func ExampleDB_Write() {
	db, done := exampleDB()
	defer done()

	b := ravel.NewBatch()
	defer b.Close()
	b.Put([]byte("from"), []byte("90"))
	b.Put([]byte("to"), []byte("10"))
	if err := db.Write(b, ravel.Sync); err != nil {
		log.Fatal(err)
	}
	v, _ := db.Get([]byte("to"))
	fmt.Println(b.Count(), string(v))
	// Output: 2 10
}

func ExampleDB_MultiGet() {
	db, done := exampleDB()
	defer done()
	db.Put([]byte("from"), []byte("90"))
	db.Put([]byte("to"), []byte("10"))

	// both values from one state: a transfer written as a batch is seen
	// whole or not at all
	values, err := db.MultiGet([][]byte{[]byte("to"), []byte("absent"), []byte("from")})
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range values {
		if v == nil {
			fmt.Println("(absent)")
		} else {
			fmt.Println(string(v))
		}
	}
	// Output:
	// 10
	// (absent)
	// 90
}

func ExampleDB_NewSnapshot() {
	db, done := exampleDB()
	defer done()
	db.Put([]byte("k"), []byte("before"))

	snap, err := db.NewSnapshot()
	if err != nil {
		log.Fatal(err)
	}
	defer snap.Close()
	db.Put([]byte("k"), []byte("after"))

	old, _ := snap.Get([]byte("k"))
	now, _ := db.Get([]byte("k"))
	fmt.Println(string(old), string(now))
	// Output: before after
}

func ExampleError() {
	var opts ravel.Options
	err := opts.Set("write_bufer_size", "64M")

	var e *ravel.Error
	if errors.As(err, &e) {
		fmt.Println(e.Code == ravel.ErrInvalid, errors.Is(err, ravel.ErrInvalid))
		fmt.Println(e.Msg)
	}
	// Output:
	// true true
	// unknown option 'write_bufer_size' (did you mean 'write_buffer_size'?)
}
