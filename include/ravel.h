/*
** ravel.h -- the whole public interface of ravel, an embedded key-value
** storage engine.
**
** If a function, type or macro is not declared in this file, it is not part
** of ravel's published API.  Every handle is opaque: callers never depend on
** the layout of a ravel struct, so the library can grow without breaking
** binaries built against an older header.
**
** Conventions
**   - Every function that can fail returns an int result code (RAVEL_OK on
**     success).  On failure, ravel_errmsg() returns a human-readable message
**     for the calling thread naming what was wrong (the file, the offset, the
**     option, the errno); bindings read it with ravel_errmsg_r() inside the
**     same foreign call (see "For binding writers" below).  RAVEL_NOTFOUND
**     from ravel_get and ravel_get_into is an answer, not a failure: it
**     sets no message (ravel_errmsg still holds the previous one).
**   - Keys and values are byte strings with explicit lengths.  Empty keys
**     and empty values are allowed.  A NULL pointer is allowed only with a
**     zero length.
**   - Memory returned by ravel (ravel_get values, ravel_property text) is
**     owned by the caller and released with ravel_free().
**   - All functions taking a ravel_db are safe to call from many threads at
**     once.  A ravel_batch, ravel_iter or ravel_options object must be used
**     by one thread at a time.  A ravel_readoptions object may be used by
**     any number of reads at once while no thread changes it.
**
** Compatibility (the ABI policy; README.md "ABI and compatibility")
**   - Within a major version (libravel.so.0 now), a program built against
**     one release runs unchanged, without recompiling, against any later
**     one.  A minor release may ADD functions, options (ravel_options_set
**     names), properties, result codes and flags.  Callers must treat an
**     unknown result code as a failure (ravel_errstr names it "unknown
**     result code") and must not assume the list of properties or options
**     is closed.
**   - It NEVER changes or removes: a function's name, parameters or return
**     type; the value of a result code, flag or limit defined here; the
**     meaning of an existing option name or its default, except to fix a
**     bug named in the changelog; the layout of anything callers allocate
**     (they allocate nothing: every handle is opaque).
**   - On-disk formats never change without a new version number in the
**     file (docs/formats.md): a release reads every format an earlier
**     release of the same major version wrote.
**   - The shared library exports exactly the functions declared here, with
**     symbol versions (lib/ravel.map: RAVEL_0.1, then one node per minor
**     release that adds functions).  lib/ravel.abi records every function's
**     prototype and every constant's value, and tools/check-abi.py, run by
**     the test suite, fails if any of them changes or disappears.
**   - Anything not declared in this file (the rv_ internals, the static
**     library's other symbols, test hooks) may change in any release.
*/
#ifndef RAVEL_H
#define RAVEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef RAVEL_API
# if defined(__GNUC__)
#  define RAVEL_API __attribute__((visibility("default")))
# else
#  define RAVEL_API
# endif
#endif

/* ---------------------------------------------------------------- version */

#define RAVEL_VERSION        "0.1.0"
#define RAVEL_VERSION_NUMBER 1000 /* major*1000000 + minor*1000 + patch */

/* The version of the library actually linked, which may differ from the
** header the caller was compiled against. */
RAVEL_API const char *ravel_libversion(void);
RAVEL_API int ravel_libversion_number(void);

/* ----------------------------------------------------------- result codes */

#define RAVEL_OK        0  /* success */
#define RAVEL_NOTFOUND  1  /* the key is absent (ravel_get, ravel_property) */
#define RAVEL_INVALID   2  /* bad argument, bad option, or misuse; also
                           ** a table block compressed with a codec this
                           ** build lacks (see compression=): not damage
                           ** (the block passed its checksum, when
                           ** verified); a build with that codec reads it */
#define RAVEL_IOERR     3  /* an I/O call failed; see ravel_errmsg() */
#define RAVEL_CORRUPT   4  /* a file failed a checksum or format check */
#define RAVEL_NOMEM     5  /* an allocation failed */
#define RAVEL_BUSY      6  /* would have to wait, and the caller said not to:
                           ** a write with RAVEL_NO_SLOWDOWN that the write
                           ** controller would have delayed or stopped
                           ** (nothing of it written) */
#define RAVEL_LOCKED    7  /* the database directory is open elsewhere */
#define RAVEL_READONLY  8  /* writes refused after an earlier failure (a
                           ** WAL write or fdatasync, an allocation; see
                           ** ravel.read-only-reason), or the database was
                           ** opened read-only; reads are still served */
#define RAVEL_CONFLICT  9  /* a transaction's key was written by someone
                           ** else after its snapshot: roll back and run
                           ** it again (retriable) */
#define RAVEL_TIMEDOUT 10  /* a transaction's lock wait ran out
                           ** (txn_lock_timeout): retriable */
#define RAVEL_DEADLOCK 11  /* a transaction was the youngest in a cycle of
                           ** lock waits and was chosen to fail:
                           ** retriable */
#define RAVEL_EXPIRED  12  /* the change feed: the sequence asked for is
                           ** no longer in the WAL (flushed and deleted,
                           ** or past wal_ttl_seconds/wal_size_limit_mb);
                           ** the message names the oldest available.
                           ** Start again from a checkpoint */

/* A static English description of a result code ("not found", ...).
** Never NULL; unknown codes give "unknown result code". */
RAVEL_API const char *ravel_errstr(int rc);

/* The detailed message of the calling thread's most recent failure, such as
** "open wal-000003.log: Permission denied (errno 13)".  Successful calls do
** not clear it.  The pointer stays valid until the calling thread's next
** ravel call.  Never NULL ("" before any failure).
**
** The message lives in a buffer of 512 bytes per OS thread (so a message is
** at most 511 bytes, cut there if longer): it is the message of the last
** failure on the thread that calls ravel_errmsg, whichever caller that
** failure belonged to. */
RAVEL_API const char *ravel_errmsg(void);

/* Copies the calling thread's current message (the one ravel_errmsg
** returns) into BUF, cut to fit and always NUL-terminated when SIZE > 0,
** and returns its full length in bytes (not counting the NUL), as snprintf
** does: a result >= SIZE means the copy was cut.  With BUF NULL and SIZE 0
** it only returns the length.  Never fails. */
RAVEL_API size_t ravel_errmsg_r(char *buf, size_t size);

/* For binding writers.  The message belongs to the OS thread, not to the
** caller: in a language whose threads move between OS threads (Go's
** goroutines between cgo calls, green threads, async runtimes), calling the
** failing function and then ravel_errmsg in a second foreign call may run
** on another OS thread and read another caller's message.  So call the
** failing function and ravel_errmsg_r inside the same foreign call: one
** small C shim per call, for example in a cgo preamble:
**
**     int shim_put(ravel_db *db, int flags, const void *k, size_t kl,
**                  const void *v, size_t vl, char *msg, size_t n)
**     {
**         int rc = ravel_put(db, flags, k, kl, v, vl);
**         if (rc)
**             ravel_errmsg_r(msg, n);
**         return rc;
**     }
**
** with MSG a buffer of 512 bytes owned by the caller.  Never make the call
** and the ravel_errmsg/ravel_errmsg_r call two separate foreign calls from
** such a language.  C, C++ and other callers on fixed OS threads may call
** ravel_errmsg afterwards as usual. */

/* -------------------------------------------------------------- limits */

#define RAVEL_MAX_KEY_SIZE   (1u << 20)   /* 1 MiB: longer keys are RAVEL_INVALID */
#define RAVEL_MAX_VALUE_SIZE (256u << 20) /* 256 MiB */
#define RAVEL_MAX_BATCH_SIZE (1u << 30)   /* 1 GiB of encoded batch */

/* Frees memory returned by ravel (values, property text).  NULL is a no-op. */
RAVEL_API void ravel_free(void *p);

/* --------------------------------------------------------------- options */

typedef struct ravel_options ravel_options;

/* A new options object holding the defaults.  Returns RAVEL_NOMEM or
** RAVEL_INVALID (NULL out-pointer) on failure. */
RAVEL_API int ravel_options_new(ravel_options **out);
RAVEL_API void ravel_options_free(ravel_options *opts);

