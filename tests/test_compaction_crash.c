/*
** test_compaction_crash.c -- kill -9 while compactions run, many rounds:
** nothing acknowledged is lost, no batch is partial, no table file is
** leaked, the manifest is consistent.
**
** Each round, a child process (this program re-executed: crash_harness.h)
** opens the shared database with tiny memtables, files and level targets
** (compactions run constantly) and runs 4 writer threads.  Each writer
** owns its keys and writes RAVEL_SYNC batches of two puts and a delete,
** numbered 1, 2, ... in the round; after each batch is acknowledged it
** reports it ("A", writer, number), so at most one batch per writer --
** the next, not yet reported -- is in flight.  A monitor thread reports
** "C" whenever it sees a compaction start running.  The parent kills the
** child with SIGKILL shortly after a "C" that follows a random number of
** acknowledged batches -- or, one round in three each, when the child
** reports "P": a compaction stopped at a pause point of util/fault.h,
**   written  its output files durable, the manifest not naming them
**            (RV_PAUSE_COMPACTION_WRITTEN: they must be deleted at reopen)
**   logged   the manifest naming them, the version not installed and the
**            inputs not deleted (RV_PAUSE_COMPACTION_LOGGED)
** -- reads every report left in the pipe, and reopens:
**   - every key reads as the acknowledged batches left it, unless the
**     writer's in-flight batch is there, and then it is there whole;
**   - a scan shows exactly the keys the model holds;
**   - ravel_verify passes; the directory holds exactly the table files
**     ravel.sstables names, and one manifest;
**   - by the last round, compactions have moved data below level 0.
** RAVEL_TEST_COMPACTION_CRASH_ROUNDS sets the rounds (default 45).
**
** The same rounds then run with a simulated power loss after each kill
** (powerloss.h): the children and the checks journal every completed
** fsync, and before each reopen every byte and directory entry no
** completed fsync covered is dropped or torn in 4 KiB pages, each round
** another pattern.  The writes are RAVEL_SYNC, so the same checks hold:
** compaction's outputs, manifest edits and deletions must never leave an
** acknowledged batch lost, a manifest naming a torn or missing file, or a
** file leaked.  RAVEL_TEST_COMPACTION_POWERLOSS_ROUNDS (default 12).
*/
#include "crash_harness.h"
#include "powerloss.h"
#include "util/fault.h"

#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define OPTS "write_buffer_size=64K;target_file_size_base=64K;" \
             "max_bytes_for_level_base=128K;" \
             "level0_file_num_compaction_trigger=2;" \
             "max_bytes_for_level_multiplier=4"
#define WRITERS 4
#define KEYS 1000         /* per writer */
#define MIN_ACKS 100      /* batches acknowledged in a round before a kill */
#define MORE_ACKS 1500    /* ... plus a random number up to this */
#define MAX_BATCHES 1000000

static void key_of(char *buf, size_t n, int w, int i)
{
    snprintf(buf, n, "w%d-%05d", w, i);
}

/* The keys of batch C of writer W in ROUND: three distinct indexes, the
** first two put, the third deleted. */
static void batch_keys(int round, int w, int c, int idx[3])
{
    uint64_t h = (uint64_t)round * 0x9E3779B97F4A7C15ull ^
                 (uint64_t)w * 0xC2B2AE3D27D4EB4Full ^
                 (uint64_t)c * 0x165667B19E3779F9ull;
    h ^= h >> 31;
    h *= 0xD6E8FEB86659FD93ull;
    h ^= h >> 32;
    int base = (int)(h % KEYS);
    int stride = 1 + (int)((h >> 20) % (KEYS / 3 - 1));
    for (int j = 0; j < 3; j++)
        idx[j] = (base + j * stride) % KEYS;
}

static size_t value_of(char *buf, size_t n, int round, int w, int c, int j)
{
    size_t len = 60 + (size_t)((c * 7 + j * 13 + round) % 180);
    if (len >= n)
        len = n - 1;
    int p = snprintf(buf, n, "r%03d-w%d-c%08d-j%d-", round, w, c, j);
    for (size_t i = (size_t)p; i < len; i++)
        buf[i] = (char)('a' + (i + (size_t)c) % 26);
    buf[len] = '\0';
    return len;
}

