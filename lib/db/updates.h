/*
** updates.h -- the change feed: ravel_updates_since and its iterator
** (include/ravel.h, "Change feed"), reading committed batches back from
** the WAL segments in DIR and DIR/archive/ (wal/wal_archive.h) with the
** tail reader (wal/wal_tail.h).
**
** The segment index: each segment's first sequence, read once from its
** first batch record and kept here, so that positioning at a sequence
** reads one record per segment the first time and nothing after -- the
** WAL is never scanned from its start.  A start position is the newest
** segment whose first sequence is at or below the one asked for; the
** iterator then reads within that segment, then on to the next ones.
** Entries stay valid: a segment number is never given to other data (a
** recycled file is renamed to a new number), and only segments with a
** record are entered.
*/
#ifndef RAVEL_UPDATES_H
#define RAVEL_UPDATES_H

#include "ravel_int.h"
#include "util/mutex.h"

struct rv_feed_entry {
    uint64_t number;        /* a WAL segment */
    uint64_t first_seq;     /* the sequence of its first batch record */
};

/* In struct ravel_db: the segment index, shared by every iterator of the
** handle.  Written and read under LOCK, by ravel_updates_since. */
struct rv_db_feed {
    rv_mutex lock;
    struct rv_feed_entry *index;    /* lock: ascending by number */
    int n, cap;                     /* lock */
};

RAVEL_PRIVATE void rv_feed_init(struct rv_db_feed *f);
RAVEL_PRIVATE void rv_feed_destroy(struct rv_db_feed *f);

#endif /* RAVEL_UPDATES_H */
