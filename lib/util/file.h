/*
** file.h -- opening the files of a database, making directory entries
** durable, and replacing a small file crash-safely.
**
** A database file must never land on descriptor 0, 1 or 2: a program
** started with stdout closed would otherwise print into its WAL (the shell
** found this with LOCK).  Like SQLite, ravel moves such a descriptor
** above 2; unlike SQLite it does not fill 0-2 with /dev/null, so the
** program's own descriptors are left as they were.
*/
#ifndef RAVEL_FILE_H
#define RAVEL_FILE_H

#include "ravel_int.h"

/* open(2) with O_CLOEXEC added, never returning 0, 1 or 2.  -1 and errno
** on failure. */
RAVEL_PRIVATE int rv_open(const char *path, int flags, int mode);

/* Returns FD itself unless it is 0, 1 or 2; then a close-on-exec
** duplicate above 2 (-1 and errno if the duplicate could not be made).
** The slot FD held is then given /dev/null rather than closed, as
** SQLite's robust_open does: a program started with 0-2 closed gets them
** filled once, so a later open by any thread cannot land there and
** another thread's printf() goes nowhere instead of into a WAL.  The
** only window left is between the first open that lands on a free slot
** and this call.  A negative FD is returned as it is, so a creating
** call's result can be passed straight in: for the descriptors rv_open
** does not make (eventfd, memfd, io_uring). */
RAVEL_PRIVATE int rv_fd_above_stdio(int fd);

/* fsyncs directory DIR, making entries created or removed in it durable.
** RAVEL_IOERR with a message naming DIR on failure. */
RAVEL_PRIVATE int rv_sync_dir(const char *dir);

/* Replaces DIR/NAME by the LEN bytes of DATA crash-safely: written to
** DIR/NAME.tmp, fsynced, renamed over NAME, and the directory fsynced, so
** after a crash NAME holds either its old contents or all of the new.
** Whatever already is at NAME.tmp is unlinked and a new file made
** (O_EXCL): never a symlink's target written through, nor a FIFO.
** RAVEL_IOERR naming the file and errno on failure (the temporary file is
** removed). */
RAVEL_PRIVATE int rv_replace_file(const char *dir, const char *name,
                                  const char *data, size_t len);

/* Reads the whole of PATH into *DATA (malloc'd, one byte more than *LEN,
** for a caller that wants a terminator).  RAVEL_IOERR naming the call,
** PATH and errno, with *OPEN_ERRNO (may be NULL) set to open(2)'s errno
** when the open failed (0 otherwise), so a caller can say what a missing
** file means; RAVEL_NOMEM. */
RAVEL_PRIVATE int rv_read_file(const char *path, char **data, size_t *len,
                               int *open_errno);

/* One piece of a file rv_replace_file_parts writes. */
struct rv_file_part {
    const void *data;
    size_t len;
};

/* rv_replace_file of the N PARTS one after another (a large piece need
** not be copied to sit beside the others). */
RAVEL_PRIVATE int rv_replace_file_parts(const char *dir, const char *name,
                                        const struct rv_file_part *parts,
                                        int n);

#endif /* RAVEL_FILE_H */