/* ------------------------------------------------------------ the child */

/* What the child reports (a stop at the pause point: crash_child_paused). */
struct report {
    char kind; /* 'A': batch C of writer W acknowledged; 'C': a compaction
               ** was seen starting */
    int w, c;
};

struct child_args {
    char dir[PATH_MAX];
    int round;
    char point[16];        /* in kill_points[] */
    int arm_after;         /* batches acknowledged before the pause point
                           ** is armed */
    char journal[PATH_MAX]; /* the sync journal (power loss), or "" */
};

struct child {
    ravel_db *db;
    int round;
    _Atomic int acks;   /* batches acknowledged, all writers */
};

static _Noreturn void child_die(const char *what, int rc)
{
    crash_child_fail("%s: %s (%s)", what, ravel_errmsg(), ravel_errstr(rc));
}

static void child_report(char kind, int w, int c)
{
    struct report r = {kind, w, c};
    crash_send(&r, sizeof r);
}

struct child_writer {
    struct child *ch;
    int w;
};

static void *child_writer_main(void *p)
{
    struct child_writer *cw = p;
    struct child *ch = cw->ch;
    char k[32], v[256];
    for (int c = 1; c < MAX_BATCHES; c++) {
        ravel_batch *b;
        int rc = ravel_batch_new(&b);
        if (rc)
            child_die("batch", rc);
        int idx[3];
        batch_keys(ch->round, cw->w, c, idx);
        for (int j = 0; j < 3; j++) {
            key_of(k, sizeof k, cw->w, idx[j]);
            if (j < 2) {
                size_t vl = value_of(v, sizeof v, ch->round, cw->w, c, j);
                ravel_batch_put(b, k, strlen(k), v, vl);
            } else {
                ravel_batch_delete(b, k, strlen(k));
            }
        }
        rc = ravel_write(ch->db, RAVEL_SYNC, b);
        ravel_batch_free(b);
        if (rc)
            child_die("write", rc);
        child_report('A', cw->w, c);
        atomic_fetch_add(&ch->acks, 1);
    }
    return NULL;
}

static uint64_t child_prop(ravel_db *db, const char *name)
{
    char *t = NULL;
    int rc = ravel_property(db, name, &t);
    if (rc)
        child_die(name, rc);
    uint64_t v = strtoull(t, NULL, 10);
    ravel_free(t);
    return v;
}

static const char *const kill_points[] = {"random", "written", "logged"};

/* POINT: "random", or the pause point to arm once ARM_AFTER batches are
** acknowledged.  JOURNAL: the sync journal every process of the
** power-loss test appends to. */
static int child_main(const void *arg)
{
    const struct child_args *ca = arg;
    const char *dir = ca->dir, *point = ca->point;
    int arm_after = ca->arm_after;
    if (ca->journal[0])
        tu_sync_journal_start(ca->journal);
    int pause = -1, armed = 0;
    if (strcmp(point, "written") == 0)
        pause = RV_PAUSE_COMPACTION_WRITTEN;
    else if (strcmp(point, "logged") == 0)
        pause = RV_PAUSE_COMPACTION_LOGGED;
    static struct child ch;
    ch.round = ca->round;
    ravel_options *o = NULL;
    int rc = tu_options_try(OPTS, &o);
    if (!rc)
        rc = ravel_open(dir, o, &ch.db);
    ravel_options_free(o);
    if (rc)
        child_die("open", rc);
    static struct child_writer cw[WRITERS];
    pthread_t th[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        cw[w] = (struct child_writer){.ch = &ch, .w = w};
        pthread_create(&th[w], NULL, child_writer_main, &cw[w]);
    }
    /* the monitor: "C" each time a compaction is seen starting, "P" once
    ** one waits at the pause point */
    int running = 0, paused = 0;
    struct timespec nap = {.tv_sec = 0, .tv_nsec = 1000 * 1000};
    for (;;) { /* until the parent kills us */
        int now = child_prop(ch.db, "ravel.num-running-compactions") > 0;
        if (now && !running)
            child_report('C', 0, 0);
        running = now;
        if (pause >= 0 && !armed && atomic_load(&ch.acks) >= arm_after) {
            rv_pause_arm((enum rv_pause_point)pause);
            armed = 1;
        }
        if (armed && !paused &&
            rv_pause_waiting((enum rv_pause_point)pause)) {
            paused = 1;
            crash_child_paused();
        }
        nanosleep(&nap, NULL);
    }
    return 0;
}

