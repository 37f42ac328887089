/*
** test_crash.c -- a synced write survives kill -9, and no batch is ever
** half there.
**
** Each round, a child process (this program, re-executed: crash_harness.h)
** opens the database and writes from several threads with RAVEL_SYNC:
** single puts, deletes of earlier puts, and multi-key batches that set all
** of a thread's K batch keys to one version.  After each acknowledged write
** it reports it through a pipe.  One more thread writes batches without
** sync, whose only promise is atomicity.  The parent SIGKILLs the child at
** a random moment (sometimes while it is still opening, i.e. recovering),
** reopens the database and checks that every acknowledged put is there,
** every acknowledged delete took effect, every batch is all there or not
** at all, and each thread's batch keys hold a version no older than the
** last one acknowledged.  A last thread writes without sync and calls
** ravel_flush_wal every 8 puts: the puts before a flush that returned
** RAVEL_OK must survive too.  The same database is carried through all the
** rounds, so each recovery starts from the previous crash.
**
** RAVEL_TEST_CRASH_ROUNDS (default 24) sets the number of rounds;
** RAVEL_TEST_SEED replays a run.
*/
#include "crash_harness.h"

#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SYNC_THREADS 4
/* RAVEL_TEST_CRASH_OPTS replaces them (tests/meson.build: recycled WAL
** segments want smaller memtables) */
#define CHILD_OPTS child_opts()

static const char *child_opts(void)
{
    const char *o = getenv("RAVEL_TEST_CRASH_OPTS");
    return o && o[0] ? o : "write_buffer_size=256K";
}
#define BATCH_KEYS 6
#define MAX_ROUNDS 200

/* The child's open is reported by crash_child_opened (with its ordering
** mode); a failure by crash_child_fail. */
enum msg_type {
    MSG_PUT = 2,    /* put of s-R-T-I acknowledged */
    MSG_DEL = 3,    /* delete of s-R-T-I acknowledged */
    MSG_BATCH = 4,  /* batch version R-I of thread T acknowledged */
    MSG_FLUSHED = 6,/* ravel_flush_wal returned RAVEL_OK after the unsynced
                    ** puts f-R-0 .. f-R-(I-1) were acknowledged */
};

struct msg {
    uint32_t type;
    uint32_t round;
    uint32_t thread;
    uint32_t i;
};

/* ------------------------------------------------------------ the child */

struct child_args {
    char dir[PATH_MAX];
    int round;
};

static int child_round;
static ravel_db *child_db;

static void child_send(uint32_t type, uint32_t t, uint32_t i)
{
    struct msg m = {type, (uint32_t)child_round, t, i};
    crash_send(&m, sizeof m);
}

static void child_fail(uint32_t t, const char *what, int rc)
{
    crash_child_fail("thread %u: %s: %s: %s", t, what, ravel_errstr(rc),
                     ravel_errmsg());
}

static int single_key(char *buf, size_t size, int r, int t, int i)
{
    return snprintf(buf, size, "s-r%03d-t%d-i%06d", r, t, i);
}

static int single_val(char *buf, size_t size, int r, int t, int i)
{
    return snprintf(buf, size, "single %d/%d/%d %0*d", r, t, i, i % 100, 0);
}

static int batch_key(char *buf, size_t size, const char *kind, int t, int k)
{
    return snprintf(buf, size, "%s-t%d-k%d", kind, t, k);
}

/* The version, then padding so that records vary in size. */
static int batch_val(char *buf, size_t size, int r, int i)
{
    return snprintf(buf, size, "r%03d-i%07d-%0*d", r, i, (r * 31 + i) % 300,
                    0);
}

static void *child_sync_writer(void *p)
{
    int t = (int)(intptr_t)p;
    ravel_batch *b = NULL;
    int rc = ravel_batch_new(&b);
    if (rc)
        child_fail((uint32_t)t, "batch_new", rc);
    char key[64], val[400];
    for (int i = 0;; i++) {
        switch (i % 4) {
        case 0:
        case 1: {
            int kl = single_key(key, sizeof key, child_round, t, i);
            int vl = single_val(val, sizeof val, child_round, t, i);
            rc = ravel_put(child_db, RAVEL_SYNC, key, (size_t)kl, val,
                           (size_t)vl);
            if (rc)
                child_fail((uint32_t)t, "put", rc);
            child_send(MSG_PUT, (uint32_t)t, (uint32_t)i);
            break;
        }
        case 2: {
            int vl = batch_val(val, sizeof val, child_round, i);
            ravel_batch_clear(b);
            for (int k = 0; k < BATCH_KEYS; k++) {
                int kl = batch_key(key, sizeof key, "b", t, k);
                rc = ravel_batch_put(b, key, (size_t)kl, val, (size_t)vl);
                if (rc)
                    child_fail((uint32_t)t, "batch_put", rc);
            }
            rc = ravel_write(child_db, RAVEL_SYNC, b);
            if (rc)
                child_fail((uint32_t)t, "write", rc);
            child_send(MSG_BATCH, (uint32_t)t, (uint32_t)i);
            break;
        }
        case 3: {
            int kl = single_key(key, sizeof key, child_round, t, i - 3);
            rc = ravel_delete(child_db, RAVEL_SYNC, key, (size_t)kl);
            if (rc)
                child_fail((uint32_t)t, "delete", rc);
            child_send(MSG_DEL, (uint32_t)t, (uint32_t)(i - 3));
            break;
        }
        }
    }
    return NULL;
}