/* Sets one option by name.  Names follow RocksDB's wherever the concept is
** the same.  Booleans accept true/false/1/0/on/off/yes/no (any case); sizes,
** counts and rates accept a K, M, G, T or P suffix (powers of 1024, any
** case), the forms the ranges below and the messages print.  An unknown
** name or a value that does not parse, is out of range or does not fit in
** 64 bits is RAVEL_INVALID with a message naming it and its range (and,
** for a name close to a known one, "did you mean ...?").  A count takes
** what RocksDB's int of the same name takes, up to 2147483647, except
** where ravel has a reason not to, which the message gives (num_levels:
** 7 levels at most; a number of files or memtables below the one that
** makes sense: RocksDB reads 0 as 1, ravel refuses it).
** RocksDB's and db_bench's names for an option ravel has under another
** name with the same meaning are taken as that option, by set and get:
** compression_type (compression), bloom_bits (bloom_bits_per_key),
** cache_size (block_cache_size), WAL_ttl_seconds (wal_ttl_seconds),
** WAL_size_limit_MB (wal_size_limit_mb).  RocksDB's max_open_files=-1 (no limit)
** is the most ravel keeps open, 1000000.
** RocksDB options for features ravel has not built yet
** (max_subcompactions, paranoid_checks, ...) are RAVEL_INVALID
** with a message saying so, so that nobody believes a setting took effect;
** where another option does the job (max_background_compactions,
** max_background_flushes: max_background_jobs) the message names it.
**
**   create_if_missing=false     create the directory/database if absent
**   error_if_exists=false       fail to open an existing database
**   read_only=false             open for reads only, beside a live writer
**                               in another process or with none: takes no
**                               lock (any number of readers), replays the
**                               WAL without modifying it, follows the
**                               writer with ravel_catch_up; writes return
**                               RAVEL_READONLY
**   write_buffer_size=64M       memtable size before it is switched for a
**                               fresh one (4K .. 4G)
**   max_write_batch_group_size_bytes=1M
**                               byte cap on one write group (1K .. 1G)
**   allow_concurrent_memtable_write=true
**                               members of a write group insert their own
**                               batches in parallel (false: the leader
**                               inserts the whole group)
**   wal_io=auto                 auto | uring | sync | direct: how the WAL
**                               is written.  uring: io_uring (fails the
**                               open where it cannot be set up); sync:
**                               pwrite + fdatasync; direct: O_DIRECT
**                               block writes through io_uring, several in
**                               flight, RAVEL_SYNC groups written with
**                               RWF_DSYNC instead of an fdatasync,
**                               segments zeroed ahead in the background
**                               (RAVEL_INVALID where the file system
**                               refuses O_DIRECT).  A write without
**                               RAVEL_SYNC then returns once its direct
**                               write has completed on the device (tens
**                               of microseconds, where pwrite takes one):
**                               direct is for databases whose writes are
**                               mostly RAVEL_SYNC.  auto: probes the
**                               file system (O_DIRECT, the costs of a
**                               synced write each way, inline completion
**                               of buffered io_uring writes; measured at
**                               the first open, then kept in
**                               wal-probe.cache beside the database for
**                               a week) and starts with direct only
**                               where neither kind of write gets
**                               slower, else uring where buffered
**                               writes complete inline, else sync; then,
**                               where O_DIRECT works (and neither
**                               manual_wal_flush nor
**                               recycle_log_file_num is set), moves
**                               between that buffered mode and direct
**                               at memtable switches when each
**                               segment's share of RAVEL_SYNC writes,
**                               priced by the probe, says the other is
**                               cheaper (two segments in a row); the
**                               choice, each switch and the numbers are
**                               in ravel.wal-io and the LOG
**   wal_recovery_mode=tolerate_corrupted_tail_records
**                               | absolute_consistency | point_in_time
**                               | skip_any_corrupted_records
**                               (RocksDB's numbers 0..3 are accepted too).
**                               The default drops the damaged tail of the
**                               last WAL segment that a crash or power
**                               loss leaves (a power loss never puts a
**                               RAVEL_SYNC write there; other damage to
**                               that tail cannot be told from it) and
**                               refuses any other damage, and every mode but
**                               skip_any_corrupted_records refuses a hole
**                               (a missing or shortened segment) with
**                               RAVEL_CORRUPT; docs/formats.md has the
**                               exact rules
**   wal_preallocate=true        reserve each WAL segment's space up front
**                               (direct: write it as zeros)
**   recycle_log_file_num=0      0 .. 64: flushed WAL segments kept and
**                               reused for new ones instead of deleted,
**                               so their space is already written (only
**                               with wal_io=direct: RAVEL_INVALID with
**                               sync or uring)
**   wal_io_switch_every_segments=0
**                               0 .. 1000, for testing only: wal_io=auto
**                               switches between its buffered mode and
**                               direct every N memtable switches,
**                               whatever the writes (the crash and
**                               power-loss tests run across switches
**                               with 1); 0: as the writes say.  No
**                               effect with another wal_io
**   manual_wal_flush=false      true: a write's WAL record is kept in
**                               ravel's own 1 MiB buffer instead of being
**                               written at once; the buffer is written
**                               when it is full, by ravel_flush_wal, with
**                               any RAVEL_SYNC write, at a memtable switch
**                               and at close.  Fewer write calls, at a
**                               price: writes acknowledged without
**                               RAVEL_SYNC since the last of these are
**                               LOST if the process crashes (kill -9, a
**                               segfault, an abort), not only by a power
**                               loss.  RAVEL_SYNC writes are still on
**                               stable storage when they return, with
**                               every write acknowledged before them
**   wal_ttl_seconds=0           0 .. 2147483647, and
**   wal_size_limit_mb=0         0 .. 2147483647: the change feed's WAL
**                               retention (ravel_updates_since).  When
**                               either is set, a flushed WAL segment is
**                               moved into DIR/archive/ instead of being
**                               deleted (and is never recycled), and is
**                               deleted from there once its last write is
**                               wal_ttl_seconds old, or, oldest first,
**                               while archive/ holds more than
**                               wal_size_limit_mb MiB; each 0: no limit of
**                               that kind; both 0: nothing kept.  Checked
**                               at every flush and at open.  RocksDB's
**                               WAL_ttl_seconds and WAL_size_limit_MB
**
** Ordering modes (docs/ordering.md): how a write group's memtable inserts
** are ordered against readers.  Default: all three guarantees (atomic
** reads, read-your-own-writes, immutable snapshots), each group waiting for
** its slowest insert.  The others insert unordered, the next group forming
** at once; an inconsistent combination is RAVEL_INVALID at open.
**   unordered_write=false       true alone: a group is visible before its
**                               inserts end -- read-your-own-writes ONLY: a
**                               reader may see part of a batch, and what a
**                               snapshot or iterator sees may still change
**   in_order_publication=false  with unordered_write: each batch becomes
**                               visible once it and every earlier batch are
**                               inserted, and its write returns then; all
**                               three guarantees
**   two_write_queues=false      with unordered_write and
**   write_policy=write_committed  write_policy=write_prepared: RocksDB's
**                               WritePrepared ordering on the plain database
**                               (a commit queue and a commit table); all
**                               three guarantees.  Commit order may differ
**                               from WAL order within a group: a snapshot
**                               between two commits may see a later batch
**                               of the group without an earlier one
**                               (docs/ordering.md, "the restart anomaly")
**   commit_table_size=1M        write_prepared: entries of the commit table,
**                               8 bytes each (a power of two, 16 .. 64M)
**
** Flushing memtables to table files:
**   max_write_buffer_number=2   memtables in memory at most, the active one
**                               included (2 .. 2147483647): when the
**                               active one is full and the others are
**                               still being flushed, writers wait for a
**                               flush (and,
**                               above 3, are slowed down while the last
**                               memtable allowed fills)
**   max_background_jobs=2       background threads running flushes and
**                               compactions (1 .. 64); flushes go first,
**                               and with 2 or more one thread is always
**                               left for them
**   target_file_size_base=64M   flushes and compactions cut table files at
**                               this size (64K .. 16G; level L >= 1: times
**   target_file_size_multiplier=1  this to the power L-1, 1 ..
**                               2147483647)
**   avoid_flush_during_shutdown=false
**                               false: close flushes the memtables when
**                               they hold 1 MiB or more, so the next open
**                               replays almost no WAL, or hold RAVEL_NO_WAL
**                               writes, which no WAL holds; true: close
**                               leaves them to the WAL
**
** Table files:
**   block_size=4K               target size of a data block (256 .. 64M)
**   block_restart_interval=16   keys between restart points in a block
**                               (1 .. 2147483647)
**   bloom_bits_per_key=10       filter bits per key (0 .. 100; 0: no
**                               filter); at 10 a point lookup reads about
**                               1% of the files that do not hold its key
**   compression=none            none | lz4 | zstd: how data blocks are
**                               compressed; lz4 and zstd exist only where
**                               ravel was built with liblz4 / libzstd (not
**                               in the amalgamation compiled with
**                               -DRAVEL_OMIT_COMPRESSION), and are
**                               RAVEL_INVALID elsewhere; such a build
**                               reading a block compressed with a codec
**                               it lacks returns RAVEL_INVALID too, not
**                               RAVEL_CORRUPT ("...000012.sst: data block
**                               at byte offset N: zstd-compressed, but
**                               this build of ravel has no zstd support
**                               (built without libzstd)...")
**   verify_checksums=true       check every block read from a file
**   allow_mmap_reads=false      read table files through mmap(2), as
**                               LevelDB does on 64-bit hosts (RocksDB's
**                               option, off by default there too): an
**                               uncompressed data block is used in place,
**                               with no pread, copy or block-cache entry;
**                               its checksum (per verify_checksums) is
**                               checked at every use, as it is not kept.
**                               Each file is checked at open to hold the
**                               size the manifest gives, so no read goes
**                               past its end; a table file cut short
**                               behind ravel's back while open, or an I/O
**                               error under the map, raises SIGBUS in the
**                               reader instead of returning an error (as
**                               in LevelDB and RocksDB).  A file that
**                               cannot be mapped is read with pread.
**   block_cache_size=32M        bytes of data blocks cached in memory (0
**                               .. 1T; 0: none), unless a shared cache is
**                               given with ravel_options_set_cache
**   max_open_files=1000         table files kept open (16 .. 1000000;
**                               -1: no limit, as in RocksDB)
**
** Transactions (docs/transactions.md):
**   txn_lock_timeout=1000       milliseconds a pessimistic transaction
**                               waits for a key's lock before
**                               RAVEL_TIMEDOUT (0 .. 2147483647; 0:
**                               never wait; -1, or 2147483647: wait
**                               forever, deadlocks are still found;
**                               RocksDB's transaction_lock_timeout)
**   txn_max_write_batch_size=1G bytes one transaction's writes may take,
**                               encoded as a batch (4K .. 1G: a
**                               transaction commits as one batch); a
**                               write past it is RAVEL_INVALID and
**                               leaves the transaction open (RocksDB's
**                               max_write_batch_size)
**   catch_up_interval_ms=0      read_only: catch up with the writer every
**                               this many milliseconds in a thread of its
**                               own (0 .. 86400000; 0: only on
**                               ravel_catch_up)
**
** Leveled compaction (docs/compaction.md), RocksDB's names and meanings:
**   level0_file_num_compaction_trigger=4
**                               level 0 files that start a compaction of
**                               level 0 into the next level (1 ..
**                               2147483647; as in RocksDB, a number too
**                               large to be reached means never: db_bench
**                               command lines give 99999)
**   max_bytes_for_level_base=256M  target size of level 1 (or, with
**                               dynamic level bytes, of the base level;
**                               64K .. 1P)
**   max_bytes_for_level_multiplier=10
**                               each level's target is this many times the
**                               one above (2 .. 2147483647, a whole number)
**   num_levels=7                levels, level 0 included (2 .. 7); opening
**                               a database with files below the last level
**                               allowed is RAVEL_INVALID
**   level_compaction_dynamic_level_bytes=false
**                               true: the targets are derived from the last
**                               level's actual size, each level above it
**                               a multiplier smaller, and level 0 compacts
**                               straight into the first level whose target
**                               is at least max_bytes_for_level_base /
**                               multiplier (RocksDB's scheme: about 1.1x
**                               space amplification whatever the data's
**                               size); false: level L's target is
**                               max_bytes_for_level_base * multiplier^(L-1)
**   disable_auto_compactions=false
**                               true: no compaction runs but those asked
**                               for with ravel_compact_range
**   compaction_pri=min_overlapping_ratio
**                               which file of a level is compacted next:
**                               min_overlapping_ratio, the one whose overlap
**                               with the next level is smallest for its
**                               size (RocksDB's default), or round_robin
**                               (RocksDB's kMinOverlappingRatio and
**                               kRoundRobin, 3 and 4, are accepted too)
**   max_compaction_bytes=0      RocksDB's: a compaction output file is
**                               cut where its bytes and those of the
**                               files it overlaps two levels down
**                               would exceed this, and one file
**                               overlapping more than this two levels
**                               down is rewritten instead of moved (0: 25
**                               times target_file_size_base; 0 .. 1P)
**   level_compaction_dynamic_file_size=true
**                               RocksDB's (7.8): a compaction output file
**                               above the last level is cut at a file
**                               boundary of the level below its own once
**                               it holds half its target size (a little
**                               more for each boundary it passed), or
**                               before it would span a whole file of that
**                               level worth an eighth of the target; it
**                               may grow to twice the target.  Aligned
**                               boundaries leave less of the next
**                               compaction's input overlapping nothing
**                               (docs/performance.md: less write
**                               amplification); false: files are cut at
**                               the target size
**
** The write controller (docs/compaction.md): when flushes and compactions
** fall behind, writes are slowed down before they must be stopped.
** Each write group is charged its bytes once, by its leader.
**   level0_slowdown_writes_trigger=20  level 0 files that slow writes down
**                               (1 .. 2147483647)
**   level0_stop_writes_trigger=36      level 0 files that stop them until
**                               a compaction brings the count below (1 ..
**                               2147483647; for both, a number too large to
**                               be reached means never; the stop trigger
**                               must be >= the slowdown trigger >= the
**                               compaction trigger)
**   soft_pending_compaction_bytes_limit=64G
**                               estimated bytes compaction must rewrite to
**                               bring every level within its target, past
**                               which writes slow down (0: never; 0 ..
**                               18446744073709551615, 2^64 - 1)
**   hard_pending_compaction_bytes_limit=256G
**                               ... past which they stop (0: never; 0 ..
**                               18446744073709551615)
**   delayed_write_rate=16M      bytes per second a slowed-down database
**                               accepts at first; lowered while the backlog
**                               grows, raised as it shrinks (RocksDB's
**                               steps: x0.8, x1.25), never above this (1K
**                               .. 1T; 0: RocksDB's default, 16M)
**   use_dynamic_delay=false     true (Speedb's name): the rate is instead
**                               proportional to how far the worst cause is
**                               between its slowdown and stop points
**                               (delayed_write_rate at the slowdown point,
**                               falling to 1/64 of it just before the stop)
*/
RAVEL_API int ravel_options_set(ravel_options *opts, const char *name,
                                const char *value);

