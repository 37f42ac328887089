/*
** repair.h -- the pieces of ravel_repair (repair.c) shared between its
** files: the report (repair_report.c) and the salvage of one table file
** (repair_table.c).
**
** Repair reads every entry it can vouch for -- the data blocks of every
** table file that verify, the WAL records that verify -- merges them by
** internal key, keeps the newest version of each user key and writes them
** as fresh table files at one level with a fresh manifest.  A block that
** fails its checksum is lost; the report names its file, its place and the
** key range it covered, so the user knows where an older version (or a
** key deleted by a tombstone in that block) may have come back.
*/
#ifndef RAVEL_REPAIR_H
#define RAVEL_REPAIR_H

#include "ravel_int.h"
#include "base/range_frags.h"
#include "iter/iterator.h"
#include "table/table_format.h"
#include "base/options.h"
#include "db/prepared.h"
#include "db/version_edit.h"
#include "memtable/memtable.h"

/* ------------------------------------------------------------ the report */

/* The report of one repair: its lines, given to the caller's callback as
** they are made and kept as one text. */
struct rv_repair_report {
    ravel_repair_fn fn;     /* NULL: none */
    void *ctx;
    char *text;             /* every line so far, '\n'-terminated */
    size_t len, cap;
    int nomem;              /* a line could not be kept in TEXT */
};

