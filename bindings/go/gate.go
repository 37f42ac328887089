// gate.go -- the gate that keeps a handle's Close apart from the calls on
// it: calls run concurrently, Close waits for those in progress, and calls
// after Close are refused instead of touching freed C memory.

package ravel

import "sync"

// gate is a read-write lock with a closed flag.  Calls hold it shared
// (enter/leave); Close holds it exclusively (lock/unlock).
type gate struct {
	mu     sync.RWMutex
	closed bool
}

// enter admits a call; false (and nothing held) if the handle is closed.
func (g *gate) enter() bool {
	g.mu.RLock()
	if g.closed {
		g.mu.RUnlock()
		return false
	}
	return true
}

// leave ends a call admitted by enter.
func (g *gate) leave() {
	g.mu.RUnlock()
}

// lock waits for the calls in progress and holds the gate for Close; false
// (and nothing held) if the handle is already closed.
func (g *gate) lock() bool {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return false
	}
	return true
}

// unlock releases the gate taken by lock, closing the handle for good if
// closed is true.
func (g *gate) unlock(closed bool) {
	if closed {
		g.closed = true
	}
	g.mu.Unlock()
}
