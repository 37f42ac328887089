/*
** ravel-bench.c -- db_bench's write and read benchmarks, run against ravel.
**
** The point of this tool is that a RocksDB db_bench command line runs
** unchanged against ravel and prints the same result line, so the two
** engines can be compared number for number (scripts/bench-compare.sh does
** exactly that).  It therefore copies db_bench's semantics rather than
** inventing better ones:
**   - keys are db_bench's: the integer big-endian in the first 8 bytes,
**     padded with '0' to --key_size;
**   - values come from db_bench's RandomGenerator (Random(301), 100-byte
**     pieces of which --compression_ratio is random printable text);
**   - each thread does --writes puts (--num when negative) in batches of
**     --batch_size written with ravel_write, and --reads reads; with
**     --duration, random writes, readrandom and seekrandom run for that
**     many seconds instead (db_bench's Duration);
**   - readrandom reads into a buffer of the thread's own (ravel_get_into),
**     as db_bench reads into a PinnableSlice: no allocation per value;
**   - readwhilewriting and seekrandomwhilewriting run one writer thread
**     more than --threads, putting random keys at full speed until the
**     readers finish; like db_bench they report the readers alone;
**   - readmissing reads keys one byte longer than any written (db_bench's
**     ++key_size_), readhot the hottest 1% of the keys (LevelDB's
**     db_bench; RocksDB's has no readhot), fill100K puts --num 100000-byte
**     values over num/1000 keys, deleteseq and deleterandom delete
**     --deletes keys, updaterandom reads then puts, readrandomwriterandom
**     does --readwritepercent gets of every 100, as db_bench's;
**   - multireadrandom reads --batch_size keys per ravel_multi_get (all of
**     them at one sequence), or with --multiget_loop per as many
**     ravel_get calls, to compare the two;
**   - mixgraph is db_bench's Facebook workload model (mixgraph.c): the
**     ratios of gets, puts and seeks, the keys' power and key-range
**     distributions, the values' and scans' Pareto lengths, the sine rate;
**   - randomtransaction is db_bench's read-modify-write of one key in each
**     of --transaction_sets sets, in pessimistic (--transaction_db) or
**     optimistic (--optimistic_transaction_db) transactions or plain
**     batches, verified at the end (see "randomtransaction" below);
**   - --use_existing_db opens the database without creating it: a missing
**     one is an error (db_bench creates it and measures an empty database);
**   - the result line is db_bench's format string: micros/op is the sum of
**     the threads' times over all operations, ops/sec and MB/s use the wall
**     time from the first thread's start to the last thread's finish;
**   - compact and compactall compact each database whole
**     (ravel_compact_range from the first key to the last), as db_bench's
**     CompactRange(nullptr, nullptr); levelstats, sstables and memstats
**     print ravel's properties of the same names;
**   - --report_interval_seconds writes db_bench's CSV of operations per
**     interval to --report_file (see "reporter" below for the columns);
**   - --num_multi_db=N opens N databases at db_bench's paths, --db/0 ..
**     --db/N-1.  Unlike db_bench, which draws a database for each batch,
**     thread i works on database i % N: each database has writers of its
**     own, as applications sharing one disk do, which is the situation the
**     shared write controller is for (--use_shared_write_controller: one
**     ravel_write_controller for all N, Speedb's global delayed write).
**   - on a terminal, each thread prints db_bench's progress line
**     "... finished N ops" to standard error, on db_bench's schedule
**     (--progress_reports=false turns it off);
**   - --stats_interval=N (operations) and --stats_interval_seconds=S make
**     each thread print db_bench's interval line to standard error, and
**     --stats_per_interval adds ravel.stats (thread 0);
**   - --statistics prints ravel.stats at the end, once: not again when a
**     `stats` benchmark printed it and nothing ran since.
** After each benchmark that wrote, ravel-bench prints its write
** amplification as ravel.stats defines it (one rule, one number): the
** bytes flushes and compactions wrote to table files during it over the
** bytes users wrote during it as the engine counts them (each batch with
** its header, tags and lengths, RocksDB's "ingest"); the WAL is not
** counted, as in RocksDB's W-Amp.  After a fill on a fresh database it is
** the number the `stats` benchmark then prints.
**
** Flags: db_bench's own flags that apply are implemented, and db_bench's
** spellings of options are translated with its conventions for their
** values (dbbench_option_flags: cache_size, bloom_bits, compression_type
** -- snappy runs as lz4, listed as ignored --, open_files,
** verify_checksum; max_background_compactions and _flushes set
** max_background_jobs to the threads RocksDB would start); any other flag
** is handed to ravel_options_set under its RocksDB name.  RocksDB options
** ravel has not built yet (rv_option_is_not_built) and db_bench-only flags
** with no meaning here (perf_level, mmap_write ...) are accepted, and
** printed as "ignored (not built yet): ..." so a comparison never hides
** them -- except a not-built option given with the value that is what
** ravel does anyway (dbbench_as_ravel_does: enable_pipelined_write=false),
** printed as "as ravel does anyway: ...".  Any other flag is an error: a
** typo must not silently change the workload.
*/
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ravel.h"
#include "base/options.h" /* rv_option_is_not_built, rv_option_info */
#include "bench_manpage.h"
#include "close_stdout.h"
#include "mixgraph.h"

/* ------------------------------------------------------------------ flags */

/* The workload, as parsed from the command line.  Written by main before
** any thread starts; read-only afterwards. */
static struct {
    const char *benchmarks;
    int64_t num;
    int64_t writes;  /* < 0: num */
    int64_t reads;   /* < 0: num */
    int64_t threads;
    int64_t batch_size;
    int64_t key_size;
    int64_t value_size;
    int64_t seed;    /* 0: derived from the clock, as db_bench does */
    int64_t seek_nexts;
    int64_t duration; /* seconds; 0: count operations instead */
    int64_t ops_between_duration_checks;
    double compression_ratio;
    int sync;
    int disable_wal;
    int use_existing_db;
    int histogram;
    int statistics;
    int transaction_db;
    int optimistic_transaction_db;
    int64_t transaction_sets;         /* randomtransaction: keys per txn */
    int transaction_set_snapshot;
    int64_t transaction_lock_timeout; /* ms, txn_lock_timeout */
    int64_t transaction_sleep;        /* max micros between read and write */
    int64_t num_multi_db; /* <= 1: one database at --db */
    int use_shared_write_controller;
    int64_t report_interval_seconds; /* 0: no report file */
    int progress_reports;            /* "... finished N ops" on a tty */
    int64_t stats_interval;          /* ops between interval lines; 0: none */
    int64_t stats_interval_seconds;  /* seconds between them; 0: none */
    int stats_per_interval;          /* ravel.stats with each line */
    const char *report_file;
    const char *db;
    int64_t deletes;          /* < 0: num */
    int64_t readwritepercent; /* readrandomwriterandom's share of reads */
    double read_random_exp_range; /* 0: uniform keys */
    int multiget_loop;        /* multireadrandom by N ravel_get calls */
    /* mixgraph: the Facebook workload model (db_bench's MixGraph) */
    double mix_get_ratio, mix_put_ratio, mix_seek_ratio;
    int64_t mix_max_scan_len, mix_max_value_size;
    double key_dist_a, key_dist_b;
    double keyrange_dist_a, keyrange_dist_b, keyrange_dist_c,
        keyrange_dist_d;
    int64_t keyrange_num;
    double value_theta, value_k, value_sigma;
    double iter_theta, iter_k, iter_sigma;
    int sine_mix_rate;
    double sine_a, sine_b, sine_c, sine_d, sine_mix_rate_noise;
    int64_t sine_mix_rate_interval_milliseconds;
    /* RocksDB's older thread limits: when either is not -1, ravel's
    ** max_background_jobs is their sum as RocksDB's GetBGJobLimits counts
    ** them (apply_background_limits) */
    int64_t max_background_compactions, max_background_flushes;
} FLAGS = {
    .benchmarks = "fillseq,fillrandom,readrandom",
    .num = 1000000,
    .writes = -1,
    .reads = -1,
    .threads = 1,
    .batch_size = 1,
    .key_size = 16,
    .value_size = 100,
    .compression_ratio = 0.5,
    .ops_between_duration_checks = 1000,
    .report_file = "report.csv",
    .progress_reports = 1,
    .deletes = -1,
    .readwritepercent = 90,
    .mix_get_ratio = 1.0,
    .mix_max_scan_len = 10000,
    .mix_max_value_size = 1024,
    .keyrange_num = 1,
    .value_k = 0.2615,
    .value_sigma = 25.45,
    .iter_k = 2.517,
    .iter_sigma = 14.236,
    .sine_a = 1,
    .sine_b = 1,
    .sine_d = 1,
    .sine_mix_rate_interval_milliseconds = 10000,
    .max_background_compactions = -1,
    .max_background_flushes = -1,
    .transaction_sets = 2,
    .transaction_lock_timeout = 100,
};

enum flag_type { FLAG_I64, FLAG_BOOL, FLAG_STR, FLAG_F64 };

struct flag {
    const char *name;
    enum flag_type type;
    void *ptr;
    const char *help;
};

static const struct flag bench_flags[] = {
    {"benchmarks", FLAG_STR, &FLAGS.benchmarks,
     "comma list, run in order: fillseq fillrandom overwrite fillsync "
     "fill100K deleteseq deleterandom readrandom readmissing readhot "
     "readseq readreverse seekrandom multireadrandom updaterandom "
     "readrandomwriterandom readwhilewriting seekrandomwhilewriting "
     "mixgraph randomtransaction, and the meta operations flush compact compactall "
     "waitforcompaction stats levelstats sstables memstats"},
    {"num", FLAG_I64, &FLAGS.num, "number of keys (key range)"},
    {"writes", FLAG_I64, &FLAGS.writes, "puts per thread (<0: --num)"},
    {"reads", FLAG_I64, &FLAGS.reads, "reads per thread (<0: --num)"},
    {"threads", FLAG_I64, &FLAGS.threads, "concurrent threads"},
    {"batch_size", FLAG_I64, &FLAGS.batch_size, "puts per ravel_write"},
    {"key_size", FLAG_I64, &FLAGS.key_size, "bytes per key"},
    {"value_size", FLAG_I64, &FLAGS.value_size, "bytes per value"},
    {"compression_ratio", FLAG_F64, &FLAGS.compression_ratio,
     "fraction of each value that is random"},
    {"seed", FLAG_I64, &FLAGS.seed, "random seed base (0: from the clock)"},
    {"seek_nexts", FLAG_I64, &FLAGS.seek_nexts,
     "entries read after each seek in seekrandom"},
    {"duration", FLAG_I64, &FLAGS.duration,
     "seconds random writes, readrandom, seekrandom run (0: --writes/--reads)"},
    {"ops_between_duration_checks", FLAG_I64,
     &FLAGS.ops_between_duration_checks, "how often --duration looks at the clock"},
    {"sync", FLAG_BOOL, &FLAGS.sync, "RAVEL_SYNC on every write"},
    {"disable_wal", FLAG_BOOL, &FLAGS.disable_wal, "RAVEL_NO_WAL on every write"},
    {"use_existing_db", FLAG_BOOL, &FLAGS.use_existing_db,
     "keep the database; fill benchmarks are skipped; a missing database "
     "is an error (db_bench would create an empty one).  Without it, the "
     "database at --db is deleted first (ravel_destroy: never one open in "
     "another process, never files of other names)"},
    {"histogram", FLAG_BOOL, &FLAGS.histogram, "print latency histograms"},
    {"statistics", FLAG_BOOL, &FLAGS.statistics,
     "print the ravel.stats property at the end (once: not again if a "
     "stats benchmark just printed it)"},
    {"transaction_db", FLAG_BOOL, &FLAGS.transaction_db,
     "pessimistic transactions (ravel_txn_begin) in randomtransaction, "
     "waiting up to --transaction_lock_timeout for a lock.  With --unordered_write=1 also "
     "WritePrepared ordering for every benchmark, as db_bench sets up its "
     "TransactionDB then (two_write_queues=true, write_policy="
     "write_prepared)"},
    {"optimistic_transaction_db", FLAG_BOOL, &FLAGS.optimistic_transaction_db,
     "optimistic transactions (RAVEL_TXN_OPTIMISTIC: validated at commit) "
     "in randomtransaction; not with --transaction_db"},
    {"transaction_sets", FLAG_I64, &FLAGS.transaction_sets,
     "sets of --num keys in randomtransaction (1 .. 9999; a key is the "
     "set's number in 4 digits, then the key's in decimal); each "
     "transaction adds one random amount to one random key of every set"},
    {"transaction_set_snapshot", FLAG_BOOL, &FLAGS.transaction_set_snapshot,
     "with --transaction_db, half of randomtransaction's transactions read "
     "their keys not taken for update at the latest state (ravel_get) "
     "instead of at their snapshot, as db_bench's then read without one (a "
     "ravel transaction always has its snapshot from its begin: what it "
     "writes is checked against it either way)"},
    {"transaction_lock_timeout", FLAG_I64, &FLAGS.transaction_lock_timeout,
     "with --transaction_db: milliseconds a transaction waits for a key's "
     "lock (ravel's txn_lock_timeout; db_bench's default)"},
    {"transaction_sleep", FLAG_I64, &FLAGS.transaction_sleep,
     "microseconds randomtransaction sleeps at most (a random time) "
     "between reading and writing each key, db_bench's documented meaning "
     "(db_bench itself has ignored the flag since 2016)"},
    {"num_multi_db", FLAG_I64, &FLAGS.num_multi_db,
     "databases (2 or more: in subdirectories 0, 1, ... of --db; thread i "
     "uses database i % num_multi_db)"},
    {"use_shared_write_controller", FLAG_BOOL,
     &FLAGS.use_shared_write_controller,
     "one ravel_write_controller (at --delayed_write_rate) shared by every "
     "database of --num_multi_db, Speedb's global delayed write"},
    {"report_interval_seconds", FLAG_I64, &FLAGS.report_interval_seconds,
     "write operations done per interval to --report_file (0: none)"},
    {"report_file", FLAG_STR, &FLAGS.report_file,
     "CSV of --report_interval_seconds: secs_elapsed,interval_qps, then "
     "interval_qps_db0, _db1 ... with --num_multi_db"},
    {"progress_reports", FLAG_BOOL, &FLAGS.progress_reports,
     "\"... finished N ops\" progress on standard error when it is a "
     "terminal"},
    {"stats_interval", FLAG_I64, &FLAGS.stats_interval,
     "each thread prints its interval line every this many operations "
     "(0: never, unless --stats_interval_seconds)"},
    {"stats_interval_seconds", FLAG_I64, &FLAGS.stats_interval_seconds,
     "each thread prints its interval line (ops and ops/s in the interval "
     "and since the start) on standard error every this many seconds"},
    {"stats_per_interval", FLAG_BOOL, &FLAGS.stats_per_interval,
     "thread 0 prints ravel.stats with each interval line"},
    {"db", FLAG_STR, &FLAGS.db,
     "database directory (default $TEST_TMPDIR/dbbench, "
     "else /tmp/ravelbench-<uid>)"},
    {"deletes", FLAG_I64, &FLAGS.deletes,
     "deletes per thread in deleteseq, deleterandom (<0: --num)"},
    {"readwritepercent", FLAG_I64, &FLAGS.readwritepercent,
     "readrandomwriterandom: reads in every 100 operations"},
    {"read_random_exp_range", FLAG_F64, &FLAGS.read_random_exp_range,
     "readrandom, multireadrandom, mixgraph: keys num * exp(-r), r uniform "
     "in [0, this) (0: uniform keys)"},
    {"multiget_loop", FLAG_BOOL, &FLAGS.multiget_loop,
     "ravel's own: multireadrandom reads each batch with --batch_size "
     "ravel_get calls instead of one ravel_multi_get (to compare them)"},
    {"mix_get_ratio", FLAG_F64, &FLAGS.mix_get_ratio,
     "mixgraph: share of gets"},
    {"mix_put_ratio", FLAG_F64, &FLAGS.mix_put_ratio,
     "mixgraph: share of puts"},
    {"mix_seek_ratio", FLAG_F64, &FLAGS.mix_seek_ratio,
     "mixgraph: share of seeks (each followed by a scan)"},
    {"mix_max_scan_len", FLAG_I64, &FLAGS.mix_max_scan_len,
     "mixgraph: scan lengths are taken modulo this"},
    {"mix_max_value_size", FLAG_I64, &FLAGS.mix_max_value_size,
     "mixgraph: values longer than this are taken modulo it"},
    {"key_dist_a", FLAG_F64, &FLAGS.key_dist_a,
     "mixgraph: a of the key access power distribution a*x^b (0: uniform)"},
    {"key_dist_b", FLAG_F64, &FLAGS.key_dist_b,
     "mixgraph: b of a*x^b (0: uniform)"},
    {"keyrange_dist_a", FLAG_F64, &FLAGS.keyrange_dist_a,
     "mixgraph: a of the key-range hotness a*exp(b*x)+c*exp(d*x) (all "
     "four 0: no key ranges; used only with key_dist_a and _b set)"},
    {"keyrange_dist_b", FLAG_F64, &FLAGS.keyrange_dist_b,
     "mixgraph: b of the key-range hotness"},
    {"keyrange_dist_c", FLAG_F64, &FLAGS.keyrange_dist_c,
     "mixgraph: c of the key-range hotness"},
    {"keyrange_dist_d", FLAG_F64, &FLAGS.keyrange_dist_d,
     "mixgraph: d of the key-range hotness"},
    {"keyrange_num", FLAG_I64, &FLAGS.keyrange_num,
     "mixgraph: key ranges (<= 0: 1)"},
    {"value_theta", FLAG_F64, &FLAGS.value_theta,
     "mixgraph: theta of the value size's generalized Pareto distribution"},
    {"value_k", FLAG_F64, &FLAGS.value_k, "mixgraph: k of the value size's"},
    {"value_sigma", FLAG_F64, &FLAGS.value_sigma,
     "mixgraph: sigma of the value size's"},
    {"iter_theta", FLAG_F64, &FLAGS.iter_theta,
     "mixgraph: theta of the scan length's generalized Pareto distribution"},
    {"iter_k", FLAG_F64, &FLAGS.iter_k, "mixgraph: k of the scan length's"},
    {"iter_sigma", FLAG_F64, &FLAGS.iter_sigma,
     "mixgraph: sigma of the scan length's"},
    {"sine_mix_rate", FLAG_BOOL, &FLAGS.sine_mix_rate,
     "mixgraph: operations per second follow A*sin(B*t+C)+D (t in "
     "seconds), reads and writes each at their share"},
    {"sine_a", FLAG_F64, &FLAGS.sine_a, "A of the sine rate"},
    {"sine_b", FLAG_F64, &FLAGS.sine_b, "B of the sine rate"},
    {"sine_c", FLAG_F64, &FLAGS.sine_c, "C of the sine rate"},
    {"sine_d", FLAG_F64, &FLAGS.sine_d, "D of the sine rate"},
    {"sine_mix_rate_interval_milliseconds", FLAG_I64,
     &FLAGS.sine_mix_rate_interval_milliseconds,
     "mixgraph: how often the sine rate is recomputed"},
    {"sine_mix_rate_noise", FLAG_F64, &FLAGS.sine_mix_rate_noise,
     "mixgraph: noise added to the sine rate, a fraction of A (0 .. 1)"},
    {"max_background_compactions", FLAG_I64,
     &FLAGS.max_background_compactions,
     "RocksDB's compaction threads (-1: not set); with it or "
     "--max_background_flushes set, ravel's max_background_jobs is "
     "max(1, this) + max(1, flushes), the threads RocksDB starts then"},
    {"max_background_flushes", FLAG_I64, &FLAGS.max_background_flushes,
     "RocksDB's flush threads (-1: not set); see "
     "--max_background_compactions"},
};

