/*
** keep.h -- which versions of a key a flush or a compaction keeps.
**
** A reader sees, of one user key, the newest version at or below its
** sequence.  With the live snapshots s1 < s2 < ... < sn, the versions of
** a key fall into stripes (.., s1], (s1, s2], ..., (sn, +inf); each
** snapshot sees the newest version of its own stripe or of an older one,
** and a reader without a snapshot -- which reads a new table file only at
** a sequence at or above every entry in it (db_read.c takes its version
** before its sequence, and files hold only entries visible when they were
** written) -- sees the newest of the last stripe.  So the newest version
** of each stripe is kept, the others are dropped.
**
** With write_prepared (visibility.h) a snapshot sees every version at or
** below its all_below and, between that and its sequence, the ones whose
** batches had committed when it was taken; a reader without a snapshot
** sees everything at or below the commit watermark, and above it what has
** committed.  The stripes are then cut at each snapshot's all_below and at
** the watermark, and every version in a range some reader may or may not
** see -- between a snapshot's two bounds, or above the watermark -- is
** "uncertain": kept, and hiding nothing, whether its batch has committed
** yet or not.  Compaction asks the same question the reads ask, and never
** drops or rewrites a version whose visibility it cannot decide.
**
** A deletion may itself be dropped (rv_keep_seen_by_all says so) when it
** lies in the first stripe (every reader sees it or something newer), is
** certain, and no level below the output holds the key: then no reader can
** find an older version it hides.
*/
#ifndef RAVEL_KEEP_H
#define RAVEL_KEEP_H

#include "ravel_int.h"
#include "db/db.h"

/* A growable copy of one key. */
struct rv_key_buf {
    char *data;
    size_t len, cap;
};

/* Copies N bytes of P into K: RAVEL_OK or RAVEL_NOMEM (message set). */
RAVEL_PRIVATE int rv_key_buf_set(struct rv_key_buf *k, const char *p,
                                 size_t n);

struct rv_keep {
    uint64_t *bounds;       /* stripe bounds, ascending: each live
                            ** snapshot's all_below (its sequence outside
                            ** write_prepared), and with write_prepared
                            ** the commit watermark */
    int n_bounds;
    struct rv_seq_range *uncertain; /* write_prepared: sequences some
                            ** reader may or may not see: ascending,
                            ** disjoint */
    int n_uncertain;
    struct rv_key_buf prev; /* the last user key kept */
    int have_prev;
    int prev_stripe;
};

/* Fills K (zeroed by the caller) from the live snapshots' bounds (SNAPS,
** N, ascending by all_below) and, with write_prepared, the commit
** watermark WATERMARK (UINT64_MAX otherwise).  The watermark must be
** loaded before the snapshot list is taken. */
RAVEL_PRIVATE int rv_keep_init(struct rv_keep *k,
                               const struct rv_snapshot_bounds *snaps, int n,
                               uint64_t watermark);
RAVEL_PRIVATE void rv_keep_free(struct rv_keep *k);

/* Under db->mu.lock: fills K (zeroed by the caller) for DB as it is now -- its
** live snapshots and, with write_prepared, its commit watermark (loaded
** first: a snapshot taken after the list has all_below at or above it). */
RAVEL_PRIVATE int rv_keep_init_locked(struct rv_keep *k, ravel_db *db)
    RV_REQUIRES(db->mu.lock);

/* 1 if the entry IKEY (KLEN bytes; entries come in internal-key order)
** must be kept; 0 if a newer version of its key in the same stripe hides
** it from every reader; -1 on allocation failure. */
RAVEL_PRIVATE int rv_keep_entry(struct rv_keep *k, const char *ikey,
                                size_t klen);

/* 1 if a deletion at SEQ, kept by rv_keep_entry, is seen by every reader
** (first stripe, certain): it may be dropped where nothing older of its
** key can exist below. */
RAVEL_PRIVATE int rv_keep_seen_by_all(const struct rv_keep *k, uint64_t seq);

/* 1 if a range tombstone at NEWER hides a version at OLDER (< NEWER) of a
** key it covers from every reader: both certain, in one stripe.  The
** version may then be dropped where the tombstone is kept (or, at the
** bottom, dropped with it). */
RAVEL_PRIVATE int rv_keep_hides(const struct rv_keep *k, uint64_t newer,
                                uint64_t older);

#endif /* RAVEL_KEEP_H */