/* Adds a line of KIND (RAVEL_REPAIR_*), printf-style. */
RAVEL_PRIVATE void rv_repair_say(struct rv_repair_report *r, int kind,
                                 const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "s" unless N is 1: for "%d block%s" in the report's lines. */
static inline const char *rv_repair_plural(uint64_t n)
{
    return n == 1 ? "" : "s";
}

/* KEY (LEN bytes) as the report shows it, in BUF (SIZE bytes): printable
** ASCII as it is, other bytes as \xNN, cut with "..." past 48 bytes,
** between double quotes.  Returns BUF. */
RAVEL_PRIVATE const char *rv_repair_key(char *buf, size_t size,
                                        const char *key, size_t len);
#define RV_REPAIR_KEY_TEXT 220 /* enough for rv_repair_key */

/* ---------------------------------------------------- lost key ranges */

/* A key range whose entries were lost with a damaged part of a table
** file: user keys from LO to HI, both included (no LO: from the first
** key; no HI: to the last).  Entries kept in it at a sequence below MAX_SEQ may be older than
** a version the lost part held. */
struct rv_repair_range {
    char *lo, *hi;          /* user keys, malloc'd; NULL: unbounded */
    size_t lo_len, hi_len;
    uint64_t max_seq;       /* the file's largest sequence; or
                            ** RV_MAX_SEQUENCE when unknown */
    uint64_t file;          /* the table file */
    uint64_t suspect;       /* entries kept in it that may be stale */
};

struct rv_repair_ranges {
    struct rv_repair_range *v;
    int n, cap;
};

/* Adds a range; NULL LO or HI: unbounded.  RAVEL_NOMEM. */
RAVEL_PRIVATE int rv_repair_ranges_add(struct rv_repair_ranges *rs,
                                       uint64_t file, const char *lo,
                                       size_t lo_len, const char *hi,
                                       size_t hi_len, uint64_t max_seq);
RAVEL_PRIVATE void rv_repair_ranges_free(struct rv_repair_ranges *rs);

/* ------------------------------------------------- salvaging a table */

/* A data block of a table file that verified: where it is. */
struct rv_repair_block {
    uint64_t offset, size;  /* contents; the trailer follows */
};

/* What repair could read of one table file. */
struct rv_repair_table {
    uint64_t number;
    uint64_t seed;          /* seeds its checksums: NUMBER, or the number
                            ** its footer records when it was renamed */
    char *path;
    const char *map;        /* the file, mapped read-only */
    uint64_t size;
    struct rv_repair_block *blocks; /* the good data blocks, in order */
    int n_blocks, cap_blocks;
    int walked;             /* its index or footer is damaged: its blocks
                            ** were found by walking the file */
    int meta_damaged;       /* its filter or properties block is damaged
                            ** (no data in them, but the file is not
                            ** whole) ... */
    const char *meta_what;  /* ... this one */
    int lost_blocks;        /* data blocks found damaged */
    int lost_tail;          /* the data past the last good block could not
                            ** be walked (index, footer damaged) */
    uint64_t kept;          /* entries in BLOCKS */
    uint64_t zero_seq;      /* of them, at sequence 0 */
    uint64_t max_seq;       /* largest sequence kept or recorded */
    int props_known;        /* the footer and properties were read */
    uint64_t props_entries; /* ... and say this many entries */
    struct rv_range_frags *tombs; /* its range tombstones (format version
                            ** 2), read from its range-deletion block (keys
                            ** in MAP); NULL: none, or lost (reported) */
};

/* Reads table file NUMBER at PATH: finds its data blocks (by its index,
** or, when the footer or the index is damaged, by walking the blocks from
** the file's start), keeps those that verify and hold well-formed entries
** in order, reports the others (with their key ranges, added to LOST) on
** R.  *T is filled (free with rv_repair_table_free) even when nothing in
** the file could be read.  RAVEL_IOERR / RAVEL_NOMEM only: damage is not
** an error. */
RAVEL_PRIVATE int rv_repair_table_read(uint64_t number, const char *path,
                                       struct rv_repair_report *r,
                                       struct rv_repair_ranges *lost,
                                       struct rv_repair_table *t);
RAVEL_PRIVATE void rv_repair_table_free(struct rv_repair_table *t);

/* -------------------------------------- inside the salvage of a table
** (repair_table.c: blocks and the index; repair_walk.c: the walk;
** repair_table_iter.c: the merge's iterator) */

/* A growable copy of a key: the last (or first) kept from a file. */
struct rv_repair_key_buf {
    char *key;
    size_t len, cap;
};

/* Copies LEN bytes of KEY into K: RAVEL_OK or RAVEL_NOMEM. */
RAVEL_PRIVATE int rv_repair_key_buf_set(struct rv_repair_key_buf *k,
                                        const char *key, size_t len);

/* A decoded block: DATA points into the map, or into OWNED. */
struct rv_repair_decoded {
    const char *data;
    size_t len;
    char *owned;
};

/* 1 if the block at OFF (SIZE bytes of contents) of T verifies and
** decodes into *D (free D->owned); 0 if not, with WHY saying why. */
RAVEL_PRIVATE int rv_repair_decode(const struct rv_repair_table *t,
                                   uint64_t off, uint64_t size,
                                   struct rv_repair_decoded *d, char *why,
                                   size_t whylen);

/* 1 if the block at OFF (SIZE bytes) of T verifies as a range-deletion
** block: its tombstones become T's if it has none yet.  For a walk past
** the data, where a version-2 file keeps that block among its meta
** blocks. */
RAVEL_PRIVATE int rv_repair_try_range_dels(struct rv_repair_table *t,
                                           uint64_t off, uint64_t size);

/* Tries the block at OFF of T: kept as a data block (*KEPT = 1; LAST
** becomes its last key, FIRST, if not NULL, its first) when it verifies,
** is not the index, and holds well-formed entries after LAST; else WHY
** says why not.  RAVEL_NOMEM only. */
RAVEL_PRIVATE int rv_repair_try_block(struct rv_repair_table *t,
                                      uint64_t off, uint64_t size,
                                      struct rv_repair_key_buf *last,
                                      struct rv_repair_key_buf *first,
                                      int *kept, char *why, size_t whylen);

/* Walks T's data blocks from byte 0 up to LIMIT (the data's end when
** LIMIT_KNOWN, from the footer; else the file's), keeping those that
** verify and reporting the rest lost on R and in LOST.  RAVEL_NOMEM. */
RAVEL_PRIVATE int rv_repair_walk(struct rv_repair_table *t, uint64_t limit,
                                 int limit_known, struct rv_repair_report *r,
                                 struct rv_repair_ranges *lost);

/* An iterator over the entries of T's good blocks, in order (forward
** only: seek_to_first and next; the merge needs no more).  NULL on
** allocation failure.  T must outlive it. */
RAVEL_PRIVATE struct rv_iter *rv_repair_table_iter_new(
    const struct rv_repair_table *t);


/* ----------------------------------------------------- one repair's state */

/* A list of numbers (files). */
struct rv_repair_numbers {
    uint64_t *v;
    int n, cap;
};

RAVEL_PRIVATE int rv_repair_numbers_add(struct rv_repair_numbers *ns,
                                        uint64_t v);
RAVEL_PRIVATE int rv_repair_numbers_has(const struct rv_repair_numbers *ns,
                                        uint64_t v);
RAVEL_PRIVATE void rv_repair_numbers_remove(struct rv_repair_numbers *ns,
                                            uint64_t v);

/* What one run of ravel_repair knows, filled step by step (repair.c lists
** and moves files, repair_files.c reads the manifests and the tables,
** repair_wal.c the WAL, repair_output.c merges and writes).  Used by one
** thread. */
struct rv_repair {
    const char *dir;
    const struct ravel_options *o;
    struct rv_repair_report report;
    /* the directory's files */
    struct rv_repair_numbers tables, wal, manifests; /* ascending */
    char **aside;           /* names to move aside */
    int n_aside, cap_aside;
    uint64_t max_number;    /* of table files and manifests */
    int has_identity, has_current;
    uint64_t current;       /* the manifest CURRENT names (0: none) */
    /* what the manifests prove */
    struct rv_repair_numbers obsolete; /* tables a manifest deleted */
    struct rv_repair_numbers live;     /* CURRENT's manifest's tables */
    struct rv_repair_ranges live_ranges; /* ... their key ranges */
    int current_clean;      /* CURRENT's manifest read whole, undamaged */
    uint64_t manifest_next; /* the largest next file number they record */
    int deepest_level;      /* the deepest level they put a file at (-1:
                            ** none read) */
    uint64_t current_log;   /* CURRENT's manifest's log number ... */
    uint64_t current_closed;/* ... and closed segment (0: none) ... */
    uint64_t current_last_seq; /* ... and last sequence given out */
    /* what was read */
    struct rv_repair_table *read; /* the table files merged */
    int n_read;
    struct rv_repair_ranges lost;
    rv_memtable *mem;       /* the WAL's entries */
    struct rv_db_prepared prepared;
    uint64_t wal_entries, wal_dropped;
    int wal_flushed;        /* replaying segments below the log number of
                            ** CURRENT's manifest read whole: their writes
                            ** are not merged (only their markers and
                            ** prepares are read) */
    uint64_t wal_last;      /* the last segment the replay kept */
    int wal_last_sealed;    /* ... ends with its seal */
    int wal_damaged;        /* that replay lost records (reported) */
    uint64_t wal_cut_seqs;  /* sequences lost with the log's end */
    uint64_t seen_seq;      /* the largest sequence in a table file or a
                            ** WAL record read (not a manifest's) */
    uint64_t wal_next_seq;  /* the sequence after the last record read */
    uint64_t wal_gap_from[8], wal_gap_to[8]; /* sequences missing */
    int wal_gaps;
    uint64_t max_seq;       /* the largest sequence seen */
    int damage;             /* something was lost or is out of place */
    /* what was written */
    struct rv_version_edit edit;
    uint64_t next_number;   /* the next file number to give out */
    int level;              /* of the new files */
    uint64_t written, tombstones, older, zero_ties, suspects;
};

/* Reads every manifest of the directory: which table files they prove
** obsolete, and whether CURRENT's is whole (repair_files.c). */
RAVEL_PRIVATE int rv_repair_read_manifests(struct rv_repair *rp);
/* Reads every table file not proven obsolete. */
RAVEL_PRIVATE int rv_repair_read_tables(struct rv_repair *rp);
/* Replays every WAL segment, skipping damage, into RP->mem; prepares go to
** RP->prepared, not to RP->mem (repair_wal.c). */
RAVEL_PRIVATE int rv_repair_read_wal(struct rv_repair *rp);

/* Merges what was read and writes it as new table files in the directory,
** listed in RP->edit (repair_output.c).  Deletes them again on failure. */
RAVEL_PRIVATE int rv_repair_write_tables(struct rv_repair *rp);

#endif /* RAVEL_REPAIR_H */
