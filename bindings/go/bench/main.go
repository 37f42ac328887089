// Command bench measures the Go binding the way C's ravel-bench measures
// the library, so that the two can be put side by side:
//
//	fillrandom   --num keys (16 bytes, db_bench's format) in random order,
//	             100-byte values, written in batches of --batch_size with
//	             DB.Write, on a fresh database with default options
//	readrandom   --num point reads of random keys in [0, num), each read
//	             into one reused buffer with DB.AppendGet (no allocation,
//	             as ravel-bench reads with ravel_get_into)
//	readrandom_get  the same with DB.Get (a new slice per value)
//
// It prints ravel-bench's result line ("NAME : X micros/op Y ops/sec ...").
// Keys and values are generated as ravel-bench generates them (splitmix64
// key choice seeded with --seed + 1, + 2 ... per benchmark; db_bench's
// RandomGenerator values), so the two programs write the same data.
//
//	go run ./bench --num=1000000 --batch_size=100
//	build-rel/bench/ravel-bench --benchmarks=fillrandom --num=1000000 --batch_size=100
package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	ravel "github.com/ravel-kv/ravel/bindings/go"
)

var (
	benchmarks = flag.String("benchmarks", "fillrandom,readrandom", "comma list: fillrandom readrandom readrandom_get")
	num        = flag.Int64("num", 1000000, "keys written, and reads made")
	batchSize  = flag.Int("batch_size", 100, "puts per DB.Write")
	keySize    = flag.Int("key_size", 16, "bytes per key (at least 8)")
	valueSize  = flag.Int("value_size", 100, "bytes per value")
	seed       = flag.Int64("seed", 0, "random seed base (0: from the clock)")
	dbPath     = flag.String("db", "", "database directory (default: a new one under $TMPDIR, removed at exit)")
	cpuProfile = flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
)

func main() {
	flag.Parse()
	log.SetFlags(0)
	if *keySize < 8 {
		log.Fatal("--key_size must be at least 8")
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		check(err)
		check(pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}
	if *seed == 0 {
		*seed = time.Now().UnixMicro()
		fmt.Printf("Set seed to %d because --seed was 0\n", *seed)
	}
	dir := *dbPath
	if dir == "" {
		tmp, err := os.MkdirTemp("", "ravel-go-bench")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(tmp)
		dir = tmp + "/db"
	}
	fmt.Printf("ravel %s (Go binding), keys %d bytes, values %d bytes, %d entries, batch %d\n",
		ravel.LibVersion(), *keySize, *valueSize, *num, *batchSize)

	values := newValueData(*valueSize)
	var db *ravel.DB
	for i, name := range strings.Split(*benchmarks, ",") {
		rng := uint64(*seed) + uint64(i) + 1
		switch name {
		case "fillrandom":
			if db != nil {
				check(db.Close())
			}
			check(os.RemoveAll(dir))
			db = open(dir)
			bytes := *num * int64(*keySize+*valueSize)
			report(name, *num, fillRandom(db, &rng, values), bytes, "")
		case "readrandom", "readrandom_get":
			if db == nil {
				db = open(dir)
			}
			elapsed, found, bytes := readRandom(db, &rng, name == "readrandom_get")
			report(name, *num, elapsed, bytes,
				fmt.Sprintf(" (%d of %d found)", found, *num))
		default:
			log.Fatalf("unknown benchmark %q", name)
		}
	}
	if db != nil {
		check(db.Close())
	}
}

func open(dir string) *ravel.DB {
	var opts ravel.Options
	check(opts.Set("create_if_missing", "true"))
	db, err := ravel.Open(dir, &opts)
	check(err)
	return db
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// report prints ravel-bench's (db_bench's) result line.
func report(name string, ops int64, elapsed time.Duration, bytes int64, extra string) {
	secs := elapsed.Seconds()
	fmt.Printf("%-12s : %11.3f micros/op %d ops/sec %.3f seconds %d operations; %6.1f MB/s%s\n",
		name, secs*1e6/float64(ops), int64(float64(ops)/secs), secs, ops,
		float64(bytes)/1048576/secs, extra)
}

// fillRandom writes --num random keys in batches and returns the time.
func fillRandom(db *ravel.DB, rng *uint64, values *valueData) time.Duration {
	batch := ravel.NewBatch()
	defer batch.Close()
	key := make([]byte, *keySize)
	start := time.Now()
	for done := int64(0); done < *num; {
		check(batch.Clear())
		for j := 0; j < *batchSize && done < *num; j++ {
			keyFromInt(splitmix64(rng)%uint64(*num), key)
			check(batch.Put(key, values.next()))
			done++
		}
		check(db.Write(batch))
	}
	return time.Since(start)
}

// readRandom reads --num random keys and returns the time, how many were
// found, and the bytes of their keys and values.
func readRandom(db *ravel.DB, rng *uint64, allocate bool) (time.Duration, int64, int64) {
	key := make([]byte, *keySize)
	buf := make([]byte, 0, *valueSize)
	var found, bytes int64
	start := time.Now()
	for i := int64(0); i < *num; i++ {
		keyFromInt(splitmix64(rng)%uint64(*num), key)
		var err error
		if allocate {
			buf, err = db.Get(key)
		} else {
			buf, err = db.AppendGet(buf[:0], key)
		}
		switch {
		case err == nil:
			found++
			bytes += int64(len(key) + len(buf))
		case !errors.Is(err, ravel.ErrNotFound):
			log.Fatal(err)
		}
	}
	return time.Since(start), found, bytes
}

// splitmix64 is ravel-bench's key chooser.
func splitmix64(state *uint64) uint64 {
	*state += 0x9e3779b97f4a7c15
	z := *state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// keyFromInt is db_bench's GenerateKeyFromInt: V big-endian in the first
// 8 bytes, then '0' padding.
func keyFromInt(v uint64, key []byte) {
	binary.BigEndian.PutUint64(key, v)
	for i := 8; i < len(key); i++ {
		key[i] = '0'
	}
}

// valueData is db_bench's RandomGenerator: at least 1 MiB of 100-byte
// pieces, each half random printable text (compression ratio 0.5) repeated,
// handed out in consecutive slices.
type valueData struct {
	data []byte
	pos  int
	size int
}

func newValueData(size int) *valueData {
	want := max(size, 1048576)
	data := make([]byte, (want+99)/100*100)
	seed := uint32(301)
	const raw = 50
	for off := 0; off < len(data); off += 100 {
		piece := data[off : off+100]
		for i := 0; i < raw; i++ {
			piece[i] = byte(' ' + lehmer(&seed)%95)
		}
		for i := raw; i < 100; i++ {
			piece[i] = piece[i%raw]
		}
	}
	return &valueData{data: data, size: size}
}

// next is the next SIZE bytes, wrapping as RandomGenerator::Generate does.
func (v *valueData) next() []byte {
	if v.pos+v.size > len(v.data) {
		v.pos = 0
	}
	v.pos += v.size
	return v.data[v.pos-v.size : v.pos]
}

// lehmer is LevelDB's Random (multiplier 16807).
func lehmer(seed *uint32) uint32 {
	const m = 2147483647
	product := uint64(*seed) * 16807
	s := uint32((product >> 31) + (product & m))
	if s > m {
		s -= m
	}
	*seed = s
	return s
}
