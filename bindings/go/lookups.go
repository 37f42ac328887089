// lookups.go -- how many engine lookups the calling OS thread has made
// through the binding, so a test can check that a read costs one
// (export_test.go hands it to the tests).

package ravel

/*
#include "shim.h"
*/
import "C"

// engineLookups is the count of ravel get calls the current OS thread
// made through the shims (a multi-get counts one per key).  The caller
// must hold its OS thread (runtime.LockOSThread) between two readings for
// their difference to mean anything.
func engineLookups() uint64 {
	return uint64(C.shim_lookups())
}
