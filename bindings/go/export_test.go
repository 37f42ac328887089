// export_test.go -- the unexported helpers the package's external tests
// use (compiled only into the tests).

package ravel

// EngineLookups is engineLookups, for get_lookups_test.go.
var EngineLookups = engineLookups
