/*
** testutil.h -- helpers shared by the end-to-end test programs
** (tests/test_*.c), which test ravel through its public API.
**
** Owns: the scratch directory every test database lives in (a fresh
** mkdtemp directory under $TMPDIR or /tmp, removed at exit); opening a
** database on the WAL I/O path the run asks for (RAVEL_TEST_WAL_IO=uring or
** sync, set by tests/meson.build), exiting 77 -- meson's skip code -- with
** the reason when io_uring cannot be set up; checking that a failing call
** set an error message of its own; and failure reporting from worker
** threads, where cmocka's assertions (which longjmp) must not be used.
*/
#ifndef RAVEL_TESTUTIL_H
#define RAVEL_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <sys/types.h>
#include <cmocka.h>

#include "ravel.h"

/* Creates the scratch directory and checks that a database can be opened
** on the requested WAL I/O path (exit 77 if io_uring cannot be set up).
** Makes stdout unbuffered and, when RAVEL_TEST_WATCHDOG=SECONDS is set,
** starts a watchdog that prints every thread's backtrace (gdb) and aborts
** if the program is still running then.  Call first in main(). */
void tu_init(void);

/* For a child process of a test, after fork and before exec: it is killed
** when the test program exits (a failed test leaves no child behind), and
** tu_child_stuck may attach to it. */
void tu_child_prepare(void);

/* A child that stopped making progress: prints every thread's backtrace of
** PID (gdb) to stderr, saying WHAT was awaited, then kills it.  The caller
** then fails the test. */
void tu_child_stuck(pid_t pid, const char *what);

/* "uring", "sync", or NULL when RAVEL_TEST_WAL_IO is unset (engine default). */
const char *tu_wal_io(void);

/* A new path inside the scratch directory, printf-style; malloc'd. */
char *tu_path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Removes PATH and everything below it (no error if absent). */
void tu_rm_rf(const char *path);

/* Options with create_if_missing=true, the run's wal_io, the run's
** RAVEL_TEST_OPTIONS (an ordering mode, "name=value;..."), then EXTRA
** ("name=value;..." or NULL).  Fails the test on a parse error. */
ravel_options *tu_options(const char *extra);

/* The same without failing the test (for a child process, where cmocka's
** assertions must not be used): returns the result code of the parse. */
int tu_options_try(const char *extra, ravel_options **out);

/* Opens DIR with tu_options(EXTRA).  Returns the result code; exits 77 if
** the run asked for wal_io=uring or direct and cannot have it
** (tu_skip_if_no_uring). */
int tu_open(const char *dir, const char *extra, ravel_db **db);

/* Same, and fails the test unless it returns RAVEL_OK. */
ravel_db *tu_open_ok(const char *dir, const char *extra);

/* Exits 77 (after printing why) if RC/ravel_errmsg() from an open with
** wal_io=uring or direct say io_uring could not be set up, or the file
** system refuses O_DIRECT. */
void tu_skip_if_no_uring(int rc);

/* A property, malloc'd by ravel (free with ravel_free); fails the test if
** the property cannot be read.  Lines ravel.stats continues on indented
** lines (it keeps to 80 columns) are joined back into one. */
char *tu_prop(ravel_db *db, const char *name);
/* A numeric property; fails the test if it is not a decimal number. */
uint64_t tu_prop_u64(ravel_db *db, const char *name);

/* Fails the test unless KEY (NUL-terminated) reads as VAL through SNAP
** (NULL: latest); VAL NULL means the key must be absent. */
#define tu_expect(db, snap, key, val) \
    tu_expect_at(__FILE__, __LINE__, (db), (snap), (key), (val))
void tu_expect_at(const char *file, int line, ravel_db *db,
                  const ravel_snapshot *snap, const char *key,
                  const char *val);

/* Puts a NUL-terminated key/value, failing the test unless RAVEL_OK. */
void tu_put(ravel_db *db, int flags, const char *key, const char *val);

/* ravel_errmsg() is not cleared by successful calls, so a check that a
** failing call set a message must first put a known message in place:
** tu_errmsg_prime() does, and tu_errmsg_is_fresh() says whether the
** current message is non-empty and not the primed one. */
void tu_errmsg_prime(void);
int tu_errmsg_is_fresh(void);

