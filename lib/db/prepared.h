/*
** prepared.h -- prepared transactions (two-phase commit): their files, and
** which of them are still waiting for a commit or a rollback.
**
** A prepared transaction's writes are kept in a file of their own,
** prepared-NNNNNN.txn, written whole and fsynced (util/file.h's
** replace-file: a temporary file renamed into place, the directory
** fsynced) before ravel_txn_prepare returns, so it survives kill -9 and
** power loss.  Nothing of it is in the WAL or a memtable until it commits:
**
**   commit    the writes go through the write path as one batch, with a
**             RV_TYPE_TXN_COMMIT marker naming the file (base/dbformat.h):
**             data and marker in one WAL record, atomic.  The file stays
**             until a flush has moved the log number past the segment that
**             record went to; the flush deletes it (and syncs the
**             directory) before it deletes that segment.  So whenever the
**             file exists after a crash, the WAL still holds the record if
**             it was ever durable: recovery finds the marker, and the file
**             is known committed; no marker, and the transaction is still
**             prepared (a commit not made durable is lost like any write
**             that was not).
**   rollback  the file is deleted and the directory fsynced.
**
**   file := magic "RVPREP1\n"   name_len:fixed32  name
**           rep_len:fixed64  rep (base/batchrepr.h; sequence 0)
**           checksum:fixed64  XXH3_64 of every byte before it
**
** A file that fails its check is RAVEL_CORRUPT at open, naming it: an open
** never drops a prepared transaction it cannot read.  A ".tmp" one was
** never acknowledged and is deleted.
**
** Owns: the files and the list of prepared transactions (db->prepared,
** under its own lock).  Does not own: locking their keys again after a
** restart, or handing them out as transactions (lib/txn/txn.c).
*/
#ifndef RAVEL_PREPARED_H
#define RAVEL_PREPARED_H

#include "ravel_int.h"
#include "util/mutex.h"

struct rv_prepared_txn {
    uint64_t number;        /* its file's */
    char *name;
    char *rep;              /* recovered from its file (else NULL: the
                            ** transaction handle holds the batch) */
    size_t len;
    int committed;          /* commit marker written (or replayed) */
    uint64_t commit_segment;/* ... in this WAL segment (or before it) */
    int claimed;            /* a ravel_txn handle has it */
    uint64_t owner;         /* recovered: the lock-table id its keys are
                            ** locked under (0: not locked yet) */
    struct rv_prepared_txn *next;
};

struct rv_db_prepared {
    rv_mutex lock;
    struct rv_prepared_txn *list;   /* lock */
    uint64_t next_number;           /* lock: above every file's number */
};

RAVEL_PRIVATE void rv_prepared_init(struct rv_db_prepared *p);
RAVEL_PRIVATE void rv_prepared_destroy(struct rv_db_prepared *p);

/* At open, before the WAL is replayed: reads every prepared file of DIR
** into P (RAVEL_CORRUPT naming a damaged one), deleting ".tmp" ones unless
** READ_ONLY. */
RAVEL_PRIVATE int rv_prepared_load(struct rv_db_prepared *p, const char *dir,
                                   int read_only);

/* Replay met the commit marker of file NUMBER: that one is committed. */
RAVEL_PRIVATE void rv_prepared_replayed_commit(struct rv_db_prepared *p,
                                               uint64_t number);
/* After the replay: the markers met were in LAST_SEGMENT or before it. */
RAVEL_PRIVATE void rv_prepared_replay_done(struct rv_db_prepared *p,
                                           uint64_t last_segment);

/* Writes the prepared file of transaction NAME holding REP (LEN bytes),
** durably; *NUMBER receives its number.  RAVEL_INVALID if a prepared
** transaction of that name exists; RAVEL_IOERR. */
RAVEL_PRIVATE int rv_prepared_write(struct rv_db_prepared *p, const char *dir,
                                    const char *name, const char *rep,
                                    size_t len, uint64_t *number);

/* Rollback: deletes file NUMBER, durably, and forgets it.  RAVEL_IOERR
** (still prepared then). */
RAVEL_PRIVATE int rv_prepared_drop(struct rv_db_prepared *p, const char *dir,
                                   uint64_t number);

/* Commit: file NUMBER's marker went to WAL segment SEGMENT. */
RAVEL_PRIVATE void rv_prepared_committed(struct rv_db_prepared *p,
                                         uint64_t number, uint64_t segment);

/* A flush moved the log number to LOG_NUMBER: deletes the files of the
** transactions committed in segments below it, then syncs DIR, before the
** caller deletes those segments.  Failures go to the LOG (the files stay:
** the next open finds them committed, or deletes them as such). */
RAVEL_PRIVATE void rv_prepared_release_flushed(struct rv_db_prepared *p,
                                               const char *dir,
                                               uint64_t log_number,
                                               void (*log)(void *ctx,
                                                           const char *msg),
                                               void *log_ctx);

/* 1 if a transaction prepared and not committed is named NAME. */
RAVEL_PRIVATE int rv_prepared_name_taken(struct rv_db_prepared *p,
                                         const char *name);

/* The names of the transactions prepared and not committed, one per line
** (malloc'd; NULL when out of memory). */
RAVEL_PRIVATE char *rv_prepared_names(struct rv_db_prepared *p);

/* Calls FN with CTX and the entry, for each transaction prepared and not committed,
** with P's lock held (FN must not call back into P). */
RAVEL_PRIVATE void rv_prepared_for_each(struct rv_db_prepared *p,
                                        void (*fn)(void *ctx,
                                                   struct rv_prepared_txn *e),
                                        void *ctx);

/* Hands the transaction named NAME, prepared, not committed and not
** claimed by a handle, to the caller: *OUT receives its number, owner,
** name (a malloc'd copy) and writes (REP, moved to the caller: held
** once).  RAVEL_NOTFOUND; RAVEL_NOMEM. */
RAVEL_PRIVATE int rv_prepared_claim(struct rv_db_prepared *p,
                                    const char *name,
                                    struct rv_prepared_txn *out);
/* The handle of file NUMBER was freed unresolved: the transaction can be
** claimed again, its keys locked under OWNER, its writes REP (LEN bytes,
** malloc'd, taken over by P). */
RAVEL_PRIVATE void rv_prepared_unclaim(struct rv_db_prepared *p,
                                       uint64_t number, uint64_t owner,
                                       char *rep, size_t len);

#endif /* RAVEL_PREPARED_H */