/* Sets several options from "name=value;name=value" (whitespace around
** names and values is ignored, an empty item is skipped).  Stops at the
** first error, which names the item; earlier items stay set. */
RAVEL_API int ravel_options_parse(ravel_options *opts, const char *text);

/* The current value of an option as text, in *out (free with ravel_free). */
RAVEL_API int ravel_options_get(const ravel_options *opts, const char *name,
                                char **out);

/* ------------------------------------------------------------ block cache */

/* A cache of table data blocks that several databases can share, so that
** one memory budget covers them all.  Without one, each database makes its
** own of block_cache_size bytes.  A cache is reference-counted: the
** caller's reference, the one of each options object it is set in, and the
** one of each open database using it; it is freed when the last is
** dropped.  Safe to use from many threads at once. */
typedef struct ravel_cache ravel_cache;

/* A new cache holding up to CAPACITY bytes of blocks (0: blocks are read
** for each use and not kept), with one reference held by the caller.
** RAVEL_NOMEM, or RAVEL_INVALID for a NULL out-pointer. */
RAVEL_API int ravel_cache_new(uint64_t capacity, ravel_cache **out);

/* Drops the caller's reference: databases and options using the cache keep
** theirs, and it lives until they are closed and freed.  NULL is a no-op. */
RAVEL_API void ravel_cache_free(ravel_cache *c);

/* Bytes of blocks the cache holds now (those in use by reads included);
** 0 for NULL. */
RAVEL_API uint64_t ravel_cache_usage(const ravel_cache *c);

/* The capacity it was made with; 0 for NULL. */
RAVEL_API uint64_t ravel_cache_capacity(const ravel_cache *c);

/* Makes databases opened with OPTS use the cache C instead of making their
** own (block_cache_size is then ignored); NULL clears it.  The options
** hold a reference on C until cleared, replaced or freed, and a database
** takes its own at ravel_open, so the caller may free both afterwards.
** RAVEL_INVALID for NULL options. */
RAVEL_API int ravel_options_set_cache(ravel_options *opts, ravel_cache *c);

/* ------------------------------------------------------ write controller */

/* The write controller decides when writers are slowed down or stopped
** because flushes and compactions fall behind (the options above).  By
** default each database has its own.  One controller can instead be
** shared by several databases in one process (Speedb's "global delayed
** write"): every attached database registers its requirement -- none,
** delay at a rate, or stop -- and the controller enforces the most
** restrictive one on the writers of all of them, so that databases on one
** disk do not take its bandwidth from the one that must catch up.  Writers
** of all attached databases are served first come, first served.  A
** database's requirement is withdrawn when it is closed.
**
** Reference-counted like ravel_cache: the caller's reference, one per
** options object it is set in, one per open database. */
typedef struct ravel_write_controller ravel_write_controller;

/* A new controller whose delayed writes start at DELAYED_WRITE_RATE bytes
** per second (1024 .. 2^40; it replaces the delayed_write_rate of the
** databases attached), one reference held by the caller.  RAVEL_INVALID
** for a rate out of range or a NULL out-pointer; RAVEL_NOMEM. */
RAVEL_API int ravel_write_controller_new(uint64_t delayed_write_rate,
                                         ravel_write_controller **out);

/* Drops the caller's reference; NULL is a no-op. */
RAVEL_API void ravel_write_controller_free(ravel_write_controller *wc);

/* Makes databases opened with OPTS share WC (NULL: each its own, the
** default).  The options hold a reference until cleared, replaced or
** freed.  RAVEL_INVALID for NULL options. */
RAVEL_API int ravel_options_set_write_controller(ravel_options *opts,
                                                 ravel_write_controller *wc);

/* -------------------------------------------------------------- database */

typedef struct ravel_db ravel_db;

/* Opens the database in directory DIR.  OPTS may be NULL for the defaults;
** it is copied, so the caller may free it after the call.  Reads the
** manifest (which table files make up the database; each must be there
** with its recorded size), replays the write-ahead log segments not yet
** flushed to table files, and makes everything it recovered durable
** before it returns (so a power loss after a crash cannot leave a hole).
** A large recovered memtable is flushed in the background at once.
** Fails with RAVEL_LOCKED if DIR is open elsewhere, in this process or
** another (or its LOCK is still held by a forked child: see "Processes
** and fork" below); RAVEL_CORRUPT if recovery finds corruption the
** wal_recovery_mode does not tolerate, or a damaged manifest or a missing
** table file; RAVEL_INVALID if DIR does not hold a database and
** create_if_missing is false. */
RAVEL_API int ravel_open(const char *dir, const ravel_options *opts,
                         ravel_db **out);

/* Closes the database: waits for the calls on it in progress in other
** threads (writes, sync waits, reads) to return -- each completes as if
** close had not been called -- flushes the memtables if they hold 1 MiB
** or more or RAVEL_NO_WAL writes (unless avoid_flush_during_shutdown),
** waits for a running
** background flush to finish (memtables not yet flushed stay in the WAL,
** replayed by the next open), then makes the WAL durable and seals it
** (the next open then knows any damage to it is not a torn write),
** releases the LOCK and frees the handle.  Snapshots and iterators must be released
** first; if any remain, returns RAVEL_INVALID and leaves the database open
** (the only case in which the handle stays valid).  RAVEL_IOERR if the
** final fdatasync or the seal failed: the handle is freed all the same.
** After writes were stopped by a failure, a failure already reported to a
** writer is not reported again; after an I/O failure close syncs and seals
** nothing (nothing written after it may be taken as durable).  NULL is a
** no-op.
**
** Calling any function on the handle once close has begun is a bug of the
** caller: the handle may already be freed.  While close is still waiting,
** such a call returns RAVEL_INVALID ("database ... is closing"), but that
** is a diagnostic, not a guarantee. */
RAVEL_API int ravel_close(ravel_db *db);

/* Deletes the database in directory DIR, as RocksDB's DestroyDB: takes
** its LOCK (RAVEL_LOCKED if the database is open, in this process or
** another, and then nothing is deleted), removes the files a database
** holds (CURRENT, IDENTITY, LOG, LOG.old, MANIFEST-*, wal-*.log, *.sst,
** their .tmp files, lost/ and archive/ and what they hold) and the LOCK,
** then DIR itself if nothing else is left in it: files of other names
** stay where they are.  A DIR that does not exist is RAVEL_OK.  RAVEL_IOERR naming the
** file that could not be removed (those before it are gone). */
RAVEL_API int ravel_destroy(const char *dir);

/* Processes and fork.  Like SQLite's, a database must not be carried
** across a fork.  A child forked while a database is open gets a copy of
** the handle's memory but none of its background threads or pending I/O:
** it must not call any function on the parent's handles (ravel_close
** included), and should exec or _exit; it may open databases of its own.
**
** What the child does inherit is every descriptor the database holds,
** the LOCK file's among them.  The lock is an open-file-description lock,
** shared by every process that has the descriptor:
**   - all of ravel's descriptors are close-on-exec, so a child that execs
**     keeps none of them;
**   - ravel_close in the process that opened the database releases the
**     LOCK for the children that share it too, so the database can be
**     opened again at once (a child closing its inherited copy releases
**     nothing, and must not try);
**   - if that process ends without ravel_close (a crash, an exit without
**     it), a child forked while the database was open holds the LOCK until
**     it exits or execs, and opens meanwhile fail with RAVEL_LOCKED. */

/* ----------------------------------------------------------------- writes */

/* Flags for ravel_put, ravel_delete and ravel_write. */
#define RAVEL_SYNC   0x1 /* return only once the write is on stable storage:
                         ** it survives kill -9 and power loss */
#define RAVEL_NO_WAL 0x2 /* skip the write-ahead log: lost on crash, kept
                         ** by a flush (ravel_flush, ravel_close) */
#define RAVEL_NO_SLOWDOWN 0x4 /* if the write controller would make the
                         ** write wait (a slowdown or a stop), return
                         ** RAVEL_BUSY at once instead, with nothing of it
                         ** written */

typedef struct ravel_batch ravel_batch;

RAVEL_API int ravel_batch_new(ravel_batch **out);
RAVEL_API void ravel_batch_free(ravel_batch *b);
RAVEL_API int ravel_batch_put(ravel_batch *b, const void *key, size_t klen,
                              const void *val, size_t vlen);
RAVEL_API int ravel_batch_delete(ravel_batch *b, const void *key, size_t klen);
/* Adds a range delete: every key K with BEGIN <= K < END (bytewise) is
** deleted at the batch's sequence, as by ravel_delete_range.  RAVEL_INVALID
** if BEGIN sorts after END; BEGIN equal to END is an empty range: nothing
** is added and RAVEL_OK is returned (as RocksDB treats it). */
RAVEL_API int ravel_batch_delete_range(ravel_batch *b, const void *begin,
                                       size_t blen, const void *end,
                                       size_t elen);