/* Calls CALL, which must return EXPECTED and set a message of its own. */
#define TU_EXPECT_RC(expected, call) do { \
        tu_errmsg_prime(); \
        int tu_rc_ = (call); \
        if (tu_rc_ != (expected)) \
            fail_msg("%s: returned %d (%s), expected %d (%s); errmsg: %s", \
                     #call, tu_rc_, ravel_errstr(tu_rc_), (expected), \
                     ravel_errstr(expected), ravel_errmsg()); \
        if (!tu_errmsg_is_fresh()) \
            fail_msg("%s: returned %d but set no error message of its " \
                     "own (errmsg: \"%s\")", #call, tu_rc_, ravel_errmsg()); \
    } while (0)
#define TU_EXPECT_INVALID(call) TU_EXPECT_RC(RAVEL_INVALID, call)

/* Fails the test with the message unless RC is RAVEL_OK. */
#define TU_OK(call) do { \
        int tu_rc_ = (call); \
        if (tu_rc_ != RAVEL_OK) \
            fail_msg("%s: returned %d (%s): %s", #call, tu_rc_, \
                     ravel_errstr(tu_rc_), ravel_errmsg()); \
    } while (0)

/* Worker threads report failures here (the first message is kept);
** the main thread then calls tu_assert_no_thread_failures(). */
void tu_thread_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tu_thread_failures(void);
void tu_assert_no_thread_failures(void);
#define TU_CHECK(cond, ...) do { \
        if (!(cond)) \
            tu_thread_fail(__VA_ARGS__); \
    } while (0)

/* An unsigned number from the environment, or DFLT if unset. */
uint64_t tu_env_u64(const char *name, uint64_t dflt);

/* RAVEL_TEST_TIMEOUT_MULTIPLIER (1 if unset or 0): the runs that stretch
** meson's timeouts (the sanitizer runs of .ci/run) stretch every bound on
** a wait by it -- the watchdog's, and the crash harness's on a child. */
uint64_t tu_timeout_multiplier(void);

/* The monotonic clock, in milliseconds and in microseconds. */
uint64_t tu_now_ms(void);
uint64_t tu_now_us(void);

/* A small PRNG (xorshift64*), one state per thread. */
static inline uint64_t tu_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* Seed from the environment (RAVEL_TEST_SEED) or the clock; printed. */
uint64_t tu_seed(void);

/* Whole-file helpers for damaging a database's files.  tu_file_read
** NUL-terminates what it read (not counted in *len). */
int tu_file_read(const char *path, char **data, size_t *len);
int tu_file_write(const char *path, const char *data, size_t len);

/* ------------------------------------------------- table files, levels */

/* One table file as ravel.sstables names it. */
struct tu_sst {
    int level;
    uint64_t number, size, entries;
};

/* The table files the database's current version names (parsed from
** ravel.sstables), in *OUT (malloc'd, free with free; NULL when there
** are none); returns how many.  Fails the test on a line it cannot parse. */
int tu_sstables(ravel_db *db, struct tu_sst **out);

/* The numbers of the table files (NNNNNN.sst) in DIR, in *OUT (malloc'd,
** sorted); returns how many. */
int tu_dir_sst_numbers(const char *dir, uint64_t **out);

/* Whether DIR holds table file NUMBER. */
int tu_sst_exists(const char *dir, uint64_t number);

/* Table files of level LEVEL (ravel.num-files-at-levelN). */
uint64_t tu_files_at_level(ravel_db *db, int level);

/* Waits until no flush or compaction is due or running (no immutable
** memtable, ravel.compaction-pending and ravel.num-running-compactions
** 0, twice in a row); fails the test if that does not happen within a
** generous bound of polls (a minute: a bound against hanging, not a
** timing assertion). */
void tu_wait_background_idle(ravel_db *db);

/* Every entry SNAP (NULL: latest) shows, by a forward iterator, as
** "key=value\n" lines in one malloc'd buffer of *LEN bytes.  Safe in
** worker threads: failures go to tu_thread_fail, and NULL is returned. */
char *tu_scan_all(ravel_db *db, const ravel_snapshot *snap, size_t *len);

#endif /* RAVEL_TESTUTIL_H */
