/*
** test_compaction_crash.c -- kill -9 while compactions run, many rounds:
** nothing acknowledged is lost, no batch is partial, no table file is
** leaked, the manifest is consistent.
**
** Each round, a child process (this program re-executed with --child)
** opens the shared database with tiny memtables, files and level targets
** (compactions run constantly) and runs 4 writer threads.  Each writer
** owns its keys and writes RAVEL_SYNC batches of two puts and a delete,
** numbered 1, 2, ... in the round; after each batch is acknowledged it
** reports "A writer number" on a pipe, so at most one batch per writer --
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
#include "powerloss.h"
#include "testutil.h"
#include "util/fault.h"

#include <dirent.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define OPTS "write_buffer_size=64K;target_file_size_base=64K;" \
             "max_bytes_for_level_base=128K;" \
             "level0_file_num_compaction_trigger=2;" \
             "max_bytes_for_level_multiplier=4"
#define WRITERS 4
#define KEYS 1000         /* per writer */
#define MIN_ACKS 100      /* batches acknowledged in a round before a kill */
#define MORE_ACKS 1500    /* ... plus a random number up to this */
#define MAX_BATCHES 1000000

static char *self_exe;

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

struct child {
    ravel_db *db;
    int round;
    int fd;
    _Atomic int acks;   /* batches acknowledged, all writers */
    pthread_mutex_t mu; /* one report at a time on the pipe */
};

static _Noreturn void child_die(const char *what, int rc)
{
    fprintf(stderr, "child: %s: %s (%s)\n", what, ravel_errmsg(),
            ravel_errstr(rc));
    _exit(2);
}

static void child_report(struct child *ch, const char *line)
{
    pthread_mutex_lock(&ch->mu);
    size_t len = strlen(line);
    if (write(ch->fd, line, len) != (ssize_t)len)
        _exit(3);
    pthread_mutex_unlock(&ch->mu);
}

struct child_writer {
    struct child *ch;
    int w;
};

