/*
** prepared.h -- prepared transactions (two-phase commit): where their
** writes are kept until a commit or a rollback, and which are waiting.
**
** Each prepared transaction has a number, unique in the database, named
** by the markers of its WAL records (base/dbformat.h) and by its file.
**
**   prepare   its batch and a RV_TYPE_TXN_PREPARE marker (its name and
**             number) go to the WAL as one record, through the write
**             group like any write (so prepares share WAL writes and
**             fdatasyncs), and into no memtable: durable when it returns
**             with RAVEL_SYNC, invisible to every reader.
**   commit    its batch and a RV_TYPE_TXN_COMMIT marker go through the
**             write path as one batch: data and marker in one WAL record,
**             atomic.
**   rollback  a record holding only a RV_TYPE_TXN_ROLLBACK marker.
**
** A WAL segment is deleted once a flush has moved the log number past it.
** A prepared transaction still waiting then would lose its prepare
** record, so the flush first writes its batch to a file of its own,
** prepared-NNNNNN.txn ("spills" it: written whole, fsynced, renamed into
** place, the directory fsynced), before the manifest edit that moves the
** log number; a failed spill fails the flush.  Only transactions that stay
** prepared across a flush pay for a file.  A spilled transaction's file
** goes with its rollback, or, once committed, with the flush that moves
** the log number past its commit record -- before that flush's manifest
** edit, so whenever the file exists after a crash and the commit was
** durable, the replayed WAL holds the commit marker.  Numbers are never
** given out twice while a marker of one may still be replayed: the
** counter passes every number a file or a replayed marker names.
**
** At open, the files are read first, then the replay adds the prepares it
** meets and takes away those it meets a commit or rollback marker of: the
** rest are the prepared transactions.  A replayed prepare that has no
** file is spilled by the first flush.
**
**   file := magic "RVPREP1\n"  name_len:fixed32  name[name_len]
**           number:fixed64  rep_len:fixed64  rep[rep_len]  checksum:fixed64
**
** (rep: base/batchrepr.h, without its marker; checksum: XXH3_64 of every
** byte before it.)
**
** A file that fails its check is RAVEL_CORRUPT at open, naming it: an open
** never drops a prepared transaction it cannot read.  A ".tmp" one was
** never renamed into place and is deleted.
**
** Owns: the list (db->prepared, under its own lock), the files, and the
** markers' meaning at replay.  Does not own: locking the transactions'
** keys again after a restart, or handing them out (lib/txn/txn.c).
*/
#ifndef RAVEL_PREPARED_H
#define RAVEL_PREPARED_H

#include "ravel_int.h"
#include "util/mutex.h"

struct ravel_batch;

struct rv_prepared_txn {
    uint64_t number;
    char *name;
    char *rep;              /* its writes, owned: recovered, or left by a
                            ** freed handle (else NULL) ... */
    size_t len;
    const struct ravel_batch *live; /* ... or the batch of the handle that
                            ** holds it, its first LIVE_LEN bytes (the
                            ** handle changes it only through
                            ** rv_prepared_mark and rv_prepared_unmark) */
    size_t live_len;
    uint32_t live_count;    /* ... holding this many ops */
    uint64_t wal_segment;   /* its prepare record is in this segment or a
                            ** later one */
    int spilled;            /* its file exists */
    int committed;          /* commit marker written (or replayed) */
    uint64_t commit_segment;/* ... in this WAL segment (or before it) */
    int rolled_back;        /* replay met its rollback marker */
    int claimed;            /* a ravel_txn handle has it */
    uint64_t owner;         /* the lock-table id its keys are locked under
                            ** while no handle has it (0: not locked) */
    struct rv_prepared_txn *next;
};

struct rv_db_prepared {
    rv_mutex lock;
    struct rv_prepared_txn *list;   /* lock */
    uint64_t next_number;           /* lock: above every number seen */
};

RAVEL_PRIVATE void rv_prepared_init(struct rv_db_prepared *p);
RAVEL_PRIVATE void rv_prepared_destroy(struct rv_db_prepared *p);

/* ------------------------------------------------------------ at open */

/* Before the WAL is replayed: reads every prepared file of DIR into P
** (RAVEL_CORRUPT naming a damaged one), deleting ".tmp" ones unless
** READ_ONLY. */
RAVEL_PRIVATE int rv_prepared_load(struct rv_db_prepared *p, const char *dir,
                                   int read_only);

/* What replay does with a record (its rep, LEN bytes): 1 if it is a
** prepare (registered in P: nothing of it goes to the memtable), 0 if it
** is to be applied (its commit or rollback markers, if any, are for
** rv_prepared_replayed_marker), or RAVEL_NOMEM / RAVEL_CORRUPT < 0. */
RAVEL_PRIVATE int rv_prepared_replay_record(struct rv_db_prepared *p,
                                            const char *rep, size_t len);
/* Replay met a commit or rollback marker (TYPE) of transaction NUMBER. */
RAVEL_PRIVATE void rv_prepared_replayed_marker(struct rv_db_prepared *p,
                                               int type, uint64_t number);
/* After the replay: the commit markers met were in LAST_SEGMENT or before
** it; the files of the transactions rolled back are deleted (unless
** READ_ONLY). */
RAVEL_PRIVATE void rv_prepared_replay_done(struct rv_db_prepared *p,
                                           const char *dir,
                                           uint64_t last_segment,
                                           int read_only);

/* ---------------------------------------------------------- a handle's */

