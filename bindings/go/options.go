// options.go -- Options: the settings a database is opened with.
//
// Options live on the Go side (a list of validated name=value settings
// plus an optional shared Cache and WriteController) and become a C
// ravel_options object only for the length of Open or Get.  So an Options
// value needs no Close, its zero value means "the defaults", and one value
// may be used by many Open calls.

package ravel

/*
#include "shim.h"
*/
import "C"

import "unsafe"

// Options are the settings of Open, set by ravel's option names (the list
// with defaults and ranges is in ravel.h, above ravel_options_set; names
// follow RocksDB's).  The zero value holds the defaults:
//
//	var opts ravel.Options
//	if err := opts.Set("create_if_missing", "true"); err != nil { ... }
//	db, err := ravel.Open(dir, &opts)
//
// Set and Parse check a setting at once: an unknown name or a bad value is
// an *Error with Code ErrInvalid naming it.  Checks that relate several
// options (the write ordering modes, the level-0 triggers) are made by
// Open.  An Options value must not be changed while another goroutine
// uses it; it may be shared read-only.
type Options struct {
	settings []setting
	cache    *Cache
	wc       *WriteController
}

// setting is one Set (name and value) or one Parse (text), in the order
// they were made.
type setting struct {
	name, value string
	text        string
	parsed      bool
}

// Set sets the option name to value (booleans: true/false/1/0/on/off/
// yes/no; sizes may end in K, M, G, T or P).  A later Set of the same name
// replaces the earlier one.
func (o *Options) Set(name, value string) error {
	s := setting{name: name, value: value}
	if err := checkSetting(s); err != nil {
		return err
	}
	kept := o.settings[:0:0]
	for _, old := range o.settings {
		if old.parsed || old.name != name {
			kept = append(kept, old)
		}
	}
	o.settings = append(kept, s)
	return nil
}

// Parse sets several options from "name=value;name=value" (whitespace
// around names and values is ignored, an empty item is skipped).  On an
// error, naming the item, none of text is kept.
func (o *Options) Parse(text string) error {
	s := setting{text: text, parsed: true}
	if err := checkSetting(s); err != nil {
		return err
	}
	o.settings = append(o.settings, s)
	return nil
}

// SetCache makes the databases opened with these options share the block
// cache c instead of making their own of block_cache_size bytes; nil
// clears it.  The cache must still be open when Open is called.
func (o *Options) SetCache(c *Cache) {
	o.cache = c
}

// SetWriteController makes the databases opened with these options share
// the write controller wc (nil: each its own, the default).  It must still
// be open when Open is called.
func (o *Options) SetWriteController(wc *WriteController) {
	o.wc = wc
}

// Get returns the value the option name would have at Open, as ravel
// prints it (the default if it was not set).
func (o *Options) Get(name string) (string, error) {
	copt, err := o.build("options get")
	if err != nil {
		return "", err
	}
	defer C.ravel_options_free(copt)
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	v := C.shim_options_get(copt, cname)
	if err := callError("options get", v.rc, v.msg); err != nil {
		return "", err
	}
	return takeCString(v.data, v.len), nil
}

// checkSetting applies S to a fresh C options object to see whether ravel
// accepts it.
func checkSetting(s setting) error {
	op := "options set"
	if s.parsed {
		op = "options parse"
	}
	h := C.shim_options_new()
	if err := callError(op, h.rc, h.msg); err != nil {
		return err
	}
	copt := (*C.ravel_options)(h.handle)
	defer C.ravel_options_free(copt)
	return applySetting(op, copt, s)
}

// applySetting sets S on the C options COPT.
func applySetting(op string, copt *C.ravel_options, s setting) error {
	if s.parsed {
		ctext := C.CString(s.text)
		defer C.free(unsafe.Pointer(ctext))
		return statusError(op, C.shim_options_parse(copt, ctext))
	}
	cname := C.CString(s.name)
	defer C.free(unsafe.Pointer(cname))
	cvalue := C.CString(s.value)
	defer C.free(unsafe.Pointer(cvalue))
	return statusError(op, C.shim_options_set(copt, cname, cvalue))
}

// build makes the C options object for o (nil o: the defaults), which the
// caller frees with ravel_options_free.
func (o *Options) build(op string) (*C.ravel_options, error) {
	h := C.shim_options_new()
	if err := callError(op, h.rc, h.msg); err != nil {
		return nil, err
	}
	copt := (*C.ravel_options)(h.handle)
	if o == nil {
		return copt, nil
	}
	err := o.buildInto(op, copt)
	if err != nil {
		C.ravel_options_free(copt)
		return nil, err
	}
	return copt, nil
}

func (o *Options) buildInto(op string, copt *C.ravel_options) error {
	for _, s := range o.settings {
		if err := applySetting(op, copt, s); err != nil {
			return err
		}
	}
	if o.cache != nil {
		if err := o.cache.setIn(op, copt); err != nil {
			return err
		}
	}
	if o.wc != nil {
		if err := o.wc.setIn(op, copt); err != nil {
			return err
		}
	}
	return nil
}