/* ----------------------------------------------------------- the parent */

/* What the acknowledged batches left in a key: 0 absent, else the
** (round, batch, position) of its value. */
struct kv {
    int round, c, j;
};

static struct kv model[WRITERS][KEYS];

struct round_result {
    int acked[WRITERS];
    int killed_in_compaction; /* a "C" came within the last 30 ms */
    int paused;               /* the child reported "P" */
};

/* What the parent hears during a round: the reports, and when to kill. */
struct round_watch {
    struct round_result *r;
    uint64_t *rng;
    int by_pause;        /* killed at the pause point, not after a "C" */
    int acks, min_acks;
    uint64_t start_us;   /* tu_now_us() */
    uint64_t last_c_us;  /* the last 'C' report, 0 if none */
    uint64_t kill_at_us; /* 0: not chosen yet */
};

static void handle_report(struct crash_child *c, const void *msg)
{
    struct round_watch *rw = c->ctx;
    struct round_result *r = rw->r;
    const struct report *rep = msg;
    if (rep->kind == 'C') {
        rw->last_c_us = tu_now_us();
    } else if (rep->kind == 'A' && rep->w >= 0 && rep->w < WRITERS) {
        if (rep->c != r->acked[rep->w] + 1)
            fail_msg("writer %d reported batch %d after %d", rep->w, rep->c,
                     r->acked[rep->w]);
        r->acked[rep->w] = rep->c;
        rw->acks++;
    } else {
        fail_msg("the child reported '%c' %d %d", rep->kind, rep->w,
                 rep->c);
    }
}

/* Whether the kill is due: at the pause point, or a random moment of up
** to 8 ms after a compaction was seen starting (within the last 5 ms)
** once enough batches are acknowledged. */
static int kill_due(struct crash_child *c)
{
    struct round_watch *rw = c->ctx;
    uint64_t now = tu_now_us();
    if (!rw->kill_at_us && rw->by_pause && c->paused)
        rw->kill_at_us = now;
    else if (!rw->kill_at_us && !rw->by_pause && rw->acks >= rw->min_acks &&
             rw->last_c_us > rw->start_us && now - rw->last_c_us < 5000)
        rw->kill_at_us = now + tu_rand(rw->rng) % 8000;
    if (!rw->kill_at_us || now < rw->kill_at_us)
        return 0;
    rw->r->killed_in_compaction = now - rw->last_c_us < 30000;
    return 1;
}

static void describe_round(struct crash_child *c, char *buf, size_t n)
{
    struct round_watch *rw = c->ctx;
    snprintf(buf, n, "%d batches acknowledged, %s compaction seen, %s",
             rw->acks, rw->last_c_us ? "a" : "no",
             c->paused ? "paused" : "no pause");
}

/* Runs ROUND's child and kills it during a compaction. */
static void run_child(const char *dir, int round, const char *point,
                      const char *journal, uint64_t *rng,
                      struct round_result *r)
{
    memset(r, 0, sizeof *r);
    struct child_args ca = {.round = round};
    snprintf(ca.dir, sizeof ca.dir, "%s", dir);
    snprintf(ca.point, sizeof ca.point, "%s", point);
    snprintf(ca.journal, sizeof ca.journal, "%s", journal ? journal : "");
    ca.arm_after = (int)(tu_rand(rng) % 400);
    struct round_watch rw = {
        .r = r,
        .rng = rng,
        .by_pause = strcmp(point, "random") != 0,
        .min_acks = MIN_ACKS + (int)(tu_rand(rng) % MORE_ACKS),
        .start_us = tu_now_us(),
    };
    struct crash_child c = {.on_msg = handle_report,
                            .msg_size = sizeof(struct report), .ctx = &rw,
                            .describe = describe_round};
    snprintf(c.label, sizeof c.label, "round %d (%s)", round, point);
    crash_spawn(&c, "writer", &ca, sizeof ca);
    crash_wait(&c, kill_due, 60000, "acknowledged batches and a compaction");
    crash_kill(&c);
    r->paused = c.paused;
}

