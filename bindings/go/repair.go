// repair.go -- Repair: salvaging a damaged database directory, and its
// report.

package ravel

/*
#include "shim_ops.h"
*/
import "C"

import (
	"strings"
	"unsafe"
)

// RepairKind is what a line of a repair's report says.
type RepairKind int

// The kinds of the lines of a repair's report.
const (
	RepairNote RepairKind = C.RAVEL_REPAIR_NOTE // what was found and done
	RepairKept RepairKind = C.RAVEL_REPAIR_KEPT // what was recovered
	RepairLost RepairKind = C.RAVEL_REPAIR_LOST // what was lost
	RepairWarn RepairKind = C.RAVEL_REPAIR_WARN // kept, but may be stale
)

// RepairLine is one line of a repair's report.
type RepairLine struct {
	Kind RepairKind
	Text string
}

// RepairReport is what Repair recovered and lost, line by line: per
// table file the entries kept and each damaged block (its offset and key
// range), per WAL segment the records replayed and dropped, and totals.
type RepairReport struct {
	Lines []RepairLine
}

// String returns the report's text, a line each.
func (r *RepairReport) String() string {
	var b strings.Builder
	for _, l := range r.Lines {
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

// Lost returns the lines of kind RepairLost.
func (r *RepairReport) Lost() []RepairLine {
	var lost []RepairLine
	for _, l := range r.Lines {
		if l.Kind == RepairLost {
			lost = append(lost, l)
		}
	}
	return lost
}

// Repair salvages the damaged database directory dir (a lost or damaged
// manifest, WAL damage, partly damaged table files): it keeps every entry
// that verifies, moves every original file into dir/lost-repair-*/
// (deleting nothing) and returns the report of what was kept and lost.
// opts (nil: the defaults) shapes the new table files.  It fails with
// ErrLocked, changing nothing, if the database is open for writing (close
// its readers too), and ErrInvalid if dir is not a database directory.
func Repair(dir string, opts *Options) (*RepairReport, error) {
	cdir, err := cPath("repair", dir)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cdir))
	copt, err := opts.build("repair")
	if err != nil {
		return nil, err
	}
	defer C.ravel_options_free(copt)
	v := C.shim_repair(cdir, copt)
	if err := callError("repair", v.rc, v.msg); err != nil {
		return nil, err
	}
	text := takeCString(v.data, v.len)
	report := &RepairReport{}
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if len(line) < 2 {
			continue
		}
		report.Lines = append(report.Lines, RepairLine{
			Kind: RepairKind(line[0] - '0'), Text: line[2:]})
	}
	return report, nil
}
