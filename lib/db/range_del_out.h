/*
** range_del_out.h -- the range tombstones a flush or compaction writes
** into its table files: gathered from its sources (a memtable's list, the
** input files' range-deletion blocks), and each output file given the
** part of every tombstone inside it, RocksDB's truncation: the file cut
** before user key K (the next file's first) gets [its lower bound, K),
** the first file everything below, the last everything above.  So the
** files of a level >= 1 stay disjoint, a file's largest bound being the
** sentinel (K, the maximum sequence, 0x0f) the builder writes, which sorts
** before every real entry of K.  A compaction asks it which tombstone
** covers a key (rv_range_del_out_find: it drops a version a tombstone
** hides from every reader) and marks the tombstones it need not write
** (rv_range_del_out_drop: at the bottom, seen by every reader).
*/
#ifndef RAVEL_RANGE_DEL_OUT_H
#define RAVEL_RANGE_DEL_OUT_H

#include "ravel_int.h"
#include "base/range_frags.h"
#include "db/keep.h"
#include "db/table_cache.h"

struct rv_table_output;
struct rv_file;

/* One job's: its thread alone uses it. */
struct rv_range_del_out {
    struct rv_range_tomb *tombs; /* keys point into the sources */
    int n, cap;
    rv_cache_handle **hold;      /* input tables held open for their keys */
    int n_hold, cap_hold;
    rv_table_cache *tc;
    unsigned char *dropped;      /* per tombstone: 1 if not written
                                 ** (rv_range_del_out_drop) */
    struct rv_range_frags *frags; /* all of them fragmented, for
                                 ** rv_range_del_out_find (built once) */
    struct rv_key_buf lower;     /* where the next file's part begins */
    int has_lower;               /* 0: the first file, no lower bound */
};

RAVEL_PRIVATE void rv_range_del_out_init(struct rv_range_del_out *o,
                                         rv_table_cache *tc);
RAVEL_PRIVATE void rv_range_del_out_free(struct rv_range_del_out *o);

/* Adds the N tombstones of T (which outlive O).  RAVEL_NOMEM. */
RAVEL_PRIVATE int rv_range_del_out_add(struct rv_range_del_out *o,
                                       const struct rv_range_tomb *t, int n);

/* Adds the tombstones of table file F (referenced by the job), holding
** its table open while O lives.  An error of the open, or RAVEL_NOMEM. */
RAVEL_PRIVATE int rv_range_del_out_add_file(struct rv_range_del_out *o,
                                            struct rv_file *f);

/* Marks every tombstone of O for which the callback (given CTX and the
** tombstone) returns 1 as not to be written (a compaction to the bottom: nothing below for it to
** hide, and every reader sees it).  It still hides what it covers in
** rv_range_del_out_find.  RAVEL_NOMEM. */
RAVEL_PRIVATE int rv_range_del_out_drop(struct rv_range_del_out *o,
                                        int (*drop)(void *ctx,
                                                    const struct rv_range_tomb
                                                    *t),
                                        void *ctx);

/* The fragment of O's tombstones covering user key K (all of them,
** dropped or not), or NULL; *NOMEM set if they could not be
** fragmented. */
RAVEL_PRIVATE const struct rv_range_frag *
rv_range_del_out_find(struct rv_range_del_out *o, const char *k, size_t klen,
                      int *nomem);

/* 1 if O holds any tombstone. */
RAVEL_PRIVATE int rv_range_del_out_any(const struct rv_range_del_out *o);

/* Gives OUT's file being written (one is started if a part is due and
** none is open) the parts of O's tombstones from O's lower bound up to
** user key NEXT (NLEN bytes; NEXT NULL: to the end), and makes NEXT the
** lower bound of the next file.  Call before each cut, with the user key
** that will begin the next file, and before the last with NULL. */
RAVEL_PRIVATE int rv_range_del_out_give(struct rv_range_del_out *o,
                                        struct rv_table_output *out,
                                        const char *next, size_t nlen);

#endif /* RAVEL_RANGE_DEL_OUT_H */
