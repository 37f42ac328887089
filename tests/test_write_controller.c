/*
** test_write_controller.c -- the write controller (docs/compaction.md):
** writes slowed down to delayed_write_rate, stopped until the cause
** clears, RAVEL_NO_SLOWDOWN refused with RAVEL_BUSY, and one controller
** shared by two databases; triggers at their largest mean never.
**
** Stalls are made without timing: the first compaction of level 0 is
** held at its pause point (util/fault.h) while ravel_flush adds files to
** level 0 until it reaches the slowdown or stop trigger; releasing it (and
** ravel_compact_range) clears them.  (Compactions stay enabled: as in
** RocksDB, the level 0 conditions do not apply with
** disable_auto_compactions, since nothing would clear them.)  The pacing
** check counts the bytes writers got acknowledged between two instants
** the test reads from the monotonic clock and compares that rate with the
** one the database reports (ravel.actual-delayed-write-rate), with a wide
** tolerance; no single operation's duration is asserted.  A blocked
** writer is one whose "returned" flag stays unset while the test checks
** the stop is in force; it must return once the test clears the stop.
*/
#include "testutil.h"
#include "db/db.h"
#include "util/fault.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Level 0 slows writes down at 2 files, never stops them; a memtable
** holds every write of a test, so nothing but ravel_flush adds a file. */
#define SLOWDOWN "level0_file_num_compaction_trigger=1;" \
                 "level0_slowdown_writes_trigger=2;" \
                 "level0_stop_writes_trigger=1000;write_buffer_size=8M"
/* Level 0 stops writes at 2 files. */
#define STOP "level0_file_num_compaction_trigger=1;" \
             "level0_slowdown_writes_trigger=2;" \
             "level0_stop_writes_trigger=2;write_buffer_size=8M"

static int db_counter;

static char *fresh_dir(void)
{
    return tu_path("wc-%d", db_counter++);
}