RAVEL_API int ravel_batch_clear(ravel_batch *b);
/* Number of operations in the batch (0 for NULL). */
RAVEL_API uint32_t ravel_batch_count(const ravel_batch *b);

/* Applies a batch atomically: every reader sees all of it or none of it.
** (With unordered_write=true alone, without in_order_publication or
** write_prepared, a reader may see part of it while it is applied:
** docs/ordering.md.)
** Returns RAVEL_IOERR if the WAL write or the requested sync failed (the
** write may or may not be durable), RAVEL_NOMEM if memory ran out while
** applying it (none of it is visible -- with unordered_write alone, part of
** it may be; its WAL record may be written, so after reopen it may be
** there, whole).  Writes from other threads that
** were applied together with it get the same result.  After either, the
** database refuses writes with RAVEL_READONLY until reopened; reads go on.
** The batch is not modified and may be reused.  An empty batch is a no-op
** that succeeds, except on a database opened read_only: RAVEL_READONLY,
** as for every write there.
** Once a transaction has begun on the database, a write (here, ravel_put,
** ravel_delete) first locks its keys as a transaction does, so that it
** never slips between a transaction's check of a key and its commit: it
** waits for a transaction holding one of them (a pessimistic one's key,
** a prepared one's, an optimistic one's while it commits), up to
** txn_lock_timeout, then fails with RAVEL_TIMEDOUT (or RAVEL_DEADLOCK),
** nothing of it written. */
RAVEL_API int ravel_write(ravel_db *db, int flags, ravel_batch *batch);
RAVEL_API int ravel_put(ravel_db *db, int flags, const void *key, size_t klen,
                        const void *val, size_t vlen);
RAVEL_API int ravel_delete(ravel_db *db, int flags, const void *key,
                           size_t klen);
/* Deletes every key K with BEGIN <= K < END (bytewise), RocksDB's
** DeleteRange: one operation (one WAL record, one memtable entry), not a
** delete per key, at the write's sequence: a snapshot taken before it
** still sees the keys, a put after it (a higher sequence) is not deleted.
** Gets, iterators (both directions) and snapshots honour it in every
** ordering mode.  RAVEL_INVALID if BEGIN sorts after END; BEGIN equal to
** END is an empty range: a no-op returning RAVEL_OK (RocksDB's meaning).
** Refused (RAVEL_INVALID, nothing written) once a transaction has begun
** on the database: the lock table locks keys, not ranges
** (ravel_txn_delete_range).  Storage: memtables keep range deletes beside
** their entries; a flush writes them as range tombstones into its table
** files, and compaction drops the versions they hide once no snapshot
** needs them (docs/design.md, "Range deletes"). */
RAVEL_API int ravel_delete_range(ravel_db *db, int flags, const void *begin,
                                 size_t blen, const void *end, size_t elen);

/* Makes the WAL reach the operating system and, with SYNC non-zero,
** stable storage: once it returns RAVEL_OK, every write acknowledged
** before the call survives kill -9 (and power loss with SYNC).
** With manual_wal_flush=true, writes acknowledged without RAVEL_SYNC sit
** in ravel's WAL buffer, and a process crash LOSES them until this call
** (or a full buffer, a RAVEL_SYNC write, a memtable switch, ravel_close)
** writes the buffer to the WAL file.  Without that option ravel writes
** each group to the WAL before acknowledging it, so without SYNC this only
** reports the WAL's state.  RAVEL_IOERR if writing the buffer or the
** fdatasync fails (writes are stopped then, as after a failed write) or
** failed before; RAVEL_READONLY if writes were stopped by another failure
** (the buffer is still written).  Safe to call from any thread, while
** others write.  A database opened read_only has nothing to flush. */
RAVEL_API int ravel_flush_wal(ravel_db *db, int sync);

/* Flags for ravel_flush. */
#define RAVEL_FLUSH_NO_WAIT 0x1 /* start the flush and return without
                                ** waiting for it (switching the memtable
                                ** out may still wait for room, as a write
                                ** does, when max_write_buffer_number
                                ** memtables are already full) */

/* Writes the active memtable (and every older one not yet written) to table
** files.  Without RAVEL_FLUSH_NO_WAIT, returns once they are on stable
** storage and named by the manifest: every write acknowledged before the
** call is then in a table file (RAVEL_NO_WAL writes included).  An empty
** memtable is not flushed.  RAVEL_READONLY on a database opened read_only
** or whose writes were stopped by a failure (the failure is named). */
RAVEL_API int ravel_flush(ravel_db *db, int flags);

/* Compacts the keys from BEGIN (BLEN bytes) to END (ELEN bytes),
** both included, down to the last level holding data (level 1 at least):
** flushes the memtables first, then rewrites every file of every level
** overlapping the range into the next one, level by level, dropping the
** versions no live snapshot can see and, at the last level, the deletions
** (so their space is reclaimed).  BEGIN NULL: from the first key; END
** NULL: to the last.  Waits for the compactions, run in the calling
** thread beside the background ones (which it waits for when they hold a
** file it needs).  RAVEL_READONLY on a read_only database or after writes
** were stopped; RAVEL_IOERR if a compaction failed (the database stays
** consistent: the inputs are kept). */
RAVEL_API int ravel_compact_range(ravel_db *db, const void *begin,
                                  size_t blen, const void *end, size_t elen);

/* Reads every block of every table file of the database and checks it:
** RAVEL_OK, or RAVEL_CORRUPT naming the first damaged file and the byte
** offset (RAVEL_IOERR if a file cannot be read). */
RAVEL_API int ravel_verify(ravel_db *db);

/* ------------------------------------------------------------------ reads */

typedef struct ravel_snapshot ravel_snapshot;

/* A snapshot pins the current state: reads through it never change,
** whatever is written after.  Release every snapshot before ravel_close. */
RAVEL_API int ravel_snapshot_acquire(ravel_db *db, ravel_snapshot **out);
RAVEL_API int ravel_snapshot_release(ravel_db *db, ravel_snapshot *snap);
/* The sequence number a snapshot reads at (0 for NULL). */
RAVEL_API uint64_t ravel_snapshot_sequence(const ravel_snapshot *snap);

/* Read options (RocksDB's ReadOptions, under its names): what one read
** sees and how it reads table files, for ravel_get_opt, ravel_get_into_opt
** and ravel_iter_new_opt.  Passing NULL options to those is the same as
** passing new ones, and the same as calling ravel_get, ravel_get_into and
** ravel_iter_new with a NULL snapshot.  Each setter returns RAVEL_INVALID
** with a message for NULL options or a bad argument.
**
** The options object may be freed or changed once the call that used it
** returns: an iterator keeps copies of what it needs.  Any number of
** reads, in any threads, may use one object at once, while no thread
** changes it. */
typedef struct ravel_readoptions ravel_readoptions;

/* New read options holding the defaults: the latest state, no bounds,
** verify_checksums as the database's option, fill_cache true.
** RAVEL_NOMEM, or RAVEL_INVALID for a NULL out-pointer. */
RAVEL_API int ravel_readoptions_new(ravel_readoptions **out);
/* NULL is a no-op. */
RAVEL_API void ravel_readoptions_free(ravel_readoptions *ro);

/* Reads through RO read as of SNAP (NULL: the latest visible state, the
** default).  The snapshot is not copied: it must stay acquired while RO
** is used with it.  A read of another database than SNAP's is
** RAVEL_INVALID. */
RAVEL_API int ravel_readoptions_set_snapshot(ravel_readoptions *ro,
                                             const ravel_snapshot *snap);

/* The bounds of the iterators made with RO (gets ignore them):
** iterate_lower_bound, included, and iterate_upper_bound, excluded, as
** RocksDB's.  The iterator shows only keys K with LOWER <= K < UPPER: it
** becomes invalid at the upper bound going forward and at the lower bound
** going backward, without reading past them; a seek below the lower bound
** positions at the first key >= LOWER, a seek_for_prev at or above the
** upper bound at the last key < UPPER, and seek_to_first and seek_to_last
** honour them.  KEY is copied (so is it by the iterator).  An empty bound
** is a bound ("" as upper bound shows no key); KEY NULL (with KLEN 0)
** removes the bound, as RocksDB's C API does.  RAVEL_INVALID for KEY NULL
** with a non-zero KLEN or KLEN > RAVEL_MAX_KEY_SIZE; RAVEL_NOMEM. */
RAVEL_API int ravel_readoptions_set_iterate_lower_bound(ravel_readoptions *ro,
                                                        const void *key,
                                                        size_t klen);
RAVEL_API int ravel_readoptions_set_iterate_upper_bound(ravel_readoptions *ro,
                                                        const void *key,
                                                        size_t klen);

/* VERIFY non-zero: check the checksum of every data block the read takes
** from a table file; 0: do not.  Default: the database's verify_checksums
** option (true unless opened with it off).  Off saves a hash of each block
** read; damage is then found only by the decoding's own bounds checks,
** which catch much of it (RAVEL_CORRUPT) but not all (a damaged value
** may be returned).  A block read unchecked is not put in the block cache
** of a database that verifies, so that no other read gets it from there.
** On, with a database opened with verify_checksums=false, blocks the read
** takes from the file are checked; those already in the block cache were
** read unchecked and are not read again.  Index and filter blocks are
** always checked, once, when a table file is opened; ravel_verify checks
** every block whatever the options. */
RAVEL_API int ravel_readoptions_set_verify_checksums(ravel_readoptions *ro,
                                                     int verify);

/* FILL 0: the data blocks the read takes from table files are not put in
** the block cache (blocks already there are used): a scan of much data
** then does not push out the blocks other reads need.  Default 1: they
** are, as every read's. */
RAVEL_API int ravel_readoptions_set_fill_cache(ravel_readoptions *ro,
                                               int fill);

/* Looks KEY up as of SNAP (NULL: the latest visible state).  On RAVEL_OK,
** *val points to a copy of the value (free with ravel_free; non-NULL even
** for an empty value) and *vlen is its length.  RAVEL_NOTFOUND if absent or
** deleted; *val is then NULL and *vlen 0, as on any failure, so ravel_free
** may be called unconditionally. */
RAVEL_API int ravel_get(ravel_db *db, const ravel_snapshot *snap,
                        const void *key, size_t klen, void **val,
                        size_t *vlen);

/* As ravel_get, but copies the value into BUF (CAP bytes; BUF may be NULL
** when CAP is 0) instead of allocating: nothing is allocated for a caller
** that reads millions of values.  On RAVEL_OK *vlen is the value's whole
** length; if it is more than CAP, only the first CAP bytes were copied, and
** the caller may retry with a larger buffer (through a snapshot, to be sure
** of reading the same value).  RAVEL_NOTFOUND leaves BUF untouched and
** *vlen 0. */
RAVEL_API int ravel_get_into(ravel_db *db, const ravel_snapshot *snap,
                             const void *key, size_t klen, void *buf,
                             size_t cap, size_t *vlen);

