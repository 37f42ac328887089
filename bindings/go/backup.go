// backup.go -- operating a live database: a reader's catch-up, checkpoints,
// incremental backups in a backup root, and one-file backups written to
// and restored from a path or any io.Writer / io.Reader.

package ravel

/*
#include "shim_ops.h"
*/
import "C"

import (
	"io"
	"os"
	"runtime"
	"strings"
	"time"
	"unsafe"
)

// cPath is path as a C string (free it with C.free), or a misuse error
// for a path holding a NUL byte, which C would cut short.
func cPath(op, path string) (*C.char, error) {
	if strings.IndexByte(path, 0) >= 0 {
		return nil, misuseError(op, "path %q contains a NUL byte", path)
	}
	return C.CString(path), nil
}

// CatchUp brings a database opened with read_only=true (a reader, beside
// a writer in another process or with none) up to date with the writer:
// once it returns nil, reads see every write the writer had acknowledged
// before the call.  Snapshots and iterators made before keep their state.
// On a writer it does nothing.  It fails with ErrBusy if the writer kept
// moving its log, ErrCorrupt or ErrIO naming the file; the reader keeps its
// previous state then.  The option catch_up_interval_ms makes a thread of
// the handle catch up by itself, and the property ravel.reader-lag says
// how far behind the reader is.
func (db *DB) CatchUp() error {
	if !db.gate.enter() {
		return closedError("catch up", "database "+db.path)
	}
	defer db.gate.leave()
	return statusError("catch up", C.shim_catch_up(db.c))
}

// Checkpoint makes dir (which must not exist) a database holding the state
// of db at one moment during the call: table files are hard-linked where
// dir is on the same file system and copied where not, and everything is
// fsynced before it returns.  Writers go on meanwhile.  Open dir with
// Open to read it.  On a reader (read_only=true, beside a writer in
// another process) it catches up first, then copies what the reader
// reads, writing nothing into the database's directory; so do Backup,
// WriteBackup and WriteBackupFile.
func (db *DB) Checkpoint(dir string) error {
	cdir, err := cPath("checkpoint", dir)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cdir))
	if !db.gate.enter() {
		return closedError("checkpoint", "database "+db.path)
	}
	defer db.gate.leave()
	return statusError("checkpoint", C.shim_checkpoint(db.c, cdir))
}

// Backup takes an incremental backup of db into the backup root root
// (created if missing) and returns its id (1, 2, ...).  Table files
// already in root are shared with the earlier backups, not copied again.
// It fails with ErrLocked if another backup or purge of root is running.
func (db *DB) Backup(root string) (uint64, error) {
	croot, err := cPath("backup", root)
	if err != nil {
		return 0, err
	}
	defer C.free(unsafe.Pointer(croot))
	if !db.gate.enter() {
		return 0, closedError("backup", "database "+db.path)
	}
	defer db.gate.leave()
	v := C.shim_backup_create(db.c, croot)
	if err := callError("backup", v.rc, v.msg); err != nil {
		return 0, err
	}
	return uint64(v.value), nil
}

// BackupInfo is what a backup's meta file says of it.
type BackupInfo struct {
	ID       uint64    // its id in the backup root
	Time     time.Time // when it was taken
	Sequence uint64    // the last sequence number it holds
	Bytes    uint64    // the bytes of all its files
	Copied   uint64    // the bytes it copied when taken (the rest it shares)
	Files    int       // the number of its files
}

// Backups lists the complete backups of the backup root root, oldest
// first (those whose meta file verifies: BackupVerify reads the rest).
// It fails with ErrNotFound if root is not a backup root.
func Backups(root string) ([]BackupInfo, error) {
	croot, err := cPath("backup list", root)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(croot))
	v := C.shim_backup_list(croot)
	if err := callError("backup list", v.rc, v.msg); err != nil {
		return nil, err
	}
	ids := make([]uint64, int(v.len))
	if v.len > 0 {
		copy(ids, unsafe.Slice((*uint64)(v.data), int(v.len)))
	}
	C.ravel_free(v.data)
	infos := make([]BackupInfo, 0, len(ids))
	for _, id := range ids {
		info, err := backupInfo(croot, id)
		if err != nil {
			return nil, err
		}
		infos = append(infos, info)
	}
	return infos, nil
}

// backupInfo reads every field of backup id of croot.
func backupInfo(croot *C.char, id uint64) (BackupInfo, error) {
	info := BackupInfo{ID: id}
	var fields [5]uint64
	for i, what := range []C.int{C.RAVEL_BACKUP_TIME, C.RAVEL_BACKUP_SEQUENCE,
		C.RAVEL_BACKUP_BYTES, C.RAVEL_BACKUP_COPIED, C.RAVEL_BACKUP_FILES} {
		v := C.shim_backup_info(croot, C.uint64_t(id), what)
		if err := callError("backup info", v.rc, v.msg); err != nil {
			return BackupInfo{}, err
		}
		fields[i] = uint64(v.value)
	}
	info.Time = time.Unix(int64(fields[0]), 0)
	info.Sequence, info.Bytes, info.Copied = fields[1], fields[2], fields[3]
	info.Files = int(fields[4])
	return info, nil
}

