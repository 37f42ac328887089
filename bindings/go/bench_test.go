// bench_test.go -- micro-benchmarks of the binding's calls (go test
// -bench .).  The fillrandom / readrandom figures comparable with C's
// ravel-bench are made by the program in bench/.

package ravel_test

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"testing"

	ravel "github.com/ravel-kv/ravel/bindings/go"
)

const benchKeys = 10000

// benchValueSizes are the value sizes the get benchmarks read: below the
// Go binding's stack buffer (512 bytes), a block, and 64 KiB.
var benchValueSizes = []int{100, 4096, 65536}

// keysFor is the number of keys benchDB writes for values of VSIZE bytes:
// benchKeys, or fewer so that the values come to at most 64 MiB.
func keysFor(vsize int) int {
	return min(benchKeys, 64<<20/max(vsize, 1))
}

// benchDB is a database holding keysFor(vsize) keys of 16 bytes with
// values of VSIZE bytes, flushed to a table file.
func benchDB(b *testing.B, vsize int) *ravel.DB {
	db, _ := openFresh(b, "")
	batch := ravel.NewBatch()
	defer batch.Close()
	value := make([]byte, vsize)
	for i := 0; i < keysFor(vsize); i++ {
		batch.Put(benchKey(uint64(i)), value)
		if batch.Count() == 100 {
			db.Write(batch)
			batch.Clear()
		}
	}
	db.Write(batch)
	db.Flush()
	return db
}

// benchKey is db_bench's key: I big-endian in 8 bytes, padded with '0' to
// 16.
func benchKey(i uint64) []byte {
	k := []byte("0000000000000000")
	binary.BigEndian.PutUint64(k, i)
	return k
}

// timedOnThread runs the benchmark loop LOOP on one OS thread and reports
// that thread's CPU time per op (cpu-ns/op) beside the wall time: the
// get calls run on it (cgo), the garbage collector on others.
func timedOnThread(b *testing.B, loop func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	start := threadCPU()
	loop()
	b.ReportMetric(float64(threadCPU()-start)/float64(b.N), "cpu-ns/op")
}

func BenchmarkGet(b *testing.B) {
	for _, vsize := range benchValueSizes {
		b.Run(fmt.Sprint("value=", vsize), func(b *testing.B) {
			db := benchDB(b, vsize)
			keys := keysFor(vsize)
			timedOnThread(b, func() {
				for i := 0; b.Loop(); i++ {
					if _, err := db.Get(benchKey(uint64(i % keys))); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

func BenchmarkAppendGet(b *testing.B) {
	for _, vsize := range benchValueSizes {
		b.Run(fmt.Sprint("value=", vsize), func(b *testing.B) {
			db := benchDB(b, vsize)
			keys := keysFor(vsize)
			var buf []byte
			var err error
			key := benchKey(0)
			timedOnThread(b, func() {
				for i := 0; b.Loop(); i++ {
					binary.BigEndian.PutUint64(key, uint64(i%keys))
					if buf, err = db.AppendGet(buf[:0], key); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

func BenchmarkTxnGet(b *testing.B) {
	for _, vsize := range benchValueSizes {
		b.Run(fmt.Sprint("value=", vsize), func(b *testing.B) {
			db := benchDB(b, vsize)
			keys := keysFor(vsize)
			tx, err := db.Begin(nil)
			if err != nil {
				b.Fatal(err)
			}
			defer tx.Rollback()
			timedOnThread(b, func() {
				for i := 0; b.Loop(); i++ {
					if _, err := tx.Get(benchKey(uint64(i % keys))); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

func BenchmarkGetMissing(b *testing.B) {
	db := benchDB(b, 100)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := db.Get(benchKey(uint64(benchKeys + i))); err != ravel.ErrNotFound {
			b.Fatal(err)
		}
	}
}

func BenchmarkPut(b *testing.B) {
	db, _ := openFresh(b, "")
	value := make([]byte, 100)
	key := benchKey(0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		binary.BigEndian.PutUint64(key, uint64(i))
		if err := db.Put(key, value); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBatchPut(b *testing.B) {
	batch := ravel.NewBatch()
	defer batch.Close()
	value := make([]byte, 100)
	key := benchKey(0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%1000 == 0 {
			batch.Clear()
		}
		binary.BigEndian.PutUint64(key, uint64(i))
		if err := batch.Put(key, value); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkIteratorScan(b *testing.B) {
	db := benchDB(b, 100)
	it, _ := db.NewIterator(nil)
	defer it.Close()
	b.ReportAllocs()
	for valid := it.SeekToFirst(); b.Loop(); {
		if !valid {
			valid = it.SeekToFirst()
		}
		_ = it.Key()
		valid = it.Next()
	}
}