/* ravel_get and ravel_get_into with read options RO (NULL: the defaults):
** its snapshot, verify_checksums and fill_cache. */
RAVEL_API int ravel_get_opt(ravel_db *db, const ravel_readoptions *ro,
                            const void *key, size_t klen, void **val,
                            size_t *vlen);
RAVEL_API int ravel_get_into_opt(ravel_db *db, const ravel_readoptions *ro,
                                 const void *key, size_t klen, void *buf,
                                 size_t cap, size_t *vlen);

/* Looks up the N keys KEYS[i] (KLENS[i] bytes each) all at one sequence:
** as of RO's snapshot, or (RO NULL or without one) of the latest visible
** state taken once for the whole call, so every value comes from the same
** state of the database -- a writer's batch is seen whole or not at all,
** which N calls of ravel_get do not promise (except with
** unordered_write=true alone, which gives up atomic reads for every
** read: there a batch may be seen in part, as by ravel_get; see
** docs/ordering.md).  The keys may come in any
** order and repeat.  Returns RAVEL_OK when every key was looked up: then
** RCS[i] is RAVEL_OK, with VALS[i] a copy of the value (free each with
** ravel_free; non-NULL even for an empty value) and VLENS[i] its length,
** or RAVEL_NOTFOUND, with VALS[i] NULL and VLENS[i] 0.  Any other return
** (RAVEL_INVALID for a NULL array with N > 0, a key longer than
** RAVEL_MAX_KEY_SIZE or another handle's snapshot; RAVEL_NOMEM;
** RAVEL_CORRUPT or RAVEL_IOERR from a table file) returns no value: every
** VALS[i] is NULL, VLENS[i] 0 and RCS[i] that code.  N == 0 is RAVEL_OK.
** It costs about what N calls of ravel_get cost (the keys are looked up
** one by one; ravel-bench's multireadrandom measures both): its point is
** that the values come from one state. */
RAVEL_API int ravel_multi_get(ravel_db *db, const ravel_readoptions *ro,
                              size_t n, const void *const *keys,
                              const size_t *klens, void **vals,
                              size_t *vlens, int *rcs);

/* Iterators read a fixed state (SNAP, or the latest visible state when the
** iterator is created) in key order (bytewise, shorter first on a common
** prefix).  They stay valid and unchanged while writes go on.  Free every
** iterator before ravel_close. */
typedef struct ravel_iter ravel_iter;

RAVEL_API int ravel_iter_new(ravel_db *db, const ravel_snapshot *snap,
                             ravel_iter **out);
/* An iterator reading with options RO (NULL: the defaults): its snapshot,
** its bounds, and verify_checksums and fill_cache for every block it
** reads. */
RAVEL_API int ravel_iter_new_opt(ravel_db *db, const ravel_readoptions *ro,
                                 ravel_iter **out);
/* Replaces the iterator's bounds (Pebble's SetBounds): LOWER (LLEN bytes)
** included, UPPER (ULEN bytes) excluded, each NULL for none, with the
** meaning ravel_readoptions_set_iterate_lower_bound gives them; both are
** copied.  The state read does not change.  Leaves the iterator
** unpositioned: seek it again.  An iterator stopped by an error stays
** stopped.  RAVEL_INVALID for a NULL iterator, a NULL bound with a
** non-zero length or a bound longer than RAVEL_MAX_KEY_SIZE; RAVEL_NOMEM
** (the old bounds are kept). */
RAVEL_API int ravel_iter_set_bounds(ravel_iter *it, const void *lower,
                                    size_t llen, const void *upper,
                                    size_t ulen);
RAVEL_API void ravel_iter_free(ravel_iter *it);
/* Positions at the first key >= KEY. */
RAVEL_API int ravel_iter_seek(ravel_iter *it, const void *key, size_t klen);
/* Positions at the last key <= KEY. */
RAVEL_API int ravel_iter_seek_for_prev(ravel_iter *it, const void *key,
                                       size_t klen);
RAVEL_API int ravel_iter_seek_to_first(ravel_iter *it);
RAVEL_API int ravel_iter_seek_to_last(ravel_iter *it);
/* next/prev on an iterator that is not positioned at an entry return
** RAVEL_INVALID, or the error that stopped it (ravel_iter_status). */
RAVEL_API int ravel_iter_next(ravel_iter *it);
RAVEL_API int ravel_iter_prev(ravel_iter *it);
/* 1 if positioned at an entry, 0 otherwise (and for NULL). */
RAVEL_API int ravel_iter_valid(const ravel_iter *it);
/* The current entry; the memory stays valid until the iterator moves or is
** freed.  Returns NULL with *len = 0 when the iterator is not valid. */
RAVEL_API const void *ravel_iter_key(const ravel_iter *it, size_t *len);
RAVEL_API const void *ravel_iter_value(const ravel_iter *it, size_t *len);
/* RAVEL_OK, or the error that stopped the iterator.  An iterator stops at
** its first error (a damaged block, a failed read): the call that met it
** returns it and leaves the iterator invalid, and it stays invalid and
** never shows another entry: every later call that moves it (seeks, next,
** prev), and ravel_iter_status, returns that error, each setting its
** message again, so the message read right after such a call is the
** iterator's own.  A loop that steps while ravel_iter_valid and checks
** ravel_iter_status at its end therefore sees every entry before the
** damage and the error, never an entry from past it. */
RAVEL_API int ravel_iter_status(const ravel_iter *it);

/* ----------------------------------------------------------- transactions */

/* A transaction: reads see the database as of its begin (a snapshot) plus
** its own writes; its writes become visible together, atomically, at
** commit, and only if no key it read for update or wrote was written by
** someone else after its snapshot (snapshot isolation; lost updates are
** impossible, write skew is possible unless the keys that decide are read
** with ravel_txn_get_for_update).  docs/transactions.md says more.
**
** Pessimistic (the default): get_for_update and every write lock the key
** (option txn_lock_timeout; deadlock detection naming the key and the
** other transaction), then check it has not changed since the snapshot.
** Optimistic (RAVEL_TXN_OPTIMISTIC): no locks until commit, which locks
** the keys in key order, checks them, writes, and unlocks.  Either way a
** commit is a write like any other: it joins the write group and shares
** its WAL write and fdatasync.  A transaction is used by one thread at a
** time, and ends (commit, rollback, free) before its database closes.
**
** Result codes a caller acts on: RAVEL_CONFLICT, RAVEL_TIMEDOUT and
** RAVEL_DEADLOCK mean "roll back and run the transaction again"
** (ravel_txn_run does it); the transaction is still open after one, its
** writes and locks as they were before the failing call.  Validation
** looks at table files as well as memtables, so there is no "cannot
** validate" (RocksDB's TryAgain).  Any other code is not retriable.
**
** Two-phase commit: a transaction given a name (ravel_txn_set_name) may
** be prepared (ravel_txn_prepare): its writes go to the WAL and the
** memtable, invisible to every reader, its keys stay locked, and it
** survives a crash.  After a reopen, ravel.prepared-transactions lists
** the names of those not committed or rolled back, their keys are locked
** again, and ravel_txn_recover gives one back to commit or roll back.  A
** transaction that was not prepared is gone after a crash unless its
** commit returned. */
typedef struct ravel_txn ravel_txn;

#define RAVEL_TXN_OPTIMISTIC 0x100 /* validate at commit instead of locking */

/* Begins a transaction; FLAGS: RAVEL_SYNC (commit, prepare and rollback
** of a prepared transaction return once durable), RAVEL_TXN_OPTIMISTIC. */
RAVEL_API int ravel_txn_begin(ravel_db *db, int flags, ravel_txn **out);
/* As ravel_get, as the transaction sees it. */
RAVEL_API int ravel_txn_get(ravel_txn *t, const void *key, size_t klen,
                            void **val, size_t *vlen);
/* As ravel_txn_get, and the key is the transaction's: locked
** (pessimistic) or checked at commit (optimistic).  RAVEL_CONFLICT if it
** changed since the snapshot. */
RAVEL_API int ravel_txn_get_for_update(ravel_txn *t, const void *key,
                                       size_t klen, void **val,
                                       size_t *vlen);
/* Writes, seen by the transaction's reads at once and by others at
** commit.  RAVEL_INVALID once the transaction is prepared, or when its
** writes would pass the option txn_max_write_batch_size. */
RAVEL_API int ravel_txn_put(ravel_txn *t, const void *key, size_t klen,
                            const void *val, size_t vlen);
RAVEL_API int ravel_txn_delete(ravel_txn *t, const void *key, size_t klen);
/* Always RAVEL_INVALID (with a message): a range delete inside a
** transaction is refused, as RocksDB's TransactionDB refuses DeleteRange.
** The lock table locks keys, not ranges, so neither ordering mode could
** keep a range delete from slipping between another transaction's check
** of a key in the range and its commit.  See ravel_delete_range. */
RAVEL_API int ravel_txn_delete_range(ravel_txn *t, const void *begin,
                                     size_t blen, const void *end,
                                     size_t elen);
/* An iterator over the database as the transaction sees it: its snapshot
** with its own writes merged in (free with ravel_iter_free, before the
** database closes; freed after the transaction ended, it shows the
** snapshot alone from then on).  It may be used while the transaction
** writes: a key written ahead of it is shown when reached. */
RAVEL_API int ravel_txn_iter_new(ravel_txn *t, ravel_iter **out);
/* Savepoints nest; rolling back to one undoes the writes after it and
** releases the locks taken since.  RAVEL_NOTFOUND if none is set. */
RAVEL_API int ravel_txn_savepoint(ravel_txn *t);
RAVEL_API int ravel_txn_rollback_to_savepoint(ravel_txn *t);
/* Names T for two-phase commit: 1 to 255 bytes, no control bytes (the
** names are listed one per line), unique among this database's prepared
** transactions, checked here and again at prepare (RAVEL_INVALID
** otherwise); set before ravel_txn_prepare, once. */
RAVEL_API int ravel_txn_set_name(ravel_txn *t, const char *name);
/* The first phase of a two-phase commit: an optimistic T is validated
** (its keys are locked from here on), then T's writes are written to the
** WAL with a prepare marker -- to no memtable: invisible to readers --
** durable when it returns if T has RAVEL_SYNC (as a commit is).  T must
** be named.  Afterwards T can be read from, and committed or rolled back,
** not written to.  On failure T is as before; a failed WAL write stops
** the database's writes, and since the record may have reached the WAL,
** the next open may list T as prepared (roll it back then). */
RAVEL_API int ravel_txn_prepare(ravel_txn *t);
/* Writes everything atomically, or nothing (RAVEL_CONFLICT, RAVEL_TIMEDOUT,
** RAVEL_DEADLOCK: retriable; others: not).  The transaction is over
** either way, except that a prepared transaction whose commit failed
** stays prepared.  A failed write stops the database's writes (as any
** failed write does), and whether the commit record reached the WAL is
** known at the next open: the transaction is then committed, or listed
** as prepared again.  A recovered transaction commits with RAVEL_SYNC. */
RAVEL_API int ravel_txn_commit(ravel_txn *t);
/* Discards the writes and releases the locks.  A prepared transaction's
** rollback writes a rollback marker to the WAL (durable with RAVEL_SYNC);
** RAVEL_READONLY when the database takes no writes (then it stays
** prepared). */
RAVEL_API int ravel_txn_rollback(ravel_txn *t);
/* Frees T, rolling it back if it is still open.  A prepared T is left
** prepared (it can be recovered; its keys stay locked until then). */
RAVEL_API void ravel_txn_free(ravel_txn *t);
/* The prepared transaction named NAME, found after a reopen (or left by
** ravel_txn_free), as a transaction to commit or roll back.  RAVEL_NOTFOUND
** if there is none of that name (ravel.prepared-transactions lists them). */
RAVEL_API int ravel_txn_recover(ravel_db *db, const char *name,
                                ravel_txn **out);

