/*
** options.c -- ravel_options: names, defaults, value parsing, text form,
** and the checks of options against each other.
**
** Owns: the table of settable options -- each one's name, kind, default,
** range, one-line doc, the options it is checked against, and where the
** value lives in struct ravel_options --, the parsers for booleans, sizes
** and enums (and so the names of the recovery modes, which the WAL reader
** prints through rv_recovery_mode_name), every refusal of a combination of
** options (rv_options_check), the other names set and get take for an
** option (RocksDB's and db_bench's where ravel's differs: compression_type,
** bloom_bits, cache_size), the list of RocksDB option names ravel has not
** built yet (with the option to use instead, where there is one), and the
** "did you mean" suggestion for a misspelt name (edit distance over the
** table and that list).
** Does not own: what an option does (db.c, wal_writer.c, wal_reader.c read
** the parsed struct).
**
** One table drives set, get, describe and the defaults, so an option added
** to the table is settable, readable, listed and initialised at once; the
** option list of include/ravel.h and the manual pages are checked against
** it by tests/docs/test_options_table.py (ravel.1's is printed from it).
** Values are strict: a size with trailing junk, a negative number or one
** that overflows is rejected rather than half-parsed, because a mistyped
** option silently replaced by a default is worse than a failed open.
*/
#include "base/options.h"
#include "util/cache.h"
#include "util/write_controller.h"
#include "base/dbformat.h"
#include "util/error.h"

#include <ctype.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* SIZE, ENTRIES and RATE are the quantities: a uint64_t field, parsed alike
** (digits and a power-of-1024 suffix), told apart only by the unit their
** messages name -- a count of 3 is "3 entries", not "3 bytes". */
enum options_kind {
    OPTIONS_BOOL,
    OPTIONS_SIZE,  /* bytes */
    OPTIONS_ENTRIES, /* a count */
    OPTIONS_RATE,  /* bytes per second */
    OPTIONS_INT,
    OPTIONS_ENUM,
};

struct options_enum_name {
    const char *name;
    int value;
};

/* One row of the options table: everything ravel knows about an option
** but what it does.  Set, get, describe, the defaults, the messages and
** the option list of the man page ravel.1 all read it. */
struct options_def {
    const char *name;  /* the name of its field in struct ravel_options */
    enum options_kind kind;
    size_t offset;     /* of the field in struct ravel_options */
    uint64_t def;      /* the default: 0/1, the number, the enum's value */
    uint64_t min, max; /* the quantities and OPTIONS_INT */
    const struct options_enum_name *names; /* OPTIONS_ENUM; NULL-terminated,
                                           ** the first name of a value is
                                           ** the one get/describe print */
    const char *why; /* why ravel refuses values outside min .. max that
                     ** RocksDB's option of the same name takes (NULL:
                     ** RocksDB refuses them too, or has no such option);
                     ** every refusal of a value prints it */
    uint64_t zero;     /* the quantities: what 0 means here, as RocksDB
                       ** reads it (delayed_write_rate: its default); 0:
                       ** 0 is a value like any other */
    uint64_t negative; /* OPTIONS_INT: what -1 means here, as RocksDB
                       ** reads it (no limit, never); 0: -1 is refused,
                       ** as every other negative value is */
    const char *conflicts; /* the options rv_options_check refuses some
                           ** values of this one with, space-separated
                           ** (NULL: none); each lists the other */
    const char *doc;   /* one line: what it sets */
};

static const struct options_enum_name options_wal_io_names[] = {
    {"auto", RV_WAL_IO_AUTO},
    {"uring", RV_WAL_IO_URING},
    {"sync", RV_WAL_IO_SYNC},
    {"direct", RV_WAL_IO_DIRECT},
    {NULL, 0},
};

static const struct options_enum_name options_recovery_names[] = {
    {"tolerate_corrupted_tail_records", RV_RECOVERY_TOLERATE_CORRUPTED_TAIL},
    {"absolute_consistency", RV_RECOVERY_ABSOLUTE_CONSISTENCY},
    {"point_in_time", RV_RECOVERY_POINT_IN_TIME},
    {"skip_any_corrupted_records", RV_RECOVERY_SKIP_ANY_CORRUPTED},
    /* RocksDB's numbers and enumerator names, as db_bench users pass them */
    {"0", RV_RECOVERY_TOLERATE_CORRUPTED_TAIL},
    {"1", RV_RECOVERY_ABSOLUTE_CONSISTENCY},
    {"2", RV_RECOVERY_POINT_IN_TIME},
    {"3", RV_RECOVERY_SKIP_ANY_CORRUPTED},
    {"kTolerateCorruptedTailRecords", RV_RECOVERY_TOLERATE_CORRUPTED_TAIL},
    {"kAbsoluteConsistency", RV_RECOVERY_ABSOLUTE_CONSISTENCY},
    {"kPointInTimeRecovery", RV_RECOVERY_POINT_IN_TIME},
    {"kSkipAnyCorruptedRecords", RV_RECOVERY_SKIP_ANY_CORRUPTED},
    {NULL, 0},
};

static const struct options_enum_name options_compression_names[] = {
    {"none", RV_COMPRESSION_NONE},
    {"lz4", RV_COMPRESSION_LZ4},
    {"zstd", RV_COMPRESSION_ZSTD},
    /* db_bench's --compression_type spellings */
    {"kNoCompression", RV_COMPRESSION_NONE},
    {"kLZ4Compression", RV_COMPRESSION_LZ4},
    {"kZSTD", RV_COMPRESSION_ZSTD},
    {NULL, 0},
};

static const struct options_enum_name options_write_policy_names[] = {
    {"write_committed", RV_WRITE_POLICY_COMMITTED},
    {"write_prepared", RV_WRITE_POLICY_PREPARED},
    /* RocksDB's enumerator names */
    {"WRITE_COMMITTED", RV_WRITE_POLICY_COMMITTED},
    {"WRITE_PREPARED", RV_WRITE_POLICY_PREPARED},
    {NULL, 0},
};

