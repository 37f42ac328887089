// concurrency_test.go -- one database used from many goroutines at once:
// writers, point readers, snapshot readers and iterators.

package ravel_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	ravel "github.com/ravel-kv/ravel/bindings/go"
)

func TestConcurrentUse(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	db, _ := openFresh(t, "write_buffer_size=64K") // flushes happen meanwhile
	const workers, perWorker = 8, 400
	var wg sync.WaitGroup
	fail := make(chan error, workers*2)
	for w := 0; w < workers; w++ {
		wg.Add(2)
		go func() { // writer and reader of its own keys
			defer wg.Done()
			b := ravel.NewBatch()
			defer b.Close()
			for i := 0; i < perWorker; i++ {
				k := []byte(fmt.Sprintf("w%d-%04d", w, i))
				var err error
				if i%4 == 0 {
					b.Clear()
					b.Put(k, k)
					err = db.Write(b)
				} else {
					err = db.Put(k, k)
				}
				if err == nil {
					var v []byte
					v, err = db.Get(k)
					if err == nil && string(v) != string(k) {
						err = fmt.Errorf("read %q back as %q", k, v)
					}
				}
				if err != nil {
					fail <- err
					return
				}
			}
		}()
		go func() { // scanner: a snapshot's view never changes
			defer wg.Done()
			for i := 0; i < 10; i++ {
				s, err := db.NewSnapshot()
				if err != nil {
					fail <- err
					return
				}
				count := func() (int, error) {
					it, err := db.NewIterator(&ravel.IterOptions{Snapshot: s})
					if err != nil {
						return 0, err
					}
					defer it.Close()
					n := 0
					for _, err := range it.All() {
						if err != nil {
							return n, err
						}
						n++
					}
					return n, nil
				}
				n1, err1 := count()
				n2, err2 := count()
				s.Close()
				if err1 != nil || err2 != nil || n1 != n2 {
					fail <- fmt.Errorf("snapshot scans: %d (%v) then %d (%v)", n1, err1, n2, err2)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(fail)
	for err := range fail {
		t.Fatal(err)
	}
	it, _ := db.NewIterator(nil)
	defer it.Close()
	n := 0
	for _, err := range it.All() {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != workers*perWorker {
		t.Fatalf("%d keys at the end, want %d", n, workers*perWorker)
	}
}