static void nap_ms(int ms)
{
    struct timespec t = {.tv_sec = ms / 1000,
                         .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Adds N files to level 0: a flush of two small writes each, one of them
** to a key every file has (so that once level 1 holds data, a compaction
** of level 0 must merge, not move). */
static void add_level0_files(ravel_db *db, int n)
{
    static int counter;
    char k[32];
    for (int i = 0; i < n; i++) {
        snprintf(k, sizeof k, "l0-file-%04d", counter++);
        tu_put(db, 0, k, "x");
        tu_put(db, 0, "l0-common", k);
        TU_OK(ravel_flush(db, 0));
    }
}

/* Lets a held compaction go (teardown too: a failed test must not leave
** a compaction thread waiting, which would hang the close). */
static int release_compactions(void **state)
{
    (void)state;
    rv_pause_release(RV_PAUSE_COMPACTION_PICKED);
    rv_pause_release(RV_PAUSE_FLUSH_TABLES_WRITTEN);
    return 0;
}

/* Brings level 0 to N files with compactions on: the compaction of the
** first file waits at its pause point, holding level 0, while the others
** are flushed. */
static void hold_level0(ravel_db *db, int n)
{
    uint64_t before = tu_files_at_level(db, 0);
    assert_int_equal(before, 0);
    rv_pause_arm(RV_PAUSE_COMPACTION_PICKED);
    add_level0_files(db, 1);
    int i = 0;
    for (; i < 4000 && !rv_pause_waiting(RV_PAUSE_COMPACTION_PICKED); i++)
        nap_ms(5);
    if (!rv_pause_waiting(RV_PAUSE_COMPACTION_PICKED))
        fail_msg("no compaction of level 0 started with 1 file at level 0 "
                 "and level0_file_num_compaction_trigger=1");
    add_level0_files(db, n - 1);
    assert_int_equal(tu_files_at_level(db, 0), n);
}

/* Releases the held compaction and lets level 0 drain. */
static void drain_level0(ravel_db *db)
{
    rv_pause_release(RV_PAUSE_COMPACTION_PICKED);
    tu_wait_background_idle(db);
    assert_int_equal(tu_files_at_level(db, 0), 0);
}

/* Polls PROP until it reads WANT (a bound against hanging: the state is
** recomputed when a flush or compaction installs its files). */
static void wait_prop(ravel_db *db, const char *prop, uint64_t want)
{
    uint64_t v = 0;
    for (int i = 0; i < 4000; i++) {
        v = tu_prop_u64(db, prop);
        if (v == want)
            return;
        nap_ms(5);
    }
    fail_msg("%s stayed %" PRIu64 ", expected %" PRIu64, prop, v, want);
}

static uint64_t delayed_rate(ravel_db *db)
{
    return tu_prop_u64(db, "ravel.actual-delayed-write-rate");
}

/* Fails unless the write controller's lines of ravel.stats (from the
** first "write controller" on) mention WHAT. */
static void expect_stats_mention(ravel_db *db, const char *what)
{
    char *stats = tu_prop(db, "ravel.stats");
    const char *wc = strstr(stats, "write controller");
    if (!wc)
        fail_msg("ravel.stats has no write controller line");
    if (!strstr(wc, what)) {
        fprintf(stderr, "ravel.stats:\n%s\n", stats);
        ravel_free(stats);
        fail_msg("the write controller's lines of ravel.stats do not "
                 "mention \"%s\"", what);
    }
    ravel_free(stats);
}

/* The writes refused with RAVEL_BUSY, from ravel.stats. */
static uint64_t refused_writes(ravel_db *db)
{
    char *stats = tu_prop(db, "ravel.stats");
    const char *at = strstr(stats, " writes refused (RAVEL_NO_SLOWDOWN)");
    if (!at)
        fail_msg("ravel.stats does not count refused writes:\n%s", stats);
    while (at > stats && at[-1] >= '0' && at[-1] <= '9')
        at--;
    uint64_t n = strtoull(at, NULL, 10);
    ravel_free(stats);
    return n;
}

static void print_controller_stats(ravel_db *db, const char *label)
{
    char *stats = tu_prop(db, "ravel.stats");
    printf("# %s: ravel.stats:\n", label);
    for (char *line = stats; line && *line;) {
        char *nl = strchr(line, '\n');
        int len = nl ? (int)(nl - line) : (int)strlen(line);
        if (memmem(line, (size_t)len, "stall", 5) ||
            memmem(line, (size_t)len, "slow", 4) ||
            memmem(line, (size_t)len, "controller", 10) ||
            memmem(line, (size_t)len, "stop", 4))
            printf("#   %.*s\n", len, line);
        line = nl ? nl + 1 : NULL;
    }
    ravel_free(stats);
}

/* The database's LOG names the entry into a stall of STATE ("stop",
** "slowdown") and CAUSE, and its end. */
static void expect_log_records(const char *dir, const char *state,
                               const char *cause)
{
    char path[4096], entry[64], end[64];
    snprintf(path, sizeof path, "%s/LOG", dir);
    char *log = NULL;
    size_t len = 0;
    assert_int_equal(tu_file_read(path, &log, &len), 0);
    snprintf(entry, sizeof entry, "write %s: %s", state, cause);
    snprintf(end, sizeof end, "write %s (%s) ended", state, cause);
    int ok = strstr(log, entry) && strstr(log, end);
    free(log);
    if (!ok)
        fail_msg("%s does not record \"%s\" and \"%s\"", path, entry, end);
}

/* ------------------------------------------------------------ pacing */

#define PACE_VALUE 1000

struct pacer {
    ravel_db *db;
    int id;
    uint64_t budget;            /* bytes this writer writes */
    _Atomic uint64_t *accepted; /* bytes acknowledged, all writers */
};

static void *pacer_main(void *p)
{
    struct pacer *w = p;
    char k[32], v[PACE_VALUE];
    memset(v, 'p', sizeof v);
    uint64_t done = 0;
    for (int i = 0; done < w->budget && !tu_thread_failures(); i++) {
        snprintf(k, sizeof k, "pace-%d-%06d", w->id, i);
        int rc = ravel_put(w->db, 0, k, strlen(k), v, sizeof v);
        TU_CHECK(rc == RAVEL_OK, "put %s: %s", k, ravel_errmsg());
        done += strlen(k) + sizeof v;
        atomic_fetch_add(w->accepted, strlen(k) + sizeof v);
    }
    return NULL;
}

/* Waits until *ACCEPTED reaches AT_LEAST; returns the clock then. */
static uint64_t wait_accepted(_Atomic uint64_t *accepted, uint64_t at_least,
                              uint64_t *seen)
{
    for (int i = 0; i < 120000; i++) { /* 2 minutes: against a hang */
        uint64_t v = atomic_load(accepted);
        if (v >= at_least) {
            *seen = v;
            return tu_now_us();
        }
        nap_ms(1);
    }
    fail_msg("writers stuck at %" PRIu64 " bytes, waiting for %" PRIu64,
             atomic_load(accepted), at_least);
    return 0;
}

/* With level 0 at its slowdown trigger, two writers' acknowledged bytes
** per second, counted over a window, are those ravel reports it paces
** them to, within a factor of 1.5, and that rate is at most
** delayed_write_rate. */
static void test_pacing(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, SLOWDOWN ";delayed_write_rate=1M");
    assert_int_equal(delayed_rate(db), 0);
    hold_level0(db, 2);
    assert_true(delayed_rate(db) > 0);
    assert_true(delayed_rate(db) <= 1024 * 1024);
    assert_int_equal(tu_prop_u64(db, "ravel.is-write-stopped"), 0);
    expect_stats_mention(db, "level0");

    _Atomic uint64_t accepted = 0;
    struct pacer w[2];
    pthread_t th[2];
    const uint64_t warmup = 128 * 1024, window = 1024 * 1024;
    for (int i = 0; i < 2; i++) {
        w[i] = (struct pacer){.db = db, .id = i, .accepted = &accepted,
                              .budget = (warmup + window) / 2 + 64 * 1024};
        pthread_create(&th[i], NULL, pacer_main, &w[i]);
    }
    uint64_t b0, b1;
    uint64_t t0 = wait_accepted(&accepted, warmup, &b0);
    uint64_t r0 = delayed_rate(db);
    uint64_t t1 = wait_accepted(&accepted, b0 + window, &b1);
    uint64_t r1 = delayed_rate(db);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    tu_assert_no_thread_failures();
    double measured = (double)(b1 - b0) * 1e6 / (double)(t1 - t0);
    uint64_t lo = r0 < r1 ? r0 : r1, hi = r0 < r1 ? r1 : r0;
    printf("# %" PRIu64 " bytes in %.3f s: %.0f bytes/s; ravel reports %"
           PRIu64 " .. %" PRIu64 " bytes/s\n", b1 - b0,
           (double)(t1 - t0) / 1e6, measured, lo, hi);
    print_controller_stats(db, "paced");
    assert_true(lo > 0);
    if (measured < 0.5 * (double)lo || measured > 1.5 * (double)hi)
        fail_msg("writes were accepted at %.0f bytes/s, paced to %" PRIu64
                 " .. %" PRIu64 " bytes/s by ravel's account", measured, lo,
                 hi);
    /* the slowdown ends with its cause */
    drain_level0(db);
    assert_int_equal(delayed_rate(db), 0);
    TU_OK(ravel_close(db));
    expect_log_records(dir, "slowdown", "level0");
    free(dir);
}

/* ---------------------------------------------------- RAVEL_NO_SLOWDOWN */

/* A write of 64 KiB at 64 KiB/s takes the token bucket's next second:
** a write right after it would have to wait. */
#define PRIMER_BYTES (64 * 1024)

static void prime_bucket(ravel_db *db, const char *key)
{
    static char v[PRIMER_BYTES];
    memset(v, 'q', sizeof v);
    TU_OK(ravel_put(db, 0, key, strlen(key), v, sizeof v));
}

/* Calls CALL right after priming the bucket of PRIMED and expects
** RAVEL_BUSY; a pass where more than half the primed second went by
** between the two (the test thread was descheduled) is tried again. */
#define EXPECT_BUSY_AFTER_PRIMER(primed, call) do { \
        int tries_ = 0; \
        for (;;) { \
            prime_bucket((primed), "primer"); \
            uint64_t t_ = tu_now_us(); \
            tu_errmsg_prime(); \
            int rc_ = (call); \
            if (rc_ == RAVEL_BUSY) { \
                if (!tu_errmsg_is_fresh()) \
                    fail_msg("%s: RAVEL_BUSY without a message", #call); \
                break; \
            } \
            if (tu_now_us() - t_ < 500000 || ++tries_ == 5) \
                fail_msg("%s during a slowdown returned %s, not " \
                         "RAVEL_BUSY: %s", #call, ravel_errstr(rc_), \
                         ravel_errmsg()); \
        } \
    } while (0)

static void test_no_slowdown_in_slowdown(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    const char *opts = SLOWDOWN ";delayed_write_rate=64K";
    ravel_db *db = tu_open_ok(dir, opts);
    /* no slowdown yet: RAVEL_NO_SLOWDOWN writes go through */
    TU_OK(ravel_put(db, RAVEL_NO_SLOWDOWN, "free", 4, "1", 1));
    hold_level0(db, 2);
    assert_true(delayed_rate(db) > 0);

    EXPECT_BUSY_AFTER_PRIMER(db, ravel_put(db, RAVEL_NO_SLOWDOWN, "nos", 3,
                                           "v", 1));
    EXPECT_BUSY_AFTER_PRIMER(db, ravel_delete(db, RAVEL_NO_SLOWDOWN, "free",
                                              4));
    ravel_batch *b;
    TU_OK(ravel_batch_new(&b));
    TU_OK(ravel_batch_put(b, "nos-batch-1", 11, "v", 1));
    TU_OK(ravel_batch_put(b, "nos-batch-2", 11, "v", 1));
    EXPECT_BUSY_AFTER_PRIMER(db, ravel_write(db, RAVEL_NO_SLOWDOWN |
                                             RAVEL_SYNC, b));
    ravel_batch_free(b);
    /* nothing of them was written */
    tu_expect(db, NULL, "nos", NULL);
    tu_expect(db, NULL, "free", "1");
    tu_expect(db, NULL, "nos-batch-1", NULL);
    tu_expect(db, NULL, "nos-batch-2", NULL);
    /* without the flag, the same write waits its turn and succeeds */
    prime_bucket(db, "primer");
    tu_put(db, 0, "nos", "v");
    tu_expect(db, NULL, "nos", "v");
    print_controller_stats(db, "after RAVEL_BUSY");
    assert_true(refused_writes(db) >= 3);
    drain_level0(db);
    assert_int_equal(delayed_rate(db), 0);
    TU_OK(ravel_put(db, RAVEL_NO_SLOWDOWN, "nos-after", 9, "v", 1));

    /* nor is anything of them in the WAL */
    TU_OK(ravel_close(db));
    db = tu_open_ok(dir, opts);
    tu_expect(db, NULL, "nos", "v");
    tu_expect(db, NULL, "free", "1");
    tu_expect(db, NULL, "nos-batch-1", NULL);
    tu_expect(db, NULL, "nos-batch-2", NULL);
    tu_expect(db, NULL, "nos-after", "v");
    TU_OK(ravel_close(db));
    free(dir);
}

/* ------------------------------------------------------------- stops */


struct blocked_writer {
    ravel_db *db;
    const char *key;
    _Atomic int returned;
    int rc;
};

static void *blocked_writer_main(void *p)
{
    struct blocked_writer *w = p;
    w->rc = ravel_put(w->db, 0, w->key, strlen(w->key), "waited", 6);
    atomic_store(&w->returned, 1);
    return NULL;
}

/* A RAVEL_NO_SLOWDOWN put of KEY, in a thread of its own: while another
** writer is held by a stall, it must still come back with RAVEL_BUSY at
** once rather than queue behind that writer (RocksDB fails such writes
** as soon as a stall begins).  Returns its result, or -1 if it has not
** returned after a bound of polls (5 s: against a hang, far above "at
** once"); then it is left running and returns when the stall ends (the
** caller joins *TH after ending it). */
struct nos_put {
    ravel_db *db;
    const char *key;
    _Atomic int returned;
    int rc;
};

static void *nos_put_main(void *p)
{
    struct nos_put *n = p;
    n->rc = ravel_put(n->db, RAVEL_NO_SLOWDOWN, n->key, strlen(n->key), "v",
                      1);
    atomic_store(&n->returned, 1);
    return NULL;
}

static int no_slowdown_put_behind(struct nos_put *n, pthread_t *th)
{
    pthread_create(th, NULL, nos_put_main, n);
    for (int i = 0; i < 1000; i++) {
        if (atomic_load(&n->returned)) {
            pthread_join(*th, NULL);
            return n->rc;
        }
        nap_ms(5);
    }
    return -1;
}

/* The verdict on a no_slowdown_put_behind, once the stall is over. */
static void expect_no_slowdown_was_busy(struct nos_put *n, pthread_t *th,
                                        int rc)
{
    if (rc == -1) {
        pthread_join(*th, NULL);
        fail_msg("a RAVEL_NO_SLOWDOWN write queued behind a writer held by "
                 "a stall waited for the stall to end (then returned %s) "
                 "instead of returning RAVEL_BUSY at once",
                 ravel_errstr(n->rc));
    }
    if (rc != RAVEL_BUSY)
        fail_msg("a RAVEL_NO_SLOWDOWN write during a stall returned %s",
                 ravel_errstr(rc));
    tu_expect(n->db, NULL, n->key, NULL);
}

/* While STOPPED reports a stop, W has not returned (checked a few times
** over a while; a return at any point before the release is the bug). */
static void expect_blocked(struct blocked_writer *w, ravel_db *stopped)
{
    for (int i = 0; i < 5; i++) {
        nap_ms(40);
        assert_int_equal(tu_prop_u64(stopped, "ravel.is-write-stopped"), 1);
        if (atomic_load(&w->returned))
            fail_msg("a write returned %s while writes were stopped",
                     ravel_errstr(w->rc));
    }
}

static void test_stop_until_compacted(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, STOP);
    assert_int_equal(tu_prop_u64(db, "ravel.is-write-stopped"), 0);
    hold_level0(db, 2);
    wait_prop(db, "ravel.is-write-stopped", 1);
    expect_stats_mention(db, "level0");

    TU_EXPECT_RC(RAVEL_BUSY, ravel_put(db, RAVEL_NO_SLOWDOWN, "nos", 3, "v",
                                       1));
    tu_expect(db, NULL, "nos", NULL);
    /* reads are served during the stop */
    tu_expect(db, NULL, "l0-file-0000", "x");

    struct blocked_writer w = {.db = db, .key = "blocked"};
    pthread_t th;
    pthread_create(&th, NULL, blocked_writer_main, &w);
    expect_blocked(&w, db);
    tu_expect(db, NULL, "blocked", NULL);
    struct nos_put nos = {.db = db, .key = "nos-behind"};
    pthread_t nth;
    int nos_rc = no_slowdown_put_behind(&nos, &nth);
    print_controller_stats(db, "stopped");

    rv_pause_release(RV_PAUSE_COMPACTION_PICKED);
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    pthread_join(th, NULL);
    expect_no_slowdown_was_busy(&nos, &nth, nos_rc);
    assert_int_equal(w.rc, RAVEL_OK);
    assert_int_equal(tu_files_at_level(db, 0), 0);
    assert_int_equal(tu_prop_u64(db, "ravel.is-write-stopped"), 0);
    tu_expect(db, NULL, "blocked", "waited");
    TU_OK(ravel_put(db, RAVEL_NO_SLOWDOWN, "nos", 3, "v", 1));
    tu_expect(db, NULL, "nos", "v");
    TU_OK(ravel_close(db));
    expect_log_records(dir, "stop", "level0");
    free(dir);
}