/* db_bench flags that mean nothing to ravel: TransactionDB, statistics
** and reporting, and db_bench's own spellings of RocksDB options ravel
** lacks (mmap_write, subcompactions).  RocksDB options under their own names
** are rv_option_is_not_built's business, not this list's.  Accepted so a
** db_bench command line runs unchanged, and always listed as ignored. */
static const char *const dbbench_only_flags[] = {
    "statistics_string", "stats_dump_period_sec", "perf_level",
    "enable_numa", "dump_malloc_stats",
    "mmap_write", "subcompactions", "use_tailing_iterator",
    "benchmark_write_rate_limit", "benchmark_read_rate_limit",
};

/* RocksDB options ravel has not built, given with the value that is what
** ravel does anyway (RocksDB's default): the flag keeps its meaning, so it
** is listed as such, not as ignored.  Another value is ignored (not built
** yet), as any not-built option. */
static const struct {
    const char *name, *value, *why;
} dbbench_as_ravel_does[] = {
    {"enable_pipelined_write", "false",
     "ravel has no pipelined write path; false is RocksDB's default"},
};

/* "name=value" texts for the header: engine options set, flags ignored. */
struct strlist {
    char **item;
    size_t n, cap;
};

static struct strlist engine_opts_given;
static struct strlist ignored_flags;
static struct strlist as_ravel_does; /* "name=value (why)" */

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "ravel-bench: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void strlist_add(struct strlist *l, const char *name, const char *value)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->item = realloc(l->item, l->cap * sizeof *l->item);
        if (!l->item)
            die("out of memory");
    }
    size_t len = strlen(name) + strlen(value) + 2;
    char *s = malloc(len);
    if (!s)
        die("out of memory");
    snprintf(s, len, "%s=%s", name, value);
    l->item[l->n++] = s;
}

static void strlist_print(const char *title, const struct strlist *l)
{
    if (l->n == 0)
        return;
    printf("%s", title);
    for (size_t i = 0; i < l->n; i++)
        printf("%s%s", i ? ", " : "", l->item[i]);
    printf("\n");
}

/* gflags' spellings of a boolean.  Returns 0 or 1, or -1 if TEXT is none. */
static int parse_bool(const char *text)
{
    static const char *const yes[] = {"1", "true", "t", "yes", "y", "on"};
    static const char *const no[] = {"0", "false", "f", "no", "n", "off"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
        if (strcasecmp(text, yes[i]) == 0)
            return 1;
        if (strcasecmp(text, no[i]) == 0)
            return 0;
    }
    return -1;
}

static const struct flag *find_bench_flag(const char *name)
{
    for (size_t i = 0; i < sizeof bench_flags / sizeof *bench_flags; i++)
        if (strcmp(bench_flags[i].name, name) == 0)
            return &bench_flags[i];
    return NULL;
}

static int is_dbbench_only(const char *name)
{
    for (size_t i = 0; i < sizeof dbbench_only_flags / sizeof *dbbench_only_flags; i++)
        if (strcmp(dbbench_only_flags[i], name) == 0)
            return 1;
    return 0;
}

/* Stores VALUE (NULL: the flag was given bare) into one of bench_flags. */
static void set_bench_flag(const struct flag *f, const char *value)
{
    char *end;
    if (!value && f->type != FLAG_BOOL)
        die("--%s needs a value (--%s=...)", f->name, f->name);
    switch (f->type) {
    case FLAG_BOOL: {
        int b = value ? parse_bool(value) : 1;
        if (b < 0)
            die("--%s=%s: not a boolean (true/false/1/0)", f->name, value);
        *(int *)f->ptr = b;
        break;
    }
    case FLAG_I64:
        errno = 0;
        *(int64_t *)f->ptr = strtoll(value, &end, 10);
        if (errno || end == value || *end)
            die("--%s=%s: not an integer", f->name, value);
        break;
    case FLAG_F64:
        errno = 0;
        *(double *)f->ptr = strtod(value, &end);
        if (errno || end == value || *end)
            die("--%s=%s: not a number", f->name, value);
        break;
    case FLAG_STR:
        *(const char **)f->ptr = value;
        break;
    }
}

/* What a converter below changed, for the Options line ("" if nothing):
** set by the converter, read and cleared by set_dbbench_option. */
static char alias_note[128];

/* db_bench's bloom_bits: negative (its default, -1) or 0 means no filter;
** above 100 RocksDB reads 100 (its filter gains nothing past it), and so
** does ravel-bench, saying so. */
static const char *alias_bloom_bits(const char *value)
{
    if (value[0] == '-')
        return "0";
    char *end;
    errno = 0;
    unsigned long long v = strtoull(value, &end, 10);
    if (!errno && end != value && !*end && v > 100) {
        snprintf(alias_note, sizeof alias_note, "100 (from bloom_bits=%s: "
                 "RocksDB reads more than 100 as 100)", value);
        return "100";
    }
    return value;
}

/* db_bench's cache_size: 0 or negative means no block cache (its
** NewCache makes none), ravel's block_cache_size=0. */
static const char *alias_cache_size(const char *value)
{
    return value[0] == '-' ? "0" : value;
}

/* db_bench's open_files: 0 means RocksDB's default (NULL: ravel's is
** kept); -1 (db_bench's default, no limit) ravel_options_set takes; any
** other value below 20 RocksDB reads as 20, and so does ravel-bench,
** saying so. */
static const char *alias_open_files(const char *value)
{
    if (strcmp(value, "0") == 0)
        return NULL;
    if (strcmp(value, "-1") == 0)
        return value;
    char *end;
    errno = 0;
    long long v = strtoll(value, &end, 10);
    if (!errno && end != value && !*end && v < 20) {
        snprintf(alias_note, sizeof alias_note, "20 (from open_files=%s: "
                 "RocksDB reads fewer than 20 as 20)", value);
        return "20";
    }
    return value;
}

/* db_bench's compression_type: ravel has none, lz4 and zstd.  snappy
** (db_bench's default) and lz4hc run as lz4 -- the nearest ravel has, as
** fast and as light -- and the Options line says so; if this build has no
** lz4, as none.  Other names go to ravel_options_set as given. */
static const char *alias_compression_type(const char *value)
{
    if (strcasecmp(value, "snappy") != 0 && strcasecmp(value, "lz4hc") != 0 &&
        strcmp(value, "kSnappyCompression") != 0 &&
        strcmp(value, "kLZ4HCCompression") != 0)
        return value;
    ravel_options *probe = NULL;
    int lz4 = ravel_options_new(&probe) == RAVEL_OK &&
              ravel_options_set(probe, "compression", "lz4") == RAVEL_OK;
    ravel_options_free(probe);
    snprintf(alias_note, sizeof alias_note, "%s (from compression_type=%s: "
             "ravel has no %s compression%s)", lz4 ? "lz4" : "none", value,
             strncasecmp(value + (value[0] == 'k'), "snappy", 6) == 0
                 ? "snappy" : "lz4hc",
             lz4 ? "" : ", and this build no lz4");
    return lz4 ? "lz4" : "none";
}

/* db_bench's max_bytes_for_level_multiplier is a double ("10.0"); ravel's
** is an integer.  A whole number is passed without its decimals; any other
** value is passed as given, for ravel_options_set to refuse. */
static const char *alias_level_multiplier(const char *value)
{
    static char whole[32];
    char *end;
    errno = 0;
    double d = strtod(value, &end);
    if (errno || end == value || *end || d != floor(d) || d < 0 || d > 1e9)
        return value;
    snprintf(whole, sizeof whole, "%.0f", d);
    return whole;
}

/* db_bench's spellings of options ravel has under other names (the
** library takes some of them too, as aliases; their values' conventions
** are db_bench's, so they are translated here).  CONVERT turns db_bench's
** value into ravel's (NULL: the same text; returning NULL: keep ravel's
** default).  DBBENCH_DEFAULT is db_bench's default, for --help: where it
** differs from ravel's, ravel's applies unless the flag is given. */
static const struct {
    const char *dbbench, *ravel;
    const char *(*convert)(const char *value);
    const char *dbbench_default;
} dbbench_option_flags[] = {
    {"cache_size", "block_cache_size", alias_cache_size,
     "32M (8M before RocksDB 8; 0 or negative: no cache)"},
    {"bloom_bits", "bloom_bits_per_key", alias_bloom_bits,
     "-1, no filter (negative: none here too)"},
    {"compression_type", "compression", alias_compression_type,
     "snappy (run as lz4)"},
    {"open_files", "max_open_files", alias_open_files,
     "-1, no limit (0: ravel's default)"},
    {"verify_checksum", "verify_checksums", NULL, "true"},
    {"mmap_read", "allow_mmap_reads", NULL, "false"},
    {"max_bytes_for_level_multiplier", "max_bytes_for_level_multiplier",
     alias_level_multiplier, "10"},
};

/* Sets NAME if it is one of dbbench_option_flags; 0 if it is not. */
static int set_dbbench_option(ravel_options *opts, const char *name,
                              const char *text)
{
    for (size_t i = 0; i < sizeof dbbench_option_flags / sizeof *dbbench_option_flags;
         i++) {
        if (strcmp(dbbench_option_flags[i].dbbench, name) != 0)
            continue;
        const char *ravel = dbbench_option_flags[i].ravel;
        const char *value = dbbench_option_flags[i].convert
                                ? dbbench_option_flags[i].convert(text)
                                : text;
        if (!value) {
            char why[160];
            snprintf(why, sizeof why, "%s (ravel's default %s)", text, ravel);
            strlist_add(&as_ravel_does, name, why);
            return 1;
        }
        if (ravel_options_set(opts, ravel, value) != RAVEL_OK)
            die("--%s=%s (ravel's %s=%s): %s", name, text, ravel, value,
                ravel_errmsg());
        strlist_add(&engine_opts_given, ravel,
                    alias_note[0] ? alias_note : value);
        alias_note[0] = '\0';
        return 1;
    }
    return 0;
}

/* Lists NAME=TEXT as what ravel does anyway if it is one of
** dbbench_as_ravel_does with its value (booleans in any gflags spelling);
** 0 if it is not. */
static int is_as_ravel_does(const char *name, const char *text)
{
    for (size_t i = 0; i < sizeof dbbench_as_ravel_does / sizeof *dbbench_as_ravel_does;
         i++) {
        const char *want = dbbench_as_ravel_does[i].value;
        if (strcmp(dbbench_as_ravel_does[i].name, name) != 0)
            continue;
        int b = parse_bool(text);
        if (strcmp(text, want) != 0 && (b < 0 || b != parse_bool(want)))
            return 0;
        char why[256];
        snprintf(why, sizeof why, "%s (%s)", text, dbbench_as_ravel_does[i].why);
        strlist_add(&as_ravel_does, name, why);
        return 1;
    }
    return 0;
}

/* A flag that is not ravel-bench's own: an engine option (under db_bench's
** name or RocksDB's), or one we accept and list as ignored, or an error. */
static void set_other_flag(ravel_options *opts, const char *name,
                           const char *value)
{
    const char *text = value ? value : "true";
    char *cur = NULL;

    if (set_dbbench_option(opts, name, text))
        return;
    if (is_as_ravel_does(name, text))
        return;
    if (rv_option_is_not_built(name)) {
        strlist_add(&ignored_flags, name, text);
        return;
    }
    if (ravel_options_set(opts, name, text) == RAVEL_OK) {
        strlist_add(&engine_opts_given, name, text);
        return;
    }
    /* Known option with a bad value, or not an option at all? */
    char *msg = strdup(ravel_errmsg());
    if (ravel_options_get(opts, name, &cur) == RAVEL_OK) {
        ravel_free(cur);
        die("--%s=%s: %s", name, text, msg ? msg : "invalid value");
    }
    free(msg);
    if (is_dbbench_only(name)) {
        strlist_add(&ignored_flags, name, text);
        return;
    }
    die("unknown flag --%s (not a db_bench flag ravel-bench implements, "
        "nor a ravel option; see --help)", name);
}

/* The flags' values before the command line: their defaults, for --help.
** Copied by main before parsing. */
static __typeof__(FLAGS) flags_default;

/* F's default as --help prints it, into BUF. */
static void flag_default_text(const struct flag *f, char *buf, size_t size)
{
    const char *p = (const char *)&flags_default +
                    ((const char *)f->ptr - (const char *)&FLAGS);
    switch (f->type) {
    case FLAG_I64: {
        int64_t v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, size, "%" PRId64, v);
        break;
    }
    case FLAG_BOOL: {
        int v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, size, "%s", v ? "true" : "false");
        break;
    }
    case FLAG_F64: {
        double v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, size, "%g", v);
        break;
    }
    case FLAG_STR: {
        const char *v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, size, "\"%s\"", v ? v : "");
        break;
    }
    }
}

/* Each ravel option, with its default and range, under the name a flag
** sets it by. */
static void usage_engine_options(void)
{
    struct rv_option_info info;
    for (size_t i = 0; rv_option_info(i, &info); i++) {
        char range[320] = "";
        if (info.min[0])
            snprintf(range, sizeof range, ", %s .. %s", info.min, info.max);
        else if (info.choices[0])
            snprintf(range, sizeof range, ", %s", info.choices);
        printf("  --%s (default: %s%s)\n      %s\n", info.name, info.def,
               range, info.doc);
    }
}

static void usage(void)
{
    char def[96];
    printf("usage: ravel-bench [--flag=value ...]\n\n"
           "db_bench-compatible benchmarks for ravel.  Flags take one or two\n"
           "dashes; booleans may be given bare (--sync) or negated (--nosync).\n"
           "Benchmark flags, as db_bench's, with their defaults:\n");
    for (size_t i = 0; i < sizeof bench_flags / sizeof *bench_flags; i++) {
        flag_default_text(&bench_flags[i], def, sizeof def);
        printf("  --%s (default: %s)\n      %s\n", bench_flags[i].name, def,
               bench_flags[i].help);
    }
    printf("\ndb_bench's spellings of ravel options, translated (where\n"
           "db_bench's default differs, ravel's applies unless the flag is\n"
           "given):\n");
    for (size_t i = 0; i < sizeof dbbench_option_flags / sizeof *dbbench_option_flags;
         i++) {
        char *cur = NULL;
        ravel_options *o = NULL;
        if (ravel_options_new(&o) == RAVEL_OK)
            ravel_options_get(o, dbbench_option_flags[i].ravel, &cur);
        printf("  --%s (default: ravel's %s=%s; db_bench's: %s)\n",
               dbbench_option_flags[i].dbbench, dbbench_option_flags[i].ravel,
               cur ? cur : "?", dbbench_option_flags[i].dbbench_default);
        ravel_free(cur);
        ravel_options_free(o);
    }
    printf("\nAny other flag is a ravel option (ravel_options_set) under its\n"
           "RocksDB name; its default is ravel's:\n");
    usage_engine_options();
    printf("\nRocksDB options ravel has not built and db_bench-only flags are\n"
           "accepted and listed as ignored.  Unknown flags are an error.\n");
}

/* The rows of bench_flags and dbbench_option_flags, for --manpage
** (bench_manpage.c). */
static int manpage_flag_at(size_t i, struct bench_manpage_flag *out)
{
    static char def[96];
    if (i >= sizeof bench_flags / sizeof *bench_flags)
        return 0;
    const struct flag *f = &bench_flags[i];
    flag_default_text(f, def, sizeof def);
    *out = (struct bench_manpage_flag){f->name, def, f->help};
    return 1;
}