// BackupVerify reads every file of backup id of the backup root root and
// checks its size and checksum.  It fails with ErrCorrupt naming the first
// file missing, short or damaged, and ErrNotFound if there is no backup
// id.
func BackupVerify(root string, id uint64) error {
	croot, err := cPath("backup verify", root)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(croot))
	return statusError("backup verify", C.shim_backup_verify(croot,
		C.uint64_t(id)))
}

// BackupRestore restores backup id of the backup root root (0: the newest
// complete one) into dir, which must not exist; every file is checked as
// it is copied.  A backup that fails a check is ErrCorrupt and leaves no
// dir.
func BackupRestore(root string, id uint64, dir string) error {
	croot, err := cPath("backup restore", root)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(croot))
	cdir, err := cPath("backup restore", dir)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cdir))
	return statusError("backup restore", C.shim_backup_restore(croot,
		C.uint64_t(id), cdir))
}

// BackupPurge deletes all but the keep (at least 1) newest complete
// backups of the backup root root, the shared files no remaining backup
// names, and what a crashed backup left.
func BackupPurge(root string, keep int) error {
	croot, err := cPath("backup purge", root)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(croot))
	if keep < 1 || keep > 1<<31-1 {
		return misuseError("backup purge", "keep %d is out of range "+
			"(1 .. 2147483647)", keep)
	}
	return statusError("backup purge", C.shim_backup_purge(croot,
		C.int(keep)))
}

// WriteBackupFile writes a full backup of db as one checksummed file at
// path, which must not exist (it is written to path.partial, fsynced and
// renamed).  RestoreBackupFile restores it.
func (db *DB) WriteBackupFile(path string) error {
	cpath, err := cPath("write backup", path)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cpath))
	if !db.gate.enter() {
		return closedError("write backup", "database "+db.path)
	}
	defer db.gate.leave()
	return statusError("write backup", C.shim_backup_write_file(db.c, cpath))
}

// WriteBackup writes a full backup of db as one checksummed stream to w:
// an *os.File (a file, a pipe, a socket) is written directly, any other
// writer through a pipe and a goroutine copying from it.  The stream is
// written front to back and never sought; RestoreBackup reads it back.  A
// reader that goes away is ErrIO (EPIPE).  w is neither closed nor synced.
func (db *DB) WriteBackup(w io.Writer) error {
	if f, ok := w.(*os.File); ok {
		return db.writeBackupFd(f)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return &Error{Op: "write backup", Code: ErrIO, Msg: err.Error()}
	}
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(w, pr)
		pr.Close() // after a failed copy the backup's writer sees EPIPE
		copied <- err
	}()
	err = db.writeBackupFd(pw)
	pw.Close()
	if cerr := <-copied; err == nil && cerr != nil {
		return &Error{Op: "write backup", Code: ErrIO, Msg: cerr.Error()}
	}
	return err
}

// writeBackupFd writes the backup to f's descriptor, put in blocking
// mode (File.Fd) since ravel writes it with plain write calls.
func (db *DB) writeBackupFd(f *os.File) error {
	if !db.gate.enter() {
		return closedError("write backup", "database "+db.path)
	}
	defer db.gate.leave()
	defer runtime.KeepAlive(f)
	return statusError("write backup", C.shim_backup_write_fd(db.c,
		C.int(f.Fd())))
}

// RestoreBackupFile restores the one-file backup at path into dir, which
// must not exist.  A damaged or cut-short backup is ErrCorrupt naming the
// byte offset, and leaves no dir.
func RestoreBackupFile(path, dir string) error {
	cpath, err := cPath("restore backup", path)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cpath))
	cdir, err := cPath("restore backup", dir)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cdir))
	return statusError("restore backup", C.shim_backup_restore_file(cpath,
		cdir))
}

// RestoreBackup restores a one-file backup read from r (to the backup's
// end) into dir, which must not exist: an *os.File is read directly (a
// pipe too), any other reader through a pipe and a goroutine copying into
// it.  A damaged or cut-short stream is ErrCorrupt and leaves no dir.
func RestoreBackup(r io.Reader, dir string) error {
	cdir, err := cPath("restore backup", dir)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cdir))
	if f, ok := r.(*os.File); ok {
		return restoreBackupFd(f, cdir)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return &Error{Op: "restore backup", Code: ErrIO, Msg: err.Error()}
	}
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(pw, r)
		pw.Close() // the end of the stream
		copied <- err
	}()
	err = restoreBackupFd(pr, cdir)
	pr.Close() // a copy still writing sees EPIPE and ends
	if err == nil {
		return nil // the copy ends at its next write (not waited for)
	}
	if cerr := <-copied; cerr != nil {
		// the stream was cut short by its reader's failure: say so
		return &Error{Op: "restore backup", Code: ErrIO,
			Msg: "reading the backup: " + cerr.Error()}
	}
	return err
}

// restoreBackupFd restores from f's descriptor (put in blocking mode, as
// ravel reads it with plain read calls) into cdir.
func restoreBackupFd(f *os.File, cdir *C.char) error {
	defer runtime.KeepAlive(f)
	return statusError("restore backup", C.shim_backup_restore_fd(
		C.int(f.Fd()), cdir))
}
