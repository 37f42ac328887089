package ravel_test

import (
	"errors"
	"fmt"
	"log"
	"os"

	ravel "github.com/ravel-kv/ravel/bindings/go"
)

func Example() {
	dir, _ := os.MkdirTemp("", "ravel-example")
	defer os.RemoveAll(dir)

	var opts ravel.Options
	opts.Set("create_if_missing", "true")
	db, err := ravel.Open(dir, &opts)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	db.Put([]byte("hello"), []byte("world"), ravel.Sync)
	value, err := db.Get([]byte("hello"))
	fmt.Println(string(value), err)
	_, err = db.Get([]byte("absent"))
	fmt.Println(errors.Is(err, ravel.ErrNotFound))
	// Output:
	// world <nil>
	// true
}