static const struct options_enum_name options_compaction_pri_names[] = {
    {"min_overlapping_ratio", RV_COMPACTION_PRI_MIN_OVERLAPPING_RATIO},
    {"round_robin", RV_COMPACTION_PRI_ROUND_ROBIN},
    /* RocksDB's enumerator names and numbers */
    {"kMinOverlappingRatio", RV_COMPACTION_PRI_MIN_OVERLAPPING_RATIO},
    {"kRoundRobin", RV_COMPACTION_PRI_ROUND_ROBIN},
    {"3", RV_COMPACTION_PRI_MIN_OVERLAPPING_RATIO},
    {"4", RV_COMPACTION_PRI_ROUND_ROBIN},
    {NULL, 0},
};

/* The row of option F, of kind K: its name is its field's name. */
#define OPTION(f, k) .name = #f, .kind = OPTIONS_##k, \
                     .offset = offsetof(struct ravel_options, f)

/* Every option, in the order describe prints them.  include/ravel.h (its
** list in the comment above ravel_options_set), ravel.1 (printed from
** here by `ravel -manpage`) and ravel.3 are checked against this table by
** tests/docs/test_options_table.py; rv_options_init_defaults fills the
** defaults from it. */
static const struct options_def options_table[] = {
    {OPTION(create_if_missing, BOOL), .def = 0,
     .doc = "create the directory and the database if absent"},
    {OPTION(error_if_exists, BOOL), .def = 0,
     .doc = "fail to open an existing database"},
    {OPTION(read_only, BOOL), .def = 0,
     .doc = "open for reads only, beside a live writer or none: takes no "
            "lock, follows the writer with ravel_catch_up"},
    {OPTION(write_buffer_size, SIZE), .def = 64ull << 20,
     .min = 4ull << 10, .max = 4ull << 30,
     .doc = "memtable size before it is switched for a fresh one"},
    {OPTION(max_write_batch_group_size_bytes, SIZE), .def = 1ull << 20,
     .min = 1ull << 10, .max = 1ull << 30,
     .doc = "byte cap on one write group"},
    {OPTION(allow_concurrent_memtable_write, BOOL), .def = 1,
     .conflicts = "unordered_write",
     .doc = "members of a write group insert their own batches in "
            "parallel"},
    {OPTION(wal_io, ENUM), .def = RV_WAL_IO_AUTO,
     .names = options_wal_io_names,
     .conflicts = "manual_wal_flush recycle_log_file_num",
     .doc = "how the WAL is written; auto probes the file system at open"},
    {OPTION(wal_recovery_mode, ENUM),
     .def = RV_RECOVERY_TOLERATE_CORRUPTED_TAIL,
     .names = options_recovery_names,
     .doc = "which damage to the WAL recovery drops, and which it refuses"},
    {OPTION(wal_preallocate, BOOL), .def = 1,
     .doc = "reserve each WAL segment's space up front"},
    {OPTION(manual_wal_flush, BOOL), .def = 0,
     .conflicts = "wal_io",
     .doc = "keep WAL records in a 1 MiB buffer until it fills, a sync "
            "write, ravel_flush_wal, a memtable switch or close"},
    {OPTION(recycle_log_file_num, INT), .def = 0, .min = 0, .max = 64,
     .why = "ravel keeps at most 64 spare WAL segments",
     .conflicts = "wal_io",
     .doc = "flushed WAL segments kept and reused (wal_io=direct)"},
    {OPTION(wal_io_switch_every_segments, INT), .def = 0, .min = 0,
     .max = 1000,
     .doc = "testing only: wal_io=auto switches between its buffered and "
            "direct modes every N segments whatever the writes (0: as "
            "the writes and the probe say)"},
    {OPTION(wal_ttl_seconds, INT), .def = 0, .min = 0, .max = INT_MAX,
     .doc = "flushed WAL segments kept in archive/ for the change feed "
            "this many seconds after their last write (0: no age limit)"},
    {OPTION(wal_size_limit_mb, INT), .def = 0, .min = 0, .max = INT_MAX,
     .doc = "flushed WAL segments kept in archive/ for the change feed up "
            "to this many MiB in all, oldest deleted first (0: no size "
            "limit)"},
    {OPTION(unordered_write, BOOL), .def = 0,
     .conflicts = "allow_concurrent_memtable_write write_policy "
                  "in_order_publication",
     .doc = "a write group is visible before its inserts end: "
            "read-your-own-writes only"},
    {OPTION(two_write_queues, BOOL), .def = 0,
     .conflicts = "write_policy",
     .doc = "a second write queue, for write_policy=write_prepared"},
    {OPTION(write_policy, ENUM), .def = RV_WRITE_POLICY_COMMITTED,
     .names = options_write_policy_names,
     .conflicts = "unordered_write two_write_queues in_order_publication",
     .doc = "write_prepared: unordered writes ordered by a commit table"},
    {OPTION(in_order_publication, BOOL), .def = 0,
     .conflicts = "unordered_write write_policy",
     .doc = "with unordered_write: a batch is visible once it and every "
            "earlier one are inserted"},
    {OPTION(commit_table_size, ENTRIES), .def = 1ull << 20,
     .min = 16, .max = 64ull << 20,
     .doc = "entries of write_prepared's commit table, a power of two"},
    {OPTION(max_write_buffer_number, INT), .def = 2, .min = 2,
     .max = INT_MAX,
     .why = "one memtable takes writes while another is flushed; RocksDB "
            "reads less than 2 as 2",
     .doc = "memtables in memory at most, the active one included"},
    {OPTION(max_background_jobs, INT), .def = 2, .min = 1, .max = 64,
     .why = "ravel starts one thread per job when it opens, where RocksDB "
            "shares a thread pool; RocksDB reads less than 1 as 1",
     .doc = "background threads running flushes and compactions"},
    {OPTION(avoid_flush_during_shutdown, BOOL), .def = 0,
     .doc = "close leaves the memtables to the WAL instead of flushing "
            "them"},
    {OPTION(target_file_size_base, SIZE), .def = 64ull << 20,
     .min = 64ull << 10, .max = 16ull << 30,
     .doc = "size at which flushes and compactions cut level 1's table "
            "files"},
    {OPTION(target_file_size_multiplier, INT), .def = 1, .min = 1,
     .max = INT_MAX,
     .why = "a level's file size is the one above's times this: less than "
            "1 would make files of no size",
     .doc = "each level's file size is the one above's times this"},
    {OPTION(level0_file_num_compaction_trigger, INT), .def = 4, .min = 1,
     .max = INT_MAX,
     .why = "a number of files; RocksDB reads 0 as 1 and a negative number "
            "as never, which 2147483647 means here",
     .conflicts = "level0_slowdown_writes_trigger",
     .doc = "level 0 files that start a compaction of level 0"},
    {OPTION(max_bytes_for_level_base, SIZE), .def = 256ull << 20,
     .min = 64ull << 10, .max = 1ull << 50,
     .doc = "target size of level 1 (dynamic level bytes: of the base "
            "level)"},
    {OPTION(max_bytes_for_level_multiplier, INT), .def = 10, .min = 2,
     .max = INT_MAX,
     .why = "a whole number, each level's target at least twice the one "
            "above's (RocksDB takes a fraction, and reads 0 or less as 1: "
            "levels of one size, which level_compaction_dynamic_level_bytes "
            "cannot lay out)",
     .doc = "each level's target size is the one above's times this"},
    {OPTION(num_levels, INT), .def = RV_NUM_LEVELS, .min = 2,
     .max = RV_NUM_LEVELS,
     .why = "ravel is built with 7 levels at most (RV_NUM_LEVELS, the size "
            "of its level arrays); leveled compaction needs 2, as "
            "RocksDB's, which reads fewer as 2",
     .doc = "levels, level 0 included"},
    {OPTION(level_compaction_dynamic_level_bytes, BOOL), .def = 0,
     .doc = "derive the levels' targets from the last level's size"},
    {OPTION(disable_auto_compactions, BOOL), .def = 0,
     .doc = "run no compaction but those ravel_compact_range asks for"},
    {OPTION(compaction_pri, ENUM),
     .def = RV_COMPACTION_PRI_MIN_OVERLAPPING_RATIO,
     .names = options_compaction_pri_names,
     .doc = "which file of a level is compacted next"},
    {OPTION(max_compaction_bytes, SIZE), .def = 0, .min = 0,
     .max = 1ull << 50,
     .doc = "bytes a compaction's output file may span with itself and the "
            "level below its own before it is cut, and that one file may "
            "overlap below and still be moved instead of rewritten (0: 25 "
            "times target_file_size_base, RocksDB's)"},
    {OPTION(level_compaction_dynamic_file_size, BOOL), .def = 1,
     .doc = "cut compaction output files at the next level's file "
            "boundaries once at least half the target size (files up to "
            "twice the target size)"},
    {OPTION(level0_slowdown_writes_trigger, INT), .def = 20, .min = 1,
     .max = INT_MAX,
     .why = "a number of files: 0 would slow every write down; RocksDB "
            "reads a negative number as never, which 2147483647 means here",
     .conflicts = "level0_file_num_compaction_trigger "
                  "level0_stop_writes_trigger",
     .doc = "level 0 files that slow writes down"},
    {OPTION(level0_stop_writes_trigger, INT), .def = 36, .min = 1,
     .max = INT_MAX,
     .why = "a number of files: 0 or less would stop every write, in "
            "RocksDB too; 2147483647 means never",
     .conflicts = "level0_slowdown_writes_trigger",
     .doc = "level 0 files that stop writes until a compaction"},
    {OPTION(soft_pending_compaction_bytes_limit, SIZE), .def = 64ull << 30,
     .min = 0, .max = UINT64_MAX,
     .conflicts = "hard_pending_compaction_bytes_limit",
     .doc = "bytes compaction owes past which writes slow down (0: never)"},
    {OPTION(hard_pending_compaction_bytes_limit, SIZE),
     .def = 256ull << 30, .min = 0, .max = UINT64_MAX,
     .conflicts = "soft_pending_compaction_bytes_limit",
     .doc = "bytes compaction owes past which writes stop (0: never)"},
    {OPTION(delayed_write_rate, RATE), .def = 16ull << 20,
     .min = 1ull << 10, .max = 1ull << 40, .zero = 16ull << 20,
     .why = "below 1K a slowed-down database would all but stop; 0 is "
            "RocksDB's default, 16M",
     .doc = "bytes per second a slowed-down database accepts at most"},
    {OPTION(use_dynamic_delay, BOOL), .def = 0,
     .doc = "slow writes in proportion to how near the worst cause is to "
            "its stop point"},
    {OPTION(block_size, SIZE), .def = 4ull << 10,
     .min = 256, .max = 64ull << 20,
     .doc = "target size of a data block"},
    {OPTION(block_restart_interval, INT), .def = 16, .min = 1,
     .max = INT_MAX,
     .why = "a block needs a restart point every so many keys; RocksDB "
            "reads less than 1 as 1",
     .doc = "keys between restart points in a block"},
    {OPTION(bloom_bits_per_key, INT), .def = 10, .min = 0, .max = 100,
     .why = "more bits a key make no better filter: RocksDB reads more than "
            "100 as 100",
     .doc = "filter bits per key (0: no filter)"},
    {OPTION(compression, ENUM), .def = RV_COMPRESSION_NONE,
     .names = options_compression_names,
     .doc = "how data blocks are compressed (lz4, zstd: where built with "
            "them)"},
    {OPTION(verify_checksums, BOOL), .def = 1,
     .doc = "check every block read from a file"},
    {OPTION(allow_mmap_reads, BOOL), .def = 0,
     .doc = "read table files through mmap (a file cut short behind "
            "ravel's back: SIGBUS)"},
    {OPTION(block_cache_size, SIZE), .def = 32ull << 20,
     .min = 0, .max = 1ull << 40,
     .doc = "bytes of data blocks cached in memory (0: none), unless a "
            "shared cache is set"},
    {OPTION(max_open_files, INT), .def = 1000, .min = 16, .max = 1000000,
     .negative = 1000000,
     .why = "RocksDB reads fewer than 20 as 20; its -1 (no limit) is "
            "accepted and means 1000000 here, the most ravel keeps open",
     .doc = "table files kept open (-1: no limit, as in RocksDB)"},
    {OPTION(txn_lock_timeout, INT), .def = 1000, .min = 0,
     .max = 2147483647, .negative = 2147483647,
     .doc = "milliseconds a transaction waits for a key's lock (-1: "
            "forever)"},
    {OPTION(txn_max_write_batch_size, SIZE), .def = 1ull << 30,
     .min = 4ull << 10, .max = 1ull << 30,
     .why = "a transaction commits as one batch, and a batch is at most "
            "RAVEL_MAX_BATCH_SIZE (1G) encoded",
     .doc = "bytes of writes one transaction may hold"},
    {OPTION(catch_up_interval_ms, INT), .def = 0, .min = 0,
     .max = 86400000,
     .doc = "read_only: catch up with the writer every this many "
            "milliseconds in a thread of its own (0: only on "
            "ravel_catch_up)"},
};