/* The value KEY holds now: 1 with it in VAL, 0 absent. */
static int read_key(ravel_db *db, const char *key, char *val, size_t cap)
{
    void *got = NULL;
    size_t glen = 0;
    int rc = ravel_get(db, NULL, key, strlen(key), &got, &glen);
    if (rc == RAVEL_NOTFOUND)
        return 0;
    if (rc != RAVEL_OK)
        fail_msg("get %s: %s: %s", key, ravel_errstr(rc), ravel_errmsg());
    if (glen >= cap)
        fail_msg("get %s: %zu bytes, more than any value written", key,
                 glen);
    memcpy(val, got, glen);
    val[glen] = '\0';
    ravel_free(got);
    return 1;
}

static int holds(ravel_db *db, int w, int i, const struct kv *want)
{
    char k[32], v[256], expect[256];
    key_of(k, sizeof k, w, i);
    int present = read_key(db, k, v, sizeof v);
    if (!want->round)
        return !present;
    value_of(expect, sizeof expect, want->round, w, want->c, want->j);
    return present && strcmp(v, expect) == 0;
}

static void check_model(ravel_db *db, int round);

/* Applies the acknowledged batches of R to the model, then checks the
** database: each in-flight batch there whole or not at all, every key as
** the model says. */
static void check_round(ravel_db *db, int round,
                        const struct round_result *r, int *in_flight_seen)
{
    for (int w = 0; w < WRITERS; w++) {
        for (int c = 1; c <= r->acked[w]; c++) {
            int idx[3];
            batch_keys(round, w, c, idx);
            for (int j = 0; j < 3; j++)
                model[w][idx[j]] = j < 2 ? (struct kv){round, c, j}
                                         : (struct kv){0, 0, 0};
        }
        /* the next batch may have been acknowledged but not reported */
        int c = r->acked[w] + 1, idx[3];
        batch_keys(round, w, c, idx);
        struct kv next[3] = {{round, c, 0}, {round, c, 1}, {0, 0, 0}};
        int puts_there = holds(db, w, idx[0], &next[0]) +
                         holds(db, w, idx[1], &next[1]);
        if (puts_there == 1)
            fail_msg("round %d: writer %d's batch %d is there in part (one "
                     "of its two puts)", round, w, c);
        if (puts_there == 2) {
            for (int j = 0; j < 3; j++)
                model[w][idx[j]] = next[j];
            (*in_flight_seen)++;
        }
    }
    check_model(db, round);
}

/* Every key reads as the model says; a scan shows exactly its keys. */
static void check_model(ravel_db *db, int round)
{
    int live = 0;
    for (int w = 0; w < WRITERS; w++) {
        for (int i = 0; i < KEYS; i++) {
            if (!holds(db, w, i, &model[w][i])) {
                char k[32], v[256];
                key_of(k, sizeof k, w, i);
                int present = read_key(db, k, v, sizeof v);
                fail_msg("round %d: %s reads %s%.40s, the acknowledged "
                         "writes left round %d batch %d (%s)", round, k,
                         present ? "" : "(absent)", present ? v : "",
                         model[w][i].round, model[w][i].c,
                         model[w][i].round ? "a put" : "absent");
            }
            live += model[w][i].round != 0;
        }
    }
    ravel_iter *it;
    TU_OK(ravel_iter_new(db, NULL, &it));
    int n = 0;
    TU_OK(ravel_iter_seek_to_first(it));
    for (; ravel_iter_valid(it); ravel_iter_next(it))
        n++;
    TU_OK(ravel_iter_status(it));
    ravel_iter_free(it);
    assert_int_equal(n, live);
}

static int count_manifests(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strncmp(e->d_name, "MANIFEST-", 9) == 0;
    closedir(d);
    return n;
}