/* ------------------------------------------------- "never" */

/* RocksDB reads a trigger too large to be reached as "never", and db_bench
** command lines say it so (99999): with the level 0 triggers and
** max_write_buffer_number at their largest, 2147483647, and compactions
** on, level 0 piles up past every default trigger without a compaction,
** a slowdown or a stop, and no arithmetic on them overflows. */
#define NEVER "level0_file_num_compaction_trigger=2147483647;" \
              "level0_slowdown_writes_trigger=2147483647;" \
              "level0_stop_writes_trigger=2147483647;" \
              "max_write_buffer_number=2147483647;write_buffer_size=8M"

static void test_triggers_never(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, NEVER);
    add_level0_files(db, 40); /* past RocksDB's default stop, 36 */
    tu_wait_background_idle(db);
    assert_int_equal(tu_files_at_level(db, 0), 40);
    assert_int_equal(tu_files_at_level(db, 1), 0);
    assert_int_equal(tu_prop_u64(db, "ravel.is-write-stopped"), 0);
    assert_int_equal(delayed_rate(db), 0);
    TU_OK(ravel_put(db, RAVEL_NO_SLOWDOWN, "nos", 3, "v", 1));
    tu_expect(db, NULL, "nos", "v");
    TU_OK(ravel_close(db));
    free(dir);
}