#define OPTIONS_COUNT (sizeof options_table / sizeof options_table[0])

/* Other names of options of the table, which set and get take as the
** option itself: RocksDB's and db_bench's names where ravel's differs and
** the meaning is the same (db_bench's --compression_type, --bloom_bits,
** --cache_size). */
static const struct {
    const char *alias, *name;
} options_aliases[] = {
    {"compression_type", "compression"},
    {"bloom_bits", "bloom_bits_per_key"},
    {"cache_size", "block_cache_size"},
    {"WAL_ttl_seconds", "wal_ttl_seconds"},
    {"WAL_size_limit_MB", "wal_size_limit_mb"},
};

#define OPTIONS_ALIAS_COUNT (sizeof options_aliases / sizeof options_aliases[0])

/* RocksDB options a db_bench or RocksDB user passes that ravel does not
** implement as such, each refused with a message of its own (so that
** nobody believes a setting took effect), naming the option to use where
** ravel has one that does the same job under another meaning. */
static const struct {
    const char *name;
    const char *instead; /* what to use, for the message; NULL: nothing */
} options_not_built[] = {
    {"max_background_compactions",
     "use max_background_jobs, the threads that run flushes and "
     "compactions alike (RocksDB gives max_background_compactions + 1 "
     "threads when it is set, one of them for flushes)"},
    {"max_background_flushes",
     "use max_background_jobs, the threads that run flushes and "
     "compactions alike (flushes go first)"},
    {"enable_pipelined_write", NULL},
    {"min_write_buffer_number_to_merge", NULL},
    {"max_write_buffer_size_to_maintain", NULL},
    {"max_subcompactions", NULL},
    {"compaction_style", NULL},
    {"compression_level", NULL},
    {"min_level_to_compress", NULL},
    {"cache_index_and_filter_blocks", NULL},
    {"use_direct_io_for_flush_and_compaction", NULL},
    {"use_direct_reads", NULL},
    {"allow_mmap_writes", NULL},
    {"max_total_wal_size", NULL},
    {"wal_bytes_per_sync", NULL},
    {"bytes_per_sync", NULL},
    {"use_fsync", NULL},
    {"enable_write_thread_adaptive_yield", NULL},
    {"write_thread_max_yield_usec", NULL},
    {"write_thread_slow_yield_usec", NULL},
    {"avoid_flush_during_recovery", NULL},
    {"atomic_flush", NULL},
    {"inplace_update_support", NULL},
    {"memtablerep", NULL},
    {"prefix_size", NULL},
    {"row_cache_size", NULL},
    {"statistics", NULL},
    {"paranoid_checks", NULL},
    {NULL, NULL},
};