/* Batches without sync: nothing is promised about durability, but a
** batch is still all or nothing. */
static void *child_nosync_writer(void *p)
{
    (void)p;
    ravel_batch *b = NULL;
    int rc = ravel_batch_new(&b);
    if (rc)
        child_fail(99, "batch_new", rc);
    char key[64], val[400];
    for (int i = 0;; i++) {
        int vl = batch_val(val, sizeof val, child_round, i);
        ravel_batch_clear(b);
        for (int k = 0; k < BATCH_KEYS; k++) {
            int kl = batch_key(key, sizeof key, "n", i % 2, k);
            rc = ravel_batch_put(b, key, (size_t)kl, val, (size_t)vl);
            if (rc)
                child_fail(99, "batch_put", rc);
        }
        rc = ravel_write(child_db, 0, b);
        if (rc)
            child_fail(99, "nosync write", rc);
        /* Paced, so that the WAL (never flushed yet) stays small enough
        ** for the rounds' recoveries to stay quick. */
        usleep(200);
    }
    return NULL;
}

static int flush_key(char *buf, size_t size, int r, int i)
{
    return snprintf(buf, size, "f-r%03d-i%06d", r, i);
}

/* Puts without sync, and every 8 of them ravel_flush_wal (with and without
** sync), whose success promises that they all survive kill -9. */
static void *child_flush_writer(void *p)
{
    (void)p;
    char key[64];
    for (int i = 0;; i++) {
        int kl = flush_key(key, sizeof key, child_round, i);
        int rc = ravel_put(child_db, 0, key, (size_t)kl, key, (size_t)kl);
        if (rc)
            child_fail(98, "unsynced put", rc);
        if (i % 8 == 7) {
            rc = ravel_flush_wal(child_db, i % 16 == 15);
            if (rc)
                child_fail(98, "flush_wal", rc);
            child_send(MSG_FLUSHED, 0, (uint32_t)(i + 1));
        }
    }
    return NULL;
}

static int child_main(const void *arg)
{
    const struct child_args *ca = arg;
    const char *dir = ca->dir;
    child_round = ca->round;
    /* The run's options (its WAL path, ordering mode or manual_wal_flush:
    ** tests/meson.build), and small memtables: switches happen while the
    ** child is killed. */
    ravel_options *o = NULL;
    int rc = tu_options_try(CHILD_OPTS, &o);
    if (rc)
        child_fail(0, "options", rc);
    rc = ravel_open(dir, o, &child_db);
    if (rc)
        child_fail(0, "open", rc);
    ravel_options_free(o);
    /* with its ordering mode: the parent checks it reopens in that one */
    crash_child_opened(child_db);
    pthread_t th[SYNC_THREADS + 2];
    for (int t = 0; t < SYNC_THREADS; t++)
        if (pthread_create(&th[t], NULL, child_sync_writer,
                           (void *)(intptr_t)t))
            child_fail(0, "pthread_create", 0);
    if (pthread_create(&th[SYNC_THREADS], NULL, child_nosync_writer, NULL)
        || pthread_create(&th[SYNC_THREADS + 1], NULL, child_flush_writer,
                          NULL))
        child_fail(0, "pthread_create", 0);
    crash_child_park();
}

/* ----------------------------------------------------------- the parent */

/* What the parent knows was acknowledged: per round and thread, the state
** of each single key (0 unknown, 1 put acknowledged, 2 delete
** acknowledged), and per thread the newest acknowledged batch version. */
struct acked {
    unsigned char *state[MAX_ROUNDS][SYNC_THREADS];
    uint32_t len[MAX_ROUNDS][SYNC_THREADS];
    int64_t last_op[MAX_ROUNDS][SYNC_THREADS]; /* newest op acknowledged */
    uint32_t flushed[MAX_ROUNDS];  /* f-R-0 .. f-R-(n-1) flushed */
    int batch_round[SYNC_THREADS]; /* -1: none acknowledged yet */
    uint32_t batch_i[SYNC_THREADS];
    uint64_t total;
    int round;                     /* the child's */
};

