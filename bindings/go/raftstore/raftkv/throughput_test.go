// throughput_test.go -- puts per second through a three-node cluster on
// loopback (RAFTKV_BENCH=1; not a check, a measurement: nothing asserted
// about its speed).
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestPutThroughput: RAFTKV_BENCH=1, RAFTKV_CLIENTS (default 1,16,64
// concurrent clients), RAFTKV_BENCH_SECONDS per run (10); every put goes
// to the leader (no forwarding) with a distinct key.
func TestPutThroughput(t *testing.T) {
	if os.Getenv("RAFTKV_BENCH") == "" {
		t.Skip("set RAFTKV_BENCH=1")
	}
	secs, _ := strconv.Atoi(os.Getenv("RAFTKV_BENCH_SECONDS"))
	if secs <= 0 {
		secs = 10
	}
	clients := []int{1, 16, 64}
	if s := os.Getenv("RAFTKV_CLIENTS"); s != "" {
		clients = nil
		for _, f := range strings.Split(s, ",") {
			n, _ := strconv.Atoi(f)
			clients = append(clients, n)
		}
	}
	c := newCluster(t, false)
	leader := c.nodes[0].httpAddr // n1 bootstrapped and leads
	tr := &http.Transport{MaxIdleConnsPerHost: 256}
	hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	value := strings.Repeat("v", 100)
	for _, n := range clients {
		var done, failed atomic.Int64
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs)*time.Second)
		var wg sync.WaitGroup
		start := time.Now()
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; ctx.Err() == nil; j++ {
					req, _ := http.NewRequest(http.MethodPut,
						fmt.Sprintf("http://%s/kv/k%d-%d-%d", leader, n, i, j), strings.NewReader(value))
					resp, err := hc.Do(req)
					if err != nil || resp.StatusCode != http.StatusNoContent {
						failed.Add(1)
					} else {
						done.Add(1)
					}
					if resp != nil {
						resp.Body.Close()
					}
				}
			}()
		}
		wg.Wait()
		cancel()
		el := time.Since(start).Seconds()
		t.Logf("clients=%d puts/s=%.0f (%d puts in %.1fs, %d failed)", n, float64(done.Load())/el, done.Load(), el, failed.Load())
	}
}