/* The name get/describe print for VALUE among NAMES (its first name), or
** NULL if VALUE has none. */
static const char *options_enum_name_of(const struct options_enum_name *names,
                                        int value)
{
    for (int k = 0; names[k].name; k++)
        if (names[k].value == value)
            return names[k].name;
    return NULL;
}

const char *rv_recovery_mode_name(enum rv_recovery_mode mode)
{
    const char *name = options_enum_name_of(options_recovery_names,
                                            (int)mode);
    return name ? name : "unknown";
}

/* Stores V in D's field of O, as the field's type: a uint64_t for the
** quantities, an int for the others (every enum of options.h has int's
** size and representation). */
static void options_store(struct ravel_options *o,
                          const struct options_def *d, uint64_t v)
{
    char *field = (char *)o + d->offset;
    if (d->kind == OPTIONS_SIZE || d->kind == OPTIONS_ENTRIES ||
        d->kind == OPTIONS_RATE) {
        memcpy(field, &v, sizeof v);
    } else {
        int n = (int)v;
        memcpy(field, &n, sizeof n);
    }
}

void rv_options_init_defaults(struct ravel_options *o)
{
    memset(o, 0, sizeof *o); /* no shared block cache or write controller */
    for (size_t i = 0; i < OPTIONS_COUNT; i++)
        options_store(o, &options_table[i], options_table[i].def);
}

/* One rule after another, each refusal naming the options it involves
** (the options table lists them as each other's conflicts): a list read
** top to bottom, longer than a screen because there are that many rules. */
int rv_options_check(const struct ravel_options *o)
{
    int prepared = o->write_policy == RV_WRITE_POLICY_PREPARED;
    if (prepared && (!o->unordered_write || !o->two_write_queues))
        return rv_error(RAVEL_INVALID, "write_policy=write_prepared needs "
                        "unordered_write=true and two_write_queues=true (%s "
                        "is false): it orders unordered writes through a "
                        "second write queue", !o->unordered_write
                        ? "unordered_write" : "two_write_queues");
    if (o->two_write_queues && !prepared)
        return rv_error(RAVEL_INVALID, "two_write_queues=true needs "
                        "write_policy=write_prepared: the second queue "
                        "commits prepared writes, and ravel has no other "
                        "use for it");
    if (o->unordered_write && !o->allow_concurrent_memtable_write)
        return rv_error(RAVEL_INVALID, "unordered_write=true needs "
                        "allow_concurrent_memtable_write=true: each writer "
                        "inserts its own batch");
    if (o->in_order_publication && !o->unordered_write)
        return rv_error(RAVEL_INVALID, "in_order_publication=true needs "
                        "unordered_write=true: it orders unordered writes");
    if (o->in_order_publication && prepared)
        return rv_error(RAVEL_INVALID, "in_order_publication=true and "
                        "write_policy=write_prepared are two ways to order "
                        "unordered writes: choose one");
    if (o->wal_io == RV_WAL_IO_DIRECT && o->manual_wal_flush)
        return rv_error(RAVEL_INVALID, "wal_io=direct cannot be combined "
                        "with manual_wal_flush=true (direct writes go out "
                        "at once; use wal_io=sync or uring with it)");
    if (o->recycle_log_file_num > 0 &&
        (o->wal_io == RV_WAL_IO_SYNC || o->wal_io == RV_WAL_IO_URING))
        return rv_error(RAVEL_INVALID, "recycle_log_file_num=%d needs "
                        "wal_io=direct (or auto where it picks direct): "
                        "wal_io=%s trims each segment to its data",
                        o->recycle_log_file_num,
                        o->wal_io == RV_WAL_IO_SYNC ? "sync" : "uring");
    if (o->level0_slowdown_writes_trigger <
        o->level0_file_num_compaction_trigger)
        return rv_error(RAVEL_INVALID, "level0_slowdown_writes_trigger=%d is "
                        "below level0_file_num_compaction_trigger=%d: writes "
                        "would slow down before a compaction could start",
                        o->level0_slowdown_writes_trigger,
                        o->level0_file_num_compaction_trigger);
    if (o->level0_stop_writes_trigger < o->level0_slowdown_writes_trigger)
        return rv_error(RAVEL_INVALID, "level0_stop_writes_trigger=%d is "
                        "below level0_slowdown_writes_trigger=%d: writes "
                        "must slow down before they stop",
                        o->level0_stop_writes_trigger,
                        o->level0_slowdown_writes_trigger);
    if (o->hard_pending_compaction_bytes_limit &&
        o->soft_pending_compaction_bytes_limit >
            o->hard_pending_compaction_bytes_limit)
        return rv_error(RAVEL_INVALID, "soft_pending_compaction_bytes_limit="
                        "%llu is above hard_pending_compaction_bytes_limit="
                        "%llu: writes must slow down before they stop",
                        (unsigned long long)
                            o->soft_pending_compaction_bytes_limit,
                        (unsigned long long)
                            o->hard_pending_compaction_bytes_limit);
    if (o->commit_table_size & (o->commit_table_size - 1))
        return rv_error(RAVEL_INVALID, "commit_table_size=%llu is not a "
                        "power of two",
                        (unsigned long long)o->commit_table_size);
    return RAVEL_OK;
}