static void acked_set(struct acked *a, uint32_t r, uint32_t t, uint32_t i,
                      unsigned char st)
{
    if (i >= a->len[r][t]) {
        uint32_t n = a->len[r][t] ? a->len[r][t] : 1024;
        while (n <= i)
            n *= 2;
        a->state[r][t] = realloc(a->state[r][t], n);
        assert_non_null(a->state[r][t]);
        memset(a->state[r][t] + a->len[r][t], 0, n - a->len[r][t]);
        a->len[r][t] = n;
    }
    a->state[r][t][i] = st;
}

static void note_op(struct acked *a, uint32_t r, uint32_t t, int64_t op)
{
    if (op > a->last_op[r][t])
        a->last_op[r][t] = op;
}

static void handle_msg(struct crash_child *c, const void *msg)
{
    struct acked *a = c->ctx;
    const struct msg *m = msg;
    if ((int)m->round != a->round || m->thread >= SYNC_THREADS)
        fail_msg("garbled message from the child");
    switch (m->type) {
    case MSG_PUT:
        acked_set(a, m->round, m->thread, m->i, 1);
        note_op(a, m->round, m->thread, m->i);
        a->total++;
        break;
    case MSG_DEL: /* op i+3 deletes the key of op i */
        acked_set(a, m->round, m->thread, m->i, 2);
        note_op(a, m->round, m->thread, (int64_t)m->i + 3);
        a->total++;
        break;
    case MSG_FLUSHED:
        a->flushed[m->round] = m->i;
        a->total++;
        break;
    case MSG_BATCH:
        note_op(a, m->round, m->thread, m->i);
        a->batch_round[m->thread] = (int)m->round;
        a->batch_i[m->thread] = m->i;
        a->total++;
        break;
    default:
        fail_msg("unknown message type %u from the child", m->type);
    }
}

/* Fails unless the BATCH_KEYS keys of KIND/T all hold the same value or
** are all absent; returns the version ("rRRR-iIIIIIII") or "" if absent. */
static void read_batch_group(ravel_db *db, const char *kind, int t,
                             char *version, size_t vsize)
{
    char key[64];
    char first[400] = "";
    size_t first_len = 0;
    int first_present = 0;
    for (int k = 0; k < BATCH_KEYS; k++) {
        int kl = batch_key(key, sizeof key, kind, t, k);
        void *v = NULL;
        size_t vl = 0;
        int rc = ravel_get(db, NULL, key, (size_t)kl, &v, &vl);
        if (rc != RAVEL_OK && rc != RAVEL_NOTFOUND)
            fail_msg("get %s: %s: %s", key, ravel_errstr(rc), ravel_errmsg());
        int present = rc == RAVEL_OK;
        if (k == 0) {
            first_present = present;
            if (present) {
                assert_true(vl < sizeof first);
                memcpy(first, v, vl);
                first[vl] = 0;
                first_len = vl;
            }
        } else if (present != first_present
                   || (present && (vl != first_len
                                   || memcmp(v, first, vl) != 0))) {
            fail_msg("batch keys %s-t%d are partial: key 0 %s %.13s, key %d "
                     "%s %.13s", kind, t, first_present ? "has" : "absent",
                     first, k, present ? "has" : "absent",
                     present ? (char *)v : "");
        }
        ravel_free(v);
    }
    snprintf(version, vsize, "%.13s", first_present ? first : "");
}

static void verify(ravel_db *db, const struct acked *a, int rounds_done)
{
    char key[64], val[400];
    for (int r = 0; r < rounds_done; r++) {
        for (int t = 0; t < SYNC_THREADS; t++) {
            for (uint32_t i = 0; i < a->len[r][t]; i++) {
                unsigned char st = a->state[r][t][i];
                if (!st)
                    continue;
                single_key(key, sizeof key, r, t, (int)i);
                single_val(val, sizeof val, r, t, (int)i);
                /* The put of op i (i % 4 == 0) is deleted by op i+3, which
                ** may have run without being acknowledged once op i+2 was:
                ** then the key may be either way. */
                if (st == 1 && i % 4 == 0 && a->last_op[r][t] >= i + 2)
                    continue;
                if (st == 1)
                    tu_expect(db, NULL, key, val);
                else
                    tu_expect(db, NULL, key, NULL);
            }
        }
    }
    for (int r = 0; r < rounds_done; r++) {
        for (uint32_t i = 0; i < a->flushed[r]; i++) {
            flush_key(key, sizeof key, r, (int)i);
            tu_expect(db, NULL, key, key);
        }
    }
    for (int t = 0; t < SYNC_THREADS; t++) {
        char version[24], want[24];
        read_batch_group(db, "b", t, version, sizeof version);
        if (a->batch_round[t] < 0)
            continue;
        snprintf(want, sizeof want, "r%03d-i%07u", a->batch_round[t],
                 a->batch_i[t]);
        if (version[0] == 0)
            fail_msg("thread %d: acknowledged batch %s is missing", t, want);
        /* Versions compare as strings (fixed-width numbers). */
        if (strcmp(version, want) < 0)
            fail_msg("thread %d: batch keys hold %s, older than the "
                     "acknowledged %s", t, version, want);
    }
    for (int t = 0; t < 2; t++) {
        char version[24];
        read_batch_group(db, "n", t, version, sizeof version);
    }
}

