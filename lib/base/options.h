/*
** options.h -- the parsed form of ravel_options.
**
** Owns: option names, defaults, parsing of values (booleans, sizes with
** K/M/G suffixes, enums) and the text form shown by .options / ravel.stats.
*/
#ifndef RAVEL_OPTIONS_H
#define RAVEL_OPTIONS_H

#include "ravel_int.h"

enum rv_wal_io {
    RV_WAL_IO_AUTO = 0,
    RV_WAL_IO_URING = 1,
    RV_WAL_IO_SYNC = 2,
    RV_WAL_IO_DIRECT = 3,
};

/* RocksDB's TxnDBWritePolicy names, for the plain database: write_prepared
** orders unordered writes by a commit table (base/commit_table.h). */
enum rv_write_policy {
    RV_WRITE_POLICY_COMMITTED = 0,
    RV_WRITE_POLICY_PREPARED = 1,
};

/* The ordering mode the options select (docs/ordering.md): which
** guarantees reads get and how the write path provides them. */
enum rv_write_ordering {
    RV_ORDERING_ORDERED = 0,        /* default: a group becomes visible
                                    ** once all its inserts are done */
    RV_ORDERING_UNORDERED = 1,      /* unordered_write: visible before the
                                    ** inserts; read-your-own-writes only */
    RV_ORDERING_WRITE_PREPARED = 2, /* + two_write_queues + write_policy=
                                    ** write_prepared: a commit table */
    RV_ORDERING_IN_ORDER = 3,       /* + in_order_publication: each batch
                                    ** visible once it and all earlier ones
                                    ** are inserted */
};

/* How leveled compaction picks the file of a level (RocksDB's
** CompactionPri, with its numbers; the others are not built). */
enum rv_compaction_pri {
    RV_COMPACTION_PRI_MIN_OVERLAPPING_RATIO = 3,
    RV_COMPACTION_PRI_ROUND_ROBIN = 4,
};

/* Table block compression.  The values are the block trailer's type byte
** on disk (table/table_format.h): DO NOT CHANGE THEM. */
enum rv_compression {
    RV_COMPRESSION_NONE = 0,
    RV_COMPRESSION_LZ4 = 1,
    RV_COMPRESSION_ZSTD = 2,
};

struct rv_cache;

/* RocksDB's WALRecoveryMode numbering, accepted as numbers too. */
enum rv_recovery_mode {
    RV_RECOVERY_TOLERATE_CORRUPTED_TAIL = 0,
    RV_RECOVERY_ABSOLUTE_CONSISTENCY = 1,
    RV_RECOVERY_POINT_IN_TIME = 2,
    RV_RECOVERY_SKIP_ANY_CORRUPTED = 3,
};

/* The parsed options.  Each settable field's name, default, range and
** doc are its row of the options table (options.c), and only there. */
struct ravel_options {
    int create_if_missing;
    int error_if_exists;
    int read_only;
    int catch_up_interval_ms;            /* a reader's automatic catch-up
                                         ** (db/reader.c); 0: on demand */
    uint64_t write_buffer_size;
    uint64_t max_write_batch_group_size_bytes;
    int allow_concurrent_memtable_write;
    enum rv_wal_io wal_io;
    enum rv_recovery_mode wal_recovery_mode;
    int wal_preallocate;
    int recycle_log_file_num;            /* wal_io=direct: flushed WAL
                                         ** segments kept for reuse */
    int wal_io_switch_every_segments;    /* testing: wal_io=auto switches
                                         ** mode every N segments */
    int manual_wal_flush;                /* records buffered in the WAL
                                         ** writer (wal_writer.h) */
    int wal_ttl_seconds;                 /* the change feed's retention of */
    int wal_size_limit_mb;               /* flushed segments in archive/
                                         ** (wal/wal_archive.h); 0 and 0:
                                         ** none kept */

    /* Ordering modes (rv_options_ordering; docs/ordering.md). */
    int unordered_write;
    int two_write_queues;
    enum rv_write_policy write_policy;
    int in_order_publication;
    uint64_t commit_table_size;          /* entries; a power of two */

    /* Memtables and flushing. */
    int max_write_buffer_number;
    int max_background_jobs;
    uint64_t target_file_size_base;
    int target_file_size_multiplier;
    int avoid_flush_during_shutdown;

    /* Leveled compaction (db/compaction_picker.h). */
    int level0_file_num_compaction_trigger;
    uint64_t max_bytes_for_level_base;
    int max_bytes_for_level_multiplier;
    int num_levels;                      /* at most RV_NUM_LEVELS */
    int level_compaction_dynamic_level_bytes;
    int disable_auto_compactions;
    enum rv_compaction_pri compaction_pri;
    uint64_t max_compaction_bytes;       /* 0: 25 x target_file_size_base */
    int level_compaction_dynamic_file_size;