static void *child_writer_main(void *p)
{
    struct child_writer *cw = p;
    struct child *ch = cw->ch;
    char k[32], v[256], line[64];
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
        snprintf(line, sizeof line, "A %d %d\n", cw->w, c);
        child_report(ch, line);
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
** acknowledged. */
/* Set (in the environment the children inherit) by the power-loss test:
** the sync journal every process appends to. */
#define JOURNAL_ENV "RAVEL_TEST_COMPACTION_JOURNAL"

static int child_main(const char *dir, int round, int fd, const char *point,
                      int arm_after)
{
    const char *journal = getenv(JOURNAL_ENV);
    if (journal)
        tu_sync_journal_start(journal);
    int pause = -1, armed = 0;
    if (strcmp(point, "written") == 0)
        pause = RV_PAUSE_COMPACTION_WRITTEN;
    else if (strcmp(point, "logged") == 0)
        pause = RV_PAUSE_COMPACTION_LOGGED;
    static struct child ch;
    ch.round = round;
    ch.fd = fd;
    pthread_mutex_init(&ch.mu, NULL);
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
            child_report(&ch, "C\n");
        running = now;
        if (pause >= 0 && !armed && atomic_load(&ch.acks) >= arm_after) {
            rv_pause_arm((enum rv_pause_point)pause);
            armed = 1;
        }
        if (armed && !paused &&
            rv_pause_waiting((enum rv_pause_point)pause)) {
            paused = 1;
            child_report(&ch, "P\n");
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

static uint64_t now_micros(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

struct round_result {
    int acked[WRITERS];
    int killed_in_compaction; /* a "C" came within the last 30 ms */
    int paused;               /* the child reported "P" */
};

/* Handles the report lines in BUF[0..*LEN); keeps an incomplete tail. */
static void parse_reports(char *buf, size_t *len, struct round_result *r,
                          int *acks, uint64_t *last_c)
{
    size_t start = 0;
    for (size_t i = 0; i < *len; i++) {
        if (buf[i] != '\n')
            continue;
        buf[i] = '\0';
        int w, c;
        if (buf[start] == 'C') {
            *last_c = now_micros();
        } else if (buf[start] == 'P') {
            r->paused = 1;
        } else if (sscanf(buf + start, "A %d %d", &w, &c) == 2 && w >= 0 &&
                   w < WRITERS) {
            if (c != r->acked[w] + 1)
                fail_msg("writer %d reported batch %d after %d", w, c,
                         r->acked[w]);
            r->acked[w] = c;
            (*acks)++;
        } else {
            fail_msg("the child reported '%s'", buf + start);
        }
        start = i + 1;
    }
    memmove(buf, buf + start, *len - start);
    *len -= start;
}

/* Runs ROUND's child and kills it during a compaction. */
static void run_child(const char *dir, int round, const char *point,
                      uint64_t *rng, struct round_result *r)
{
    memset(r, 0, sizeof *r);
    int fds[2];
    char arm[16];
    snprintf(arm, sizeof arm, "%d", (int)(tu_rand(rng) % 400));
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        tu_child_prepare();
        close(fds[0]);
        char rs[16], fs[16];
        snprintf(rs, sizeof rs, "%d", round);
        snprintf(fs, sizeof fs, "%d", fds[1]);
        execl(self_exe, self_exe, "--child", dir, rs, fs, point, arm,
              (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char buf[4096];
    size_t len = 0;
    int acks = 0, killed = 0, by_pause = strcmp(point, "random") != 0;
    int min_acks = MIN_ACKS + (int)(tu_rand(rng) % MORE_ACKS);
    uint64_t last_c = 0, kill_at = 0, start = now_micros();
    uint64_t deadline = start + 60u * 1000000u; /* against a hang */
    for (;;) {
        uint64_t now = now_micros();
        if (!killed && kill_at && now >= kill_at) {
            r->killed_in_compaction = now - last_c < 30000;
            kill(pid, SIGKILL);
            killed = 1;
        }
        if (!killed && now > deadline) {
            tu_child_stuck(pid, "acknowledged batches and a compaction");
            waitpid(pid, NULL, 0);
            fail_msg("round %d (%s): %d batches acknowledged, %s compaction "
                     "seen, %s in 60 s", round, point, acks,
                     last_c ? "a" : "no", r->paused ? "paused" : "no pause");
        }
        struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
        int pr = poll(&pfd, 1, killed ? -1 : 1);
        if (pr <= 0)
            continue;
        ssize_t n = read(fds[0], buf + len, sizeof buf - len);
        if (n <= 0) {
            if (!killed) {
                int status = 0;
                waitpid(pid, &status, 0);
                fail_msg("round %d: the child ended before it was killed "
                         "(status 0x%x)", round, status);
            }
            break; /* every report read */
        }
        len += (size_t)n;
        parse_reports(buf, &len, r, &acks, &last_c);
        if (!kill_at && by_pause && r->paused)
            kill_at = now_micros();
        else if (!kill_at && !by_pause && acks >= min_acks &&
                 last_c > start && now_micros() - last_c < 5000)
            kill_at = now_micros() + tu_rand(rng) % 8000;
    }
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
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
        run_child(dir, round, point, &rng, &r);
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
    assert_int_equal(at_pause, rounds / 3 * 2 + (rounds % 3 == 2));
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
    assert_int_equal(setenv(JOURNAL_ENV, journal, 1), 0);
    kill_rounds(dir, (int)tu_env_u64(
                         "RAVEL_TEST_COMPACTION_POWERLOSS_ROUNDS", 12),
                journal);
    unsetenv(JOURNAL_ENV);
    free(journal);
    free(dir);
}

int main(int argc, char **argv)
{
    if (argc == 7 && strcmp(argv[1], "--child") == 0)
        return child_main(argv[2], atoi(argv[3]), atoi(argv[4]), argv[5],
                          atoi(argv[6]));
    self_exe = realpath("/proc/self/exe", NULL);
    if (!self_exe) {
        perror("realpath /proc/self/exe");
        return 1;
    }
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill_during_compactions),
        cmocka_unit_test(test_power_loss_during_compactions),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(self_exe);
    return rc;
}