static int manpage_alias_at(size_t i, const char **dbbench,
                            const char **ravel)
{
    if (i >= sizeof dbbench_option_flags / sizeof *dbbench_option_flags)
        return 0;
    *dbbench = dbbench_option_flags[i].dbbench;
    *ravel = dbbench_option_flags[i].ravel;
    return 1;
}

static void parse_args(int argc, char **argv, ravel_options *opts)
{
    for (int i = 1; i < argc; i++) {
        char *arg = argv[i];
        if (arg[0] != '-' || arg[1] == '\0')
            die("unexpected argument '%s' (flags are --name=value)", arg);
        char *name = arg + (arg[1] == '-' ? 2 : 1);
        char *eq = strchr(name, '=');
        const char *value = NULL;
        if (eq) {
            *eq = '\0';
            value = eq + 1;
        }
        if (strcmp(name, "help") == 0) {
            usage();
            exit(0);
        }
        if (strcmp(name, "manpage") == 0) {
            bench_print_manpage(stdout, manpage_flag_at, manpage_alias_at);
            exit(0);
        }
        if (strcmp(name, "version") == 0) {
            printf("ravel-bench (ravel %s)\n", ravel_libversion());
            exit(0);
        }
        const struct flag *f = find_bench_flag(name);
        if (!f && strncmp(name, "no", 2) == 0 && !value) {
            /* gflags' --nosync for a boolean. */
            const struct flag *neg = find_bench_flag(name + 2);
            if (neg && neg->type == FLAG_BOOL) {
                *(int *)neg->ptr = 0;
                continue;
            }
        }
        /* gflags' "--num 100": a flag that is not a boolean takes the
        ** next argument as its value (ravel-bench has no positional
        ** arguments, so nothing else could be meant) */
        if (!value && i + 1 < argc && argv[i + 1][0] != '-' &&
            !(f && f->type == FLAG_BOOL))
            value = argv[++i];
        if (f)
            set_bench_flag(f, value);
        else
            set_other_flag(opts, name, value);
    }
}

/* ---------------------------------------------------------- random numbers */

/* splitmix64: the per-thread generator for key choice. */
static uint64_t rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* LevelDB's Random (Lehmer, multiplier 16807), which db_bench's value
** generator is seeded from; copied so values are byte-identical. */
static uint32_t lehmer_next(uint32_t *seed)
{
    const uint32_t M = 2147483647u;
    uint64_t product = (uint64_t)*seed * 16807u;
    uint32_t s = (uint32_t)((product >> 31) + (product & M));
    if (s > M)
        s -= M;
    *seed = s;
    return s;
}

/* db_bench's RandomGenerator data: 100-byte pieces, each a random
** printable string of 100 * compression_ratio bytes repeated to fill it,
** at least 1 MiB in all.  Shared read-only by every thread. */
static char *value_data;
static size_t value_data_len;

static void value_data_init(void)
{
    /* at least 1 MiB, which holds fill100K's and mixgraph's values */
    size_t want = FLAGS.value_size > 1048576 ? (size_t)FLAGS.value_size : 1048576;
    uint32_t seed = 301;
    /* db_bench's clamp: at least one random byte, at most all of them */
    double share = 100 * FLAGS.compression_ratio;
    int raw = share < 1 ? 1 : share > 100 ? 100 : (int)share;
    value_data_len = (want + 99) / 100 * 100;
    value_data = malloc(value_data_len);
    if (!value_data)
        die("out of memory for %zu bytes of values", value_data_len);
    for (size_t off = 0; off < value_data_len; off += 100) {
        char piece[100];
        for (int i = 0; i < raw; i++)
            piece[i] = (char)(' ' + lehmer_next(&seed) % 95);
        for (int i = raw; i < 100; i++)
            piece[i] = piece[i % raw];
        memcpy(value_data + off, piece, 100);
    }
}

/* Next LEN bytes of the data, wrapping like RandomGenerator::Generate. */
static const char *value_next(size_t *pos, size_t len)
{
    if (*pos + len > value_data_len)
        *pos = 0;
    *pos += len;
    return value_data + *pos - len;
}

/* db_bench's GenerateKeyFromInt: V big-endian in the first 8 bytes (or
** its low key_size bytes), then '0' padding. */
static void key_from_int_sized(uint64_t v, char *key, int64_t size)
{
    int n = size < 8 ? (int)size : 8;
    for (int i = 0; i < n; i++)
        key[i] = (char)((v >> ((n - i - 1) * 8)) & 0xff);
    if (size > n)
        memset(key + n, '0', (size_t)(size - n));
}

static void key_from_int(uint64_t v, char *key)
{
    key_from_int_sized(v, key, FLAGS.key_size);
}