static void test_kill_during_sync_writes(void **state)
{
    (void)state;
    int rounds = (int)tu_env_u64("RAVEL_TEST_CRASH_ROUNDS", 24);
    if (rounds > MAX_ROUNDS)
        rounds = MAX_ROUNDS;
    uint64_t rng = tu_seed();
    char *dir = tu_path("crash");
    struct acked *a = calloc(1, sizeof *a);
    assert_non_null(a);
    for (int t = 0; t < SYNC_THREADS; t++)
        a->batch_round[t] = -1;
    for (int r = 0; r < MAX_ROUNDS; r++)
        for (int t = 0; t < SYNC_THREADS; t++)
            a->last_op[r][t] = -1;
    int opened_rounds = 0;

    for (int round = 0; round < rounds; round++) {
        /* One round in four: a kill at a random moment of the child's
        ** start (its open is a recovery).  The others: a random moment
        ** after the open, while the writes go on. */
        uint64_t r = tu_rand(&rng);
        int early = r % 4 == 0;
        uint64_t delay = early ? (r >> 8) % 60 : 5 + (r >> 8) % 200;
        uint64_t before = a->total;
        struct child_args ca = {.round = round};
        snprintf(ca.dir, sizeof ca.dir, "%s", dir);
        struct crash_child c = {.on_msg = handle_msg,
                                .msg_size = sizeof(struct msg), .ctx = a};
        snprintf(c.label, sizeof c.label, "round %d", round);
        a->round = round;
        crash_spawn(&c, "writer", &ca, sizeof ca);
        crash_kill_after(&c, early ? CRASH_FROM_SPAWN : CRASH_FROM_OPEN,
                         delay);
        int opened = c.opened;
        opened_rounds += opened;
        printf("# round %d: killed %" PRIu64 " ms after %s, %" PRIu64
               " acknowledged writes%s\n", round, delay,
               early ? "the start" : "the open", a->total - before,
               opened ? "" : " (during open)");
        if (!early)
            printf("#   (the open took %" PRIu64 " ms)\n",
                   c.opened_ms - c.spawned_ms);

        ravel_db *db = tu_open_ok(dir, CHILD_OPTS);
        if (opened) {
            char *mode = tu_prop(db, "ravel.write-ordering");
            if (strcmp(mode, c.note) != 0)
                fail_msg("the child wrote in ordering mode '%s', the parent "
                         "reopens in '%s'", c.note, mode);
            ravel_free(mode);
        }
        verify(db, a, round + 1);
        /* Usable: a synced write of our own, then close. */
        char key[32];
        snprintf(key, sizeof key, "parent-%d", round);
        tu_put(db, RAVEL_SYNC, key, "ok");
        tu_expect(db, NULL, key, "ok");
        TU_OK(ravel_close(db));
    }

    /* The test proved something only if writes were acknowledged. */
    printf("# %" PRIu64 " acknowledged writes over %d rounds (%d opened)\n",
           a->total, rounds, opened_rounds);
    assert_true(a->total > 0);
    assert_true(opened_rounds > 0);

    ravel_db *db = tu_open_ok(dir, NULL);
    verify(db, a, rounds);
    for (int round = 0; round < rounds; round++) {
        char key[32];
        snprintf(key, sizeof key, "parent-%d", round);
        tu_expect(db, NULL, key, "ok");
    }
    TU_OK(ravel_close(db));
    for (int r = 0; r < MAX_ROUNDS; r++)
        for (int t = 0; t < SYNC_THREADS; t++)
            free(a->state[r][t]);
    free(a);
    free(dir);
}

static const struct crash_role roles[] = {
    {"writer", child_main, sizeof(struct child_args)},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill_during_sync_writes),
    };
    return CRASH_MAIN(argc, argv, roles, tests);
}
