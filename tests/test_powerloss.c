/*
** test_powerloss.c -- nothing synced is lost to a power loss, and the
** default recovery mode opens whatever a power loss leaves.
**
** Each round, child processes (this program re-executed) open the
** database with the library's sync journal on (powerloss.h), write, report
** every acknowledged write through a pipe, and are killed with SIGKILL.
** The parent then simulates a power loss -- every byte no completed
** fdatasync covered is dropped or torn in 4 KiB pages, in one of several
** patterns, and every directory entry no directory fsync covered may go --
** and reopens the database.  Every round must open (default mode:
** tolerate_corrupted_tail_records, and point_in_time) with every
** RAVEL_SYNC write acknowledged before the kill present.
**
**   after_recovery   one child writes synced and unsynced puts and is
**                    killed; a second child opens (recovering the first's
**                    unsynced tail, still in the page cache), checks that
**                    it sees all of it, writes synced puts and is killed;
**                    then the power loss.  Everything the second child
**                    recovered must survive: recovery made it durable
**                    before writing a new segment (else the log has a hole
**                    or a torn middle segment).
**   torn_tail        one child writes ~1-6 KB values, synced and not, from
**                    two threads, and is killed at a random moment; the
**                    power loss may keep a later page of the unsynced tail
**                    and lose an earlier one.
**
** Every reopen also checks that replay kept a prefix of the log: per
** writer thread, no put is there after one that is missing.
**
** RAVEL_TEST_OPTIONS adds options to the children's (recycled segments:
** tests/meson.build).  RAVEL_TEST_POWERLOSS_ROUNDS (default 4) rounds per
** pattern;
** RAVEL_TEST_SEED replays a run.
*/
#include "crash_harness.h"
#include "powerloss.h"

#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_KEYS 4096

/* The child's messages (the end of its writes: crash_child_done). */
enum msg_kind {
    MSG_SYNCED = 1,   /* put i acknowledged with RAVEL_SYNC */
    MSG_UNSYNCED = 2, /* put i acknowledged without sync */
    MSG_SEEN = 3,     /* i puts of the previous phase read back after open */
};

struct msg {
    uint32_t kind;
    uint32_t phase;
    uint32_t i;
};

/* ------------------------------------------------------------ the child */

static void child_send(uint32_t kind, uint32_t phase, uint32_t i)
{
    struct msg m = {kind, phase, i};
    crash_send(&m, sizeof m);
}

static void child_fail(uint32_t phase, int rc)
{
    crash_child_fail("phase %u: %s: %s", phase, ravel_errstr(rc),
                     ravel_errmsg());
}

static void key_of(char *buf, size_t n, uint32_t phase, uint32_t i)
{
    snprintf(buf, n, "p%u-k%05u", phase, i);
}

/* A value of 1..6 KB whose bytes say which key it belongs to. */
static size_t val_of(char *buf, uint32_t phase, uint32_t i)
{
    size_t len = 1000 + (size_t)((phase * 7919u + i * 104729u) % 5200);
    int n = snprintf(buf, len, "value of p%u-k%05u:", phase, i);
    for (size_t k = (size_t)n; k < len; k++)
        buf[k] = (char)('a' + (k + i) % 26);
    return len;
}

struct child_writer {
    ravel_db *db;
    uint32_t phase, first, count;
    int sync_every; /* every Nth put is synced */
};

static void *child_write(void *p)
{
    struct child_writer *cw = p;
    char key[32], val[8192];
    for (uint32_t i = cw->first; i < cw->first + cw->count; i++) {
        key_of(key, sizeof key, cw->phase, i);
        size_t vl = val_of(val, cw->phase, i);
        int sync = cw->sync_every && i % (uint32_t)cw->sync_every == 0;
        int rc = ravel_put(cw->db, sync ? RAVEL_SYNC : 0, key, strlen(key),
                           val, vl);
        if (rc)
            child_fail(cw->phase, rc);
        child_send(sync ? MSG_SYNCED : MSG_UNSYNCED, cw->phase, i);
    }
    return NULL;
}