enum rv_write_ordering rv_options_ordering(const struct ravel_options *o)
{
    if (!o->unordered_write)
        return RV_ORDERING_ORDERED;
    if (o->write_policy == RV_WRITE_POLICY_PREPARED)
        return RV_ORDERING_WRITE_PREPARED;
    if (o->in_order_publication)
        return RV_ORDERING_IN_ORDER;
    return RV_ORDERING_UNORDERED;
}

const char *rv_write_ordering_name(enum rv_write_ordering m)
{
    switch (m) {
    case RV_ORDERING_ORDERED:
        return "ordered";
    case RV_ORDERING_UNORDERED:
        return "unordered";
    case RV_ORDERING_WRITE_PREPARED:
        return "write-prepared";
    case RV_ORDERING_IN_ORDER:
        return "in-order-publication";
    }
    return "unknown";
}

int rv_compression_available(enum rv_compression c)
{
    switch (c) {
    case RV_COMPRESSION_NONE:
        return 1;
    case RV_COMPRESSION_LZ4:
#if defined(RAVEL_HAVE_LZ4) && !defined(RAVEL_OMIT_COMPRESSION)
        return 1;
#else
        return 0;
#endif
    case RV_COMPRESSION_ZSTD:
#if defined(RAVEL_HAVE_ZSTD) && !defined(RAVEL_OMIT_COMPRESSION)
        return 1;
#else
        return 0;
#endif
    }
    return 0;
}

const char *rv_compression_name(enum rv_compression c)
{
    const char *name = options_enum_name_of(options_compression_names,
                                            (int)c);
    return name ? name : "unknown";
}

/* NAME's row of options_not_built, or -1. */
static int options_not_built_index(const char *name)
{
    for (int i = 0; name && options_not_built[i].name; i++)
        if (strcmp(options_not_built[i].name, name) == 0)
            return i;
    return -1;
}

int rv_option_is_not_built(const char *name)
{
    return options_not_built_index(name) >= 0;
}

/* NAME's row of the table, NAME being an option's name or an alias. */
static const struct options_def *options_find(const char *name)
{
    for (size_t i = 0; i < OPTIONS_ALIAS_COUNT; i++)
        if (strcmp(options_aliases[i].alias, name) == 0)
            name = options_aliases[i].name;
    for (size_t i = 0; i < OPTIONS_COUNT; i++)
        if (strcmp(options_table[i].name, name) == 0)
            return &options_table[i];
    return NULL;
}

/* Optimal string alignment distance (Levenshtein plus transpositions of
** neighbours), ignoring case.  Names longer than OPTIONS_DIST_MAX are "far
** from everything": no option name comes near that length. */
#define OPTIONS_DIST_MAX 63
#define OPTIONS_DIST_FAR 1000

static int options_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > OPTIONS_DIST_MAX || lb > OPTIONS_DIST_MAX)
        return OPTIONS_DIST_FAR;
    /* Three rows of the matrix: i-2, i-1 and i. */
    int rows[3][OPTIONS_DIST_MAX + 1];
    int *older = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (int)i;
        int ai = tolower((unsigned char)a[i - 1]);
        for (size_t j = 1; j <= lb; j++) {
            int bj = tolower((unsigned char)b[j - 1]);
            int v = prev[j] + 1;
            if (cur[j - 1] + 1 < v)
                v = cur[j - 1] + 1;
            if (prev[j - 1] + (ai != bj) < v)
                v = prev[j - 1] + (ai != bj);
            if (i > 1 && j > 1 && ai == tolower((unsigned char)b[j - 2])
                && tolower((unsigned char)a[i - 2]) == bj
                && older[j - 2] + 1 < v)
                v = older[j - 2] + 1;
            cur[j] = v;
        }
        int *t = older;
        older = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

/* The built or not-built option name nearest to NAME, if near enough to be
** a typo of it (1 edit for names up to 4 characters, 2 up to 10, 3
** beyond); NULL otherwise.  Ties go to the table's order, built first. */
static const char *options_suggest(const char *name)
{
    const char *best = NULL;
    int best_d = OPTIONS_DIST_FAR;
    for (size_t i = 0; i < OPTIONS_COUNT; i++) {
        int d = options_distance(name, options_table[i].name);
        if (d < best_d) {
            best_d = d;
            best = options_table[i].name;
        }
    }
    for (int i = 0; options_not_built[i].name; i++) {
        int d = options_distance(name, options_not_built[i].name);
        if (d < best_d) {
            best_d = d;
            best = options_not_built[i].name;
        }
    }
    size_t len = strlen(name);
    int limit = len <= 4 ? 1 : len <= 10 ? 2 : 3;
    return best_d <= limit ? best : NULL;
}

