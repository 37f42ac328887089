/*
** sync_journal.h -- test builds only (RAVEL_TEST_HOOKS): a record of what
** each completed fsync/fdatasync made durable, so that a test can simulate
** a power loss exactly: take away every byte that no completed sync
** covered, and every directory entry that no directory fsync covered.
**
** When a test has opened a journal (rv_sync_journal_open), the library
** appends one line per completed sync, with one write(2) on an O_APPEND
** descriptor, so the journal survives a kill -9 of the process:
**
**   F <inode> <bytes>            bytes [0, bytes) of the file are durable
**   D <dir> <inode> <inode> ...  the entries of DIR with these inodes are
**                                durable (an fsync of the directory)
**
** Files are named by inode so that a rename keeps its durability.  The
** test side (tests/powerloss.c, tu_power_loss) reads the journal and
** damages the directory.  In a build without RAVEL_TEST_HOOKS every function here
** is an empty inline: the library calls them unconditionally.
*/
#ifndef RAVEL_SYNC_JOURNAL_H
#define RAVEL_SYNC_JOURNAL_H

#include "ravel_int.h"

#ifdef RAVEL_TEST_HOOKS

/* Starts appending to the journal at PATH (created if absent); 0 or -errno.
** One journal per process; a second call replaces the first. */
RAVEL_PRIVATE int rv_sync_journal_open(const char *path);
RAVEL_PRIVATE void rv_sync_journal_close(void);

/* A sync of the file open on FD completed: its first BYTES are durable. */
RAVEL_PRIVATE void rv_sync_journal_file(int fd, uint64_t bytes);

/* An fsync of directory DIR completed: its current entries are durable. */
RAVEL_PRIVATE void rv_sync_journal_dir(const char *dir);

#else

static inline void rv_sync_journal_file(int fd, uint64_t bytes)
{
    (void)fd;
    (void)bytes;
}

static inline void rv_sync_journal_dir(const char *dir)
{
    (void)dir;
}

#endif /* RAVEL_TEST_HOOKS */

#endif /* RAVEL_SYNC_JOURNAL_H */
