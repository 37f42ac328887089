// errmsg_test.go -- the binding's main promise about errors: the message
// of a failed call is that call's own, even with many goroutines failing
// at once.  ravel keeps the message per OS thread and goroutines move
// between OS threads between cgo calls, so reading it in a second cgo call
// would, under this load, sometimes return another goroutine's message;
// the shims read it inside the failing call.  Every failure here names an
// argument unique to its goroutine and iteration, and the test checks that
// each message names its own.

package ravel_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	ravel "github.com/ravel-kv/ravel/bindings/go"
)

func TestErrorMessagesAreTheFailingCallsOwn(t *testing.T) {
	// more Ps than the machine's 2 cores: more OS threads, more moves
	procs := max(4, runtime.GOMAXPROCS(0))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	goroutines, iterations := 64, 200
	if testing.Short() {
		iterations = 100
	}
	db, _ := openFresh(t, "")
	missing := t.TempDir()

	// each failing call, given a token unique to it, returns its error
	// and the text its message must contain
	failures := []func(token string) (error, string){
		func(token string) (error, string) { // unknown option name
			var o ravel.Options
			return o.Set(token, "1"), "'" + token + "'"
		},
		func(token string) (error, string) { // missing database
			path := filepath.Join(missing, token)
			_, err := ravel.Open(path, nil)
			return err, path + " "
		},
		func(token string) (error, string) { // unknown property
			_, err := db.Property("ravel." + token)
			return err, "'ravel." + token + "'"
		},
		func(token string) (error, string) { // bad item in a parse
			var o ravel.Options
			return o.Parse("num_levels=3;" + token + "=1"), "'" + token + "'"
		},
	}

	var wrong atomic.Int64
	var mu sync.Mutex
	var examples []string
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < iterations; i++ {
				token := fmt.Sprintf("bogus_g%02d_i%04d", g, i)
				err, want := failures[(g+i)%len(failures)](token)
				var e *ravel.Error
				if !errors.As(err, &e) || !strings.Contains(e.Msg, want) {
					wrong.Add(1)
					mu.Lock()
					if len(examples) < 5 {
						examples = append(examples, fmt.Sprintf(
							"token %s: got %v, want a message containing %q",
							token, err, want))
					}
					mu.Unlock()
				}
				if i%16 == 0 {
					runtime.Gosched()
				}
			}
		}()
	}
	wg.Wait()
	if n := wrong.Load(); n > 0 {
		t.Fatalf("%d of %d failures carried a message not their own:\n%s",
			n, goroutines*iterations, strings.Join(examples, "\n"))
	}
}