/* The directory holds exactly the table files the database names. */
static void check_directory(ravel_db *db, const char *dir)
{
    /* the open may be flushing what it recovered */
    TU_OK(ravel_flush(db, 0));
    struct tu_sst *named;
    int n_named = tu_sstables(db, &named);
    uint64_t *on_disk;
    int n_disk = tu_dir_sst_numbers(dir, &on_disk);
    for (int i = 0; i < n_disk; i++) {
        int found = 0;
        for (int j = 0; j < n_named && !found; j++)
            found = named[j].number == on_disk[i];
        if (!found)
            fail_msg("%06" PRIu64 ".sst is in %s but the database does not "
                     "name it: a killed compaction's output was leaked",
                     on_disk[i], dir);
    }
    for (int j = 0; j < n_named; j++)
        if (!tu_sst_exists(dir, named[j].number))
            fail_msg("the database names %06" PRIu64 ".sst, which is not "
                     "in %s", named[j].number, dir);
    assert_int_equal(n_disk, n_named);
    assert_int_equal(count_manifests(dir), 1);
    free(named);
    free(on_disk);
}

/* ROUNDS kill -9 rounds in DIR; with JOURNAL, a power loss after each
** kill (see the top of the file). */
static void kill_rounds(const char *dir, int rounds, const char *journal)
{
    uint64_t rng = tu_seed();
    memset(model, 0, sizeof model);
    int in_compaction = 0, in_flight_seen = 0, at_pause = 0;
    uint64_t below = 0;
    /* the checks open without compactions, so that none starts while the
    ** directory is listed */
    const char *check_opts = OPTS ";disable_auto_compactions=true";
    for (int round = 1; round <= rounds; round++) {
        struct round_result r;
        const char *point = kill_points[round % 3];
        run_child(dir, round, point, journal, &rng, &r);
        if (journal)
            tu_power_loss(dir, journal,
                          (enum tu_power_loss_pattern)(round %
                                                       TU_PL_PATTERNS),
                          &rng);
        in_compaction += r.killed_in_compaction;
        at_pause += r.paused;
        ravel_db *db = tu_open_ok(dir, check_opts);
        check_round(db, round, &r, &in_flight_seen);
        TU_OK(ravel_verify(db));
        check_directory(db, dir);
        below = 0;
        for (int l = 1; l < 7; l++)
            below += tu_files_at_level(db, l);
        printf("# round %d: %d+%d+%d+%d batches acknowledged, killed %s; "
               "%" PRIu64 " files at level 0, %" PRIu64 " below\n", round,
               r.acked[0], r.acked[1], r.acked[2], r.acked[3],
               r.paused ? point : r.killed_in_compaction
                   ? "soon after a compaction started" : "",
               tu_files_at_level(db, 0), below);
        TU_OK(ravel_close(db));
    }
    printf("# %d of %d kills within 30 ms of a compaction starting, %d at "
           "a pause point; %d in-flight batches found whole\n",
           in_compaction, rounds, at_pause, in_flight_seen);
    assert_true(below > 0);
    assert_true(in_compaction > 0);
    /* every round but each third stops at a pause point */
    assert_int_equal(at_pause, rounds - rounds / 3);
    /* a last reopen as the children open, and a full check */
    ravel_db *db = tu_open_ok(dir, OPTS);
    tu_wait_background_idle(db);
    check_model(db, rounds);
    TU_OK(ravel_verify(db));
    TU_OK(ravel_close(db));
}

static void test_kill_during_compactions(void **state)
{
    (void)state;
    char *dir = tu_path("compaction-crash");
    kill_rounds(dir, (int)tu_env_u64("RAVEL_TEST_COMPACTION_CRASH_ROUNDS",
                                     45), NULL);
    free(dir);
}

static void test_power_loss_during_compactions(void **state)
{
    (void)state;
    char *dir = tu_path("compaction-powerloss");
    char *journal = tu_path("compaction-powerloss.journal");
    /* this process's checks sync too: the journal must know them */
    tu_sync_journal_start(journal);
    kill_rounds(dir, (int)tu_env_u64(
                         "RAVEL_TEST_COMPACTION_POWERLOSS_ROUNDS", 12),
                journal);
    free(journal);
    free(dir);
}

static const struct crash_role roles[] = {
    {"writer", child_main, sizeof(struct child_args)},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill_during_compactions),
        cmocka_unit_test(test_power_loss_during_compactions),
    };
    return CRASH_MAIN(argc, argv, roles, tests);
}
