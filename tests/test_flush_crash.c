/*
** test_flush_crash.c -- a kill -9 at every step of a flush, and of the
** manifest switch at open, loses nothing and leaves nothing behind.
**
** Each round, a child process (this program re-executed: crash_harness.h)
** opens the database, writes its round's keys, and then stops at one step
** through a pause point of lib/util/fault.h:
**   tables    the flush's table files are durable, the manifest does not
**             name them yet (RV_PAUSE_FLUSH_TABLES_WRITTEN)
**   logged    the manifest names them; the version is not installed and
**             the WAL segments are not deleted yet (RV_PAUSE_FLUSH_LOGGED)
**   manifest  a reopen's new manifest is durable, CURRENT does not name it
**             yet (RV_PAUSE_MANIFEST_WRITTEN)
** It tells the parent it is there, and the parent kills it.  The parent
** reopens: every key of every round is there (get and scan), every block
** verifies, the directory holds exactly the table files the manifest names
** and one manifest, and a second reopen works.  The rounds share one
** database, so each recovery starts from the previous crash.
*/
#include "crash_harness.h"
#include "util/fault.h"

#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEYS_PER_ROUND 1500
/* no compaction: the level 0 files each flush adds are what is checked */
#define OPTS "write_buffer_size=256K;target_file_size_base=64K;" \
             "disable_auto_compactions=true"

static void key_of(char *buf, size_t n, int round, int i)
{
    snprintf(buf, n, "r%03d-k%05d", round, i);
}

static void val_of(char *buf, size_t n, int round, int i)
{
    snprintf(buf, n, "value-%d-%d-%080d", round, i, i);
}

/* ------------------------------------------------------------ the child */

static void child_die(const char *what, int rc)
{
    crash_child_fail("%s: %s (%s)", what, ravel_errmsg(), ravel_errstr(rc));
}

struct child_args {
    char dir[PATH_MAX];
    int round;
    char point[16]; /* "tables", "logged" or "manifest" */
};

static ravel_db *child_open(const char *dir)
{
    /* the run's options (WAL path, ordering mode: tests/meson.build), as
    ** the parent's reopens */
    ravel_options *o = NULL;
    int rc = tu_options_try(OPTS, &o);
    ravel_db *db = NULL;
    if (!rc)
        rc = ravel_open(dir, o, &db);
    ravel_options_free(o);
    if (rc)
        child_die("open", rc);
    return db;
}

struct opener {
    const char *dir;
    ravel_db *db;
};

static void *opener_main(void *p)
{
    struct opener *op = p;
    op->db = child_open(op->dir);
    return NULL;
}

/* Writes the round's keys (all acknowledged before the pause point is
** reached), then stops at the pause point and says so. */
static int child_main(const void *arg)
{
    const struct child_args *ca = arg;
    const char *dir = ca->dir, *point = ca->point;
    int round = ca->round;
    ravel_db *db = child_open(dir);
    /* the open may flush what it recovered: let that finish before the
    ** pause point is armed, so that the flush stopped is this round's */
    int frc = ravel_flush(db, 0);
    if (frc)
        child_die("flush after open", frc);
    char k[32], v[128];
    for (int i = 0; i < KEYS_PER_ROUND; i++) {
        key_of(k, sizeof k, round, i);
        val_of(v, sizeof v, round, i);
        int rc = ravel_put(db, 0, k, strlen(k), v, strlen(v));
        if (rc)
            child_die("put", rc);
    }
    enum rv_pause_point p;
    if (strcmp(point, "manifest") == 0) {
        /* the next open's manifest switch */
        int rc = ravel_close(db);
        if (rc)
            child_die("close", rc);
        p = RV_PAUSE_MANIFEST_WRITTEN;
        rv_pause_arm(p);
        static struct opener op; /* the opener outlives this block */
        op.dir = dir;
        pthread_t th;
        pthread_create(&th, NULL, opener_main, &op);
    } else {
        p = strcmp(point, "tables") == 0 ? RV_PAUSE_FLUSH_TABLES_WRITTEN
                                         : RV_PAUSE_FLUSH_LOGGED;
        rv_pause_arm(p);
        int rc = ravel_flush(db, RAVEL_FLUSH_NO_WAIT);
        if (rc)
            child_die("flush", rc);
    }
    crash_child_park_at(p); /* the parent kills us there */
}