/* ------------------------------------------------- memtables full */

struct filler {
    ravel_db *db;
    _Atomic int *stop;
    _Atomic int returned;
    int writes, rc;
};

/* Writes 1 KiB values until told to stop. */
static void *filler_main(void *p)
{
    struct filler *f = p;
    char k[32], v[1024];
    memset(v, 'f', sizeof v);
    while (!atomic_load(f->stop)) {
        snprintf(k, sizeof k, "fill-%06d", f->writes);
        f->rc = ravel_put(f->db, 0, k, strlen(k), v, sizeof v);
        if (f->rc)
            break;
        f->writes++;
    }
    atomic_store(&f->returned, 1);
    return NULL;
}

/* With flushes held (the flush's pause point), memtables pile up: with
** max_write_buffer_number=4, writes slow down once the last memtable
** allowed is the active one (cause "memtables"), and stop once it is
** full; the flush let go, the writer returns. */
static void test_memtables_full(void **state)
{
    (void)state;
    char *dir = fresh_dir();
    ravel_db *db = tu_open_ok(dir, "write_buffer_size=64K;"
                              "max_write_buffer_number=4;"
                              "max_background_jobs=1");
    rv_pause_arm(RV_PAUSE_FLUSH_TABLES_WRITTEN);
    _Atomic int stop = 0;
    struct filler f = {.db = db, .stop = &stop};
    pthread_t th;
    pthread_create(&th, NULL, filler_main, &f);
    wait_prop(db, "ravel.is-write-stopped", 1);
    uint64_t imm = tu_prop_u64(db, "ravel.num-immutable-mem-table");
    printf("# stopped after %d writes, %" PRIu64 " immutable memtables\n",
           f.writes, imm);
    assert_int_equal(imm, 3);
    expect_stats_mention(db, "memtables");
    if (atomic_load(&f.returned))
        fail_msg("the writer returned %s during the stop",
                 ravel_errstr(f.rc));
    struct nos_put nos = {.db = db, .key = "nos"};
    pthread_t nth;
    int nos_rc = no_slowdown_put_behind(&nos, &nth);
    assert_false(atomic_load(&f.returned));
    print_controller_stats(db, "memtables full");
    atomic_store(&stop, 1);
    rv_pause_release(RV_PAUSE_FLUSH_TABLES_WRITTEN);
    pthread_join(th, NULL);
    expect_no_slowdown_was_busy(&nos, &nth, nos_rc);
    assert_int_equal(f.rc, RAVEL_OK);
    tu_wait_background_idle(db);
    assert_int_equal(tu_prop_u64(db, "ravel.is-write-stopped"), 0);
    tu_expect(db, NULL, "nos", NULL);
    TU_OK(ravel_put(db, RAVEL_NO_SLOWDOWN, "nos", 3, "v", 1));
    char k[32];
    snprintf(k, sizeof k, "fill-%06d", f.writes - 1);
    void *v = NULL;
    size_t vl = 0;
    TU_OK(ravel_get(db, NULL, k, strlen(k), &v, &vl));
    assert_int_equal(vl, 1024);
    ravel_free(v);
    TU_OK(ravel_close(db));
    free(dir);
}