static double now_micros(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* -------------------------------------------------------------- histogram */

/* RocksDB's HistogramImpl: bucket limits 1, 2, then x1.5 rounded to two
** significant digits, so --histogram output reads like db_bench's. */
#define HIST_MAX_BUCKETS 128

static uint64_t hist_limit[HIST_MAX_BUCKETS];
static int hist_nbuckets;

struct hist {
    double min, max, num, sum, sum_squares;
    uint64_t bucket[HIST_MAX_BUCKETS];
};

static void hist_limits_init(void)
{
    double v = 2;
    hist_limit[0] = 1;
    hist_limit[1] = 2;
    hist_nbuckets = 2;
    while ((v *= 1.5) <= (double)UINT64_MAX && hist_nbuckets < HIST_MAX_BUCKETS) {
        uint64_t b = (uint64_t)v, pow10 = 1;
        while (b / 10 > 10) {
            b /= 10;
            pow10 *= 10;
        }
        hist_limit[hist_nbuckets++] = b * pow10;
    }
}

static void hist_clear(struct hist *h)
{
    memset(h, 0, sizeof *h);
    h->min = 1e300;
}

static void hist_add(struct hist *h, double micros)
{
    uint64_t v = (uint64_t)micros;
    int b = 0;
    while (b < hist_nbuckets - 1 && hist_limit[b] < v)
        b++;
    h->bucket[b]++;
    if (v < h->min)
        h->min = (double)v;
    if (v > h->max)
        h->max = (double)v;
    h->num++;
    h->sum += (double)v;
    h->sum_squares += (double)v * (double)v;
}

static void hist_merge(struct hist *h, const struct hist *o)
{
    if (o->min < h->min)
        h->min = o->min;
    if (o->max > h->max)
        h->max = o->max;
    h->num += o->num;
    h->sum += o->sum;
    h->sum_squares += o->sum_squares;
    for (int b = 0; b < hist_nbuckets; b++)
        h->bucket[b] += o->bucket[b];
}

static double hist_percentile(const struct hist *h, double p)
{
    double threshold = h->num * (p / 100.0);
    uint64_t cumulative = 0;
    for (int b = 0; b < hist_nbuckets; b++) {
        cumulative += h->bucket[b];
        if ((double)cumulative >= threshold) {
            double left = b == 0 ? 0 : (double)hist_limit[b - 1];
            double right = (double)hist_limit[b];
            double left_sum = (double)(cumulative - h->bucket[b]);
            double pos = h->bucket[b] ? (threshold - left_sum) / (double)h->bucket[b] : 0;
            double r = left + (right - left) * pos;
            if (r < h->min)
                r = h->min;
            if (r > h->max)
                r = h->max;
            return r;
        }
    }
    return h->max;
}

static void hist_print(const struct hist *h, const char *op)
{
    double avg = h->num ? h->sum / h->num : 0;
    double var = h->num ? (h->sum_squares * h->num - h->sum * h->sum) / (h->num * h->num) : 0;
    printf("Microseconds per %s:\n", op);
    printf("Count: %.0f Average: %.4f  StdDev: %.2f\n", h->num, avg,
           var > 0 ? sqrt(var) : 0);
    printf("Min: %.0f  Median: %.4f  Max: %.0f\n", h->num ? h->min : 0,
           hist_percentile(h, 50), h->max);
    printf("Percentiles: P50: %.2f P75: %.2f P99: %.2f P99.9: %.2f P99.99: %.2f\n",
           hist_percentile(h, 50), hist_percentile(h, 75), hist_percentile(h, 99),
           hist_percentile(h, 99.9), hist_percentile(h, 99.99));
    printf("------------------------------------------------------\n");
    uint64_t cumulative = 0;
    for (int b = 0; b < hist_nbuckets && h->num; b++) {
        if (!h->bucket[b])
            continue;
        cumulative += h->bucket[b];
        double pct = 100.0 * (double)h->bucket[b] / h->num;
        printf("%c %7" PRIu64 ", %7" PRIu64 " ] %8" PRIu64 " %7.3f%% %7.3f%% ",
               b == 0 ? '[' : '(', b == 0 ? 0 : hist_limit[b - 1], hist_limit[b],
               h->bucket[b], pct, 100.0 * (double)cumulative / h->num);
        for (int m = (int)(pct / 5 + 0.5); m > 0; m--)
            putchar('#');
        putchar('\n');
    }
    printf("\n");
}

/* ------------------------------------------------------------ benchmarks */

/* One thread's account of one benchmark, merged like db_bench's Stats. */
struct stats {
    double start, finish; /* micros */
    double last_op;       /* micros, for the histogram */
    uint64_t done;        /* operations: each key of a batch is one */
    uint64_t bytes;
    int exclude_from_merge; /* readwhilewriting's writer */
    /* The --report_file count of the thread's database, NULL when there
    ** is no report; shared with the reporter thread (atomic). */
    _Atomic uint64_t *report_ops;
    char message[200];
    struct hist hist;
    /* Progress and interval lines (db_bench's FinishedOps): the thread,
    ** its database, the count at which to print or look at the clock
    ** next, and the count and time of the last interval line. */
    int tid;
    ravel_db *db;
    uint64_t next_progress, next_interval_check;
    uint64_t interval_done;
    double interval_start;
};

struct thread {
    pthread_t handle;
    int tid;
    uint64_t rng;
    struct stats st;
};

struct bench;
typedef void (*bench_fn)(const struct bench *b, struct thread *t);

/* The benchmark being run.  Set by main before the threads start. */
struct bench {
    const char *name;
    bench_fn fn;
    const char *op;        /* "write", "read", "seek": histogram title */
    int fresh_db;          /* removes the database first */
    int sync;              /* fillsync */
    int64_t key_range;     /* keys are drawn from [0, key_range) */
    int64_t key_size;      /* of the keys it reads: readmissing's is one
                           ** byte longer than any key written */
    int64_t value_size;    /* of the values it puts: fill100K's 100000 */
    int random_keys;       /* else sequential from 0 */
    int extra_writer;      /* readwhilewriting: thread 0 writes */
    int nthreads;          /* --threads, plus the extra writer */
    ravel_db **dbs;        /* thread i uses dbs[i % ndbs] */
    int ndbs;
    pthread_barrier_t barrier;
    /* Threads whose benchmark function returned (run_threads owns the
    ** counter): the extra writer stops once every other thread has. */
    _Atomic int *threads_done;
};

static pthread_mutex_t fail_mu = PTHREAD_MUTEX_INITIALIZER;

/* A failed ravel call ends the run, like db_bench's ErrorExit.  The mutex
** keeps a second failing thread from interleaving its message. */
static void fail(const struct bench *b, const char *call, int rc)
{
    pthread_mutex_lock(&fail_mu);
    die("%s: %s: %s: %s", b->name, call, ravel_errstr(rc), ravel_errmsg());
}

/* Set by main: --progress_reports and standard error is a terminal. */
static int show_progress;

/* db_bench's progress schedule: every 100 operations up to 1000, then
** every 500, 1000, 5000, 10000, 50000 and 100000. */
static uint64_t progress_step(uint64_t at)
{
    return at < 1000 ? 100 : at < 5000 ? 500 : at < 10000 ? 1000 :
           at < 50000 ? 5000 : at < 100000 ? 10000 : at < 500000 ? 50000 :
           100000;
}

static void print_stats_of(ravel_db *db, FILE *out);

/* db_bench's interval line, on standard error:
**   2026/11/23-16:05:01 ... thread 0: (INTERVAL,TOTAL) ops and
**   (INTERVAL,TOTAL) ops/second in (INTERVAL,TOTAL) seconds */
static void print_interval(struct stats *st, double now)
{
    char when[32];
    time_t secs = time(NULL); /* now is CLOCK_MONOTONIC */
    struct tm tm;
    strftime(when, sizeof when, "%Y/%m/%d-%H:%M:%S", localtime_r(&secs, &tm));
    double interval = (now - st->interval_start) / 1e6;
    double total = (now - st->start) / 1e6;
    uint64_t ops = st->done - st->interval_done;
    fprintf(stderr, "%s ... thread %d: (%" PRIu64 ",%" PRIu64 ") ops and "
            "(%.1f,%.1f) ops/second in (%.6f,%.6f) seconds\n", when, st->tid,
            ops, st->done, interval > 0 ? (double)ops / interval : 0.0,
            total > 0 ? (double)st->done / total : 0.0, interval, total);
    if (FLAGS.stats_per_interval && st->tid == 0 && st->db)
        print_stats_of(st->db, stderr);
    st->interval_done = st->done;
    st->interval_start = now;
}

/* Every this many operations, --stats_interval_seconds looks at the clock
** (unless --stats_interval says how often). */
#define INTERVAL_CLOCK_CHECK 100

static void maybe_print_interval(struct stats *st)
{
    if (st->done < st->next_interval_check)
        return;
    int64_t every = FLAGS.stats_interval > 0 ? FLAGS.stats_interval
                                             : INTERVAL_CLOCK_CHECK;
    st->next_interval_check = st->done + (uint64_t)every;
    double now = now_micros();
    if (FLAGS.stats_interval_seconds > 0 &&
        now - st->interval_start < (double)FLAGS.stats_interval_seconds * 1e6)
        return;
    print_interval(st, now);
}

static void finished_ops(struct stats *st, uint64_t n)
{
    st->done += n;
    if (st->report_ops) /* relaxed: a count the reporter samples */
        atomic_fetch_add_explicit(st->report_ops, n, memory_order_relaxed);
    if (FLAGS.histogram) {
        double now = now_micros();
        hist_add(&st->hist, now - st->last_op);
        st->last_op = now;
    }
    if (show_progress && st->done >= st->next_progress) {
        while (st->next_progress <= st->done)
            st->next_progress += progress_step(st->next_progress);
        fprintf(stderr, "... finished %" PRIu64 " ops%30s\r", st->done, "");
    }
    if (FLAGS.stats_interval > 0 || FLAGS.stats_interval_seconds > 0)
        maybe_print_interval(st);
}

/* The database thread T works on: with --num_multi_db, thread i's is
** database i % num_multi_db, so each database has writers of its own, as
** applications sharing a disk would.  (db_bench picks a random database
** for each batch instead.) */
static ravel_db *thread_db(const struct bench *b, const struct thread *t)
{
    return b->dbs[t->tid % b->ndbs];
}

static int64_t per_thread(int64_t flag_value)
{
    return flag_value < 0 ? FLAGS.num : flag_value;
}

/* db_bench's Duration: MAX_OPS operations, or with MAX_SECONDS > 0 as many
** as fit in that time (the clock read every ops_between_duration_checks
** operations). */
struct duration {
    int64_t max_seconds, max_ops, ops;
    double start;
};

static void duration_init(struct duration *d, int64_t max_seconds,
                          int64_t max_ops)
{
    d->max_seconds = max_seconds;
    d->max_ops = max_ops;
    d->ops = 0;
    d->start = now_micros();
}

/* Counts INCREMENT more operations; 1 when no more should start. */
static int duration_done(struct duration *d, int64_t increment)
{
    int64_t every = FLAGS.ops_between_duration_checks;
    if (increment <= 0)
        increment = 1;
    d->ops += increment;
    if (d->max_seconds <= 0)
        return d->ops > d->max_ops;
    if (d->ops / every == (d->ops - increment) / every)
        return 0;
    return (now_micros() - d->start) / 1e6 >= (double)d->max_seconds;
}

/* db_bench's GetRandomKey: uniform in [0, RANGE), or with
** --read_random_exp_range=R, RANGE * exp(-r) for r uniform in [0, R),
** spread over the range by a multiplication with a big prime. */
static uint64_t random_key(struct thread *t, int64_t range)
{
    uint64_t r = rng_next(&t->rng);
    if (FLAGS.read_random_exp_range == 0)
        return r % (uint64_t)range;
    const uint64_t big = 1ull << 62;
    long double order = -(long double)(r % big) / (long double)big *
                        FLAGS.read_random_exp_range;
    uint64_t n = (uint64_t)(expl(order) * (long double)range);
    return (n * 0x5bd1e995ull) % (uint64_t)range;
}

/* fillseq, fillrandom, overwrite, fillsync, fill100K: db_bench's
** DoWrite. */
static void bench_write(const struct bench *b, struct thread *t)
{
    struct duration d;
    int flags = (FLAGS.sync || b->sync ? RAVEL_SYNC : 0) |
                (FLAGS.disable_wal ? RAVEL_NO_WAL : 0);
    char *key = malloc((size_t)FLAGS.key_size);
    ravel_batch *batch = NULL;
    size_t vpos = 0;
    uint64_t seq = 0;
    ravel_db *db = thread_db(b, t);
    int rc = ravel_batch_new(&batch);
    if (rc)
        fail(b, "ravel_batch_new", rc);
    if (!key)
        die("out of memory");

    /* db_bench times only random writes; fillseq always counts */
    duration_init(&d, b->random_keys ? FLAGS.duration : 0,
                  per_thread(FLAGS.writes));
    while (!duration_done(&d, FLAGS.batch_size)) {
        ravel_batch_clear(batch);
        for (int64_t j = 0; j < FLAGS.batch_size; j++) {
            uint64_t k = b->random_keys ? rng_next(&t->rng) % (uint64_t)b->key_range
                                        : seq++;
            key_from_int(k, key);
            rc = ravel_batch_put(batch, key, (size_t)FLAGS.key_size,
                                 value_next(&vpos, (size_t)b->value_size),
                                 (size_t)b->value_size);
            if (rc)
                fail(b, "ravel_batch_put", rc);
        }
        rc = ravel_write(db, flags, batch);
        if (rc)
            fail(b, "ravel_write", rc);
        t->st.bytes += (uint64_t)(FLAGS.batch_size * (FLAGS.key_size + b->value_size));
        finished_ops(&t->st, (uint64_t)FLAGS.batch_size);
    }
    ravel_batch_free(batch);
    free(key);
}

/* One point lookup into *BUF (grown when a value does not fit, so the
** whole value is always read).  Returns 1 if found, with *VLEN set. */
static int read_one(const struct bench *b, ravel_db *db, const char *key,
                    int64_t klen, char **buf, size_t *cap, size_t *vlen)
{
    int rc = ravel_get_into(db, NULL, key, (size_t)klen, *buf, *cap, vlen);
    if (rc == RAVEL_OK && *vlen > *cap) {
        free(*buf);
        *cap = *vlen;
        if (!(*buf = malloc(*cap)))
            die("out of memory for a %zu-byte value", *cap);
        rc = ravel_get_into(db, NULL, key, (size_t)klen, *buf, *cap, vlen);
    }
    if (rc != RAVEL_OK && rc != RAVEL_NOTFOUND)
        fail(b, "ravel_get_into", rc);
    return rc == RAVEL_OK;
}

/* db_bench's ReadRandom: point lookups of uniform keys in [0, num), each
** value read into the thread's own buffer, as db_bench reads into a
** PinnableSlice (no allocation per value). */
static void bench_readrandom(const struct bench *b, struct thread *t)
{
    int64_t found = 0;
    size_t cap = FLAGS.value_size > 0 ? (size_t)FLAGS.value_size : 1;
    char *key = malloc((size_t)b->key_size);
    char *buf = malloc(cap);
    ravel_db *db = thread_db(b, t);
    struct duration d;
    if (!key || !buf)
        die("out of memory");
    duration_init(&d, FLAGS.duration, per_thread(FLAGS.reads));
    while (!duration_done(&d, 1)) {
        size_t vlen;
        key_from_int_sized(random_key(t, b->key_range), key, b->key_size);
        if (read_one(b, db, key, b->key_size, &buf, &cap, &vlen)) {
            found++;
            t->st.bytes += (uint64_t)b->key_size + vlen;
        }
        finished_ops(&t->st, 1);
    }
    snprintf(t->st.message, sizeof t->st.message,
             "(%" PRId64 " of %" PRIu64 " found)\n", found, t->st.done);
    free(buf);
    free(key);
}

/* readwhilewriting's extra thread (db_bench's BGWriter): single puts of
** random keys at full speed until every reader is done.  Its numbers are
** not merged into the readers'. */
static void bench_background_writer(const struct bench *b, struct thread *t)
{
    int flags = (FLAGS.sync ? RAVEL_SYNC : 0) |
                (FLAGS.disable_wal ? RAVEL_NO_WAL : 0);
    char *key = malloc((size_t)FLAGS.key_size);
    size_t vpos = 0;
    if (!key)
        die("out of memory");
    t->st.exclude_from_merge = 1;
    /* relaxed: a count; the readers' work needs no ordering with ours */
    while (atomic_load_explicit(b->threads_done, memory_order_relaxed) + 1 <
           b->nthreads) {
        key_from_int(rng_next(&t->rng) % (uint64_t)FLAGS.num, key);
        int rc = ravel_put(thread_db(b, t), flags, key, (size_t)FLAGS.key_size,
                           value_next(&vpos, (size_t)FLAGS.value_size),
                           (size_t)FLAGS.value_size);
        if (rc)
            fail(b, "ravel_put", rc);
        t->st.bytes += (uint64_t)(FLAGS.key_size + FLAGS.value_size);
        finished_ops(&t->st, 1);
    }
    free(key);
}

/* db_bench's ReadWhileWriting: thread 0 writes, the others readrandom. */
static void bench_readwhilewriting(const struct bench *b, struct thread *t)
{
    if (t->tid == 0)
        bench_background_writer(b, t);
    else
        bench_readrandom(b, t);
}

/* db_bench's ReadSequential: one iterator from the first key, up to
** --reads entries. */
static void bench_readseq(const struct bench *b, struct thread *t)
{
    int64_t reads = per_thread(FLAGS.reads), i = 0;
    ravel_iter *it;
    int rc = ravel_iter_new(thread_db(b, t), NULL, &it);
    if (rc)
        fail(b, "ravel_iter_new", rc);
    rc = ravel_iter_seek_to_first(it);
    if (rc)
        fail(b, "ravel_iter_seek_to_first", rc);
    while (i < reads && ravel_iter_valid(it)) {
        size_t klen, vlen;
        ravel_iter_key(it, &klen);
        ravel_iter_value(it, &vlen);
        t->st.bytes += klen + vlen;
        i++;
        finished_ops(&t->st, 1);
        rc = ravel_iter_next(it);
        if (rc)
            fail(b, "ravel_iter_next", rc);
    }
    rc = ravel_iter_status(it);
    if (rc)
        fail(b, "ravel_iter_status", rc);
    ravel_iter_free(it);
}

/* db_bench's ReadReverse: one iterator from the last key backward, up to
** --reads entries. */
static void bench_readreverse(const struct bench *b, struct thread *t)
{
    int64_t reads = per_thread(FLAGS.reads), i = 0;
    ravel_iter *it;
    int rc = ravel_iter_new(thread_db(b, t), NULL, &it);
    if (rc)
        fail(b, "ravel_iter_new", rc);
    rc = ravel_iter_seek_to_last(it);
    if (rc)
        fail(b, "ravel_iter_seek_to_last", rc);
    while (i < reads && ravel_iter_valid(it)) {
        size_t klen, vlen;
        ravel_iter_key(it, &klen);
        ravel_iter_value(it, &vlen);
        t->st.bytes += klen + vlen;
        i++;
        finished_ops(&t->st, 1);
        rc = ravel_iter_prev(it);
        if (rc)
            fail(b, "ravel_iter_prev", rc);
    }
    rc = ravel_iter_status(it);
    if (rc)
        fail(b, "ravel_iter_status", rc);
    ravel_iter_free(it);
}

/* db_bench's SeekRandom: a new iterator per seek (db_bench without
** --use_tailing_iterator), found if it lands on the key itself.  The
** entry's value is copied out so the seek is not a positioning alone;
** like db_bench, bytes count only the --seek_nexts entries. */
static void bench_seekrandom(const struct bench *b, struct thread *t)
{
    int64_t found = 0;
    char *key = malloc((size_t)FLAGS.key_size);
    char buf[256];
    struct duration d;
    if (!key)
        die("out of memory");
    duration_init(&d, FLAGS.duration, per_thread(FLAGS.reads));
    while (!duration_done(&d, 1)) {
        ravel_iter *it;
        size_t klen, vlen;
        key_from_int(rng_next(&t->rng) % (uint64_t)FLAGS.num, key);
        int rc = ravel_iter_new(thread_db(b, t), NULL, &it);
        if (rc)
            fail(b, "ravel_iter_new", rc);
        rc = ravel_iter_seek(it, key, (size_t)FLAGS.key_size);
        if (rc)
            fail(b, "ravel_iter_seek", rc);
        if (ravel_iter_valid(it)) {
            const void *k = ravel_iter_key(it, &klen);
            const void *v = ravel_iter_value(it, &vlen);
            memcpy(buf, v, vlen < sizeof buf ? vlen : sizeof buf);
            if (klen == (size_t)FLAGS.key_size && memcmp(k, key, klen) == 0)
                found++;
        }
        for (int64_t j = 0; j < FLAGS.seek_nexts && ravel_iter_valid(it); j++) {
            const void *v = ravel_iter_value(it, &vlen);
            ravel_iter_key(it, &klen);
            memcpy(buf, v, vlen < sizeof buf ? vlen : sizeof buf);
            t->st.bytes += klen + vlen;
            rc = ravel_iter_next(it);
            if (rc)
                fail(b, "ravel_iter_next", rc);
        }
        rc = ravel_iter_status(it);
        if (rc)
            fail(b, "ravel_iter_status", rc);
        ravel_iter_free(it);
        finished_ops(&t->st, 1);
    }
    snprintf(t->st.message, sizeof t->st.message,
             "(%" PRId64 " of %" PRIu64 " found)\n", found, t->st.done);
    free(key);
}

/* db_bench's DoDelete (deleteseq, deleterandom): --deletes keys per
** thread (--num when negative), --batch_size to a batch, keys 0, 1, ...
** or uniform in [0, num). */
static void bench_delete(const struct bench *b, struct thread *t)
{
    int flags = (FLAGS.sync ? RAVEL_SYNC : 0) |
                (FLAGS.disable_wal ? RAVEL_NO_WAL : 0);
    char *key = malloc((size_t)FLAGS.key_size);
    ravel_batch *batch = NULL;
    struct duration d;
    uint64_t i = 0;
    int rc = ravel_batch_new(&batch);
    if (rc)
        fail(b, "ravel_batch_new", rc);
    if (!key)
        die("out of memory");
    duration_init(&d, b->random_keys ? FLAGS.duration : 0,
                  per_thread(FLAGS.deletes));
    while (!duration_done(&d, FLAGS.batch_size)) {
        ravel_batch_clear(batch);
        for (int64_t j = 0; j < FLAGS.batch_size; j++) {
            key_from_int(b->random_keys ? rng_next(&t->rng) % (uint64_t)FLAGS.num
                                        : i + (uint64_t)j, key);
            rc = ravel_batch_delete(batch, key, (size_t)FLAGS.key_size);
            if (rc)
                fail(b, "ravel_batch_delete", rc);
        }
        rc = ravel_write(thread_db(b, t), flags, batch);
        if (rc)
            fail(b, "ravel_write", rc);
        i += (uint64_t)FLAGS.batch_size;
        finished_ops(&t->st, (uint64_t)FLAGS.batch_size);
    }
    ravel_batch_free(batch);
    free(key);
}

/* db_bench's readwrites_: the larger of --reads and --writes, --num when
** both are negative. */
static int64_t read_writes(void)
{
    if (FLAGS.writes < 0 && FLAGS.reads < 0)
        return FLAGS.num;
    return FLAGS.writes > FLAGS.reads ? FLAGS.writes : FLAGS.reads;
}

static int write_flags(void)
{
    return (FLAGS.sync ? RAVEL_SYNC : 0) | (FLAGS.disable_wal ? RAVEL_NO_WAL : 0);
}

/* db_bench's UpdateRandom: read-modify-write of uniform keys, the value
** read, then a new one put. */
static void bench_updaterandom(const struct bench *b, struct thread *t)
{
    int64_t found = 0;
    size_t cap = FLAGS.value_size > 0 ? (size_t)FLAGS.value_size : 1;
    size_t vpos = 0;
    char *key = malloc((size_t)FLAGS.key_size);
    char *buf = malloc(cap);
    ravel_db *db = thread_db(b, t);
    struct duration d;
    if (!key || !buf)
        die("out of memory");
    duration_init(&d, FLAGS.duration, read_writes());
    while (!duration_done(&d, 1)) {
        size_t vlen;
        key_from_int(rng_next(&t->rng) % (uint64_t)FLAGS.num, key);
        if (read_one(b, db, key, FLAGS.key_size, &buf, &cap, &vlen)) {
            found++;
            t->st.bytes += (uint64_t)FLAGS.key_size + vlen;
        }
        int rc = ravel_put(db, write_flags(), key, (size_t)FLAGS.key_size,
                           value_next(&vpos, (size_t)FLAGS.value_size),
                           (size_t)FLAGS.value_size);
        if (rc)
            fail(b, "ravel_put", rc);
        t->st.bytes += (uint64_t)(FLAGS.key_size + FLAGS.value_size);
        finished_ops(&t->st, 1);
    }
    snprintf(t->st.message, sizeof t->st.message,
             "( updates:%" PRId64 " found:%" PRId64 ")", read_writes(), found);
    free(buf);
    free(key);
}

/* db_bench's ReadRandomWriteRandom: of every 100 operations on uniform
** keys, --readwritepercent gets, then the rest puts. */
static void bench_readrandomwriterandom(const struct bench *b,
                                        struct thread *t)
{
    int64_t found = 0, reads = 0, writes = 0;
    int get_weight = 0, put_weight = 0;
    size_t cap = FLAGS.value_size > 0 ? (size_t)FLAGS.value_size : 1;
    size_t vpos = 0;
    char *key = malloc((size_t)FLAGS.key_size);
    char *buf = malloc(cap);
    ravel_db *db = thread_db(b, t);
    struct duration d;
    if (!key || !buf)
        die("out of memory");
    duration_init(&d, FLAGS.duration, read_writes());
    while (!duration_done(&d, 1)) {
        size_t vlen;
        key_from_int(rng_next(&t->rng) % (uint64_t)FLAGS.num, key);
        if (get_weight == 0 && put_weight == 0) {
            get_weight = (int)FLAGS.readwritepercent;
            put_weight = 100 - get_weight;
        }
        if (get_weight > 0) {
            found += read_one(b, db, key, FLAGS.key_size, &buf, &cap, &vlen);
            get_weight--;
            reads++;
        } else {
            int rc = ravel_put(db, write_flags(), key, (size_t)FLAGS.key_size,
                               value_next(&vpos, (size_t)FLAGS.value_size),
                               (size_t)FLAGS.value_size);
            if (rc)
                fail(b, "ravel_put", rc);
            put_weight--;
            writes++;
        }
        finished_ops(&t->st, 1);
    }
    snprintf(t->st.message, sizeof t->st.message,
             "( reads:%" PRId64 " writes:%" PRId64 " total:%" PRId64
             " found:%" PRId64 ")", reads, writes, read_writes(), found);
    free(buf);
    free(key);
}

/* db_bench's SeekRandomWhileWriting: thread 0 writes, the others
** seekrandom. */
static void bench_seekrandomwhilewriting(const struct bench *b,
                                         struct thread *t)
{
    if (t->tid == 0)
        bench_background_writer(b, t);
    else
        bench_seekrandom(b, t);
}

/* One batch of multireadrandom: the N keys of KEYS read with one
** ravel_multi_get (all at one sequence), or with --multiget_loop by N
** ravel_get calls.  Returns how many were found; adds their bytes. */
static int64_t multiread_batch(const struct bench *b, struct thread *t,
                               size_t n, const void *const *keys,
                               const size_t *klens, void **vals,
                               size_t *vlens, int *rcs)
{
    ravel_db *db = thread_db(b, t);
    int64_t found = 0;
    if (FLAGS.multiget_loop) {
        for (size_t i = 0; i < n; i++) {
            rcs[i] = ravel_get(db, NULL, keys[i], klens[i], &vals[i],
                               &vlens[i]);
            if (rcs[i] != RAVEL_OK && rcs[i] != RAVEL_NOTFOUND)
                fail(b, "ravel_get", rcs[i]);
        }
    } else {
        int rc = ravel_multi_get(db, NULL, n, keys, klens, vals, vlens, rcs);
        if (rc)
            fail(b, "ravel_multi_get", rc);
    }
    for (size_t i = 0; i < n; i++) {
        if (rcs[i] == RAVEL_OK) {
            found++;
            t->st.bytes += klens[i] + vlens[i];
        }
        ravel_free(vals[i]);
    }
    return found;
}

/* db_bench's MultiReadRandom: --batch_size uniform keys per multi-get
** (each key one operation), --reads keys per thread. */
static void bench_multireadrandom(const struct bench *b, struct thread *t)
{
    size_t n = (size_t)FLAGS.batch_size;
    char *keybuf = malloc(n * (size_t)FLAGS.key_size);
    const void **keys = malloc(n * sizeof *keys);
    size_t *klens = malloc(n * sizeof *klens);
    void **vals = calloc(n, sizeof *vals);
    size_t *vlens = malloc(n * sizeof *vlens);
    int *rcs = malloc(n * sizeof *rcs);
    int64_t found = 0;
    struct duration d;
    if (!keybuf || !keys || !klens || !vals || !vlens || !rcs)
        die("out of memory");
    for (size_t i = 0; i < n; i++) {
        keys[i] = keybuf + i * (size_t)FLAGS.key_size;
        klens[i] = (size_t)FLAGS.key_size;
    }
    duration_init(&d, FLAGS.duration, per_thread(FLAGS.reads));
    while (!duration_done(&d, FLAGS.batch_size)) {
        for (size_t i = 0; i < n; i++)
            key_from_int(random_key(t, FLAGS.num),
                         keybuf + i * (size_t)FLAGS.key_size);
        found += multiread_batch(b, t, n, keys, klens, vals, vlens, rcs);
        finished_ops(&t->st, n);
    }
    snprintf(t->st.message, sizeof t->st.message,
             "(%" PRId64 " of %" PRIu64 " found)", found, t->st.done);
    free(keybuf);
    free(keys);
    free(klens);
    free(vals);
    free(vlens);
    free(rcs);
}

/* mixgraph's model, built by main before the threads start (read-only
** while they run). */
static struct mg_model mixgraph_model;

static void mixgraph_model_init(void)
{
    struct mg_params p = {
        .num = FLAGS.num,
        .get_ratio = FLAGS.mix_get_ratio,
        .put_ratio = FLAGS.mix_put_ratio,
        .seek_ratio = FLAGS.mix_seek_ratio,
        .max_scan_len = FLAGS.mix_max_scan_len,
        /* db_bench caps values at 1 MiB whatever the flag says */
        .max_value_size = FLAGS.mix_max_value_size < 1048576
                              ? FLAGS.mix_max_value_size : 1048576,
        .key_dist_a = FLAGS.key_dist_a,
        .key_dist_b = FLAGS.key_dist_b,
        .keyrange_a = FLAGS.keyrange_dist_a,
        .keyrange_b = FLAGS.keyrange_dist_b,
        .keyrange_c = FLAGS.keyrange_dist_c,
        .keyrange_d = FLAGS.keyrange_dist_d,
        .keyrange_num = FLAGS.keyrange_num,
        .value_theta = FLAGS.value_theta,
        .value_k = FLAGS.value_k,
        .value_sigma = FLAGS.value_sigma,
        .iter_theta = FLAGS.iter_theta,
        .iter_k = FLAGS.iter_k,
        .iter_sigma = FLAGS.iter_sigma,
    };
    if (mg_model_init(&mixgraph_model, &p) != 0)
        die("out of memory for mixgraph's %" PRId64 " key ranges",
            FLAGS.keyrange_num);
}

/* --sine_mix_rate: operations per second A*sin(B*t + C) + D (t: seconds
** since the start), recomputed every --sine_mix_rate_interval_milliseconds,
** with noise as db_bench's AddNoise; reads (gets and seeks) and puts each
** get their share.  db_bench holds all threads to it with one shared rate
** limiter; here each thread keeps to its 1/--threads of it (a thread sleeps
** when it is ahead of its rate). */
struct sine_pacer {
    double interval_start;  /* micros */
    double rate[2];         /* ops/s this thread may do: reads, puts */
    uint64_t ops[2];        /* done since interval_start */
};

static double sine_rate_now(double seconds)
{
    double rate = FLAGS.sine_a * sin(FLAGS.sine_b * seconds + FLAGS.sine_c) +
                  FLAGS.sine_d;
    double noise = FLAGS.sine_mix_rate_noise;
    int band = (int)FLAGS.sine_a;
    if (noise < 0 || noise > 1 || band <= 0)
        return rate;
    double delta = (double)(rand() % band - band / 2) * noise;
    return rate + delta < 0 ? rate : rate + delta;
}

static void sine_pace(struct sine_pacer *sp, const struct stats *st,
                      int is_put)
{
    double now = now_micros();
    if (sp->interval_start == 0 ||
        now - sp->interval_start >
            (double)FLAGS.sine_mix_rate_interval_milliseconds * 1e3) {
        double rate = sine_rate_now((now - st->start) / 1e6) /
                      (double)FLAGS.threads;
        const double *share = mixgraph_model.share;
        sp->rate[0] = rate * (share[MG_GET] + share[MG_SEEK]);
        sp->rate[1] = rate * share[MG_PUT];
        sp->ops[0] = sp->ops[1] = 0;
        sp->interval_start = now;
    }
    sp->ops[is_put]++;
    if (sp->rate[is_put] <= 0)
        return;
    double due = sp->interval_start +
                 (double)sp->ops[is_put] / sp->rate[is_put] * 1e6;
    if (due > now) {
        double wait = due - now;
        struct timespec ts = {(time_t)(wait / 1e6),
                              (long)(fmod(wait, 1e6) * 1e3)};
        nanosleep(&ts, NULL);
    }
}

/* A mixgraph seek: a new iterator at KEY, then SCAN_LEN entries read (each
** value copied out, as db_bench does).  Returns 1 if it landed on KEY. */
static int mixgraph_seek(const struct bench *b, struct thread *t,
                         const char *key, int64_t scan_len, double *scanned)
{
    ravel_iter *it;
    char buf[256];
    size_t klen, vlen;
    int found = 0;
    int rc = ravel_iter_new(thread_db(b, t), NULL, &it);
    if (rc)
        fail(b, "ravel_iter_new", rc);
    rc = ravel_iter_seek(it, key, (size_t)FLAGS.key_size);
    if (rc)
        fail(b, "ravel_iter_seek", rc);
    if (ravel_iter_valid(it)) {
        const void *k = ravel_iter_key(it, &klen);
        found = klen == (size_t)FLAGS.key_size && memcmp(k, key, klen) == 0;
    }
    for (int64_t j = 0; j < scan_len && ravel_iter_valid(it); j++) {
        const void *v = ravel_iter_value(it, &vlen);
        ravel_iter_key(it, &klen);
        memcpy(buf, v, vlen < sizeof buf ? vlen : sizeof buf);
        t->st.bytes += klen + vlen;
        (*scanned)++;
        rc = ravel_iter_next(it);
        if (rc)
            fail(b, "ravel_iter_next", rc);
    }
    rc = ravel_iter_status(it);
    if (rc)
        fail(b, "ravel_iter_status", rc);
    ravel_iter_free(it);
    return found;
}

/* db_bench's MixGraph: --reads operations per thread, each a get, a put
** or a seek and scan as the model (mixgraph.c) draws it. */
static void bench_mixgraph(const struct bench *b, struct thread *t)
{
    int64_t gets = 0, puts = 0, seeks = 0, found = 0;
    double value_bytes = 0, scanned = 0;
    size_t cap = (size_t)FLAGS.value_size > 1024 ? (size_t)FLAGS.value_size
                                                 : 1024;
    size_t vpos = 0;
    char *key = malloc((size_t)FLAGS.key_size);
    char *buf = malloc(cap);
    ravel_db *db = thread_db(b, t);
    struct sine_pacer pacer = {0};
    struct duration d;
    if (!key || !buf)
        die("out of memory");
    duration_init(&d, FLAGS.duration, per_thread(FLAGS.reads));
    while (!duration_done(&d, 1)) {
        struct mg_draw op;
        size_t vlen;
        mg_model_draw(&mixgraph_model, random_key(t, FLAGS.num), &op);
        key_from_int(op.key, key);
        if (op.op == MG_GET) {
            gets++;
            if (read_one(b, db, key, FLAGS.key_size, &buf, &cap, &vlen)) {
                found++;
                t->st.bytes += (uint64_t)FLAGS.key_size + vlen;
            }
        } else if (op.op == MG_PUT) {
            puts++;
            value_bytes += (double)op.value_size;
            int rc = ravel_put(db, write_flags(), key, (size_t)FLAGS.key_size,
                               value_next(&vpos, (size_t)op.value_size),
                               (size_t)op.value_size);
            if (rc)
                fail(b, "ravel_put", rc);
        } else {
            seeks++;
            found += mixgraph_seek(b, t, key, op.scan_len, &scanned);
        }
        if (FLAGS.sine_mix_rate)
            sine_pace(&pacer, &t->st, op.op == MG_PUT);
        finished_ops(&t->st, 1);
    }
    snprintf(t->st.message, sizeof t->st.message,
             "( Gets:%" PRId64 " Puts:%" PRId64 " Seek:%" PRId64 ", reads %"
             PRId64 " in %" PRId64 " found, avg size: %.1f value, %.1f "
             "scan)\n", gets, puts, seeks, found, gets + seeks,
             puts ? value_bytes / (double)puts : 0.0,
             seeks ? scanned / (double)seeks : 0.0);
    free(buf);
    free(key);
}

/* ------------------------------------------------------ randomtransaction */

/* db_bench's RandomTransaction (RocksDB's RandomTransactionInserter, in
** test_util/transaction_test_util.cc): each operation adds one random
** amount, 1 .. 100, to one random key of each of --transaction_sets sets
** of --num keys, the sets visited in a random order.  A key is the set's
** number (from 1) in four digits, then the key's number in decimal
** ("0001" "42"); a value is a count in decimal, absent being 0.
**
** With --transaction_db each operation is a pessimistic transaction
** (named, as db_bench names them), with --optimistic_transaction_db an
** optimistic one, else a plain batch of the reads' results (db_bench's
** DBInsert: no isolation, so with threads increments may be lost, and
** like db_bench there is nothing to verify then).  In a transaction each
** key is read, half of the time with get_for_update, then deleted and put
** (db_bench's SingleDelete or Delete, then Put); then, as db_bench:
** pessimistic transactions are prepared nine times in ten (two-phase
** commit) before they commit, and one transaction in twenty is rolled
** back instead of committed.  A retriable failure (RAVEL_CONFLICT,
** RAVEL_TIMEDOUT, RAVEL_DEADLOCK) rolls the transaction back and counts
** as an abort, db_bench's failure count; the operation is counted either
** way, as db_bench counts it.  db_bench's commit-time write batch (a
** "cat" -> "dog" put on one prepared transaction in twenty, testing
** RocksDB's own mechanics) has no counterpart here.
**
** Verification (db_bench's RandomTransactionVerify): before the run each
** set's sum is taken; after it each set's sum must have grown by exactly
** the increments of the transactions that committed (so every set's sum
** is the same as every other's, db_bench's check, whenever it was
** before).  A failure prints db_bench's "RandomTransactionVerify
** FAILED!!" line and ends ravel-bench with status 1. */

enum rt_mode { RT_PLAIN, RT_PESSIMISTIC, RT_OPTIMISTIC };

static enum rt_mode rt_mode_of_flags(void)
{
    return FLAGS.optimistic_transaction_db ? RT_OPTIMISTIC
           : FLAGS.transaction_db          ? RT_PESSIMISTIC
                                           : RT_PLAIN;
}

/* The sum of the increments of the operations that committed in this run,
** over all threads (every set got each of them once). */
static _Atomic uint64_t rt_committed_incr;

/* All threads' counts, for the line after the run (db_bench's result line
** shows the first thread's alone): operations, the ones rolled back by
** choice (one in twenty), and the aborts by their code. */
static _Atomic uint64_t rt_total_ops, rt_total_rollbacks, rt_total_prepared;
static _Atomic uint64_t rt_total_conflicts, rt_total_timeouts,
    rt_total_deadlocks;

/* Set once ravel_txn_prepare has refused as a build without two-phase
** commit refuses it (RAVEL_INVALID before any prepare succeeded): the
** transactions then commit without it, and the run says so at its end.
** rt_prepared_ok: a prepare has succeeded, so a refusal is a failure. */
static _Atomic int rt_prepare_refused, rt_prepared_ok;
static char rt_prepare_refusal[300];
static pthread_mutex_t rt_refusal_mu = PTHREAD_MUTEX_INITIALIZER;

#define RT_KEY_MAX 32

/* The codes that mean "roll back and run the transaction again". */
static int rt_retriable(int rc)
{
    return rc == RAVEL_CONFLICT || rc == RAVEL_TIMEDOUT ||
           rc == RAVEL_DEADLOCK;
}

static size_t rt_key(unsigned set, uint64_t ikey, char *key)
{
    return (size_t)snprintf(key, RT_KEY_MAX, "%.4u%" PRIu64, set + 1, ikey);
}

/* The count in VAL (VLEN bytes of decimal), or dies: db_bench's check
** that no value read is 0 or not a number. */
static uint64_t rt_parse(const char *key, size_t klen, const char *val,
                         size_t vlen)
{
    uint64_t v = 0;
    for (size_t i = 0; i < vlen; i++) {
        if (val[i] < '0' || val[i] > '9' || i >= 19)
            v = 0, i = vlen;
        else
            v = v * 10 + (uint64_t)(val[i] - '0');
    }
    if (v == 0)
        die("randomtransaction: key %.*s holds '%.*s', not a positive "
            "count (corrupt, or not a randomtransaction database)",
            (int)klen, key, (int)(vlen > 40 ? 40 : vlen), val);
    return v;
}

/* Reads KEY's count into *OUT (absent: 0): through TXN, for update or not,
** or from the database's latest state when TXN is NULL or LATEST (a read
** not for update).  Returns RAVEL_OK or a retriable code; dies on others. */
static int rt_read(const struct bench *b, ravel_db *db, ravel_txn *txn,
                   int for_update, int latest, const char *key, size_t klen,
                   uint64_t *out)
{
    void *val = NULL;
    size_t vlen = 0;
    int rc;
    if (!txn || (latest && !for_update))
        rc = ravel_get(db, NULL, key, klen, &val, &vlen);
    else if (for_update)
        rc = ravel_txn_get_for_update(txn, key, klen, &val, &vlen);
    else
        rc = ravel_txn_get(txn, key, klen, &val, &vlen);
    *out = rc == RAVEL_OK ? rt_parse(key, klen, val, vlen) : 0;
    ravel_free(val);
    if (rc == RAVEL_NOTFOUND)
        return RAVEL_OK;
    if (rc && !(txn && rt_retriable(rc)))
        fail(b, for_update ? "ravel_txn_get_for_update"
                : txn && !latest ? "ravel_txn_get" : "ravel_get", rc);
    return rc;
}

/* --transaction_sleep: up to that many microseconds, at random. */
static void rt_sleep(struct thread *t)
{
    if (FLAGS.transaction_sleep <= 0)
        return;
    uint64_t us = rng_next(&t->rng) % (uint64_t)FLAGS.transaction_sleep;
    struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* The sets in a random order (Fisher-Yates), as db_bench shuffles them. */
static void rt_shuffle(struct thread *t, unsigned *order, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        order[i] = i;
    for (unsigned i = n; i > 1; i--) {
        unsigned j = (unsigned)(rng_next(&t->rng) % i);
        unsigned tmp = order[i - 1];
        order[i - 1] = order[j];
        order[j] = tmp;
    }
}

/* db_bench's DBInsert: the counts read from the database, the new ones
** written in one batch. */
static void rt_insert_plain(const struct bench *b, struct thread *t,
                            ravel_db *db, const unsigned *order,
                            uint64_t incr, ravel_batch *batch)
{
    char key[RT_KEY_MAX], val[24];
    ravel_batch_clear(batch);
    for (int64_t i = 0; i < FLAGS.transaction_sets; i++) {
        uint64_t v;
        size_t klen = rt_key(order[i], rng_next(&t->rng) % (uint64_t)FLAGS.num,
                             key);
        rt_read(b, db, NULL, 0, 0, key, klen, &v);
        rt_sleep(t);
        size_t vlen = (size_t)snprintf(val, sizeof val, "%" PRIu64, v + incr);
        int rc = ravel_batch_put(batch, key, klen, val, vlen);
        if (rc)
            fail(b, "ravel_batch_put", rc);
        t->st.bytes += klen + vlen;
    }
    int rc = ravel_write(db, write_flags(), batch);
    if (rc)
        fail(b, "ravel_write", rc);
}

/* The reads and writes of one transaction: RAVEL_OK, or a retriable code
** (others end the run). */
static int rt_txn_body(const struct bench *b, struct thread *t, ravel_db *db,
                       ravel_txn *txn, int latest, const unsigned *order,
                       uint64_t incr)
{
    char key[RT_KEY_MAX], val[24];
    for (int64_t i = 0; i < FLAGS.transaction_sets; i++) {
        uint64_t v;
        size_t klen = rt_key(order[i], rng_next(&t->rng) % (uint64_t)FLAGS.num,
                             key);
        int for_update = (int)(rng_next(&t->rng) & 1);
        int rc = rt_read(b, db, txn, for_update, latest, key, klen, &v);
        if (rc)
            return rc;
        rt_sleep(t);
        size_t vlen = (size_t)snprintf(val, sizeof val, "%" PRIu64, v + incr);
        if ((rc = ravel_txn_delete(txn, key, klen)) == RAVEL_OK)
            rc = ravel_txn_put(txn, key, klen, val, vlen);
        if (rc && !rt_retriable(rc))
            fail(b, "ravel_txn_delete/ravel_txn_put", rc);
        if (rc)
            return rc;
        t->st.bytes += klen + vlen;
    }
    return RAVEL_OK;
}

/* A pessimistic transaction's prepare, nine times in ten, as db_bench's:
** 1 if TXN is prepared.  A build without two-phase commit refuses it
** (RAVEL_INVALID): noted once, and the transactions commit without it
** from then on. */
static int rt_prepare(const struct bench *b, ravel_txn *txn)
{
    if (atomic_load_explicit(&rt_prepare_refused, memory_order_relaxed))
        return 0;
    int rc = ravel_txn_prepare(txn);
    if (rc == RAVEL_OK) {
        atomic_store_explicit(&rt_prepared_ok, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&rt_total_prepared, 1,
                                  memory_order_relaxed);
        return 1;
    }
    if (rc != RAVEL_INVALID ||
        atomic_load_explicit(&rt_prepared_ok, memory_order_relaxed))
        fail(b, "ravel_txn_prepare", rc);
    pthread_mutex_lock(&rt_refusal_mu);
    if (!rt_prepare_refusal[0])
        snprintf(rt_prepare_refusal, sizeof rt_prepare_refusal, "%s",
                 ravel_errmsg());
    pthread_mutex_unlock(&rt_refusal_mu);
    atomic_store_explicit(&rt_prepare_refused, 1, memory_order_relaxed);
    return 0;
}

/* One transaction, db_bench's TransactionDBInsert or
** OptimisticTransactionDBInsert and DoInsert: RAVEL_OK with *COMMITTED
** set if it committed (not if it was one of the rolled back), or a
** retriable code once rolled back. */
static int rt_insert_txn(const struct bench *b, struct thread *t,
                         ravel_db *db, enum rt_mode mode,
                         const unsigned *order, uint64_t incr,
                         uint64_t txn_id, int *committed)
{
    ravel_txn *txn = NULL;
    int rc = ravel_txn_begin(db, (FLAGS.sync ? RAVEL_SYNC : 0) |
                             (mode == RT_OPTIMISTIC ? RAVEL_TXN_OPTIMISTIC : 0),
                             &txn);
    if (rc)
        fail(b, "ravel_txn_begin", rc);
    *committed = 0;
    int latest = 0;
    if (mode == RT_PESSIMISTIC) {
        char name[64];
        snprintf(name, sizeof name, "txn%d-%" PRIu64, t->tid, txn_id);
        if ((rc = ravel_txn_set_name(txn, name)))
            fail(b, "ravel_txn_set_name", rc);
        latest = FLAGS.transaction_set_snapshot && (rng_next(&t->rng) & 1);
    }
    rc = rt_txn_body(b, t, db, txn, latest, order, incr);
    if (rc == RAVEL_OK) {
        int prepared = mode == RT_PESSIMISTIC &&
                       rng_next(&t->rng) % 10 != 0 && rt_prepare(b, txn);
        if (rng_next(&t->rng) % 20 == 0) {
            if ((rc = ravel_txn_rollback(txn)))
                fail(b, "ravel_txn_rollback", rc);
            atomic_fetch_add_explicit(&rt_total_rollbacks, 1,
                                      memory_order_relaxed);
        } else if ((rc = ravel_txn_commit(txn)) == RAVEL_OK) {
            *committed = 1;
        } else if (prepared || !rt_retriable(rc)) {
            /* a prepared transaction holds its locks: its commit cannot
            ** conflict (db_bench asserts it) */
            fail(b, "ravel_txn_commit", rc);
        }
    }
    ravel_txn_free(txn); /* rolls back what failed */
    return rc;
}

/* Counts RC if it is an abort (a retriable code); 1 if it was. */
static int rt_count_abort(int rc)
{
    _Atomic uint64_t *count = rc == RAVEL_CONFLICT   ? &rt_total_conflicts
                              : rc == RAVEL_TIMEDOUT ? &rt_total_timeouts
                              : rc == RAVEL_DEADLOCK ? &rt_total_deadlocks
                                                     : NULL;
    if (count)
        atomic_fetch_add_explicit(count, 1, memory_order_relaxed);
    return count != NULL;
}

static void bench_randomtransaction(const struct bench *b, struct thread *t)
{
    enum rt_mode mode = rt_mode_of_flags();
    unsigned nsets = (unsigned)FLAGS.transaction_sets;
    unsigned *order = malloc(nsets * sizeof *order);
    ravel_batch *batch = NULL;
    ravel_db *db = thread_db(b, t);
    uint64_t done = 0, aborts = 0, incr_committed = 0;
    struct duration d;
    if (!order || ravel_batch_new(&batch) != RAVEL_OK)
        die("out of memory");
    duration_init(&d, FLAGS.duration, read_writes());
    while (!duration_done(&d, 1)) {
        uint64_t incr = rng_next(&t->rng) % 100 + 1;
        int committed = 1;
        rt_shuffle(t, order, nsets);
        if (mode == RT_PLAIN)
            rt_insert_plain(b, t, db, order, incr, batch);
        else if (rt_count_abort(rt_insert_txn(b, t, db, mode, order, incr,
                                              done, &committed)))
            aborts++;
        if (committed)
            incr_committed += incr;
        done++;
        finished_ops(&t->st, 1);
    }
    atomic_fetch_add_explicit(&rt_committed_incr, incr_committed,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&rt_total_ops, done, memory_order_relaxed);
    if (mode == RT_PLAIN)
        snprintf(t->st.message, sizeof t->st.message,
                 "( batches:%" PRIu64 " )", done);
    else
        snprintf(t->st.message, sizeof t->st.message,
                 "( transactions:%" PRIu64 " aborts:%" PRIu64 ")", done,
                 aborts);
    ravel_batch_free(batch);
    free(order);
}

/* Each set's sum of counts, into SUMS (--transaction_sets of them), read
** with one iterator (the threads have stopped, or not started). */
static void rt_sums(ravel_db *db, uint64_t *sums)
{
    ravel_iter *it = NULL;
    int rc = ravel_iter_new(db, NULL, &it);
    if (rc)
        die("randomtransaction: ravel_iter_new: %s: %s", ravel_errstr(rc),
            ravel_errmsg());
    for (unsigned set = 0; set < (unsigned)FLAGS.transaction_sets; set++) {
        char prefix[16];
        snprintf(prefix, sizeof prefix, "%.4u", set + 1);
        sums[set] = 0;
        for (rc = ravel_iter_seek(it, prefix, 4); rc == RAVEL_OK &&
             ravel_iter_valid(it); rc = ravel_iter_next(it)) {
            size_t klen, vlen;
            const char *k = ravel_iter_key(it, &klen);
            const char *v = ravel_iter_value(it, &vlen);
            if (klen < 4 || memcmp(k, prefix, 4) != 0)
                break;
            sums[set] += rt_parse(k, klen, v, vlen);
        }
        if (rc == RAVEL_OK)
            rc = ravel_iter_status(it);
        if (rc)
            die("randomtransaction: summing set %u: %s: %s", set + 1,
                ravel_errstr(rc), ravel_errmsg());
    }
    ravel_iter_free(it);
}

/* Before the run: each set's sum (NULL with plain batches, nothing to
** verify then, as in db_bench). */
static uint64_t *rt_verify_begin(const struct bench *b)
{
    _Atomic uint64_t *counts[] = {&rt_committed_incr, &rt_total_ops,
                                  &rt_total_rollbacks, &rt_total_prepared,
                                  &rt_total_conflicts,
                                  &rt_total_timeouts, &rt_total_deadlocks};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
        atomic_store_explicit(counts[i], 0, memory_order_relaxed);
    if (b->ndbs > 1)
        die("randomtransaction: not with --num_multi_db (db_bench refuses "
            "it too)");
    if (rt_mode_of_flags() == RT_PLAIN)
        return NULL;
    uint64_t *before = calloc((size_t)FLAGS.transaction_sets, sizeof *before);
    if (!before)
        die("out of memory");
    rt_sums(b->dbs[0], before);
    return before;
}

/* After the run: db_bench's RandomTransactionVerify, each set's sum grown
** by the committed increments.  Frees BEFORE; exits 1 on a failure. */
/* The counts of all threads: db_bench's message is the first thread's. */
static void rt_print_totals(void)
{
    uint64_t ops = atomic_load(&rt_total_ops);
    uint64_t conflicts = atomic_load(&rt_total_conflicts);
    uint64_t timeouts = atomic_load(&rt_total_timeouts);
    uint64_t deadlocks = atomic_load(&rt_total_deadlocks);
    uint64_t aborts = conflicts + timeouts + deadlocks;
    printf("randomtransaction : all threads: %" PRIu64 " operations, %"
           PRIu64 " aborts (%.4f per operation: %" PRIu64 " conflicts, %"
           PRIu64 " lock timeouts, %" PRIu64 " deadlocks), %" PRIu64
           " prepared, %" PRIu64 " rolled back by choice\n", ops, aborts,
           ops ? (double)aborts / (double)ops : 0.0, conflicts, timeouts,
           deadlocks, atomic_load(&rt_total_prepared),
           atomic_load(&rt_total_rollbacks));
}

static void rt_verify_end(const struct bench *b, uint64_t *before)
{
    if (rt_mode_of_flags() != RT_PLAIN)
        rt_print_totals();
    if (atomic_load_explicit(&rt_prepare_refused, memory_order_relaxed))
        printf("randomtransaction: transactions committed without prepare: "
               "%s\n", rt_prepare_refusal);
    if (!before) {
        printf("RandomTransactionVerify skipped: plain batches, not "
               "transactions (--transaction_db and "
               "--optimistic_transaction_db are false), as db_bench\n");
        return;
    }
    uint64_t *after = calloc((size_t)FLAGS.transaction_sets, sizeof *after);
    uint64_t want = atomic_load_explicit(&rt_committed_incr,
                                         memory_order_relaxed);
    if (!after)
        die("out of memory");
    rt_sums(b->dbs[0], after);
    for (unsigned set = 0; set < (unsigned)FLAGS.transaction_sets; set++) {
        if (after[set] - before[set] == want)
            continue;
        printf("RandomTransactionVerify found inconsistent totals: Set[%u] "
               "was %" PRIu64 ", is %" PRIu64 ", the committed transactions "
               "added %" PRIu64 "\n", set + 1, before[set], after[set], want);
        printf("RandomTransactionVerify FAILED!!\n");
        fflush(stdout);
        exit(1);
    }
    printf("RandomTransactionVerify Success.\n");
    free(after);
    free(before);
}

/* -------------------------------------------------------------- reporter */

/* db_bench's ReporterAgent (--report_interval_seconds, --report_file):
** while a threaded benchmark runs, a thread of its own appends one line
** per interval to the report file, which each such benchmark starts
** afresh (so, as with db_bench, the file holds the last one's report):
**
**     secs_elapsed,interval_qps[,interval_qps_db0,interval_qps_db1,...]
**
** secs_elapsed is the time since the benchmark started, rounded to whole
** seconds; interval_qps is, as in db_bench despite its name, the number of
** operations finished during the interval (ops/s with an interval of one
** second).  With --num_multi_db there is one more column per database, the
** operations finished on database i, so that a plot can draw one line per
** database (scripts/plot-report.sh).  Intervals are timed from the start,
** not from the previous line, so they do not drift. */
struct reporter {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* CLOCK_MONOTONIC; signalled when stop is set */
    int stop;               /* under mu */
    FILE *f;                /* the reporter thread's once it runs */
    int ndbs;
    _Atomic uint64_t *ops;  /* per database, added to by finished_ops */
    uint64_t *last, *cur;   /* per database, the reporter thread's: the
                            ** counts at the last line and now */
    double start;           /* micros */
};

/* Appends the line of the interval ending at NOW (micros).  Returns
** nonzero if the file could not be written. */
static int reporter_write_line(struct reporter *r, double now)
{
    uint64_t total = 0;
    for (int i = 0; i < r->ndbs; i++) {
        /* relaxed: a sample of counts; an operation counted late is in
        ** the next line */
        r->cur[i] = atomic_load_explicit(&r->ops[i], memory_order_relaxed);
        total += r->cur[i] - r->last[i];
    }
    fprintf(r->f, "%.0f,%" PRIu64, floor((now - r->start + 5e5) / 1e6), total);
    for (int i = 0; r->ndbs > 1 && i < r->ndbs; i++)
        fprintf(r->f, ",%" PRIu64, r->cur[i] - r->last[i]);
    fputc('\n', r->f);
    memcpy(r->last, r->cur, (size_t)r->ndbs * sizeof *r->last);
    return fflush(r->f) != 0 || ferror(r->f);
}

static void *reporter_run(void *arg)
{
    struct reporter *r = arg;
    double interval = (double)FLAGS.report_interval_seconds * 1e6;
    pthread_mutex_lock(&r->mu);
    for (uint64_t k = 1; !r->stop; k++) {
        double due = r->start + (double)k * interval;
        struct timespec ts = {(time_t)(due / 1e6),
                              (long)(fmod(due, 1e6) * 1e3)};
        while (!r->stop && now_micros() < due)
            pthread_cond_timedwait(&r->cv, &r->mu, &ts);
        if (r->stop)
            break;
        pthread_mutex_unlock(&r->mu);
        int bad = reporter_write_line(r, now_micros());
        pthread_mutex_lock(&r->mu);
        if (bad) {
            fprintf(stderr, "ravel-bench: cannot write to %s (%s), stopping "
                    "the report\n", FLAGS.report_file, strerror(errno));
            break;
        }
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

/* Starts R for NDBS databases, or leaves it unused (r->f NULL) without
** --report_interval_seconds. */
static void reporter_start(struct reporter *r, int ndbs)
{
    memset(r, 0, sizeof *r);
    if (FLAGS.report_interval_seconds <= 0)
        return;
    r->ndbs = ndbs;
    r->ops = calloc((size_t)ndbs, sizeof *r->ops);
    r->last = calloc((size_t)ndbs, sizeof *r->last);
    r->cur = calloc((size_t)ndbs, sizeof *r->cur);
    if (!r->ops || !r->last || !r->cur)
        die("out of memory");
    if (!(r->f = fopen(FLAGS.report_file, "w")))
        die("--report_file=%s: %s", FLAGS.report_file, strerror(errno));
    fprintf(r->f, "secs_elapsed,interval_qps");
    for (int i = 0; ndbs > 1 && i < ndbs; i++)
        fprintf(r->f, ",interval_qps_db%d", i);
    fputc('\n', r->f);
    fflush(r->f);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&r->mu, NULL);
    r->start = now_micros();
    int err = pthread_create(&r->thread, NULL, reporter_run, r);
    if (err)
        die("pthread_create: %s", strerror(err));
}

/* The count thread TID's operations go to (NULL without a report). */
static _Atomic uint64_t *reporter_counter(struct reporter *r, int tid)
{
    return r->f ? &r->ops[tid % r->ndbs] : NULL;
}

static void reporter_stop(struct reporter *r)
{
    if (!r->f)
        return;
    pthread_mutex_lock(&r->mu);
    r->stop = 1;
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
    pthread_join(r->thread, NULL);
    if (fclose(r->f) != 0)
        die("--report_file=%s: %s", FLAGS.report_file, strerror(errno));
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r->ops);
    free(r->last);
    free(r->cur);
}

/* --------------------------------------------------------------- running */

struct thread_start {
    struct bench *b;
    struct thread *t;
};

static void *thread_run(void *arg)
{
    struct thread_start *s = arg;
    struct stats *st = &s->t->st;
    pthread_barrier_wait(&s->b->barrier);
    st->start = st->last_op = st->interval_start = now_micros();
    st->next_progress = progress_step(0);
    st->next_interval_check =
        FLAGS.stats_interval > 0 ? (uint64_t)FLAGS.stats_interval : 1;
    s->b->fn(s->b, s->t);
    st->finish = now_micros();
    /* relaxed: a count (see struct bench) */
    atomic_fetch_add_explicit(s->b->threads_done, 1, memory_order_relaxed);
    return NULL;
}

/* db_bench's seed: threads of every benchmark get seed + 1, + 2, ...
** numbered across the whole run, so a read after a fill draws new keys. */
static uint64_t seed_base;
static uint64_t threads_started;

/* Runs B on --threads threads and prints db_bench's result line. */
static void run_threads(struct bench *b)
{
    int n = (int)FLAGS.threads + (b->extra_writer ? 1 : 0);
    _Atomic int threads_done = 0;
    struct reporter rep;
    b->nthreads = n;
    b->threads_done = &threads_done;
    struct thread *th = calloc((size_t)n, sizeof *th);
    struct thread_start *starts = calloc((size_t)n, sizeof *starts);
    if (!th || !starts)
        die("out of memory");
    pthread_barrier_init(&b->barrier, NULL, (unsigned)n);
    reporter_start(&rep, b->ndbs);
    for (int i = 0; i < n; i++) {
        th[i].tid = i;
        th[i].rng = seed_base + ++threads_started;
        hist_clear(&th[i].st.hist);
        th[i].st.report_ops = reporter_counter(&rep, i);
        th[i].st.tid = i;
        th[i].st.db = thread_db(b, &th[i]);
        starts[i] = (struct thread_start){b, &th[i]};
        int err = pthread_create(&th[i].handle, NULL, thread_run, &starts[i]);
        if (err)
            die("pthread_create: %s", strerror(err));
    }
    for (int i = 0; i < n; i++)
        pthread_join(th[i].handle, NULL);
    pthread_barrier_destroy(&b->barrier);
    reporter_stop(&rep);
    if (show_progress) /* rub out the progress line */
        fprintf(stderr, "\r%60s\r", "");

    /* Merge as db_bench's Stats::Merge: the earliest start, the latest
    ** finish, the sum of the threads' times, the first thread's message;
    ** threads excluded from the merge (readwhilewriting's writer) left
    ** out. */
    int first = 0;
    while (first < n - 1 && th[first].st.exclude_from_merge)
        first++;
    struct stats all = th[first].st;
    double seconds = th[first].st.finish - th[first].st.start;
    for (int i = first + 1; i < n; i++) {
        struct stats *st = &th[i].st;
        if (st->exclude_from_merge)
            continue;
        if (st->start < all.start)
            all.start = st->start;
        if (st->finish > all.finish)
            all.finish = st->finish;
        all.done += st->done;
        all.bytes += st->bytes;
        seconds += st->finish - st->start;
        hist_merge(&all.hist, &st->hist);
    }
    if (b->fn == bench_write && b->key_range != FLAGS.num) {
        size_t len = strlen(all.message);
        snprintf(all.message + len, sizeof all.message - len,
                 "%s(%" PRId64 " ops)", len ? " " : "", b->key_range);
    }

    /* db_bench's Stats::Report. */
    if (all.done < 1)
        all.done = 1;
    double elapsed = (all.finish - all.start) * 1e-6;
    if (elapsed <= 0)
        elapsed = 1e-9;
    char extra[320] = "";
    if (all.bytes > 0)
        snprintf(extra, sizeof extra, "%6.1f MB/s", (double)all.bytes / 1048576.0 / elapsed);
    if (all.message[0]) {
        size_t len = strlen(extra);
        snprintf(extra + len, sizeof extra - len, "%s%s", len ? " " : "", all.message);
    }
    printf("%-12s : %11.3f micros/op %ld ops/sec %.3f seconds %" PRIu64
           " operations;%s%s\n",
           b->name, seconds / (double)all.done, (long)((double)all.done / elapsed),
           elapsed, all.done, extra[0] ? " " : "", extra);
    if (FLAGS.histogram)
        hist_print(&all.hist, b->op);
    fflush(stdout);
    free(th);
    free(starts);
}

/* ---------------------------------------------------------------- the db */

/* The databases: one at --db, or with --num_multi_db=N (N >= 2) N at
** --db/0 .. --db/N-1, db_bench's paths.  All opened with the same options
** (and so, with --use_shared_write_controller, the same controller). */
static ravel_options *open_opts;
static ravel_db **dbs;
static char **db_paths;
static int ndbs;

static void db_paths_init(void)
{
    ndbs = FLAGS.num_multi_db > 1 ? (int)FLAGS.num_multi_db : 1;
    dbs = calloc((size_t)ndbs, sizeof *dbs);
    db_paths = calloc((size_t)ndbs, sizeof *db_paths);
    if (!dbs || !db_paths)
        die("out of memory");
    for (int i = 0; i < ndbs; i++) {
        size_t len = strlen(FLAGS.db) + 24;
        if (!(db_paths[i] = malloc(len)))
            die("out of memory");
        if (ndbs == 1)
            snprintf(db_paths[i], len, "%s", FLAGS.db);
        else
            snprintf(db_paths[i], len, "%s%s%d", FLAGS.db,
                     FLAGS.db[strlen(FLAGS.db) - 1] == '/' ? "" : "/", i);
    }
}

static void db_open(void)
{
    /* ravel_open makes one level of directory: the parent of the N. */
    if (ndbs > 1 && !FLAGS.use_existing_db && mkdir(FLAGS.db, 0755) != 0 &&
        errno != EEXIST)
        die("mkdir %s: %s", FLAGS.db, strerror(errno));
    for (int i = 0; i < ndbs; i++) {
        int rc = ravel_open(db_paths[i], open_opts, &dbs[i]);
        if (rc && FLAGS.use_existing_db)
            die("--use_existing_db: cannot open the database %s: %s: %s",
                db_paths[i], ravel_errstr(rc), ravel_errmsg());
        if (rc)
            die("ravel_open %s: %s: %s", db_paths[i], ravel_errstr(rc),
                ravel_errmsg());
    }
}

static void db_close(void)
{
    for (int i = 0; i < ndbs; i++) {
        int rc = ravel_close(dbs[i]);
        if (rc)
            die("ravel_close %s: %s: %s", db_paths[i], ravel_errstr(rc),
                ravel_errmsg());
        dbs[i] = NULL;
    }
}

/* Deletes the database PATH, as db_bench's DestroyDB: ravel_destroy takes
** its LOCK, so a database another process has open is refused, not wiped
** under it, and removes only ravel's files (a mistyped --db deletes no
** file of anyone else's). */
static void db_destroy_one(const char *path)
{
    int rc = ravel_destroy(path);
    if (rc == RAVEL_LOCKED)
        die("not removing the database %s: it is open in another process "
            "(%s); close it, or choose another --db", path, ravel_errmsg());
    if (rc)
        die("removing the database %s: %s: %s", path, ravel_errstr(rc),
            ravel_errmsg());
}

/* Removes every database; with --num_multi_db their parent --db stays. */
static void db_destroy(void)
{
    for (int i = 0; i < ndbs; i++)
        db_destroy_one(db_paths[i]);
}

/* --use_shared_write_controller: one controller for every database opened
** with OPTS, delaying writes at first at their delayed_write_rate. */
static void apply_shared_write_controller(ravel_options *opts)
{
    char *text = NULL;
    ravel_write_controller *wc = NULL;
    if (!FLAGS.use_shared_write_controller)
        return;
    if (ravel_options_get(opts, "delayed_write_rate", &text) != RAVEL_OK)
        die("delayed_write_rate: %s", ravel_errmsg());
    uint64_t rate = strtoull(text, NULL, 10);
    int rc = ravel_write_controller_new(rate, &wc);
    if (rc)
        die("ravel_write_controller_new(%" PRIu64 "): %s: %s", rate,
            ravel_errstr(rc), ravel_errmsg());
    rc = ravel_options_set_write_controller(opts, wc);
    if (rc)
        die("ravel_options_set_write_controller: %s: %s", ravel_errstr(rc),
            ravel_errmsg());
    ravel_write_controller_free(wc); /* the options hold their reference */
    strlist_add(&engine_opts_given, "write_controller", "shared");
    ravel_free(text);
}

/* --------------------------------------------------------------- header */

static void print_cpu(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512], model[256] = "", cache[64] = "";
    int ncpu = 0;
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        char *val = colon + 1 + (colon[1] == ' ');
        val[strcspn(val, "\n")] = '\0';
        if (strncmp(line, "processor", 9) == 0)
            ncpu++;
        else if (strncmp(line, "model name", 10) == 0)
            snprintf(model, sizeof model, "%s", val);
        else if (strncmp(line, "cache size", 10) == 0)
            snprintf(cache, sizeof cache, "%s", val);
    }
    fclose(f);
    printf("CPU:        %d * %s\n", ncpu, model);
    printf("CPUCache:   %s\n", cache);
}