/* The body of a transaction for ravel_txn_run: reads and writes through T,
** returns RAVEL_OK to commit, anything else to roll back (that code is
** ravel_txn_run's result; a retriable code from a transaction call
** passed on unchanged makes it run again). */
typedef int (*ravel_txn_fn)(ravel_txn *t, void *ctx);
/* Runs FN in a new transaction (FLAGS as ravel_txn_begin's) and commits
** it; on RAVEL_CONFLICT, RAVEL_TIMEDOUT or RAVEL_DEADLOCK (from FN or the
** commit) rolls back, waits a short random time that doubles each try,
** and runs it again, at most MAX_ATTEMPTS times in all (0: 10).  Returns
** RAVEL_OK once a run committed, or the last result.  FN may run more
** than once: it must not have effects outside the transaction that a
** second run would repeat. */
RAVEL_API int ravel_txn_run(ravel_db *db, int flags, ravel_txn_fn fn,
                            void *ctx, int max_attempts);

/* ---------------------------------------------------------- introspection */

/* Text about the database, in *text (free with ravel_free).  Names are
** spelled as RocksDB spells its properties (words joined by '-'), with
** RocksDB's own name where RocksDB has the concept.  Aliases are accepted
** too: "rocksdb:" RocksDB's name for the same quantity (a program written
** for RocksDB asks for it unchanged; the text ones -- stats, levelstats,
** sstables -- describe the same things in ravel's own format, and
** estimate-num-keys counts deletions as entries where RocksDB subtracts
** them), and
** "deprecated:" the older underscore spelling of ravel 0.x, kept so the
** programs that use it go on working.
**
**   name                          meaning                      [aliases]
**   ravel.stats                   write groups formed, mean and max group
**                                 size, WAL bytes and records, fsyncs issued,
**                                 writers per fsync, the WAL I/O path in
**                                 use, memtables, sequence numbers, whether
**                                 writes are accepted (more below)
**                                 [rocksdb: rocksdb.stats]
**   ravel.last-sequence           last sequence number assigned
**                                 [deprecated: ravel.last_sequence]
**   ravel.last-visible-sequence   last sequence number visible to reads
**                                 [deprecated: ravel.last_visible_sequence]
**   ravel.num-immutable-mem-table memtables switched out, still in memory
**                                 [rocksdb: rocksdb.num-immutable-mem-table]
**                                 [deprecated: ravel.num_immutable_mem_table]
**   ravel.cur-size-active-mem-table  bytes in the active memtable
**                                 [rocksdb: rocksdb.cur-size-active-mem-table]
**                                 [deprecated: ravel.cur_size_active_mem_table]
**   ravel.wal-io                  "sync", "uring" or "direct", and in
**                                 parentheses why (auto: the probe's costs)
**                                 [deprecated: ravel.wal_io]
**   ravel.read-only-reason        why writes are refused ("" if they are not)
**                                 [deprecated: ravel.read_only_reason]
**   ravel.options                 the options in force, "name=value" lines
**   ravel.num-files-at-levelN     table files at level N (0 .. 6)
**                                 [rocksdb: rocksdb.num-files-at-levelN]
**   ravel.sstables                one line per table file: level, number,
**                                 size, entries, key range, sequence range
**                                 [rocksdb: rocksdb.sstables]
**   ravel.estimate-num-keys       entries in files and memtables (counts
**                                 overwritten and deleted keys too)
**                                 [rocksdb: rocksdb.estimate-num-keys]
**   ravel.cur-size-all-mem-tables bytes of every memtable in memory
**                                 [rocksdb: rocksdb.cur-size-all-mem-tables]
**   ravel.block-cache-usage       bytes held by the block cache
**                                 [rocksdb: rocksdb.block-cache-usage]
**   ravel.background-errors       background jobs (flushes, compactions)
**                                 that failed
**                                 [rocksdb: rocksdb.background-errors]
**   ravel.write-ordering          the ordering mode in force: "ordered",
**                                 "unordered", "write-prepared" or
**                                 "in-order-publication"
**   ravel.levelstats              per level: files, bytes, target, score
**                                 [rocksdb: rocksdb.levelstats]
**   ravel.compaction-pending      1 if a compaction is due, else 0
**                                 [rocksdb: rocksdb.compaction-pending]
**   ravel.num-running-compactions compactions running now
**                                 [rocksdb: rocksdb.num-running-compactions]
**   ravel.estimate-pending-compaction-bytes
**                                 bytes compaction must rewrite to bring
**                                 every level within its target [rocksdb:
**                                 rocksdb.estimate-pending-compaction-bytes]
**   ravel.actual-delayed-write-rate  bytes/s writes are paced to now (0:
**                                 not slowed down)
**                                 [rocksdb: rocksdb.actual-delayed-write-rate]
**   ravel.is-write-stopped        1 if writes are stopped by the write
**                                 controller now, else 0
**                                 [rocksdb: rocksdb.is-write-stopped]
**   ravel.prepared-transactions   the names of the prepared transactions
**                                 not yet committed or rolled back, one
**                                 per line ("" if none)
**   ravel.reader-lag              read_only: the sequence read up to and
**                                 how long ago the last catch-up
**                                 succeeded, as lines name=value:
**                                 sequence, ms_since_catch_up, catch_ups,
**                                 rebuilds, retries, failures, interval_ms
**                                 (a writer: "writer: sequence=N")
** ravel.stats also counts flushes (bytes, entries, time), write groups that
** waited for a flush and for how long, table files and WAL segments
** deleted (and with WAL retention, the segments and bytes archive/
** holds), and for the ordering modes: inserts pending, memtable switches
** that waited for them, writers that waited to be published, leaders that
** waited for room, the commit table's evictions and newest evicted prepare
** sequence, the commit watermark, and gets read again after meeting an
** evicted entry; compactions (by level: count, bytes read and written,
** time), write amplification, and the write controller: the condition in
** force and its cause, the current rate, the time writes were stopped and
** slowed down by cause, writes refused with RAVEL_BUSY.  Its text is lines
** of at most 80 columns, a long one continued on lines that start with
** spaces.  With write_prepared, ravel.last-visible-sequence is the last
** commit sequence published (RocksDB's last_published_seq).  An unknown
** name is RAVEL_NOTFOUND, with a message listing the known names. */
RAVEL_API int ravel_property(ravel_db *db, const char *name, char **text);

/* ------------------------------------------- bulk ingest (ops: ingest) */

/* A table-file writer: builds, outside any database, a file that
** ravel_ingest can add to one.  Keys are added in strictly increasing
** bytewise order (the only order ravel has), each at most once: a put or
** a delete (a delete hides the key's older values once ingested).  The
** file is written to PATH, which must not exist; ravel_sst_writer_finish
** completes it and makes it durable (the file and its directory entry
** fdatasynced).  Its blocks are laid out as OPTS says (block_size,
** block_restart_interval, bloom_bits_per_key, compression; NULL: the
** defaults); ravel_ingest rewrites it in the database's own layout
** anyway.  A writer that failed keeps failing with its first error.
** One thread at a time per writer. */
typedef struct ravel_sst_writer ravel_sst_writer;

/* Creates PATH (RAVEL_INVALID if it exists, RAVEL_IOERR if it cannot be
** created) and a writer for it in *OUT. */
RAVEL_API int ravel_sst_writer_open(const char *path,
                                    const ravel_options *opts,
                                    ravel_sst_writer **out);
/* Adds a put of KEY (KLEN bytes, 1 .. RAVEL_MAX_KEY_SIZE) with value VAL.
** RAVEL_INVALID if KEY is not greater than the key added before it: the
** message names both keys' positions (the first key added is position
** 0), and nothing is added. */
RAVEL_API int ravel_sst_writer_put(ravel_sst_writer *w, const void *key,
                                   size_t klen, const void *val, size_t vlen);
/* Adds a delete of KEY, in the same order as puts. */
RAVEL_API int ravel_sst_writer_delete(ravel_sst_writer *w, const void *key,
                                      size_t klen);
/* Writes the rest of the file and makes it durable.  RAVEL_INVALID if no
** key was added (an empty file could only be refused by ravel_ingest):
** the file is removed then.  *ENTRIES (if not NULL) receives the number
** of keys added. */
RAVEL_API int ravel_sst_writer_finish(ravel_sst_writer *w, uint64_t *entries);
/* Frees the writer; a file it did not finish is removed.  NULL is a
** no-op. */
RAVEL_API void ravel_sst_writer_free(ravel_sst_writer *w);

/* Flags for ravel_ingest. */
#define RAVEL_INGEST_MOVE 0x1 /* remove the source files once the ingest is
                              ** durable, and hard-link them where they can
                              ** go in as they are (without it they are
                              ** copied and kept) */

