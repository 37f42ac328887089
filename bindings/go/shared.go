// shared.go -- Cache and WriteController: the reference-counted objects
// several databases of one process can share.

package ravel

/*
#include "shim.h"
*/
import "C"

import "runtime"

// Cache is a block cache that several databases share (Options.SetCache),
// so that one memory budget covers them all.  It is safe for concurrent
// use.  Close drops this reference: databases and options still using the
// cache keep it alive until they are closed.
type Cache struct {
	gate    gate
	c       *C.ravel_cache
	cleanup runtime.Cleanup
}

// NewCache makes a cache holding up to capacity bytes of data blocks (0:
// blocks are read for each use and not kept).
func NewCache(capacity uint64) (*Cache, error) {
	h := C.shim_cache_new(C.uint64_t(capacity))
	if err := callError("cache new", h.rc, h.msg); err != nil {
		return nil, err
	}
	c := &Cache{c: (*C.ravel_cache)(h.handle)}
	// a safety net only: Close is the way to release it
	c.cleanup = runtime.AddCleanup(c, func(p *C.ravel_cache) {
		C.ravel_cache_free(p)
	}, c.c)
	return c, nil
}

// Usage returns the bytes of blocks the cache holds now (0 after Close).
func (c *Cache) Usage() uint64 {
	if !c.gate.enter() {
		return 0
	}
	defer c.gate.leave()
	return uint64(C.ravel_cache_usage(c.c))
}

// Capacity returns the capacity the cache was made with (0 after
// Close).
func (c *Cache) Capacity() uint64 {
	if !c.gate.enter() {
		return 0
	}
	defer c.gate.leave()
	return uint64(C.ravel_cache_capacity(c.c))
}

// Close drops this reference to the cache.  A second Close returns an
// error matching ErrClosed.
func (c *Cache) Close() error {
	if !c.gate.lock() {
		return closedError("cache close", "cache")
	}
	c.cleanup.Stop()
	C.ravel_cache_free(c.c)
	c.c = nil
	c.gate.unlock(true)
	return nil
}

// setIn makes the C options COPT hold a reference to the cache.
func (c *Cache) setIn(op string, copt *C.ravel_options) error {
	if !c.gate.enter() {
		return closedError(op, "the options' cache")
	}
	defer c.gate.leave()
	defer runtime.KeepAlive(c) // its cleanup must not drop it mid-call
	return statusError(op, C.shim_options_set_cache(copt, c.c))
}

// WriteController decides when writers are slowed down or stopped because
// flushes and compactions fall behind.  Shared by several databases
// (Options.SetWriteController), it enforces the most restrictive of their
// requirements on the writers of all of them.  It is safe for concurrent
// use; Close drops this reference, as for Cache.
type WriteController struct {
	gate    gate
	c       *C.ravel_write_controller
	cleanup runtime.Cleanup
}

// NewWriteController makes a controller whose delayed writes start at
// delayedWriteRate bytes per second (1024 .. 2^40; it replaces the
// delayed_write_rate option of the databases attached).
func NewWriteController(delayedWriteRate uint64) (*WriteController, error) {
	h := C.shim_write_controller_new(C.uint64_t(delayedWriteRate))
	if err := callError("write controller new", h.rc, h.msg); err != nil {
		return nil, err
	}
	wc := &WriteController{c: (*C.ravel_write_controller)(h.handle)}
	// a safety net only: Close is the way to release it
	wc.cleanup = runtime.AddCleanup(wc, func(p *C.ravel_write_controller) {
		C.ravel_write_controller_free(p)
	}, wc.c)
	return wc, nil
}

// Close drops this reference to the controller.  A second Close returns
// an error matching ErrClosed.
func (wc *WriteController) Close() error {
	if !wc.gate.lock() {
		return closedError("write controller close", "write controller")
	}
	wc.cleanup.Stop()
	C.ravel_write_controller_free(wc.c)
	wc.c = nil
	wc.gate.unlock(true)
	return nil
}

// setIn makes the C options COPT hold a reference to the controller.
func (wc *WriteController) setIn(op string, copt *C.ravel_options) error {
	if !wc.gate.enter() {
		return closedError(op, "the options' write controller")
	}
	defer wc.gate.leave()
	defer runtime.KeepAlive(wc) // as in Cache.setIn
	return statusError(op, C.shim_options_set_write_controller(copt, wc.c))
}