static void print_header(void)
{
    time_t now = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%a %b %e %H:%M:%S %Y", localtime(&now));
    printf("ravel:      version %s\n", ravel_libversion());
    printf("Date:       %s\n", date);
    print_cpu();
    printf("Keys:       %" PRId64 " bytes each\n", FLAGS.key_size);
    printf("Values:     %" PRId64 " bytes each (%" PRId64 " bytes after compression)\n",
           FLAGS.value_size, (int64_t)(FLAGS.value_size * FLAGS.compression_ratio + 0.5));
    printf("Entries:    %" PRId64 "\n", FLAGS.num);
    printf("RawSize:    %.1f MB (estimated)\n",
           (double)(FLAGS.key_size + FLAGS.value_size) * (double)FLAGS.num / 1048576.0);
    printf("Threads:    %" PRId64 " (batch_size %" PRId64 ")\n", FLAGS.threads,
           FLAGS.batch_size);
    printf("Writes:     %s%s\n", FLAGS.disable_wal ? "no WAL" : "WAL",
           FLAGS.sync ? ", sync" : "");
    if (ndbs > 1)
        printf("Databases:  %d (%s .. %s), write controller %s\n", ndbs,
               db_paths[0], db_paths[ndbs - 1],
               FLAGS.use_shared_write_controller ? "shared" : "one each");
    if (FLAGS.report_interval_seconds > 0)
        printf("Report:     %s every %" PRId64 " s\n", FLAGS.report_file,
               FLAGS.report_interval_seconds);
    strlist_print("Options:    ", &engine_opts_given);
    strlist_print("as ravel does anyway: ", &as_ravel_does);
    strlist_print("ignored (not built yet): ", &ignored_flags);
    printf("------------------------------------------------\n");
}