/* Registers transaction NAME, whose writes are batch B, about to write
** its prepare record in segment SEGMENT_FLOOR or a later one: appends the
** prepare marker to B, in the same hold of P's lock that lists it (a spill
** then always finds its writes); *NUMBER receives its number, *LEN and
** *COUNT B as it was (for rv_prepared_unmark).  RAVEL_INVALID if a
** transaction of that name is prepared already; RAVEL_NOMEM. */
RAVEL_PRIVATE int rv_prepared_begin(struct rv_db_prepared *p,
                                    const char *name, uint64_t segment_floor,
                                    struct ravel_batch *b, uint64_t *number,
                                    size_t *len, uint32_t *count);
/* Its prepare record could not be written: forgotten, and its file, if a
** flush spilled it meanwhile, deleted from DIR. */
RAVEL_PRIVATE void rv_prepared_abort(struct rv_db_prepared *p,
                                     const char *dir, uint64_t number);
/* Appends to B -- the batch of NUMBER's handle, holding its writes -- a
** marker of TYPE (RV_TYPE_TXN_*) naming NAME and NUMBER, under P's lock
** (a flush may be spilling from B), and reads NUMBER's writes from B's
** bytes before the marker from then on; *LEN and *COUNT receive B as it
** was.  RAVEL_INVALID / RAVEL_NOMEM from the append (B unchanged). */
RAVEL_PRIVATE int rv_prepared_mark(struct rv_db_prepared *p, uint64_t number,
                                   const char *name, struct ravel_batch *b,
                                   int type, size_t *len, uint32_t *count);
/* Takes that marker off B again (B back to LEN bytes, COUNT ops). */
RAVEL_PRIVATE void rv_prepared_unmark(struct rv_db_prepared *p,
                                      struct ravel_batch *b, size_t len,
                                      uint32_t count);

/* NUMBER's commit marker went to WAL segment SEGMENT. */
RAVEL_PRIVATE void rv_prepared_committed(struct rv_db_prepared *p,
                                         uint64_t number, uint64_t segment);
/* NUMBER's rollback record is written: its file goes (the directory
** synced), and so does its entry.  RAVEL_IOERR (the entry stays). */
RAVEL_PRIVATE int rv_prepared_rolled_back(struct rv_db_prepared *p,
                                          const char *dir, uint64_t number);

/* Hands the transaction named NAME, prepared and not claimed by a handle,
** to the caller: *OUT receives its number, owner, name (a malloc'd copy)
** and writes (REP, lent: P keeps it, unchanged, until the caller's
** handle holds the same writes and says so with rv_prepared_attach,
** or lets go with rv_prepared_unclaim).  RAVEL_NOTFOUND; RAVEL_NOMEM. */
RAVEL_PRIVATE int rv_prepared_claim(struct rv_db_prepared *p,
                                    const char *name,
                                    struct rv_prepared_txn *out);
/* The handle's batch B holds NUMBER's writes now (P frees its own copy
** and reads B from here on). */
RAVEL_PRIVATE void rv_prepared_attach(struct rv_db_prepared *p,
                                      uint64_t number,
                                      const struct ravel_batch *b);
/* The handle of NUMBER was freed unresolved, or its recovery failed: it
** can be claimed again, its keys locked under OWNER; P stops reading the
** handle's batch and keeps REP (LEN bytes, malloc'd, taken over; NULL if
** P still has its own), in one step. */
RAVEL_PRIVATE void rv_prepared_unclaim(struct rv_db_prepared *p,
                                       uint64_t number, uint64_t owner,
                                       char *rep, size_t len);

/* ------------------------------------------------------------ flushes */

/* Before a flush's manifest edit moves the log number to LOG_NUMBER:
** writes the file of every waiting transaction whose prepare record may
** lie below it.  RAVEL_IOERR / RAVEL_NOMEM: the flush must fail. */
RAVEL_PRIVATE int rv_prepared_spill(struct rv_db_prepared *p, const char *dir,
                                    uint64_t log_number);

/* Before that edit too: deletes the files of the transactions committed
** in segments below LOG_NUMBER, then syncs DIR.  Until the edit those
** segments are replayed at an open, and their commit records hold the
** writes, so the files are not needed; after it, a file left would list
** a committed transaction as prepared.  RAVEL_IOERR: the flush must fail
** (the segments stay). */
RAVEL_PRIVATE int rv_prepared_release_flushed(struct rv_db_prepared *p,
                                              const char *dir,
                                              uint64_t log_number);

/* ------------------------------------------------------------- lookups */

/* Calls fn(ctx, number) under P's lock for each transaction whose file
** exists and whose prepare record may lie before WAL segment BEFORE: a
** checkpoint reads those files there, while no spill, commit release or
** rollback can change them.  A non-zero return stops and is returned. */
RAVEL_PRIVATE int rv_prepared_each_spilled(struct rv_db_prepared *p,
                                           uint64_t before,
                                           int (*fn)(void *ctx,
                                                     uint64_t number),
                                           void *ctx);

/* 1 if a transaction waiting (prepared, not resolved) is named NAME. */
RAVEL_PRIVATE int rv_prepared_name_taken(struct rv_db_prepared *p,
                                         const char *name);

/* The names of the waiting transactions, one per line (malloc'd; NULL
** when out of memory). */
RAVEL_PRIVATE char *rv_prepared_names(struct rv_db_prepared *p);

/* Calls FN with CTX and each waiting transaction, with P's lock held (FN
** must not call back into P). */
RAVEL_PRIVATE void rv_prepared_for_each(struct rv_db_prepared *p,
                                        void (*fn)(void *ctx,
                                                   struct rv_prepared_txn *e),
                                        void *ctx);

#endif /* RAVEL_PREPARED_H */