/* Looks NAME up; on failure sets the message and returns NULL. */
static const struct options_def *options_lookup(const char *name, int *rc)
{
    const struct options_def *d = options_find(name);
    if (d)
        return d;
    int nb = options_not_built_index(name);
    if (nb >= 0 && options_not_built[nb].instead) {
        *rc = rv_error(RAVEL_INVALID, "option '%s' is not an option of "
                       "ravel: %s", name, options_not_built[nb].instead);
        return NULL;
    }
    if (nb >= 0) {
        *rc = rv_error(RAVEL_INVALID,
                       "option '%s' is not built yet in ravel", name);
        return NULL;
    }
    const char *hint = options_suggest(name);
    if (!hint)
        *rc = rv_error(RAVEL_INVALID, "unknown option '%s'", name);
    else if (rv_option_is_not_built(hint) &&
             options_not_built[options_not_built_index(hint)].instead)
        *rc = rv_error(RAVEL_INVALID, "unknown option '%s' (did you mean "
                       "'%s'? it is not an option of ravel: %s)", name, hint,
                       options_not_built[options_not_built_index(hint)]
                           .instead);
    else if (rv_option_is_not_built(hint))
        *rc = rv_error(RAVEL_INVALID, "unknown option '%s' (did you mean "
                       "'%s'? it is not built yet in ravel)", name, hint);
    else
        *rc = rv_error(RAVEL_INVALID, "unknown option '%s' (did you mean "
                       "'%s'?)", name, hint);
    return NULL;
}

/* true/false/1/0/on/off/yes/no, case-insensitive.  -1 if none. */
static int options_parse_bool(const char *s)
{
    static const char *const yes[] = {"true", "1", "on", "yes"};
    static const char *const no[] = {"false", "0", "off", "no"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0)
            return 1;
        if (strcasecmp(s, no[i]) == 0)
            return 0;
    }
    return -1;
}

/* The suffixes of a quantity, K = 2^10 up to P = 2^50.  Messages print
** limits with them (options_format_quantity) and ravel.h's option list
** does too (1K .. 1T), so the parser accepts each of them: a limit copied
** from a message must be a valid value.  E is not printed and not taken. */
static const char options_suffixes[] = "KMGTP";

#define OPTIONS_PARSE_JUNK (-1)
#define OPTIONS_PARSE_OVERFLOW (-2)

/* Decimal digits with an optional suffix of options_suffixes (either
** case).  Returns 0 and sets *out; OPTIONS_PARSE_JUNK for empty, signed or
** trailing junk; OPTIONS_PARSE_OVERFLOW for a value past 2^64 - 1, which
** is refused rather than wrapped into range. */
static int options_parse_size(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    int overflow = 0;
    const char *p = s;
    if (!isdigit((unsigned char)*p))
        return OPTIONS_PARSE_JUNK; /* empty, '-', '+', whitespace, junk */
    for (; isdigit((unsigned char)*p); p++) {
        uint64_t d = (uint64_t)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            overflow = 1; /* keep reading: junk after it is still junk */
        v = v * 10 + d;
    }
    int shift = 0;
    const char *suffix = *p ? strchr(options_suffixes,
                                     toupper((unsigned char)*p)) : NULL;
    if (suffix) {
        shift = 10 * (int)(suffix - options_suffixes + 1);
        p++;
    }
    if (*p != '\0')
        return OPTIONS_PARSE_JUNK;
    if (overflow || (shift && v > (UINT64_MAX >> shift)))
        return OPTIONS_PARSE_OVERFLOW;
    *out = v << shift;
    return 0;
}

/* V as a value the parser takes back: with the largest suffix that divides
** it exactly (4K, 64M, 1T), else in decimal. */
static void options_format_quantity(uint64_t v, char *buf, size_t size)
{
    size_t k = 0;
    while (v && (v & 1023) == 0 && k < sizeof options_suffixes - 1) {
        v >>= 10;
        k++;
    }
    if (k)
        snprintf(buf, size, "%llu%c", (unsigned long long)v,
                 options_suffixes[k - 1]);
    else
        snprintf(buf, size, "%llu", (unsigned long long)v);
}

/* What a quantity of KIND is, for its messages. */
static const char *options_quantity_noun(enum options_kind kind)
{
    return kind == OPTIONS_ENTRIES ? "a number of entries"
         : kind == OPTIONS_RATE ? "a rate in bytes per second"
         : "a size in bytes";
}

static const char *options_quantity_unit(enum options_kind kind)
{
    return kind == OPTIONS_ENTRIES ? "entries"
         : kind == OPTIONS_RATE ? "bytes per second"
         : "bytes";
}

/* ": " and the reason for D's range (options_def.why), or "" and "" if
** it has none: a refusal says why when RocksDB would not refuse. */
#define OPTIONS_WHY_FMT "%s%s"
#define OPTIONS_WHY(d) ((d)->why ? ": " : ""), ((d)->why ? (d)->why : "")

/* Parses VALUE for the quantity option D into *FIELD (a uint64_t), or sets
** a message naming D, VALUE, its unit and its range as the parser takes
** it back. */
static int options_set_quantity(char *field, const struct options_def *d,
                                const char *value)
{
    char lo[24], hi[24];
    options_format_quantity(d->min, lo, sizeof lo);
    options_format_quantity(d->max, hi, sizeof hi);
    uint64_t v;
    int r = options_parse_size(value, &v);
    if (r == OPTIONS_PARSE_JUNK)
        return rv_error(RAVEL_INVALID,
                        "option '%s': bad value '%s' (expected %s, "
                        "optionally with a K, M, G, T or P suffix (powers "
                        "of 1024), %s .. %s)" OPTIONS_WHY_FMT, d->name, value,
                        options_quantity_noun(d->kind), lo, hi,
                        OPTIONS_WHY(d));
    if (r == OPTIONS_PARSE_OVERFLOW)
        return rv_error(RAVEL_INVALID,
                        "option '%s': value '%s' (2^64 %s or more) is out "
                        "of range (%s .. %s)" OPTIONS_WHY_FMT, d->name, value,
                        options_quantity_unit(d->kind), lo, hi,
                        OPTIONS_WHY(d));
    if (v == 0 && d->zero)
        v = d->zero; /* RocksDB's 0: its default */
    if (v < d->min || v > d->max)
        return rv_error(RAVEL_INVALID,
                        "option '%s': value '%s' (%llu %s) is out of range "
                        "(%s .. %s)" OPTIONS_WHY_FMT, d->name, value,
                        (unsigned long long)v, options_quantity_unit(d->kind),
                        lo, hi, OPTIONS_WHY(d));
    memcpy(field, &v, sizeof v);
    return RAVEL_OK;
}