/* ----------------------------------------------------------------- main */

/* Benchmarks that are not run on threads: they act once and print. */
enum bench_kind {
    BENCH_THREADS, BENCH_STATS, BENCH_FLUSH, BENCH_COMPACT, BENCH_WAIT,
    BENCH_PROPERTY, BENCH_MEMSTATS
};

/* Each benchmark: how it runs (KIND), and for those on threads, what its
** threads do (FN) on which keys.  KEY_DIV divides --num for the key
** range (fillsync, fill100K: num/1000, as db_bench's num_ /= 1000;
** readhot: (num + 99) / 100, LevelDB's hot 1%), KEY_EXTRA lengthens the
** keys read (readmissing: one byte, so no key read was written),
** VALUE_SIZE replaces --value_size (fill100K). */
static const struct {
    const char *name;
    bench_fn fn;
    const char *op;
    int fresh_db, sync, random_keys, extra_writer;
    enum bench_kind kind;
    int key_div, key_extra;
    int64_t value_size;
    const char *property; /* BENCH_PROPERTY: the one it prints */
} bench_table[] = {
    {"fillseq", bench_write, "write", 1, 0, 0, 0, BENCH_THREADS, 1, 0, 0, NULL},
    {"fillrandom", bench_write, "write", 1, 0, 1, 0, BENCH_THREADS, 1, 0, 0, NULL},
    {"overwrite", bench_write, "write", 0, 0, 1, 0, BENCH_THREADS, 1, 0, 0, NULL},
    {"fillsync", bench_write, "write", 1, 1, 1, 0, BENCH_THREADS, 1000, 0, 0, NULL},
    {"fill100K", bench_write, "write", 1, 0, 1, 0, BENCH_THREADS, 1000, 0,
     100000, NULL},
    {"deleteseq", bench_delete, "delete", 0, 0, 0, 0, BENCH_THREADS, 1, 0, 0, NULL},
    {"deleterandom", bench_delete, "delete", 0, 0, 1, 0, BENCH_THREADS, 1, 0, 0,
     NULL},
    {"readrandom", bench_readrandom, "read", 0, 0, 1, 0, BENCH_THREADS, 1, 0, 0,
     NULL},
    {"readmissing", bench_readrandom, "read", 0, 0, 1, 0, BENCH_THREADS, 1, 1, 0,
     NULL},
    {"readhot", bench_readrandom, "read", 0, 0, 1, 0, BENCH_THREADS, -100, 0, 0,
     NULL},
    {"readseq", bench_readseq, "read", 0, 0, 0, 0, BENCH_THREADS, 1, 0, 0, NULL},
    {"readreverse", bench_readreverse, "read", 0, 0, 0, 0, BENCH_THREADS, 1, 0,
     0, NULL},
    {"seekrandom", bench_seekrandom, "seek", 0, 0, 1, 0, BENCH_THREADS, 1, 0, 0,
     NULL},
    {"multireadrandom", bench_multireadrandom, "read", 0, 0, 1, 0,
     BENCH_THREADS, 1, 0, 0, NULL},
    {"updaterandom", bench_updaterandom, "update", 0, 0, 1, 0, BENCH_THREADS,
     1, 0, 0, NULL},
    {"readrandomwriterandom", bench_readrandomwriterandom, "operation", 0, 0,
     1, 0, BENCH_THREADS, 1, 0, 0, NULL},
    {"readwhilewriting", bench_readwhilewriting, "read", 0, 0, 1, 1,
     BENCH_THREADS, 1, 0, 0, NULL},
    {"seekrandomwhilewriting", bench_seekrandomwhilewriting, "seek", 0, 0, 1,
     1, BENCH_THREADS, 1, 0, 0, NULL},
    {"mixgraph", bench_mixgraph, "operation", 0, 0, 1, 0, BENCH_THREADS, 1, 0,
     0, NULL},
    {"randomtransaction", bench_randomtransaction, "transaction", 0, 0, 1, 0,
     BENCH_THREADS, 1, 0, 0, NULL},
    {"stats", NULL, NULL, 0, 0, 0, 0, BENCH_STATS, 1, 0, 0, NULL},
    {"levelstats", NULL, NULL, 0, 0, 0, 0, BENCH_PROPERTY, 1, 0, 0,
     "ravel.levelstats"},
    {"sstables", NULL, NULL, 0, 0, 0, 0, BENCH_PROPERTY, 1, 0, 0,
     "ravel.sstables"},
    {"memstats", NULL, NULL, 0, 0, 0, 0, BENCH_MEMSTATS, 1, 0, 0, NULL},
    {"flush", NULL, NULL, 0, 0, 0, 0, BENCH_FLUSH, 1, 0, 0, NULL},
    {"compact", NULL, NULL, 0, 0, 0, 0, BENCH_COMPACT, 1, 0, 0, NULL},
    {"compactall", NULL, NULL, 0, 0, 0, 0, BENCH_COMPACT, 1, 0, 0, NULL},
    {"waitforcompaction", NULL, NULL, 0, 0, 0, 0, BENCH_WAIT, 1, 0, 0, NULL},
};