/* Adds the N table files PATHS (written by ravel_sst_writer) to DB,
** atomically: every reader, snapshot and iterator sees all of them or
** none; a snapshot taken before the call sees none of it.  Their keys
** replace every value written before the call, and every write that
** returns after it (or waits behind it) replaces them.  Every file is
** read and checked first (every block's checksum, the keys' order).
** When nothing in the database overlaps the files' key ranges and no
** snapshot or transaction is live, the files go in as they are, at the
** last level: hard-linked with RAVEL_INGEST_MOVE (copied where a link
** cannot be made, e.g. from another file system), else copied byte for
** byte.  Otherwise each is copied into the database with its keys under
** one new sequence number, at the deepest level where it overlaps
** nothing above it, memtables holding keys of its range flushed first.
** Writes wait while the files are placed or copied; reads do not.  One
** manifest edit adds every file: after a crash the database holds all of
** them or none (files placed but not yet named are removed by the next
** open).
** Refused, with nothing ingested and a message naming the file:
** RAVEL_NOTFOUND for a missing file, RAVEL_INVALID for files whose key
** ranges overlap each other (naming both), an empty file, a file holding
** range tombstones (ravel_sst_writer writes none), N == 0 or
** unknown FLAGS, a database opened with unordered_write or
** write_prepared; RAVEL_READONLY on a database opened read_only or once
** writes are stopped; RAVEL_CORRUPT for a file that is not a ravel table
** written by ravel_sst_writer (another format, a database's own table
** file), fails a checksum, or holds keys out of order; RAVEL_IOERR for a
** failed read or write.  A failure after the manifest edit was attempted
** stops writes (as a failed flush does); the next open finds the
** database with all of the files or none. */
RAVEL_API int ravel_ingest(ravel_db *db, const char *const *paths, size_t n,
                           int flags);

/* ------------------------------------------------------------ repair
** (issue 22, part 5: repair)
**
** ravel_repair salvages a damaged database directory: one whose manifest
** or CURRENT is lost or damaged, whose WAL is damaged in the middle, or
** whose table files are partly damaged.  It reads every entry it can
** verify -- each data block of each table file whose checksum holds (found
** through the table's index, or by walking the blocks from the file's
** start when the index or footer is damaged, searching for the next
** block after a damaged one), each WAL record whose
** checksum holds (skipping damage and resynchronising after it), and the
** files of prepared transactions the WAL does not show resolved -- merges
** them by key, keeps the newest version of each key (deletions too: a key
** whose newest surviving version is a deletion stays deleted) and writes
** the result as fresh table files at one level (below), with a fresh
** manifest whose last sequence is the largest one seen.  Entries at
** sequence 0 (a file an ingest placed as it is, its checksums seeded with
** file number 0: nothing else held its keys then) lose to every other
** version of their key; among several at sequence 0, the one in the
** highest-numbered file wins, and the report counts them.
**
** A database that needs nothing -- IDENTITY whole, the manifest CURRENT
** names read whole and naming exactly the table files there, every block
** verifying, the WAL whole -- is left as it is (the report says "nothing
** to repair"), so a second repair of a repaired database changes nothing.
**
** It never runs on an open database: it takes the LOCK, and returns
** RAVEL_LOCKED (changing nothing) if the database is open for writing, in
** this process or another.  (Stop read-only users too: a reader that
** takes no lock cannot be seen.)  It never deletes an original file: before the new manifest
** is installed, CURRENT, the manifests, the WAL segments, the table files
** and the prepared transactions' files are moved (renamed) into
** DIR/lost-repair-YYYYmmddTHHMMSS/ (UTC; ".N" appended if that exists),
** byte for byte as they were.  A table file a manifest that could be read
** records as deleted (a compaction's input) is not merged, since it could
** bring back keys deleted after it, and is moved aside too.  If repair is
** interrupted, run it again: the new tables are durable before any
** original is moved, and a second run salvages from them.
**
** The report says exactly what was kept and what was lost: per table file,
** the entries kept, and each damaged block with its byte offset and the
** range of keys it covered (and, where the file's properties could be
** read, how many entries were lost); per WAL segment the records replayed
** and dropped; entries kept inside a lost range at a sequence below what
** the lost part may have held (a newer version, or a deletion, may have
** been lost: check those keys); and totals.  Each line is given to FN (if
** not NULL) with CTX and its kind, as it is made, and the whole text is
** returned in *REPORT (if REPORT is not NULL; free with ravel_free).
**
** OPTS (NULL: the defaults) gives the new table files' block size, filter,
** compression and file size (target_file_size_base).  The files go to
** the last level OPTS's num_levels allows, but no deeper than the deepest
** level a readable manifest used (which the database's own num_levels
** allowed); with no manifest, open the repaired database with a
** num_levels at least as large as OPTS's.
** Returns RAVEL_OK once the repaired database is installed (whatever was
** lost: the report says), RAVEL_LOCKED, RAVEL_INVALID if DIR is not a
** database directory, RAVEL_IOERR / RAVEL_NOMEM naming what failed (the
** original files are then all still in DIR or in the lost directory
** named in the report). */

/* The kinds of report lines. */
#define RAVEL_REPAIR_NOTE 0 /* what was found and done */
#define RAVEL_REPAIR_KEPT 1 /* what was recovered */
#define RAVEL_REPAIR_LOST 2 /* what was lost */
#define RAVEL_REPAIR_WARN 3 /* what was kept but may be stale or wrong */

typedef void (*ravel_repair_fn)(void *ctx, int kind, const char *line);

RAVEL_API int ravel_repair(const char *dir, const ravel_options *opts,
                           ravel_repair_fn fn, void *ctx, char **report);
/* ---------------------------------------------------------------------
** Checkpoints and backups (issue 22, part 2: "backup")
**
** A checkpoint is a new directory that opens as a database holding the
** state of DB at one moment during the call.  A backup root is a
** directory of incremental backups that share their table files; a
** one-file backup is a whole backup in a single file or stream.  Every
** copy is checksummed (XXH3_64) and fsynced before the call returns, and
** a copy cut short by a crash is never taken for a good one.  Each call
** works on a reader handle too (read_only=true, in another process than
** the writer's, or with no writer): see "From a reader" below.
** docs/operations.md ("Checkpoints and backups") is the guide,
** docs/formats.md has the formats.
** ------------------------------------------------------------------- */

/* Makes DIR (which must not exist: RAVEL_INVALID) a database holding the
** state of DB at one moment during the call: every write acknowledged
** before the call began is in it, and no write begun after it returned.
** Table files are hard-linked when DIR is on the database's file system
** and copied when not (or where links are refused); the WAL that holds
** the rest is copied.  Writers wait only for a memtable switch (the
** current WAL segment's fdatasync); the copying runs beside them.  The
** directory is built as DIR.partial and renamed to DIR once every file
** and the directory are fsynced: after a crash DIR is whole or absent (a
** DIR.partial left behind is removed by the next checkpoint to DIR).
** The WAL of the memtables not yet flushed is copied (up to
** write_buffer_size times max_write_buffer_number bytes: ravel_flush
** first makes it small).
** With RAVEL_NO_WAL writes taken since the open, the call also flushes
** the memtables (those writes are in no WAL).  RAVEL_READONLY on a
** writer whose writes were stopped; RAVEL_IOERR naming the file that
** failed.
**
** From a reader (read_only=true), this call, ravel_backup_create and
** ravel_backup_write_file/_fd first catch up (as ravel_catch_up: every
** write the writer had acknowledged to its WAL before the call is then
** in the copy; RAVEL_BUSY as there), then copy the state the reader then
** reads, at its sequence: its table files through the descriptors it
** holds (hard-linked while the name in the database directory is still
** that file; copied from the descriptor where the writer deleted it or
** across file systems), and its memtable, written as one new level-0
** table file of the copy; a new manifest; no WAL.  Nothing is written
** into the database's directory, and the writer is neither paused nor
** told.  Not in such a copy: prepared, uncommitted transactions (a
** reader sees a transaction at its commit), and what a reader does not
** see yet (a writer's unflushed manual_wal_flush buffer, RAVEL_NO_WAL
** writes not yet in a table file). */
RAVEL_API int ravel_checkpoint(ravel_db *db, const char *dir);

/* Takes a backup of DB into the backup root ROOT (created if missing)
** and sets *ID to its number (1, 2, ...).  The state is a checkpoint's,
** taken as ravel_checkpoint does.  Table files already in ROOT (from an
** earlier backup of the same database) are shared, not copied again, so
** a backup after 1% of the data changed copies about 1%
** (RAVEL_BACKUP_COPIED says how much).  A table file is known by its
** number, its size and the random session id (table property
** ravel.session_id) the handle that wrote it recorded in it, so two
** databases backed up into one root never take each other's files.  The backup exists only once its
** meta file, written last, is durable; what a crashed or failed backup
** left is removed by the next create or purge.  RAVEL_LOCKED if another
** backup or purge of ROOT is running.  From a reader handle: as
** ravel_checkpoint says (its table files are shared with backups the
** writer took; its memtable's table file is the backup's own). */
RAVEL_API int ravel_backup_create(ravel_db *db, const char *root,
                                  uint64_t *id);

/* Called by ravel_backup_list with the id of each complete backup, oldest
** first; non-zero stops the listing and is returned. */
typedef int (*ravel_backup_fn)(void *ctx, uint64_t id);

/* Lists the complete backups of ROOT (those whose meta file is whole and
** verifies; it does not read their other files: ravel_backup_verify
** does).  RAVEL_NOTFOUND if ROOT is not a backup root. */
RAVEL_API int ravel_backup_list(const char *root, ravel_backup_fn fn,
                                void *ctx);

/* What ravel_backup_info reports. */
#define RAVEL_BACKUP_TIME     1 /* when it was taken, seconds since 1970 */
#define RAVEL_BACKUP_SEQUENCE 2 /* a sequence number it holds every
                                ** batch up to (batches written while it
                                ** was taken may follow it in the
                                ** backup: the restored database's
                                ** ravel.last-sequence is exact) */
#define RAVEL_BACKUP_BYTES    3 /* bytes of all its files */
#define RAVEL_BACKUP_COPIED   4 /* bytes it copied when taken (the rest it
                                ** shares with older backups) */
#define RAVEL_BACKUP_FILES    5 /* number of files */

/* Sets *VALUE to WHAT (RAVEL_BACKUP_*) of backup ID in ROOT, from its
** meta file.  RAVEL_NOTFOUND if there is no complete backup ID;
** RAVEL_CORRUPT if its meta file is damaged or cut short. */
RAVEL_API int ravel_backup_info(const char *root, uint64_t id, int what,
                                uint64_t *value);

/* Reads every file of backup ID and checks its size and checksum against
** the meta file.  RAVEL_CORRUPT naming the first file that is missing,
** short or damaged (or the meta file itself); RAVEL_NOTFOUND if there is
** no backup ID. */
RAVEL_API int ravel_backup_verify(const char *root, uint64_t id);

/* Restores backup ID of ROOT into DIR, which must not exist: every file is
** checked against its checksum as it is copied, built in DIR.partial,
** fsynced and renamed to DIR, which then opens as the database.  A backup
** that fails a check is refused (RAVEL_CORRUPT naming the file) and
** leaves no DIR.  ID 0 restores the newest complete backup. */
RAVEL_API int ravel_backup_restore(const char *root, uint64_t id,
                                   const char *dir);

