/*
** copy.h -- copying files crash-safely for checkpoints, backups and
** restores (copy.c): a file copied or written whole and fdatasynced, its
** XXH3_64 checksum computed on the way; a directory built beside its
** final name (NAME.partial) and renamed into place once complete, so
** that a crash leaves no directory under the final name that is not
** whole.
*/
#ifndef RAVEL_COPY_H
#define RAVEL_COPY_H

#include "ravel_int.h"

#include <stdint.h>

/* The marker file of a directory being built (rv_copy_dir_begin). */
#define RV_COPY_PARTIAL_MARKER "PARTIAL"

/* Copies SIZE bytes of the file at SRC into the new file DST (created
** exclusively), fdatasynced.  *CHECKSUM (may be NULL) receives the
** XXH3_64 of the bytes.  RAVEL_IOERR naming the file; RAVEL_CORRUPT if
** SRC is shorter than SIZE. */
RAVEL_PRIVATE int rv_copy_file(const char *src, const char *dst,
                               uint64_t size, uint64_t *checksum);

/* rv_copy_file from the open descriptor IN (read with pread from byte 0;
** its offset is left alone, so a descriptor other threads read works);
** SRC names it in messages. */
RAVEL_PRIVATE int rv_copy_fd(int in, const char *src, const char *dst,
                             uint64_t size, uint64_t *checksum);

/* Writes LEN bytes of DATA into the new file PATH (created exclusively),
** fdatasynced. */
RAVEL_PRIVATE int rv_copy_write_file(const char *path, const void *data,
                                     size_t len);

/* The XXH3_64 of the whole file at PATH into *CHECKSUM and its size into
** *SIZE.  RAVEL_IOERR naming the file. */
RAVEL_PRIVATE int rv_copy_checksum_file(const char *path, uint64_t *size,
                                        uint64_t *checksum);

/* write(2) of all LEN bytes to FD (a pipe too); RAVEL_IOERR naming WHAT. */
RAVEL_PRIVATE int rv_copy_write_all(int fd, const void *data, size_t len,
                                    const char *what);

/* Starts building directory DIR, which must not exist (RAVEL_INVALID
** naming it otherwise): creates DIR.partial (its path into PARTIAL,
** RV_PATH_MAX bytes) holding the marker file.  A DIR.partial left by a
** crash (it holds the marker) is removed first; one without the marker
** is not ravel's, and refused. */
RAVEL_PRIVATE int rv_copy_dir_begin(const char *dir, char *partial);

/* Finishes it: removes the marker, fsyncs PARTIAL, renames it to DIR and
** fsyncs DIR's parent. */
RAVEL_PRIVATE int rv_copy_dir_commit(const char *partial, const char *dir);

/* Removes directory PATH and the files in it (not below): the cleanup of
** a failed build or of a backup's private files.  Best effort. */
RAVEL_PRIVATE void rv_copy_remove_dir(const char *path);

/* fsyncs the directory holding PATH. */
RAVEL_PRIVATE int rv_copy_sync_parent(const char *path);

#endif /* RAVEL_COPY_H */