static int find_bench(const char *name)
{
    for (size_t i = 0; i < sizeof bench_table / sizeof *bench_table; i++)
        if (strcmp(bench_table[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* The ravel.stats property of DB, to OUT. */
static void print_stats_of(ravel_db *db, FILE *out)
{
    char *text = NULL;
    int rc = ravel_property(db, "ravel.stats", &text);
    if (rc)
        die("ravel_property ravel.stats: %s: %s", ravel_errstr(rc),
            ravel_errmsg());
    fprintf(out, "%s%s", text,
            text[0] && text[strlen(text) - 1] != '\n' ? "\n" : "");
    ravel_free(text);
}

/* 1 when the stats were printed and no benchmark ran since: --statistics
** then does not print the same text a second time at the end. */
static int stats_current;

static void print_stats(void)
{
    for (int i = 0; i < ndbs; i++) {
        if (ndbs > 1)
            printf("ravel.stats of %s:\n", db_paths[i]);
        else
            printf("ravel.stats:\n");
        print_stats_of(dbs[i], stdout);
    }
    fflush(stdout);
    stats_current = 1;
}

/* db_bench's flush: the memtables to table files, waiting for it. */
static void flush_memtable(void)
{
    for (int i = 0; i < ndbs; i++) {
        int rc = ravel_flush(dbs[i], 0);
        if (rc)
            die("ravel_flush %s: %s: %s", db_paths[i], ravel_errstr(rc),
                ravel_errmsg());
    }
    printf("flush memtable\n");
    fflush(stdout);
}

/* db_bench's levelstats and sstables: the property NAME of each
** database, as db_bench prints rocksdb.levelstats and rocksdb.sstables. */
static void print_property(const char *name)
{
    for (int i = 0; i < ndbs; i++) {
        char *text = NULL;
        int rc = ravel_property(dbs[i], name, &text);
        if (rc)
            die("ravel_property %s: %s: %s", name, ravel_errstr(rc),
                ravel_errmsg());
        if (ndbs > 1)
            printf("%s of %s:\n", name, db_paths[i]);
        printf("%s%s\n", text,
               text[0] && text[strlen(text) - 1] != '\n' ? "\n" : "");
        ravel_free(text);
    }
    fflush(stdout);
}

/* db_bench's memstats: RocksDB's six memtable properties, under ravel's
** names; the ones ravel does not keep are said to be missing. */
static void print_memstats(void)
{
    static const char *const names[] = {
        "num-immutable-mem-table", "cur-size-active-mem-table",
        "cur-size-all-mem-tables", "size-all-mem-tables",
        "num-entries-active-mem-table", "num-entries-imm-mem-tables",
    };
    for (int i = 0; i < ndbs; i++) {
        if (ndbs > 1)
            printf("memstats of %s:\n", db_paths[i]);
        for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
            char name[128], *text = NULL;
            snprintf(name, sizeof name, "ravel.%s", names[k]);
            if (ravel_property(dbs[i], name, &text) == RAVEL_OK)
                printf("%s: %s\n", name, text);
            else
                printf("%s: (ravel keeps no such count)\n", name);
            ravel_free(text);
        }
        printf("\n");
    }
    fflush(stdout);
}

/* db_bench's compact and compactall: each database compacted whole, down
** to its last level (ravel_compact_range from the first key to the last),
** one after the other; the result line counts one operation per database.
** (db_bench's compact picks one database of --num_multi_db at random and
** compactall prints no line; here both compact all and print one.) */
static void compact_all(const char *name)
{
    double start = now_micros();
    for (int i = 0; i < ndbs; i++) {
        int rc = ravel_compact_range(dbs[i], NULL, 0, NULL, 0);
        if (rc)
            die("ravel_compact_range %s: %s: %s", db_paths[i],
                ravel_errstr(rc), ravel_errmsg());
    }
    double micros = now_micros() - start;
    if (micros <= 0)
        micros = 1e-3;
    printf("%-12s : %11.3f micros/op %ld ops/sec %.3f seconds %d "
           "operations;\n", name, micros / ndbs,
           (long)(ndbs / (micros * 1e-6)), micros * 1e-6, ndbs);
    fflush(stdout);
}

/* The two counts write amplification is the ratio of, as the library
** keeps them (ravel.stats' "write amplification:" line, the one home of
** the rule): bytes flushes and compactions wrote to table files, and bytes
** written by users -- each batch as the engine counts it, its keys and
** values with their tags, lengths and header, RocksDB's "ingest" (its
** BYTES_WRITTEN).  The WAL is not counted, as in RocksDB's W-Amp: its
** bytes are the "wal:" line's.  Summed over the databases; KNOWN is 0 if
** the stats do not report them. */
struct wamp {
    uint64_t table_bytes, user_bytes;
    int known;
};

static struct wamp engine_wamp(void)
{
    struct wamp w = {0, 0, 1};
    for (int i = 0; i < ndbs && w.known; i++) {
        char *text = NULL;
        unsigned long long written, user;
        if (ravel_property(dbs[i], "ravel.stats", &text) != RAVEL_OK)
            die("ravel_property ravel.stats: %s", ravel_errmsg());
        const char *line = strstr(text, "write amplification: ");
        if (line && sscanf(line, "write amplification: %*f (%llu bytes "
                           "written by flushes and compactions / %llu bytes "
                           "written by users", &written, &user) == 2) {
            w.table_bytes += written;
            w.user_bytes += user;
        } else {
            w.known = 0;
        }
        ravel_free(text);
    }
    return w;
}

/* The engine's counts when the databases were last opened:
** waitforcompaction's write amplification is since then. */
static struct wamp wamp_at_open;

static void note_db_opened(void)
{
    wamp_at_open = engine_wamp();
}

/* "write amplification 0.68 (N bytes written by flushes and compactions /
** M bytes written by users)" for what happened since BEFORE, in the words
** and with the precision of ravel.stats: after a benchmark on a fresh
** database, the same text as its line.  Nothing if no user wrote. */
static int print_wamp_since(struct wamp before)
{
    struct wamp now = engine_wamp();
    uint64_t table = now.table_bytes - before.table_bytes;
    uint64_t user = now.user_bytes - before.user_bytes;
    if (!now.known || !before.known || user == 0)
        return 0;
    printf("write amplification %.2f (%" PRIu64 " bytes written by flushes "
           "and compactions / %" PRIu64 " bytes written by users)",
           (double)table / (double)user, table, user);
    return 1;
}

/* After a benchmark: its write amplification, from the engine's counts
** at its start (BEFORE) to now.  Flushes and compactions still running
** when the benchmark ends count towards the next one (waitforcompaction
** waits for them and counts them). */
static void print_write_amplification(const char *name, struct wamp before)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%-12s : ", name);
    struct wamp now = engine_wamp();
    if (!now.known || !before.known || now.user_bytes == before.user_bytes)
        return;
    printf("%s", prefix);
    print_wamp_since(before);
    printf("\n");
    fflush(stdout);
}

static uint64_t int_property(ravel_db *d, const char *name)
{
    char *text = NULL;
    int rc = ravel_property(d, name, &text);
    if (rc)
        die("ravel_property %s: %s: %s", name, ravel_errstr(rc),
            ravel_errmsg());
    uint64_t v = strtoull(text, NULL, 10);
    ravel_free(text);
    return v;
}

/* 1 while database D has a memtable waiting for its flush, or a compaction
** running or (unless automatic compactions are off) due. */
static int background_work_left(ravel_db *d, int auto_compactions)
{
    return int_property(d, "ravel.num-immutable-mem-table") > 0 ||
           int_property(d, "ravel.num-running-compactions") > 0 ||
           (auto_compactions &&
            int_property(d, "ravel.compaction-pending") > 0);
}

/* db_bench's waitforcompaction: returns once no database has background
** work left, polling every 100 ms (db_bench sleeps 10 s between looks).
** Then prints the write amplification of everything put since the
** databases were opened, the work just waited for included. */
static void wait_for_compaction(void)
{
    char *off = NULL;
    if (ravel_options_get(open_opts, "disable_auto_compactions", &off))
        die("disable_auto_compactions: %s", ravel_errmsg());
    int auto_compactions = strcmp(off, "true") != 0;
    ravel_free(off);
    double start = now_micros();
    for (int i = 0; i < ndbs; i++)
        while (background_work_left(dbs[i], auto_compactions))
            nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    printf("%-12s : %.3f seconds waited", "waitforcompaction",
           (now_micros() - start) / 1e6);
    printf("; since open: ");
    if (!print_wamp_since(wamp_at_open))
        printf("nothing written");
    printf("\n");
    fflush(stdout);
}

/* randomtransaction's flags (db_bench aborts on --transaction_sets
** outside 1 .. 9999 too). */
static void check_transaction_flags(void)
{
    if (FLAGS.transaction_sets < 1 || FLAGS.transaction_sets > 9999)
        die("--transaction_sets=%" PRId64 ": must be 1 .. 9999 (a set's "
            "number is the key's first four digits)", FLAGS.transaction_sets);
    if (FLAGS.transaction_db && FLAGS.optimistic_transaction_db)
        die("--transaction_db and --optimistic_transaction_db: choose one "
            "(pessimistic or optimistic transactions)");
    if (FLAGS.transaction_sleep < 0)
        die("--transaction_sleep=%" PRId64 ": must not be negative (a "
            "time)", FLAGS.transaction_sleep);
    if (FLAGS.disable_wal && strstr(FLAGS.benchmarks, "randomtransaction") &&
        (FLAGS.transaction_db || FLAGS.optimistic_transaction_db))
        die("--disable_wal with transactions: a transaction commits through "
            "the WAL (ravel_txn_begin takes no RAVEL_NO_WAL)");
}

/* What db_bench takes and ravel-bench cannot run is refused with the
** reason; what db_bench reads as "off" or clamps (negative intervals and
** seek counts, compression ratios outside (0, 1]) is taken as db_bench
** reads it. */
static void check_flags(void)
{
    if (FLAGS.num < 1)
        die("--num=%" PRId64 ": must be at least 1 (keys are drawn from "
            "[0, num); db_bench divides by it too)", FLAGS.num);
    if (FLAGS.threads < 1 || FLAGS.threads > 65536)
        die("--threads=%" PRId64 ": must be 1 .. 65536 (each is a thread "
            "of its own)", FLAGS.threads);
    if (FLAGS.batch_size < 1)
        die("--batch_size=%" PRId64 ": must be at least 1 (each write or "
            "multi-get holds this many keys)", FLAGS.batch_size);
    if (FLAGS.key_size < 1 || FLAGS.key_size > (int64_t)RAVEL_MAX_KEY_SIZE)
        die("--key_size=%" PRId64 ": must be 1 .. %u (RAVEL_MAX_KEY_SIZE)",
            FLAGS.key_size, RAVEL_MAX_KEY_SIZE);
    if (FLAGS.value_size < 0 || FLAGS.value_size > (int64_t)RAVEL_MAX_VALUE_SIZE)
        die("--value_size=%" PRId64 ": must be 0 .. %u (RAVEL_MAX_VALUE_SIZE)",
            FLAGS.value_size, RAVEL_MAX_VALUE_SIZE);
    if (isnan(FLAGS.compression_ratio))
        die("--compression_ratio=nan: not a number");
    if (FLAGS.seek_nexts < 0)
        FLAGS.seek_nexts = 0; /* db_bench's loop runs no Next */
    if (FLAGS.duration < 0)
        die("--duration=%" PRId64 ": must not be negative (a time)",
            FLAGS.duration);
    if (FLAGS.ops_between_duration_checks < 1)
        die("--ops_between_duration_checks=%" PRId64 ": must be at least 1 "
            "(db_bench divides by it)", FLAGS.ops_between_duration_checks);
    if (FLAGS.num_multi_db < 0 || FLAGS.num_multi_db > 1024)
        die("--num_multi_db=%" PRId64 ": must be 0 .. 1024 (each database "
            "has threads and files of its own)", FLAGS.num_multi_db);
    if (FLAGS.num_multi_db > FLAGS.threads)
        die("--num_multi_db=%" PRId64 " with --threads=%" PRId64 ": thread i "
            "works on database i %% num_multi_db, so some databases would "
            "have no thread", FLAGS.num_multi_db, FLAGS.threads);
    if (FLAGS.stats_interval < 0)
        FLAGS.stats_interval = 0; /* db_bench: only > 0 sets it */
    if (FLAGS.stats_interval_seconds < 0)
        FLAGS.stats_interval_seconds = 0;
    if (FLAGS.report_interval_seconds < 0)
        FLAGS.report_interval_seconds = 0; /* db_bench: only > 0 reports */
    if (FLAGS.readwritepercent < 0 || FLAGS.readwritepercent > 100)
        die("--readwritepercent=%" PRId64 ": must be 0 .. 100 (a "
            "percentage)", FLAGS.readwritepercent);
    if (FLAGS.mix_get_ratio < 0 || FLAGS.mix_put_ratio < 0 ||
        FLAGS.mix_seek_ratio < 0 ||
        FLAGS.mix_get_ratio + FLAGS.mix_put_ratio + FLAGS.mix_seek_ratio <= 0)
        die("--mix_get_ratio=%g --mix_put_ratio=%g --mix_seek_ratio=%g: "
            "shares must not be negative, and one must be above 0",
            FLAGS.mix_get_ratio, FLAGS.mix_put_ratio, FLAGS.mix_seek_ratio);
    if (FLAGS.mix_max_scan_len < 1 || FLAGS.mix_max_value_size < 1)
        die("--mix_max_scan_len=%" PRId64 " --mix_max_value_size=%" PRId64
            ": must be at least 1 (mixgraph takes lengths modulo them)",
            FLAGS.mix_max_scan_len, FLAGS.mix_max_value_size);
    check_transaction_flags();
    if (FLAGS.sine_mix_rate && FLAGS.sine_mix_rate_interval_milliseconds < 1)
        die("--sine_mix_rate_interval_milliseconds=%" PRId64 ": must be at "
            "least 1", FLAGS.sine_mix_rate_interval_milliseconds);
}

/* --use_existing_db: the database must exist.  A mistyped --db must not
** measure an empty database made on the spot (db_bench, whose
** create_if_missing is always true, does exactly that: 0 of N found). */
static void apply_use_existing_db(ravel_options *opts)
{
    if (FLAGS.use_existing_db &&
        ravel_options_set(opts, "create_if_missing", "false") != RAVEL_OK)
        die("create_if_missing: %s", ravel_errmsg());
}

/* --max_background_compactions, --max_background_flushes: RocksDB's
** GetBGJobLimits gives max(1, compactions) compaction threads and
** max(1, flushes) flush threads when either is set (not -1), whatever
** max_background_jobs says; ravel's threads run both, so
** max_background_jobs is their sum. */
static void apply_background_limits(ravel_options *opts)
{
    int64_t c = FLAGS.max_background_compactions;
    int64_t f = FLAGS.max_background_flushes;
    if (c == -1 && f == -1)
        return;
    int64_t jobs = (c < 1 ? 1 : c) + (f < 1 ? 1 : f);
    /* ravel runs at most 64 background threads: more is read as 64, as
    ** RocksDB clamps its own thread counts */
    const int64_t most = 64;
    char value[32], why[200];
    snprintf(value, sizeof value, "%" PRId64, jobs > most ? most : jobs);
    if (ravel_options_set(opts, "max_background_jobs", value) != RAVEL_OK)
        die("--max_background_compactions=%" PRId64 " "
            "--max_background_flushes=%" PRId64 " (ravel's "
            "max_background_jobs=%s, their sum as RocksDB counts them): %s",
            c, f, value, ravel_errmsg());
    snprintf(why, sizeof why, "%s (from max_background_compactions=%" PRId64
             " and max_background_flushes=%" PRId64 ", as RocksDB counts "
             "threads%s)", value, c, f,
             jobs > most ? "; ravel runs at most 64" : "");
    strlist_add(&engine_opts_given, "max_background_jobs", why);
}

/* --transaction_db: randomtransaction's transactions are pessimistic,
** waiting --transaction_lock_timeout for a lock (db_bench's
** TransactionOptions::lock_timeout; ravel's option txn_lock_timeout).
** With --unordered_write=1, db_bench opens its TransactionDB with
** WritePrepared transactions, two_write_queues and
** skip_concurrency_control, the seed's setup for ordered unordered
** writes; ravel has the same ordering on its plain database. */
static void apply_transaction_db(ravel_options *opts)
{
    if (!FLAGS.transaction_db)
        return;
    char timeout[32], why[96];
    snprintf(timeout, sizeof timeout, "%" PRId64,
             FLAGS.transaction_lock_timeout);
    if (ravel_options_set(opts, "txn_lock_timeout", timeout) != RAVEL_OK)
        die("--transaction_lock_timeout=%s (ravel's txn_lock_timeout): %s",
            timeout, ravel_errmsg());
    snprintf(why, sizeof why, "%s (from transaction_lock_timeout)", timeout);
    strlist_add(&engine_opts_given, "txn_lock_timeout", why);
    char *unordered = NULL;
    if (ravel_options_get(opts, "unordered_write", &unordered) != RAVEL_OK)
        die("unordered_write: %s", ravel_errmsg());
    int on = strcmp(unordered, "true") == 0;
    ravel_free(unordered);
    if (!on)
        return;
    if (ravel_options_set(opts, "two_write_queues", "true") != RAVEL_OK ||
        ravel_options_set(opts, "write_policy", "write_prepared") !=
            RAVEL_OK)
        die("--transaction_db: %s", ravel_errmsg());
    strlist_add(&engine_opts_given, "two_write_queues", "true");
    strlist_add(&engine_opts_given, "write_policy", "write_prepared");
}

/* The default --db: db_bench's $TEST_TMPDIR/dbbench (creating
** $TEST_TMPDIR if needed), else a per-user directory under /tmp. */
static char *default_db_path(void)
{
    const char *tmp = getenv("TEST_TMPDIR");
    char path[4096];
    if (tmp && tmp[0]) {
        size_t len = strlen(tmp);
        while (len > 1 && tmp[len - 1] == '/')
            len--;
        snprintf(path, sizeof path, "%.*s", (int)len, tmp);
        /* db_bench creates its test directory; ravel_open makes one level. */
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            die("mkdir TEST_TMPDIR=%s: %s", path, strerror(errno));
        snprintf(path, sizeof path, "%.*s/dbbench", (int)len, tmp);
    } else {
        snprintf(path, sizeof path, "/tmp/ravelbench-%u", (unsigned)getuid());
    }
    return strdup(path);
}

int main(int argc, char **argv)
{
    flags_default = FLAGS;
    shell_close_stdout_at_exit("ravel-bench");
    int rc = ravel_options_new(&open_opts);
    if (rc)
        die("ravel_options_new: %s", ravel_errstr(rc));
    rc = ravel_options_set(open_opts, "create_if_missing", "true");
    if (rc)
        die("create_if_missing: %s", ravel_errmsg());
    parse_args(argc, argv, open_opts);
    check_flags();
    apply_use_existing_db(open_opts);
    apply_background_limits(open_opts);
    apply_transaction_db(open_opts);
    apply_shared_write_controller(open_opts);
    if ((!FLAGS.db || !FLAGS.db[0]) && !(FLAGS.db = default_db_path()))
        die("out of memory");
    db_paths_init();

    /* Check every benchmark name before running any. */
    char *list = strdup(FLAGS.benchmarks);
    if (!list)
        die("out of memory");
    for (char *save, *name = strtok_r(list, ",", &save); name;
         name = strtok_r(NULL, ",", &save))
        if (find_bench(name) < 0)
            die("unknown benchmark '%s'", name);
    free(list);

    if (FLAGS.seed == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        FLAGS.seed = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
        printf("Set seed to %" PRId64 " because --seed was 0\n", FLAGS.seed);
    }
    seed_base = (uint64_t)FLAGS.seed;
    show_progress = FLAGS.progress_reports && isatty(STDERR_FILENO);
    hist_limits_init();
    value_data_init();
    print_header();

    if (!FLAGS.use_existing_db)
        db_destroy();
    db_open();
    note_db_opened();

    list = strdup(FLAGS.benchmarks);
    if (!list)
        die("out of memory");
    for (char *save, *name = strtok_r(list, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        int i = find_bench(name);
        if (bench_table[i].kind != BENCH_STATS)
            stats_current = 0; /* whatever runs now changes them */
        if (bench_table[i].kind == BENCH_STATS) {
            print_stats();
            continue;
        }
        if (bench_table[i].kind == BENCH_FLUSH) {
            flush_memtable();
            continue;
        }
        if (bench_table[i].kind == BENCH_COMPACT) {
            compact_all(bench_table[i].name);
            continue;
        }
        if (bench_table[i].kind == BENCH_PROPERTY) {
            print_property(bench_table[i].property);
            continue;
        }
        if (bench_table[i].kind == BENCH_MEMSTATS) {
            print_memstats();
            continue;
        }
        if (bench_table[i].kind == BENCH_WAIT) {
            wait_for_compaction();
            continue;
        }
        int div = bench_table[i].key_div;
        struct bench b = {
            .name = bench_table[i].name,
            .fn = bench_table[i].fn,
            .op = bench_table[i].op,
            .fresh_db = bench_table[i].fresh_db,
            .sync = bench_table[i].sync,
            .random_keys = bench_table[i].random_keys,
            .extra_writer = bench_table[i].extra_writer,
            .key_range = div > 0 ? FLAGS.num / div
                                 : (FLAGS.num - div - 1) / -div,
            .key_size = FLAGS.key_size + bench_table[i].key_extra,
            .value_size = bench_table[i].value_size ? bench_table[i].value_size
                                                    : FLAGS.value_size,
        };
        if (b.key_size > (int64_t)RAVEL_MAX_KEY_SIZE)
            die("%s: reads keys of --key_size + 1 = %" PRId64 " bytes, more "
                "than RAVEL_MAX_KEY_SIZE (%u)", b.name, b.key_size,
                RAVEL_MAX_KEY_SIZE);
        if (b.fn == bench_mixgraph)
            mixgraph_model_init();
        if (b.key_range < 1)
            b.key_range = 1;
        if (b.fresh_db) {
            if (FLAGS.use_existing_db) {
                printf("%-12s : skipped (--use_existing_db is true)\n", b.name);
                continue;
            }
            db_close();
            db_destroy();
            db_open();
            note_db_opened();
        }
        printf("DB path: [%s]\n", FLAGS.db);
        fflush(stdout);
        b.dbs = dbs;
        b.ndbs = ndbs;
        struct wamp before = engine_wamp();
        uint64_t *rt_before = b.fn == bench_randomtransaction
                                  ? rt_verify_begin(&b) : NULL;
        run_threads(&b);
        if (b.fn == bench_randomtransaction)
            rt_verify_end(&b, rt_before);
        print_write_amplification(b.name, before);
        if (b.fn == bench_mixgraph)
            mg_model_free(&mixgraph_model);
    }
    free(list);

    if (FLAGS.statistics && !stats_current)
        print_stats();
    db_close();
    ravel_options_free(open_opts);
    return 0;
}