/* Deletes all but the KEEP newest complete backups of ROOT (KEEP >= 1:
** RAVEL_INVALID otherwise), then every shared file no remaining backup
** names, and what a crashed backup left.  A backup whose meta file is
** damaged is left in place, and while one exists no shared file is
** deleted (what it names cannot be read).  RAVEL_LOCKED if another backup
** or purge of ROOT is running. */
RAVEL_API int ravel_backup_purge(const char *root, int keep);

/* Writes a full backup of DB (the state of a checkpoint) as one file at
** PATH, which must not exist: written to PATH.partial, fsynced, renamed.
** The format (docs/formats.md, "One-file backups") is checksummed chunk
** by chunk and as a whole, and written front to back, never seeking.
** From a reader handle: as ravel_checkpoint says. */
RAVEL_API int ravel_backup_write_file(ravel_db *db, const char *path);

/* The same to the open file descriptor FD (a pipe, a socket, a file),
** which is neither closed nor fsynced (the caller owns it).  A reader
** that goes away is RAVEL_IOERR (EPIPE): SIGPIPE is blocked in the
** calling thread while it writes, and one it raised is taken back.  Call
** it from the process that opened DB, not from a child forked from it
** (the child has none of the database's background threads). */
RAVEL_API int ravel_backup_write_fd(ravel_db *db, int fd);

/* Restores a one-file backup from PATH into DIR, which must not exist:
** every chunk and the whole are checked before DIR is renamed into place;
** a truncated or damaged backup is RAVEL_CORRUPT (naming the byte offset)
** and leaves no DIR. */
RAVEL_API int ravel_backup_restore_file(const char *path, const char *dir);

/* The same reading the open file descriptor FD (a pipe too) to the
** backup's end; FD is not closed. */
RAVEL_API int ravel_backup_restore_fd(int fd, const char *dir);
/* ----------------------------------- operating: readers in other processes */

/*
** A database opened with read_only=true is a reader.  It takes no lock: any
** number of readers, in any processes, open a directory beside its one
** writer (a second writer is still RAVEL_LOCKED), or with no writer at all,
** and a writer can open while readers are open.  A reader sees the state it
** built at open, then at each catch-up: always a state the writer had --
** whole batches, in commit order, never part of a write group, never a
** prepared transaction before its commit.  The writer never waits for a
** reader and never deletes anything a reader uses: a reader holds every
** table file of the versions it reads open (an open file survives its
** deletion), and a reader that crashes holds nothing.  The cost: a
** reader's table files count against the process's open-file limit beside
** max_open_files, and a file the writer deleted keeps its disk space
** until no reader's version holds it.
**
** Exceptions to "sees every acknowledged write after a catch-up": writes
** still in the writer's buffer under manual_wal_flush=true (until
** ravel_flush_wal), and RAVEL_NO_WAL writes (until a flush puts them in a
** table file) -- a reader sees only what is in the WAL or the tables.
**
** Snapshots and iterators of a reader keep the state they were made on
** across catch-ups, however the writer compacts meanwhile.
**
** Promotion: once the writer is gone (its LOCK free), the same process can
** open the directory read-write with ravel_open while the reader handle is
** still open; the reader's snapshots and iterators stay valid (they hold
** their files open) and keep showing the state they were made on.  The
** reader handle does not become the writer: write through the new handle,
** and catch the reader up (or close it) to see its writes.
*/

/* Catches the reader DB up with the writer: when it returns RAVEL_OK, DB's
** reads see every write the writer had acknowledged (and put in its WAL)
** before the call began, and nothing of a write not yet whole.  Snapshots
** and iterators taken before keep their state.  Catch-ups are serialized;
** reads go on meanwhile, without waiting.  RAVEL_OK at once on a writer.
** RAVEL_BUSY if the writer moved its log (flushes, a reopen) under 100
** attempts in a row, or if CURRENT is gone from the directory (a repair,
** a restore or a deletion in progress), RAVEL_CORRUPT / RAVEL_IOERR naming the file and
** offset for damage the writer's moving does not explain; DB keeps its
** previous state then.  RocksDB's TryCatchUpWithPrimary.  With option
** catch_up_interval_ms, a thread of the handle's calls it at that
** interval (its failures counted by ravel.reader-lag). */
RAVEL_API int ravel_catch_up(ravel_db *db);
/* ------------------------------------ change feed (operations: feed) */

/* Reading a batch back, and a batch as bytes: what the change feed hands
** out (ravel_updates_batch), what a replica applies with ravel_write, and
** how a batch travels between processes.  The bytes are the batch's own
** representation (docs/formats.md, "Batch"), the payload of its WAL
** record: a sequence (0 in a batch never written; the feed's batches
** carry theirs), a count and the operations. */
#define RAVEL_OP_DELETE 0 /* an operation of a batch: a delete ... */
#define RAVEL_OP_PUT    1 /* ... or a put */
#define RAVEL_OP_DELETE_RANGE 2 /* ... or a range delete: *KEY is its
                                ** begin, *VAL its end (excluded) */

/* Reads the operation of B at *POS -- 0 for the first, then the value
** the previous call left in *POS -- and moves *POS past it: RAVEL_OK with
** *OP (RAVEL_OP_PUT, RAVEL_OP_DELETE or RAVEL_OP_DELETE_RANGE), *KEY and
** *KLEN, and for a put *VAL and *VLEN (a delete: NULL and 0; a range
** delete: its end), pointing into B (valid until B
** changes or is freed); RAVEL_NOTFOUND (no message) after the last.
** RAVEL_INVALID for a NULL argument; RAVEL_CORRUPT for a *POS that is
** not where an operation starts. */
RAVEL_API int ravel_batch_next_op(const ravel_batch *b, size_t *pos, int *op,
                                  const void **key, size_t *klen,
                                  const void **val, size_t *vlen);

/* B's bytes, *LEN of them, pointing into B (valid until B changes or is
** freed): give them to ravel_batch_from_data to make the same batch
** again, in this process or another.  NULL with *LEN 0 for NULL. */
RAVEL_API const void *ravel_batch_data(const ravel_batch *b, size_t *len);

/* A new batch holding a copy of DATA (LEN bytes, from ravel_batch_data),
** checked whole first: RAVEL_CORRUPT naming what is wrong and its byte
** offset (shorter than the 12-byte header, an unknown operation, a
** truncated length, key or value, a key or value above its limit,
** trailing bytes, a count that differs from the operations, a
** transaction's marker), and then nothing is made; RAVEL_INVALID for
** NULL DATA with LEN > 0, a NULL OUT or LEN above RAVEL_MAX_BATCH_SIZE;
** RAVEL_NOMEM.  Free with ravel_batch_free. */
RAVEL_API int ravel_batch_from_data(const void *data, size_t len,
                                    ravel_batch **out);

/* The sequence in B's header: the sequence of its first operation for a
** batch from the feed (operation i has sequence + i), 0 for a batch never
** written (ravel_write does not change the caller's batch). */
RAVEL_API uint64_t ravel_batch_sequence(const ravel_batch *b);

/* The change feed: the batches committed to the database, in commit
** order, each with its sequence and its operations, read back from the
** write-ahead log (docs/operations.md).  An iterator does not
** rescan the log: it starts in the one segment holding the sequence asked
** for (found from each segment's first record, read once per handle),
** and from there reads each record once.  At the end of what has been
** written it says so (RAVEL_NOTFOUND), and a later call goes on with the
** batches written since: a follower tails the database by calling
** ravel_updates_next in a loop, pausing when it returns RAVEL_NOTFOUND.
**
** What it shows: every batch written through the WAL (ravel_write,
** ravel_put, ravel_delete, a transaction's commit) once it is in the WAL
** file -- before ravel_write returns, or with manual_wal_flush once the
** buffer is written -- and without RAVEL_SYNC possibly before it is
** durable: a power loss may take such a batch from the database after the
** feed showed it.  A prepared transaction appears once, when it commits
** (its operations, at its commit's sequence), never at prepare, and a
** rolled-back one never.  Not in the feed: RAVEL_NO_WAL writes, files
** added by bulk ingest; their sequences are gaps, as are those of
** prepares and rollbacks.
**
** How long it reaches back: the WAL segments not yet flushed, and with
** the options wal_ttl_seconds / wal_size_limit_mb the flushed ones kept in
** DIR/archive/.  A sequence older than that is RAVEL_EXPIRED: the
** follower starts again from a checkpoint of the database.
**
** A database opened read_only can be followed as well (the feed reads the
** directory's files); it reads what the writer has written, whichever
** process that is.  An iterator is used by one thread at a time and freed
** before its database is closed (ravel_close refuses to close while one
** is open, as for ravel_iter). */
typedef struct ravel_updates ravel_updates;

/* A new iterator over the batches from sequence SEQ on: the first batch
** shown is the one holding SEQ (a batch holds the sequences s .. s +
** count - 1, s its sequence: it is shown whole even when SEQ is inside
** it), or the first one after SEQ when none holds it; 0 means 1, the
** first.  Not positioned: call ravel_updates_next.  FLAGS: 0.
** RAVEL_EXPIRED (the message names the oldest sequence still available)
** if batches at or after SEQ are no longer in the WAL; RAVEL_INVALID for
** unknown flags or a NULL OUT; RAVEL_IOERR, RAVEL_NOMEM. */
RAVEL_API int ravel_updates_since(ravel_db *db, uint64_t seq, int flags,
                                  ravel_updates **out);

/* Moves to the next batch: RAVEL_OK, and ravel_updates_batch and
** ravel_updates_sequence give it; RAVEL_NOTFOUND (no message) at the end
** of what the WAL holds now -- call again later; RAVEL_EXPIRED if what
** comes next was deleted before it was read (a follower too far behind:
** the message says where it stopped); RAVEL_CORRUPT for a record that
** verifies but is malformed or out of order; RAVEL_IOERR.  After
** RAVEL_EXPIRED or RAVEL_CORRUPT the iterator is stopped: every later
** call returns the same code and message, and it never reads past the
** gap or the damage. */
RAVEL_API int ravel_updates_next(ravel_updates *u);

/* The current batch's sequence (0 when there is none). */
RAVEL_API uint64_t ravel_updates_sequence(const ravel_updates *u);

/* The current batch (NULL when there is none): read it with
** ravel_batch_next_op, apply it with ravel_write, send it with
** ravel_batch_data.  Owned by the iterator, valid until its next call. */
RAVEL_API const ravel_batch *ravel_updates_batch(const ravel_updates *u);

/* The last sequence the iterator has passed: the current batch's last
** one, or more when it passed records the feed does not show (a
** prepare, a rollback); 0 before the first.  A follower that stops
** resumes with ravel_updates_since(db, this + 1). */
RAVEL_API uint64_t ravel_updates_last_sequence(const ravel_updates *u);

/* Frees the iterator; NULL is a no-op. */
RAVEL_API void ravel_updates_free(ravel_updates *u);

#ifdef __cplusplus
}
#endif

#endif /* RAVEL_H */
