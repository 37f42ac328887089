/*
** compaction_picker.h -- what leveled compaction should do next: each
** level's target size, its score, the bytes compaction still owes, and
** the inputs of the next compaction (or of one asked for by
** ravel_compact_range).
**
** Targets (RocksDB's): level 1's is max_bytes_for_level_base, each
** deeper level's max_bytes_for_level_multiplier times the one above.
** With level_compaction_dynamic_level_bytes the last level's target is
** its actual size, each level above it a multiplier smaller, down to the
** "base level" -- the deepest level whose target is at most
** max_bytes_for_level_base -- and the levels between level 0 and the base
** level stay empty: level 0 compacts straight into the base level.
**
** Scores: level 0's is its file count over
** level0_file_num_compaction_trigger, a deeper level's its bytes over its
** target (files already being compacted left out).  The highest score of
** at least 1 is compacted first:
**   - level 0: every level 0 file (so no older version of a key stays
**     behind in level 0) with the overlapping files of the output level;
**   - level L >= 1: one file, taken round-robin by key (each level
**     remembers where its last compaction ended), with the overlapping
**     files of level L+1.
** A compaction whose files or output range overlap a running one's waits.
** A compaction of one file that overlaps nothing in the output level, nor
** more than max_compaction_bytes of the level below it, is a move (no
** rewrite) unless it was asked for by ravel_compact_range.
**
** All functions run with db->mu.lock held.
*/
#ifndef RAVEL_COMPACTION_PICKER_H
#define RAVEL_COMPACTION_PICKER_H

#include "ravel_int.h"
#include "db/version.h"
#include "base/options.h"

/* Where a level's last compaction ended: a user key (malloc'd), or
** none. */
struct rv_key_pointer {
    char *key;
    size_t len;
    int set;
};

struct rv_level_targets {
    int base_level;                     /* where level 0 compacts to */
    uint64_t bytes[RV_NUM_LEVELS];      /* 0 above the base level */
};

/* One compaction: the files of LEVEL and OUTPUT_LEVEL it merges into new
** files at OUTPUT_LEVEL.  It holds references on its files. */
struct rv_compaction {
    int level, output_level;
    int n_inputs[2];
    struct rv_file **inputs[2];         /* [0]: LEVEL, [1]: OUTPUT_LEVEL
                                        ** (empty when LEVEL is it) */
    int n_grandparents;
    struct rv_file **grandparents;      /* OUTPUT_LEVEL+1's overlapping */
    struct rv_files *files;             /* the file set picked from */
    char *smallest, *largest;           /* user keys covered by the inputs */
    size_t smallest_len, largest_len;
    uint64_t max_output_file_size;      /* the output level's target */
    uint64_t max_compaction_bytes;      /* an output and the grandparents
                                        ** it spans, at most (options.h) */
    int dynamic_file_size;              /* cut at grandparent boundaries
                                        ** (options.h) */
    double score;
    int manual;                         /* ravel_compact_range's: rewrite */
    int is_move;                        /* one file, moved by an edit */
    struct rv_compaction *next;         /* running compactions (db.h) */
};

RAVEL_PRIVATE void rv_level_targets_compute(const struct ravel_options *o,
                                            const struct rv_files *fs,
                                            struct rv_level_targets *t);

/* Bytes of level L's files in FS. */
RAVEL_PRIVATE uint64_t rv_level_bytes(const struct rv_files *fs, int l);

/* The score of level L (see above). */
RAVEL_PRIVATE double rv_level_score(const struct ravel_options *o,
                                    const struct rv_files *fs,
                                    const struct rv_level_targets *t, int l);

/* RocksDB's estimate of the bytes compaction must rewrite to bring every
** level within its target. */
RAVEL_PRIVATE uint64_t rv_pending_compaction_bytes(
    const struct ravel_options *o, const struct rv_files *fs);

/* The next automatic compaction of FS, given the RUNNING ones, or NULL
** (nothing due, or everything due conflicts with a running one).  The
** inputs are marked compacting.  POINTERS[L] is where level L's last
** compaction ended (a user key, updated here; malloc'd strings). */
RAVEL_PRIVATE struct rv_compaction *
rv_compaction_pick(const struct ravel_options *o, struct rv_files *fs,
                   const struct rv_compaction *running,
                   struct rv_key_pointer *pointers);

/* A manual compaction of level LEVEL's files overlapping [BEGIN, END]
** (user keys; NULL: unbounded) into OUTPUT_LEVEL (LEVEL or LEVEL+1 ...).
** Files numbered MIN_NUMBER or above are left out (outputs of the same
** ravel_compact_range).  ALLOW_MOVE: one file overlapping nothing below
** may be moved instead of rewritten.  Returns NULL with *BUSY = 0 if there is nothing
** to compact, NULL with *BUSY = 1 if a running compaction holds a file
** or range it needs; NULL with *BUSY = -1 when memory ran out. */
RAVEL_PRIVATE struct rv_compaction *
rv_compaction_pick_range(const struct ravel_options *o, struct rv_files *fs,
                         const struct rv_compaction *running, int level,
                         int output_level, const char *begin, size_t blen,
                         const char *end, size_t elen, uint64_t min_number,
                         int allow_move, int *busy);

/* Clears the inputs' compacting marks (under db->mu.lock) and frees C. */
RAVEL_PRIVATE void rv_compaction_release(struct rv_compaction *c);

/* max_compaction_bytes, its 0 read as RocksDB does: 25 times
** target_file_size_base. */
RAVEL_PRIVATE uint64_t rv_max_compaction_bytes(const struct ravel_options *o);

/* The deepest level of FS holding a file, 0 if none. */
RAVEL_PRIVATE int rv_files_deepest_level(const struct rv_files *fs);

#endif /* RAVEL_COMPACTION_PICKER_H */
