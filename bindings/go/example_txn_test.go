package ravel_test

import (
	"fmt"
	"log"
	"os"
	"strconv"
	"sync"

	ravel "github.com/ravel-kv/ravel/bindings/go"
)

func ExampleDB_Update() {
	dir, _ := os.MkdirTemp("", "ravel-example-txn")
	defer os.RemoveAll(dir)
	var opts ravel.Options
	opts.Set("create_if_missing", "true")
	db, err := ravel.Open(dir, &opts)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	// Update commits if fn returns nil and runs fn again on
	// ErrConflict, ErrTimedOut and ErrDeadlock.
	increment := func(tx *ravel.Txn) error {
		n := 0
		v, err := tx.GetForUpdate([]byte("visits")) // locked until the end
		if err == nil {
			n, _ = strconv.Atoi(string(v))
		} else if err != ravel.ErrNotFound {
			return err
		}
		return tx.Put([]byte("visits"), []byte(strconv.Itoa(n+1)))
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				err := db.UpdateWith(&ravel.TxnOptions{MaxAttempts: 100}, increment)
				if err != nil {
					log.Fatal(err)
				}
			}
		}()
	}
	wg.Wait()

	err = db.View(func(tx *ravel.Txn) error {
		v, err := tx.Get([]byte("visits"))
		fmt.Println(string(v), err) // no increment lost
		return err
	})
	fmt.Println(err)
	// Output:
	// 400 <nil>
	// <nil>
}