    /* The write controller (util/write_controller.h). */
    int level0_slowdown_writes_trigger;
    int level0_stop_writes_trigger;
    uint64_t soft_pending_compaction_bytes_limit; /* 0: none */
    uint64_t hard_pending_compaction_bytes_limit; /* 0: none */
    uint64_t delayed_write_rate;         /* bytes per second */
    int use_dynamic_delay;

    /* Table files. */
    uint64_t block_size;
    int block_restart_interval;
    int bloom_bits_per_key;              /* 0: no filter */
    enum rv_compression compression;
    int verify_checksums;
    int allow_mmap_reads;
    uint64_t block_cache_size;           /* 0: no block cache */
    int max_open_files;

    /* transactions */
    int txn_lock_timeout;                /* ms; INT_MAX: forever */
    uint64_t txn_max_write_batch_size;   /* bytes */
    /* A block cache shared with other databases, with one reference held
    ** by these options; NULL: the database makes its own of
    ** block_cache_size bytes. */
    struct rv_cache *block_cache;
    /* A write controller shared with other databases, one reference held
    ** by these options; NULL: the database makes its own. */
    struct ravel_write_controller *write_controller;
};

/* Copies SRC into DST taking a reference on the shared block cache, if
** any (a plain struct copy would share the options' reference). */
RAVEL_PRIVATE void rv_options_copy(struct ravel_options *dst,
                                   const struct ravel_options *src);

/* Drops what O holds (the block cache and write controller references). */
RAVEL_PRIVATE void rv_options_release(struct ravel_options *o);

/* 1 if this build can write and read tables compressed with C. */
RAVEL_PRIVATE int rv_compression_available(enum rv_compression c);

/* "none", "lz4", "zstd". */
RAVEL_PRIVATE const char *rv_compression_name(enum rv_compression c);

/* O holding every option's default, from the options table. */
RAVEL_PRIVATE void rv_options_init_defaults(struct ravel_options *o);

/* Every check of options against each other (the ordering modes, the WAL
** modes, the write controller's triggers), and commit_table_size a power
** of two: RAVEL_INVALID naming the options otherwise.  ravel_open calls
** it; the refusal and its message are born here and nowhere else. */
RAVEL_PRIVATE int rv_options_check(const struct ravel_options *o);

/* The ordering mode O selects (O passed rv_options_check). */
RAVEL_PRIVATE enum rv_write_ordering
rv_options_ordering(const struct ravel_options *o);

/* "ordered", "unordered", "write-prepared", "in-order-publication". */
RAVEL_PRIVATE const char *rv_write_ordering_name(enum rv_write_ordering m);

/* The name of MODE as wal_recovery_mode accepts and prints it
** ("point_in_time", ...), from the option table; "unknown" for a value
** that is not a mode. */
RAVEL_PRIVATE const char *rv_recovery_mode_name(enum rv_recovery_mode mode);

/* Names that RocksDB users will pass for features ravel has not built yet
** (enable_pipelined_write, max_subcompactions, use_direct_reads ...), or
** builds under another meaning (max_background_compactions: use
** max_background_jobs).  ravel_options_set rejects them with RAVEL_INVALID
** and a message saying so, naming the option to use if there is one;
** this lets tools such as ravel-bench list them as ignored instead.
** Returns 1 if NAME is one of them. */
RAVEL_PRIVATE int rv_option_is_not_built(const char *name);

/* What the options table (options.c) says of one option, as text: for
** the man page ravel.1's list of options (shell/manpage.c) and the test
** that checks ravel.h and the manual pages against the table. */
struct rv_option_info {
    const char *name;
    const char *kind;      /* "bool", "size", "entries", "rate", "int",
                           ** "enum" */
    const char *doc;       /* one line */
    const char *why;       /* why the range is narrower than RocksDB's; "" */
    const char *conflicts; /* the options rv_options_check refuses some
                           ** values of it with, space-separated; "" */
    char def[32];          /* the default as ravel.h writes it: false, 64M,
                           ** 1000, auto */
    char min[24], max[24]; /* the range as messages print it (4K, 1T,
                           ** 2147483647); "" for a bool or an enum */
    char choices[256];     /* an enum's values, "auto | uring | sync |
                           ** direct"; "" for the others */
};

/* Fills *INFO with the I-th option of the table and returns 1; 0 past the
** last one. */
RAVEL_PRIVATE int rv_option_info(size_t i, struct rv_option_info *info);

/* The whole option set as "name=value\n" lines, malloc'd (NULL on OOM). */
RAVEL_PRIVATE char *rv_options_describe(const struct ravel_options *o);

#endif /* RAVEL_OPTIONS_H */