/* Counts the puts of PHASE (0..n-1) that read back whole. */
static uint32_t child_count_phase(ravel_db *db, uint32_t phase, uint32_t n)
{
    uint32_t seen = 0;
    char key[32], val[8192];
    for (uint32_t i = 0; i < n; i++) {
        key_of(key, sizeof key, phase, i);
        size_t vl = val_of(val, phase, i);
        void *v;
        size_t got;
        if (ravel_get(db, NULL, key, strlen(key), &v, &got) == RAVEL_OK &&
            got == vl && memcmp(v, val, vl) == 0)
            seen++;
        ravel_free(v);
    }
    return seen;
}

/* What a child does: PUTS puts of PHASE from THREADS threads, every
** SYNC_EVERY-th synced; first, with CHECK_PREV, it counts the puts
** 0..CHECK_PREV-1 of the phase before that read back (MSG_SEEN). */
struct child_args {
    char dir[PATH_MAX];
    char journal[PATH_MAX];
    uint32_t phase, puts;
    int sync_every, threads;
    uint32_t check_prev;
};

static int child_main(const void *arg)
{
    const struct child_args *ca = arg;
    const char *dir = ca->dir;
    tu_sync_journal_start(ca->journal);
    uint32_t phase = ca->phase;
    uint32_t puts = ca->puts;
    int sync_every = ca->sync_every;
    int threads = ca->threads;
    uint32_t check_prev = ca->check_prev;

    ravel_options *o = NULL;
    int rc = ravel_options_new(&o);
    if (!rc)
        rc = ravel_options_set(o, "create_if_missing", "true");
    if (!rc && tu_wal_io())
        rc = ravel_options_set(o, "wal_io", tu_wal_io());
    if (!rc) /* small memtables: segment switches happen too */
        rc = ravel_options_set(o, "write_buffer_size", "128K");
    const char *extra = getenv("RAVEL_TEST_OPTIONS"); /* tests/meson.build */
    if (!rc && extra && extra[0])
        rc = ravel_options_parse(o, extra);
    ravel_db *db = NULL;
    if (!rc)
        rc = ravel_open(dir, o, &db);
    ravel_options_free(o);
    if (rc)
        child_fail(phase, rc);
    if (check_prev)
        child_send(MSG_SEEN, phase - 1,
                   child_count_phase(db, phase - 1, check_prev));

    pthread_t th[4];
    struct child_writer cw[4];
    uint32_t per = puts / (uint32_t)threads;
    for (int t = 0; t < threads; t++) {
        cw[t] = (struct child_writer){db, phase, (uint32_t)t * per, per,
                                      sync_every};
        if (pthread_create(&th[t], NULL, child_write, &cw[t]))
            child_fail(phase, RAVEL_NOMEM);
    }
    for (int t = 0; t < threads; t++)
        pthread_join(th[t], NULL);
    crash_child_done();
    crash_child_park();
}

/* ----------------------------------------------------------- the parent */

struct acked {
    unsigned char state[3][MAX_KEYS]; /* per phase: 0, MSG_SYNCED, MSG_UNSYNCED */
    uint32_t seen[3];                 /* MSG_SEEN of each phase */
};

static void handle_msg(struct crash_child *c, const void *msg)
{
    struct acked *a = c->ctx;
    const struct msg *m = msg;
    assert_true(m->phase < 3);
    switch (m->kind) {
    case MSG_SYNCED:
    case MSG_UNSYNCED:
        assert_true(m->i < MAX_KEYS);
        a->state[m->phase][m->i] = (unsigned char)m->kind;
        break;
    case MSG_SEEN: a->seen[m->phase] = m->i; break;
    default:
        fail_msg("garbled message from the child (kind %u)", m->kind);
    }
}

/* Runs one child; kills it once it is done (KILL_AFTER_MS < 0) or after
** KILL_AFTER_MS milliseconds. */
static void run_child(const char *dir, const char *journal, struct acked *a,
                      uint32_t phase, uint32_t puts, int sync_every,
                      int threads, uint32_t check_prev, int64_t kill_after_ms)
{
    struct child_args ca = {.phase = phase, .puts = puts,
                            .sync_every = sync_every, .threads = threads,
                            .check_prev = check_prev};
    snprintf(ca.dir, sizeof ca.dir, "%s", dir);
    snprintf(ca.journal, sizeof ca.journal, "%s", journal);
    struct crash_child c = {.on_msg = handle_msg,
                            .msg_size = sizeof(struct msg), .ctx = a};
    snprintf(c.label, sizeof c.label, "phase %u", phase);
    crash_spawn(&c, "writer", &ca, sizeof ca);
    if (kill_after_ms < 0)
        crash_kill_after(&c, CRASH_FROM_DONE, 0);
    else
        crash_kill_after(&c, CRASH_FROM_SPAWN, (uint64_t)kill_after_ms);
}

