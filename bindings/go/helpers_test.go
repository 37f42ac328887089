// helpers_test.go -- what the tests share: opening a fresh database and
// asserting on errors.

package ravel_test

import (
	"errors"
	"strings"
	"testing"

	ravel "github.com/ravel-kv/ravel/bindings/go"
)

// openFresh opens a new database in a temporary directory, with the
// settings given as "name=value;..." (create_if_missing is added), and
// closes it at the end of the test (unless the test closed it).
func openFresh(t testing.TB, settings string) (*ravel.DB, string) {
	t.Helper()
	dir := t.TempDir()
	db := openAt(t, dir, "create_if_missing=true;"+settings)
	return db, dir
}

// openAt opens DIR with the settings SETTINGS and closes it at the end of
// the test (unless the test closed it).
func openAt(t testing.TB, dir, settings string) *ravel.DB {
	t.Helper()
	var opts ravel.Options
	if err := opts.Parse(settings); err != nil {
		t.Fatalf("options %q: %v", settings, err)
	}
	db, err := ravel.Open(dir, &opts)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil && !errors.Is(err, ravel.ErrClosed) {
			t.Errorf("close at cleanup: %v", err)
		}
	})
	return db
}

// wantError checks that ERR wraps CODE and, for an *Error, that its
// message contains every one of PARTS.  It returns the *Error (nil if ERR
// is not one).
func wantError(t testing.TB, err error, code ravel.Code, parts ...string) *ravel.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %v", code)
	}
	if !errors.Is(err, code) {
		t.Fatalf("got %v, want an error matching %v", err, code)
	}
	var e *ravel.Error
	if !errors.As(err, &e) {
		if len(parts) > 0 {
			t.Fatalf("got %v (%T), want an *ravel.Error", err, err)
		}
		return nil
	}
	if e.Code != code {
		t.Fatalf("got Code %v, want %v", e.Code, code)
	}
	for _, p := range parts {
		if !strings.Contains(e.Msg, p) {
			t.Fatalf("message %q does not contain %q", e.Msg, p)
		}
	}
	return e
}

// mustPut puts and fails the test on an error.
func mustPut(t testing.TB, db *ravel.DB, key, value string) {
	t.Helper()
	if err := db.Put([]byte(key), []byte(value)); err != nil {
		t.Fatalf("put %q: %v", key, err)
	}
}

// mustGet gets and fails the test on an error.
func mustGet(t testing.TB, db *ravel.DB, key string) string {
	t.Helper()
	v, err := db.Get([]byte(key))
	if err != nil {
		t.Fatalf("get %q: %v", key, err)
	}
	return string(v)
}