/* ------------------------------------------------- a shared controller */

static ravel_db *open_with(const char *dir, const char *extra,
                           ravel_write_controller *wc)
{
    ravel_options *o = tu_options(extra);
    TU_OK(ravel_options_set_write_controller(o, wc));
    ravel_db *db = NULL;
    int rc = ravel_open(dir, o, &db);
    ravel_options_free(o);
    if (rc) {
        tu_skip_if_no_uring(rc);
        fail_msg("open %s: %s: %s", dir, ravel_errstr(rc), ravel_errmsg());
    }
    return db;
}

struct closer {
    ravel_db *db;
    int rc;
};

static void *closer_main(void *p)
{
    struct closer *c = p;
    c->rc = ravel_close(c->db);
    return NULL;
}

/* A is pushed into a slowdown: B, which has no cause of its own, is
** slowed too (RAVEL_NO_SLOWDOWN refused, a rate reported); compacting A
** releases both.  A is pushed into a stop: a writer of B blocks, and
** closing A releases it. */
static void test_shared_controller(void **state)
{
    (void)state;
    char *dir_a = fresh_dir(), *dir_b = fresh_dir();
    ravel_write_controller *wc;
    TU_OK(ravel_write_controller_new(64 * 1024, &wc));
    ravel_db *a = open_with(dir_a, "level0_file_num_compaction_trigger=1;"
                            "level0_slowdown_writes_trigger=2;"
                            "level0_stop_writes_trigger=3;"
                            "write_buffer_size=8M", wc);
    ravel_db *b = open_with(dir_b, "write_buffer_size=8M", wc);
    ravel_write_controller_free(wc); /* the databases hold theirs */

    TU_OK(ravel_put(b, RAVEL_NO_SLOWDOWN, "b-free", 6, "1", 1));
    hold_level0(a, 2);
    assert_true(delayed_rate(a) > 0);
    assert_true(delayed_rate(b) > 0);
    assert_int_equal(tu_files_at_level(b, 0), 0);
    /* the bucket is shared: B's primer makes B's next write wait */
    EXPECT_BUSY_AFTER_PRIMER(b, ravel_put(b, RAVEL_NO_SLOWDOWN, "b-nos", 5,
                                          "v", 1));
    tu_expect(b, NULL, "b-nos", NULL);
    /* and A's primer does too */
    EXPECT_BUSY_AFTER_PRIMER(a, ravel_put(b, RAVEL_NO_SLOWDOWN, "b-nos", 5,
                                          "v", 1));
    tu_expect(b, NULL, "b-nos", NULL);
    print_controller_stats(b, "database B, slowed by A");
    expect_stats_mention(b, "another database");

    rv_pause_release(RV_PAUSE_COMPACTION_PICKED);
    TU_OK(ravel_compact_range(a, NULL, 0, NULL, 0));
    assert_int_equal(tu_files_at_level(a, 0), 0);
    assert_int_equal(delayed_rate(a), 0);
    assert_int_equal(delayed_rate(b), 0);
    TU_OK(ravel_put(b, RAVEL_NO_SLOWDOWN, "b-nos", 5, "v", 1));
    TU_OK(ravel_put(a, RAVEL_NO_SLOWDOWN, "a-nos", 5, "v", 1));
    tu_expect(b, NULL, "b-nos", "v");

    tu_wait_background_idle(a);
    hold_level0(a, 3);
    wait_prop(a, "ravel.is-write-stopped", 1);
    assert_int_equal(tu_prop_u64(b, "ravel.is-write-stopped"), 1);
    TU_EXPECT_RC(RAVEL_BUSY, ravel_put(b, RAVEL_NO_SLOWDOWN, "b-nos2", 6,
                                       "v", 1));
    struct blocked_writer w = {.db = b, .key = "b-blocked"};
    pthread_t th;
    pthread_create(&th, NULL, blocked_writer_main, &w);
    expect_blocked(&w, a);
    tu_expect(b, NULL, "b-blocked", NULL);
    struct nos_put nos = {.db = b, .key = "b-nos3"};
    pthread_t nth;
    int nos_rc = no_slowdown_put_behind(&nos, &nth);

    /* Closing the stalled database withdraws its stop.  The close waits
    ** for the held compaction: once the close has told compactions to
    ** give up, the compaction is let go (it merges level 1's data, so it
    ** checks that and abandons), and the close ends, releasing B's writer
    ** with A's level 0 still full -- the release is the close's doing. */
    struct closer cl = {.db = a};
    pthread_t cth;
    pthread_create(&cth, NULL, closer_main, &cl);
    int i = 0;
    for (; i < 4000 && !atomic_load(&a->compaction_abort); i++)
        nap_ms(5);
    if (!atomic_load(&a->compaction_abort))
        fail_msg("ravel_close(A) did not start stopping compactions");
    if (atomic_load(&w.returned))
        fail_msg("B's writer returned before A's close ended");
    rv_pause_release(RV_PAUSE_COMPACTION_PICKED);
    pthread_join(cth, NULL);
    assert_int_equal(cl.rc, RAVEL_OK);
    pthread_join(th, NULL);
    assert_int_equal(w.rc, RAVEL_OK);
    expect_no_slowdown_was_busy(&nos, &nth, nos_rc);
    tu_expect(b, NULL, "b-blocked", "waited");
    tu_expect(b, NULL, "b-nos2", NULL);
    assert_int_equal(tu_prop_u64(b, "ravel.is-write-stopped"), 0);
    assert_int_equal(delayed_rate(b), 0);
    TU_OK(ravel_put(b, RAVEL_NO_SLOWDOWN, "b-after", 7, "v", 1));
    TU_OK(ravel_close(b));
    a = tu_open_ok(dir_a, "disable_auto_compactions=true");
    assert_int_equal(tu_files_at_level(a, 0), 3);
    TU_OK(ravel_close(a));
    free(dir_a);
    free(dir_b);
}