/* The accepted values of an enum option, "a | b | c", into BUF. */
static void options_enum_choices(const struct options_def *d, char *buf,
                                 size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; d->names[i].name && n < size; i++) {
        int w = snprintf(buf + n, size - n, "%s%s", i ? " | " : "",
                         d->names[i].name);
        if (w < 0)
            break;
        n += (size_t)w;
    }
}

static int options_set_value(struct ravel_options *o,
                             const struct options_def *d, const char *value)
{
    char *field = (char *)o + d->offset;
    switch (d->kind) {
    case OPTIONS_BOOL: {
        int b = options_parse_bool(value);
        if (b < 0)
            return rv_error(RAVEL_INVALID,
                            "option '%s': bad value '%s' (expected "
                            "true/false/1/0/on/off/yes/no)", d->name, value);
        memcpy(field, &b, sizeof b);
        return RAVEL_OK;
    }
    case OPTIONS_SIZE:
    case OPTIONS_ENTRIES:
    case OPTIONS_RATE:
        return options_set_quantity(field, d, value);
    case OPTIONS_INT: {
        uint64_t v;
        if (d->negative && strcmp(value, "-1") == 0)
            v = d->negative; /* RocksDB's -1: no limit (only -1: RocksDB
                             ** reads other negatives as small numbers) */
        else if (options_parse_size(value, &v) != 0 || v < d->min ||
                 v > d->max)
            return rv_error(RAVEL_INVALID,
                            "option '%s': bad value '%s' (expected a whole "
                            "number %llu .. %llu)" OPTIONS_WHY_FMT, d->name,
                            value, (unsigned long long)d->min,
                            (unsigned long long)d->max, OPTIONS_WHY(d));
        int n = (int)v;
        memcpy(field, &n, sizeof n);
        return RAVEL_OK;
    }
    case OPTIONS_ENUM:
        for (int i = 0; d->names[i].name; i++) {
            if (strcmp(d->names[i].name, value) == 0) {
                int e = d->names[i].value;
                if (d->names == options_compression_names &&
                    !rv_compression_available((enum rv_compression)e))
                    return rv_error(RAVEL_INVALID, "option '%s': %s is not "
                                    "available in this build of ravel "
                                    "(built without lib%s%s); only 'none' "
                                    "and the compressions it was built "
                                    "with are accepted", d->name, value,
                                    e == RV_COMPRESSION_LZ4 ? "lz4" : "zstd",
#ifdef RAVEL_OMIT_COMPRESSION
                                    ", with RAVEL_OMIT_COMPRESSION"
#else
                                    ""
#endif
                                    );
                /* Both enums are stored as their C enum type; every enum
                ** of options.h has int's size and representation. */
                memcpy(field, &e, sizeof e);
                return RAVEL_OK;
            }
        }
        {
            char choices[400];
            options_enum_choices(d, choices, sizeof choices);
            return rv_error(RAVEL_INVALID,
                            "option '%s': bad value '%s' (expected %s)",
                            d->name, value, choices);
        }
    }
    return rv_error(RAVEL_INVALID, "option '%s': internal kind error",
                    d->name);
}

/* The value of D in O as text, into BUF. */
static void options_format_value(const struct ravel_options *o,
                                 const struct options_def *d, char *buf,
                                 size_t size)
{
    const char *field = (const char *)o + d->offset;
    int i;
    uint64_t v;
    switch (d->kind) {
    case OPTIONS_BOOL:
        memcpy(&i, field, sizeof i);
        snprintf(buf, size, "%s", i ? "true" : "false");
        return;
    case OPTIONS_SIZE:
    case OPTIONS_ENTRIES:
    case OPTIONS_RATE:
        memcpy(&v, field, sizeof v);
        snprintf(buf, size, "%llu", (unsigned long long)v);
        return;
    case OPTIONS_INT:
        memcpy(&i, field, sizeof i);
        snprintf(buf, size, "%d", i);
        return;
    case OPTIONS_ENUM: {
        memcpy(&i, field, sizeof i);
        const char *name = options_enum_name_of(d->names, i);
        if (name)
            snprintf(buf, size, "%s", name);
        else
            snprintf(buf, size, "%d", i);
        return;
    }
    }
    buf[0] = '\0';
}

_Static_assert(sizeof(enum rv_wal_io) == sizeof(int), "enum stored as int");
_Static_assert(sizeof(enum rv_recovery_mode) == sizeof(int),
               "enum stored as int");

int ravel_options_new(ravel_options **out)
{
    if (!out)
        return rv_error(RAVEL_INVALID, "ravel_options_new: NULL out pointer");
    *out = NULL;
    struct ravel_options *o = malloc(sizeof *o);
    if (!o)
        return rv_error(RAVEL_NOMEM, "ravel_options_new: out of memory");
    rv_options_init_defaults(o);
    *out = o;
    return RAVEL_OK;
}

void ravel_options_free(ravel_options *opts)
{
    if (!opts)
        return;
    rv_options_release(opts);
    free(opts);
}

void rv_options_copy(struct ravel_options *dst,
                     const struct ravel_options *src)
{
    *dst = *src;
    if (dst->block_cache)
        rv_cache_ref(dst->block_cache);
    if (dst->write_controller)
        rv_write_controller_ref(dst->write_controller);
}

void rv_options_release(struct ravel_options *o)
{
    rv_cache_unref(o->block_cache);
    o->block_cache = NULL;
    rv_write_controller_unref(o->write_controller);
    o->write_controller = NULL;
}

int ravel_options_set_write_controller(ravel_options *opts,
                                       ravel_write_controller *wc)
{
    if (!opts)
        return rv_error(RAVEL_INVALID, "ravel_options_set_write_controller: "
                        "NULL options");
    if (wc)
        rv_write_controller_ref(wc);
    rv_write_controller_unref(opts->write_controller);
    opts->write_controller = wc;
    return RAVEL_OK;
}