/* ----------------------------------------------------------- the parent */

static int count_names(const char *dir, const char *prefix,
                       const char *suffix)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name), sl = strlen(suffix);
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0 && len >= sl &&
             strcmp(e->d_name + len - sl, suffix) == 0;
    }
    closedir(d);
    return n;
}

static int count_lines(const char *text)
{
    int n = 0;
    for (; *text; text++)
        n += *text == '\n';
    return n;
}

/* Runs a child for ROUND stopping at POINT, and kills it there. */
static void run_child(const char *dir, int round, const char *point)
{
    struct child_args ca = {.round = round};
    snprintf(ca.dir, sizeof ca.dir, "%s", dir);
    snprintf(ca.point, sizeof ca.point, "%s", point);
    struct crash_child c = {.on_msg = NULL};
    snprintf(c.label, sizeof c.label, "round %d (%s)", round, point);
    crash_spawn(&c, "flusher", &ca, sizeof ca);
    crash_wait(&c, crash_paused, 120000, "its pause point");
    crash_kill(&c);
}

/* Every key of rounds 0..ROUNDS-1 is there, by get and by scan. */
static void check_rounds(ravel_db *db, int rounds)
{
    char k[32], v[128];
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < KEYS_PER_ROUND; i++) {
            key_of(k, sizeof k, r, i);
            val_of(v, sizeof v, r, i);
            tu_expect(db, NULL, k, v);
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
    assert_int_equal(n, rounds * KEYS_PER_ROUND);
}

static void check_directory(ravel_db *db, const char *dir)
{
    /* the open may be flushing what it recovered: let it finish, so no
    ** table file is being written while the directory is listed */
    TU_OK(ravel_flush(db, 0));
    char *sst = tu_prop(db, "ravel.sstables");
    int named = count_lines(sst);
    ravel_free(sst);
    int present = count_names(dir, "", ".sst");
    if (present != named)
        fail_msg("%d table files in %s, but the manifest names %d: a crashed "
                 "flush's files were not cleaned up", present, dir, named);
    assert_int_equal(count_names(dir, "MANIFEST-", ""), 1);
}

static void test_kill_at_each_flush_step(void **state)
{
    (void)state;
    static const char *const points[] = {"tables", "logged", "manifest"};
    char *dir = tu_path("flush-crash");
    int rounds = (int)tu_env_u64("RAVEL_TEST_FLUSH_CRASH_ROUNDS", 9);
    for (int r = 0; r < rounds; r++) {
        const char *point = points[r % 3];
        run_child(dir, r, point);
        ravel_db *db = tu_open_ok(dir, OPTS);
        check_rounds(db, r + 1);
        TU_OK(ravel_verify(db));
        check_directory(db, dir);
        printf("# round %d, killed at '%s': %" PRIu64 " table files, all "
               "%d keys there\n", r, point,
               tu_prop_u64(db, "ravel.num-files-at-level0"),
               (r + 1) * KEYS_PER_ROUND);
        TU_OK(ravel_close(db));
        db = tu_open_ok(dir, OPTS);
        check_rounds(db, r + 1);
        TU_OK(ravel_close(db));
    }
    free(dir);
}

static const struct crash_role roles[] = {
    {"flusher", child_main, sizeof(struct child_args)},
    {NULL, NULL, 0},
};

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill_at_each_flush_step),
    };
    return CRASH_MAIN(argc, argv, roles, tests);
}