/* Two databases with controllers of their own (the default): one's stall
** does not touch the other. */
static void test_own_controllers_independent(void **state)
{
    (void)state;
    char *dir_a = fresh_dir(), *dir_b = fresh_dir();
    ravel_db *a = tu_open_ok(dir_a, STOP);
    ravel_db *b = tu_open_ok(dir_b, STOP);
    hold_level0(a, 2);
    wait_prop(a, "ravel.is-write-stopped", 1);
    assert_int_equal(tu_prop_u64(b, "ravel.is-write-stopped"), 0);
    TU_OK(ravel_put(b, RAVEL_NO_SLOWDOWN, "b", 1, "v", 1));
    drain_level0(a);
    assert_int_equal(tu_prop_u64(a, "ravel.is-write-stopped"), 0);
    TU_OK(ravel_close(a));
    TU_OK(ravel_close(b));
    free(dir_a);
    free(dir_b);
}

/* ---------------------------------------------------------------- API */

static void test_controller_api(void **state)
{
    (void)state;
    ravel_write_controller *wc = NULL;
    TU_EXPECT_INVALID(ravel_write_controller_new(0, &wc));
    assert_null(wc);
    TU_EXPECT_INVALID(ravel_write_controller_new(1023, &wc));
    TU_EXPECT_INVALID(ravel_write_controller_new((1ull << 40) + 1, &wc));
    TU_EXPECT_INVALID(ravel_write_controller_new(1024 * 1024, NULL));
    TU_OK(ravel_write_controller_new(1024, &wc));
    ravel_write_controller_free(wc);
    TU_OK(ravel_write_controller_new(1ull << 40, &wc));
    ravel_write_controller_free(NULL);
    TU_EXPECT_INVALID(ravel_options_set_write_controller(NULL, wc));

    /* the options keep the controller alive after the caller's free */
    ravel_options *o = tu_options(NULL);
    TU_OK(ravel_options_set_write_controller(o, wc));
    ravel_write_controller_free(wc);
    char *dir = fresh_dir();
    ravel_db *db = NULL;
    int rc = ravel_open(dir, o, &db);
    if (rc)
        tu_skip_if_no_uring(rc);
    TU_OK(rc);
    tu_put(db, 0, "k", "v");
    TU_OK(ravel_close(db));
    /* cleared again: the database gets one of its own */
    TU_OK(ravel_options_set_write_controller(o, NULL));
    TU_OK(ravel_open(dir, o, &db));
    tu_expect(db, NULL, "k", "v");
    TU_OK(ravel_close(db));
    ravel_options_free(o);

    /* the options of the controller */
    TU_OK(ravel_options_new(&o));
    /* 0 is RocksDB's "the default": 16M */
    TU_OK(ravel_options_set(o, "delayed_write_rate", "0"));
    char *rate = NULL;
    TU_OK(ravel_options_get(o, "delayed_write_rate", &rate));
    assert_string_equal(rate, "16777216");
    ravel_free(rate);
    TU_EXPECT_INVALID(ravel_options_set(o, "delayed_write_rate", "1000"));
    TU_OK(ravel_options_set(o, "delayed_write_rate", "1K"));
    TU_OK(ravel_options_set(o, "use_dynamic_delay", "true"));
    TU_OK(ravel_options_set(o, "soft_pending_compaction_bytes_limit", "0"));
    ravel_options_free(o);
    free(dir);
}

int main(void)
{
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_controller_api,
                                  release_compactions),
        cmocka_unit_test_teardown(test_stop_until_compacted,
                                  release_compactions),
        cmocka_unit_test_teardown(test_no_slowdown_in_slowdown,
                                  release_compactions),
        cmocka_unit_test_teardown(test_memtables_full,
                                  release_compactions),
        cmocka_unit_test_teardown(test_triggers_never,
                                  release_compactions),
        cmocka_unit_test_teardown(test_own_controllers_independent,
                                  release_compactions),
        cmocka_unit_test_teardown(test_shared_controller,
                                  release_compactions),
        cmocka_unit_test_teardown(test_pacing,
                                  release_compactions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