int ravel_options_set_cache(ravel_options *opts, ravel_cache *c)
{
    if (!opts)
        return rv_error(RAVEL_INVALID, "ravel_options_set_cache: NULL "
                        "options");
    /* ravel_cache is an rv_cache (util/cache.c) */
    rv_cache *cache = (rv_cache *)c;
    if (cache)
        rv_cache_ref(cache);
    rv_cache_unref(opts->block_cache);
    opts->block_cache = cache;
    return RAVEL_OK;
}

int ravel_options_set(ravel_options *opts, const char *name,
                      const char *value)
{
    int rc = RAVEL_OK;
    if (!opts || !name || !value)
        return rv_error(RAVEL_INVALID, "ravel_options_set: NULL %s",
                        !opts ? "options" : !name ? "name" : "value");
    const struct options_def *d = options_lookup(name, &rc);
    if (!d)
        return rc;
    return options_set_value(opts, d, value);
}

/* Trims whitespace at both ends of [*s, *e). */
static void options_trim(char **s, char **e)
{
    while (*s < *e && isspace((unsigned char)**s))
        (*s)++;
    while (*e > *s && isspace((unsigned char)(*e)[-1]))
        (*e)--;
}

int ravel_options_parse(ravel_options *opts, const char *text)
{
    if (!opts || !text)
        return rv_error(RAVEL_INVALID, "ravel_options_parse: NULL %s",
                        !opts ? "options" : "text");
    char *copy = strdup(text);
    if (!copy)
        return rv_error(RAVEL_NOMEM, "ravel_options_parse: out of memory");
    int rc = RAVEL_OK;
    char *item = copy;
    for (;;) {
        char *end = strchr(item, ';');
        char *next = end ? end + 1 : NULL;
        if (!end)
            end = item + strlen(item);
        char *s = item, *e = end;
        options_trim(&s, &e);
        if (s < e) {
            *e = '\0';
            char *eq = strchr(s, '=');
            if (!eq) {
                rc = rv_error(RAVEL_INVALID,
                              "options: item '%s' is not name=value", s);
                goto out;
            }
            char *ns = s, *ne = eq, *vs = eq + 1, *ve = e;
            options_trim(&ns, &ne);
            options_trim(&vs, &ve);
            *ne = '\0';
            *ve = '\0';
            rc = ravel_options_set(opts, ns, vs);
            if (rc)
                goto out;
        }
        if (!next)
            break;
        item = next;
    }
out:
    free(copy);
    return rc;
}

int ravel_options_get(const ravel_options *opts, const char *name,
                      char **out)
{
    int rc = RAVEL_OK;
    if (!opts || !name || !out)
        return rv_error(RAVEL_INVALID, "ravel_options_get: NULL %s",
                        !opts ? "options" : !name ? "name" : "out pointer");
    *out = NULL;
    const struct options_def *d = options_lookup(name, &rc);
    if (!d)
        return rc;
    char buf[64];
    options_format_value(opts, d, buf, sizeof buf);
    *out = strdup(buf);
    if (!*out)
        return rv_error(RAVEL_NOMEM, "ravel_options_get: out of memory");
    return RAVEL_OK;
}

char *rv_options_describe(const struct ravel_options *o)
{
    size_t cap = 1024, len = 0;
    char *text = malloc(cap);
    if (!text)
        return NULL;
    text[0] = '\0';
    for (size_t i = 0; i < OPTIONS_COUNT; i++) {
        char buf[64];
        options_format_value(o, &options_table[i], buf, sizeof buf);
        size_t need = strlen(options_table[i].name) + strlen(buf) + 3;
        if (len + need > cap) {
            char *bigger = realloc(text, cap * 2 + need);
            if (!bigger) {
                free(text);
                return NULL;
            }
            text = bigger;
            cap = cap * 2 + need;
        }
        len += (size_t)snprintf(text + len, cap - len, "%s=%s\n",
                                options_table[i].name, buf);
    }
    return text;
}

static const char *options_kind_name(enum options_kind kind)
{
    switch (kind) {
    case OPTIONS_BOOL:
        return "bool";
    case OPTIONS_SIZE:
        return "size";
    case OPTIONS_ENTRIES:
        return "entries";
    case OPTIONS_RATE:
        return "rate";
    case OPTIONS_INT:
        return "int";
    case OPTIONS_ENUM:
        return "enum";
    }
    return "unknown";
}

/* V, a value or limit of D, as the messages print it: a quantity with its
** suffix (64M), a whole number in decimal. */
static void options_format_number(const struct options_def *d, uint64_t v,
                                  char *buf, size_t size)
{
    if (d->kind == OPTIONS_INT)
        snprintf(buf, size, "%llu", (unsigned long long)v);
    else
        options_format_quantity(v, buf, size);
}

int rv_option_info(size_t i, struct rv_option_info *info)
{
    if (i >= OPTIONS_COUNT)
        return 0;
    const struct options_def *d = &options_table[i];
    memset(info, 0, sizeof *info);
    info->name = d->name;
    info->kind = options_kind_name(d->kind);
    info->doc = d->doc;
    info->why = d->why ? d->why : "";
    info->conflicts = d->conflicts ? d->conflicts : "";
    switch (d->kind) {
    case OPTIONS_BOOL:
        snprintf(info->def, sizeof info->def, "%s", d->def ? "true"
                                                           : "false");
        break;
    case OPTIONS_ENUM: {
        const char *name = options_enum_name_of(d->names, (int)d->def);
        snprintf(info->def, sizeof info->def, "%s", name ? name : "?");
        /* each value once, by the name get prints */
        size_t n = 0;
        for (int k = 0; d->names[k].name && n < sizeof info->choices; k++) {
            if (options_enum_name_of(d->names, d->names[k].value) !=
                d->names[k].name)
                continue;
            int w = snprintf(info->choices + n, sizeof info->choices - n,
                             "%s%s", n ? " | " : "", d->names[k].name);
            if (w < 0)
                break;
            n += (size_t)w;
        }
        break;
    }
    default:
        options_format_number(d, d->def, info->def, sizeof info->def);
        options_format_number(d, d->min, info->min, sizeof info->min);
        options_format_number(d, d->max, info->max, sizeof info->max);
        break;
    }
    return 1;
}