/* Every synced put of PHASE (and, with ALL, every acknowledged put) reads
** back whole; returns how many puts of the phase are there. */
static uint32_t check_phase(ravel_db *db, const struct acked *a,
                            uint32_t phase, uint32_t n, int all,
                            const char *what)
{
    char key[32], val[8192];
    uint32_t present = 0;
    for (uint32_t i = 0; i < n; i++) {
        key_of(key, sizeof key, phase, i);
        size_t vl = val_of(val, phase, i);
        void *v;
        size_t got;
        int rc = ravel_get(db, NULL, key, strlen(key), &v, &got);
        int must = a->state[phase][i] == MSG_SYNCED ||
                   (all && a->state[phase][i]);
        if (rc == RAVEL_OK && (got != vl || memcmp(v, val, vl) != 0))
            fail_msg("%s: %s has a wrong value", what, key);
        if (must && rc != RAVEL_OK)
            fail_msg("%s: %s was acknowledged%s but is %s", what, key,
                     a->state[phase][i] == MSG_SYNCED ? " with RAVEL_SYNC"
                                                      : "",
                     ravel_errstr(rc));
        present += rc == RAVEL_OK;
        ravel_free(v);
    }
    return present;
}

/* What a phase's child wrote: PUTS puts split evenly between THREADS
** threads, each writing its share in order. */
struct phase_shape {
    uint32_t puts;
    int threads;
};

/* Replay keeps a prefix of the log: within each writer thread of the
** phase, whose puts went to the log in order, a put present means every
** earlier put of that thread is present too. */
static void check_prefix(ravel_db *db, uint32_t phase,
                         const struct phase_shape *shape, const char *what)
{
    uint32_t per = shape->puts / (uint32_t)shape->threads;
    for (int t = 0; t < shape->threads; t++) {
        uint32_t gap = UINT32_MAX;
        for (uint32_t i = (uint32_t)t * per; i < (uint32_t)(t + 1) * per;
             i++) {
            char key[32];
            key_of(key, sizeof key, phase, i);
            void *v = NULL;
            size_t got;
            int here = ravel_get(db, NULL, key, strlen(key), &v, &got) ==
                       RAVEL_OK;
            ravel_free(v);
            if (!here && gap == UINT32_MAX)
                gap = i;
            if (here && gap != UINT32_MAX)
                fail_msg("%s: phase %u, thread %d: put %u is there but its "
                         "earlier put %u is not: replay kept more than a "
                         "prefix of the log", what, phase, t, i, gap);
        }
    }
}

/* Opens DIR in MODE after the power loss (it must open) and checks. */
static void reopen_and_check(const char *dir, const char *mode,
                             const struct acked *a, int phases, uint32_t puts,
                             const struct phase_shape *shapes,
                             int phase0_all, const char *what)
{
    char opts[128], label[256];
    snprintf(opts, sizeof opts, "wal_recovery_mode=%s", mode);
    snprintf(label, sizeof label, "%s, %s", what, mode);
    ravel_db *db = NULL;
    int rc = tu_open(dir, opts, &db);
    if (rc != RAVEL_OK)
        fail_msg("%s: the database does not open after the power loss: "
                 "%s: %s", label, ravel_errstr(rc), ravel_errmsg());
    for (int p = 0; p < phases; p++) {
        uint32_t n = check_phase(db, a, (uint32_t)p, puts, p == 0 &&
                                 phase0_all, label);
        printf("#   %s: phase %d: %u of %u puts present\n", label, p, n,
               puts);
        check_prefix(db, (uint32_t)p, &shapes[p], label);
    }
    TU_OK(ravel_close(db));
}

static void copy_dir(const char *from, const char *to)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && { [ ! -e '%s' ] || cp -a '%s' "
             "'%s'; }", to, from, from, to);
    assert_int_equal(system(cmd), 0);
}

static int rounds(void)
{
    return (int)tu_env_u64("RAVEL_TEST_POWERLOSS_ROUNDS", 4);
}

/* One round's database: a directory, its sync journal, what was
** acknowledged. */
struct round {
    char *dir, *journal;
    struct acked *a;
};

static void round_begin(struct round *rd, const char *what, int p, int r)
{
    rd->dir = tu_path("%s-%d-%d", what, p, r);
    rd->journal = tu_path("%s-%d-%d.journal", what, p, r);
    rd->a = calloc(1, sizeof *rd->a);
    assert_non_null(rd->a);
}

/* The power loss, then the checks: the database must open under the
** default mode and under point_in_time (on a copy), every synced put of
** PHASES phases present (every acknowledged put of phase 0 with
** PHASE0_ALL).  Frees the round. */
static void round_power_loss(struct round *rd, const char *what,
                             enum tu_power_loss_pattern p, uint64_t *rng,
                             int phases, uint32_t puts,
                             const struct phase_shape *shapes, int phase0_all)
{
    tu_power_loss(rd->dir, rd->journal, p, rng);
    size_t n = strlen(rd->dir) + 5;
    char *copy = malloc(n);
    assert_non_null(copy);
    snprintf(copy, n, "%s.pit", rd->dir);
    copy_dir(rd->dir, copy);
    reopen_and_check(rd->dir, "tolerate_corrupted_tail_records", rd->a,
                     phases, puts, shapes, phase0_all, what);
    reopen_and_check(copy, "point_in_time", rd->a, phases, puts, shapes,
                     phase0_all, what);
    tu_rm_rf(rd->dir);
    tu_rm_rf(copy);
    unlink(rd->journal);
    free(copy);
    free(rd->dir);
    free(rd->journal);
    free(rd->a);
}

/* Defect: recovery served the dead process's unsynced tail and went on
** writing new segments without making it durable. */
static void test_after_recovery(void **state)
{
    (void)state;
    uint64_t rng = tu_seed();
    const uint32_t puts = 240;
    for (int p = 0; p < TU_PL_PATTERNS; p++) {
        for (int r = 0; r < rounds(); r++) {
            struct round rd;
            round_begin(&rd, "after-recovery", p, r);
            printf("# after_recovery, %s, round %d\n",
                   tu_power_loss_name((enum tu_power_loss_pattern)p), r);
            /* Phase 0: a few synced puts, many unsynced ones after. */
            run_child(rd.dir, rd.journal, rd.a, 0, puts, 40, 1, 0, -1);
            /* Phase 1: recovers phase 0, writes synced puts. */
            run_child(rd.dir, rd.journal, rd.a, 1, puts / 4, 1, 2, puts, -1);
            if (rd.a->seen[0] != puts)
                fail_msg("the second process read back %u of the %u puts "
                         "of the first after recovery", rd.a->seen[0], puts);
            /* Everything phase 1 recovered (all of phase 0) survives. */
            const struct phase_shape shapes[2] = {{puts, 1}, {puts / 4, 2}};
            round_power_loss(&rd, "after_recovery",
                             (enum tu_power_loss_pattern)p, &rng, 2, puts,
                             shapes, 1);
        }
    }
}

/* Defect: a bad record followed by records that verify, in the unsynced
** tail of the last segment, made the default mode refuse to open. */
static void test_torn_tail(void **state)
{
    (void)state;
    uint64_t rng = tu_seed();
    const uint32_t puts = 600;
    for (int p = 0; p < TU_PL_PATTERNS; p++) {
        for (int r = 0; r < rounds(); r++) {
            struct round rd;
            round_begin(&rd, "torn-tail", p, r);
            int64_t kill_ms = 5 + (int64_t)(tu_rand(&rng) % 60);
            printf("# torn_tail, %s, round %d: kill after %" PRId64 " ms\n",
                   tu_power_loss_name((enum tu_power_loss_pattern)p), r,
                   kill_ms);
            run_child(rd.dir, rd.journal, rd.a, 0, puts, 7, 2, 0, kill_ms);
            const struct phase_shape shapes[1] = {{puts, 2}};
            round_power_loss(&rd, "torn_tail", (enum tu_power_loss_pattern)p,
                             &rng, 1, puts, shapes, 0);
        }
    }
}

static const struct crash_role roles[] = {
    {"writer", child_main, sizeof(struct child_args)},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_after_recovery),
        cmocka_unit_test(test_torn_tail),
    };
    return CRASH_MAIN(argc, argv, roles, tests);
}
