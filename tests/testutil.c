/*
** testutil.c -- helpers shared by the end-to-end tests; see testutil.h.
*/
#include "testutil.h"
#ifdef RAVEL_TEST_HOOKS
# include "util/fault.h"
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TU_SENTINEL "tu_sentinel_option_not_a_real_name"

static char scratch_dir[4096];
static pid_t scratch_owner;

static int rm_one(const char *path, const struct stat *st, int flag,
                  struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    if (remove(path) != 0 && errno != ENOENT)
        fprintf(stderr, "testutil: remove %s: %s\n", path, strerror(errno));
    return 0;
}

void tu_rm_rf(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void scratch_remove(void)
{
    if (scratch_dir[0] && getpid() == scratch_owner)
        tu_rm_rf(scratch_dir);
}

const char *tu_wal_io(void)
{
    const char *v = getenv("RAVEL_TEST_WAL_IO");
    return v && v[0] ? v : NULL;
}

void tu_skip_if_no_uring(int rc)
{
    const char *io = tu_wal_io();
    if (!io || (strcmp(io, "uring") != 0 && strcmp(io, "direct") != 0))
        return;
    if (rc != RAVEL_IOERR && rc != RAVEL_INVALID)
        return;
    const char *msg = ravel_errmsg();
    if (strcasestr(msg, "uring") == NULL && strstr(msg, "O_DIRECT") == NULL)
        return;
    printf("SKIP: wal_io=%s cannot be used here: %s (%s)\n", io,
           msg, ravel_errstr(rc));
    fflush(stdout);
    exit(77);
}

/* ------------------------------------------------------------ watchdog */

static unsigned watchdog_seconds;

/* Prints every thread's backtrace of process PID to stderr: gdb attaches
** to it.  Bounded: gdb gets 60 s. */
static void backtraces_of(pid_t pid)
{
    char pidtext[32];
    snprintf(pidtext, sizeof pidtext, "%d", (int)pid);
    fflush(stderr);
    pid_t child = fork();
    if (child == 0) {
        dup2(2, 1);
        alarm(60);
        execlp("gdb", "gdb", "-batch", "-nx", "-p", pidtext, "-ex",
               "thread apply all bt", (char *)NULL);
        fprintf(stderr, "testutil: cannot run gdb for backtraces: %s "
                "(install gdb)\n", strerror(errno));
        _exit(127);
    }
    if (child > 0)
        waitpid(child, NULL, 0);
}

void tu_child_prepare(void)
{
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    (void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
}

void tu_child_stuck(pid_t pid, const char *what)
{
    fflush(stdout);
    fprintf(stderr, "\ntestutil: child %d is stuck (%s); every thread's "
            "backtrace follows\n", (int)pid, what);
    backtraces_of(pid);
    kill(pid, SIGKILL);
}

static void *watchdog_main(void *arg)
{
    (void)arg;
    struct timespec left = {.tv_sec = (time_t)watchdog_seconds};
    while (nanosleep(&left, &left) != 0 && errno == EINTR)
        ;
    fflush(stdout);
    fprintf(stderr, "\nwatchdog: pid %d still running after %u s (the "
            "last [ RUN ] line above names the test; its databases are "
            "kept in %s); every thread's backtrace follows\n",
            (int)getpid(), watchdog_seconds, scratch_dir);
    backtraces_of(getpid());
    fprintf(stderr, "watchdog: aborting\n");
    abort();
    return NULL;
}

/* RAVEL_TEST_WATCHDOG=SECONDS (tests/meson.build sets it below each test's
** timeout), times RAVEL_TEST_TIMEOUT_MULTIPLIER when the run stretches
** timeouts (the sanitizer runs of .ci/run): a hang then ends with every
** thread's backtrace instead of a bare timeout. */
static void watchdog_start(void)
{
    unsigned secs = (unsigned)tu_env_u64("RAVEL_TEST_WATCHDOG", 0);
    secs *= (unsigned)tu_timeout_multiplier();
    if (!secs)
        return;
    watchdog_seconds = secs;
    /* Let gdb attach where Yama restricts ptrace to ancestors. */
    (void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&th, &attr, watchdog_main, NULL) != 0)
        fprintf(stderr, "watchdog: pthread_create failed; no watchdog\n");
    pthread_attr_destroy(&attr);
}

void tu_init(void)
{
    /* Unbuffered: after a hang or a crash, the last [ RUN ] line printed is
    ** the test that was running. */
    setvbuf(stdout, NULL, _IONBF, 0);
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !tmp[0])
        tmp = "/tmp";
    snprintf(scratch_dir, sizeof scratch_dir, "%s/ravel-test-XXXXXX", tmp);
    if (!mkdtemp(scratch_dir)) {
        fprintf(stderr, "mkdtemp %s: %s\n", scratch_dir, strerror(errno));
        exit(1);
    }
    scratch_owner = getpid();
    atexit(scratch_remove);
    /* After scratch_dir is set (the watchdog names it), before the probe
    ** (which may hang too). */
    watchdog_start();
    printf("# scratch directory %s, wal_io=%s\n", scratch_dir,
           tu_wal_io() ? tu_wal_io() : "(default)");

    /* Probe the I/O path once, so that a kernel without io_uring skips
    ** the whole program rather than failing every test. */
    char *dir = tu_path("probe");
    ravel_db *db = NULL;
    int rc = tu_open(dir, NULL, &db);
    if (rc == RAVEL_OK) {
        ravel_close(db);
    } else {
        printf("# probe open of %s failed: %s: %s\n", dir, ravel_errstr(rc),
               ravel_errmsg());
    }
    tu_rm_rf(dir);
    free(dir);
}

char *tu_path(const char *fmt, ...)
{
    char name[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    size_t n = strlen(scratch_dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (!p)
        abort();
    snprintf(p, n, "%s/%s", scratch_dir, name);
    return p;
}

int tu_options_try(const char *extra, ravel_options **out)
{
    ravel_options *o = NULL;
    int rc = ravel_options_new(&o);
    if (rc)
        return rc;
    rc = ravel_options_set(o, "create_if_missing", "true");
#ifdef RAVEL_TEST_HOOKS
    /* wal_io=direct syncing with fdatasync (tests/meson.build) */
    const char *fd_sync = getenv("RAVEL_TEST_DIRECT_FDATASYNC");
    rv_test_wal_direct_fdatasync(fd_sync && strcmp(fd_sync, "1") == 0);
#endif
    if (!rc && tu_wal_io())
        rc = ravel_options_set(o, "wal_io", tu_wal_io());
    /* the run's ordering mode (tests/meson.build runs some suites in
    ** each): before EXTRA, which may still override it */
    const char *mode = getenv("RAVEL_TEST_OPTIONS");
    if (!rc && mode && mode[0])
        rc = ravel_options_parse(o, mode);
    if (!rc && extra)
        rc = ravel_options_parse(o, extra);
    if (rc) {
        ravel_options_free(o);
        return rc;
    }
    *out = o;
    return RAVEL_OK;
}

ravel_options *tu_options(const char *extra)
{
    ravel_options *o = NULL;
    int rc = tu_options_try(extra, &o);
    if (rc)
        fail_msg("options \"%s\": %s: %s", extra ? extra : "",
                 ravel_errstr(rc), ravel_errmsg());
    return o;
}

int tu_open(const char *dir, const char *extra, ravel_db **db)
{
    ravel_options *o = NULL;
    int rc = tu_options_try(extra, &o);
    if (rc)
        return rc;
    *db = NULL;
    rc = ravel_open(dir, o, db);
    ravel_options_free(o);
    if (rc)
        tu_skip_if_no_uring(rc);
    return rc;
}

ravel_db *tu_open_ok(const char *dir, const char *extra)
{
    ravel_db *db = NULL;
    int rc = tu_open(dir, extra, &db);
    if (rc != RAVEL_OK)
        fail_msg("open %s (%s): %s: %s", dir, extra ? extra : "",
                 ravel_errstr(rc), ravel_errmsg());
    if (!db)
        fail_msg("open %s returned RAVEL_OK and a NULL handle", dir);
    return db;
}

/* Joins the continuation lines of TEXT in place: ravel.stats breaks a
** line longer than 80 columns after a ", " with "\n  ", and the tests
** read its logical lines ("inserts pending, 3 switches"). */
static void tu_unwrap(char *text)
{
    char *out = text;
    for (const char *p = text; *p;) {
        if (p[0] == '\n' && p[1] == ' ' && p[2] == ' ') {
            *out++ = ' ';
            p += 3;
        } else {
            *out++ = *p++;
        }
    }
    *out = '\0';
}

char *tu_prop(ravel_db *db, const char *name)
{
    char *text = NULL;
    int rc = ravel_property(db, name, &text);
    if (rc != RAVEL_OK)
        fail_msg("property %s: %s: %s", name, ravel_errstr(rc),
                 ravel_errmsg());
    if (!text)
        fail_msg("property %s: RAVEL_OK with NULL text", name);
    tu_unwrap(text);
    return text;
}

uint64_t tu_prop_u64(ravel_db *db, const char *name)
{
    char *text = tu_prop(db, name);
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    while (end && (*end == '\n' || *end == ' '))
        end++;
    if (errno || end == text || *end) {
        char copy[128];
        snprintf(copy, sizeof copy, "%s", text);
        ravel_free(text);
        fail_msg("property %s: \"%s\" is not a number", name, copy);
    }
    ravel_free(text);
    return (uint64_t)v;
}

void tu_expect_at(const char *file, int line, ravel_db *db,
                  const ravel_snapshot *snap, const char *key,
                  const char *val)
{
    void *got = NULL;
    size_t glen = 0;
    int rc = ravel_get(db, snap, key, strlen(key), &got, &glen);
    if (val == NULL) {
        if (rc == RAVEL_NOTFOUND)
            return;
        if (rc == RAVEL_OK) {
            int n = glen > 60 ? 60 : (int)glen;
            char shown[64];
            memcpy(shown, got, (size_t)n);
            shown[n] = 0;
            ravel_free(got);
            fail_msg("%s:%d: key \"%s\": expected absent, found \"%s\"",
                     file, line, key, shown);
        }
        fail_msg("%s:%d: get \"%s\": %s: %s", file, line, key,
                 ravel_errstr(rc), ravel_errmsg());
    }
    if (rc == RAVEL_NOTFOUND)
        fail_msg("%s:%d: key \"%s\": expected \"%s\", not found", file, line,
                 key, val);
    if (rc != RAVEL_OK)
        fail_msg("%s:%d: get \"%s\": %s: %s", file, line, key,
                 ravel_errstr(rc), ravel_errmsg());
    if (glen != strlen(val) || memcmp(got, val, glen) != 0) {
        int n = glen > 60 ? 60 : (int)glen;
        char shown[64];
        memcpy(shown, got, (size_t)n);
        shown[n] = 0;
        ravel_free(got);
        fail_msg("%s:%d: key \"%s\": expected \"%s\", found \"%s\" (%zu "
                 "bytes)", file, line, key, val, shown, glen);
    }
    ravel_free(got);
}

void tu_put(ravel_db *db, int flags, const char *key, const char *val)
{
    int rc = ravel_put(db, flags, key, strlen(key), val, strlen(val));
    if (rc != RAVEL_OK)
        fail_msg("put \"%s\": %s: %s", key, ravel_errstr(rc), ravel_errmsg());
}

void tu_errmsg_prime(void)
{
    ravel_options *o = NULL;
    if (ravel_options_new(&o) != RAVEL_OK)
        fail_msg("ravel_options_new failed: %s", ravel_errmsg());
    int rc = ravel_options_set(o, TU_SENTINEL, "1");
    ravel_options_free(o);
    if (rc != RAVEL_INVALID)
        fail_msg("setting an unknown option returned %d, not RAVEL_INVALID",
                 rc);
}

int tu_errmsg_is_fresh(void)
{
    const char *m = ravel_errmsg();
    return m && m[0] && strstr(m, TU_SENTINEL) == NULL;
}

static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;
static int fail_count;
static char fail_first[1024];

void tu_thread_fail(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&fail_lock);
    if (fail_count++ == 0)
        memcpy(fail_first, buf, sizeof buf);
    if (fail_count <= 5)
        fprintf(stderr, "thread failure: %s\n", buf);
    pthread_mutex_unlock(&fail_lock);
}

int tu_thread_failures(void)
{
    pthread_mutex_lock(&fail_lock);
    int n = fail_count;
    pthread_mutex_unlock(&fail_lock);
    return n;
}

void tu_assert_no_thread_failures(void)
{
    pthread_mutex_lock(&fail_lock);
    int n = fail_count;
    char first[1024];
    memcpy(first, fail_first, sizeof first);
    fail_count = 0;
    fail_first[0] = 0;
    pthread_mutex_unlock(&fail_lock);
    if (n)
        fail_msg("%d failure(s) in worker threads; first: %s", n, first);
}

uint64_t tu_env_u64(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);
    if (!v || !v[0])
        return dflt;
    char *end = NULL;
    unsigned long long n = strtoull(v, &end, 10);
    if (*end) {
        fprintf(stderr, "%s=%s is not a number\n", name, v);
        exit(1);
    }
    return (uint64_t)n;
}

uint64_t tu_timeout_multiplier(void)
{
    uint64_t m = tu_env_u64("RAVEL_TEST_TIMEOUT_MULTIPLIER", 1);
    return m ? m : 1;
}

uint64_t tu_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t tu_now_ms(void)
{
    return tu_now_us() / 1000u;
}

uint64_t tu_seed(void)
{
    uint64_t seed = tu_env_u64("RAVEL_TEST_SEED", 0);
    if (!seed) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = ((uint64_t)ts.tv_sec * 1000000007ull) ^ (uint64_t)ts.tv_nsec
               ^ ((uint64_t)getpid() << 32);
        if (!seed)
            seed = 1;
    }
    printf("# RAVEL_TEST_SEED=%" PRIu64 "\n", seed);
    return seed;
}

int tu_file_read(const char *path, char **data, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    if (!buf)
        abort();
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    buf[got] = '\0'; /* room was made for it: text can be parsed in place */
    *data = buf;
    *len = got;
    return 0;
}

int tu_file_write(const char *path, const char *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, data + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = -errno;
            close(fd);
            return e;
        }
        done += (size_t)n;
    }
    int rc = fsync(fd) == 0 ? 0 : -errno;
    close(fd);
    return rc;
}

int tu_sstables(ravel_db *db, struct tu_sst **out)
{
    char *text = tu_prop(db, "ravel.sstables");
    int n = 0, cap = 0;
    struct tu_sst *v = NULL;
    for (char *line = text; *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        struct tu_sst f;
        unsigned long long num, size, entries;
        int level;
        if (sscanf(line, "level %d: %llu.sst %llu bytes, %llu entr", &level,
                   &num, &size, &entries) != 4) {
            char copy[200];
            snprintf(copy, sizeof copy, "%s", line);
            ravel_free(text);
            free(v);
            fail_msg("ravel.sstables: cannot parse \"%s\"", copy);
        }
        f.level = level;
        f.number = num;
        f.size = size;
        f.entries = entries;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            v = realloc(v, (size_t)cap * sizeof *v);
            if (!v)
                abort();
        }
        v[n++] = f;
        if (!nl)
            break;
        line = nl + 1;
    }
    ravel_free(text);
    *out = v;
    return n;
}

static int tu_u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int tu_dir_sst_numbers(const char *dir, uint64_t **out)
{
    DIR *d = opendir(dir);
    if (!d)
        fail_msg("opendir %s: %s", dir, strerror(errno));
    int n = 0, cap = 0;
    uint64_t *v = NULL;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".sst") != 0)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            v = realloc(v, (size_t)cap * sizeof *v);
            if (!v)
                abort();
        }
        v[n++] = strtoull(e->d_name, NULL, 10);
    }
    closedir(d);
    if (n)
        qsort(v, (size_t)n, sizeof *v, tu_u64_cmp);
    *out = v;
    return n;
}

int tu_sst_exists(const char *dir, uint64_t number)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%06" PRIu64 ".sst", dir, number);
    return access(path, F_OK) == 0;
}

uint64_t tu_files_at_level(ravel_db *db, int level)
{
    char name[64];
    snprintf(name, sizeof name, "ravel.num-files-at-level%d", level);
    return tu_prop_u64(db, name);
}

static int tu_background_idle(ravel_db *db)
{
    return tu_prop_u64(db, "ravel.num-immutable-mem-table") == 0 &&
           tu_prop_u64(db, "ravel.compaction-pending") == 0 &&
           tu_prop_u64(db, "ravel.num-running-compactions") == 0;
}

void tu_wait_background_idle(ravel_db *db)
{
    struct timespec nap = {.tv_sec = 0, .tv_nsec = 5 * 1000 * 1000};
    int in_a_row = 0;
    for (int i = 0; i < 12000; i++) {
        in_a_row = tu_background_idle(db) ? in_a_row + 1 : 0;
        if (in_a_row == 2)
            return;
        nanosleep(&nap, NULL);
    }
    char *stats = tu_prop(db, "ravel.stats");
    char copy[2048];
    snprintf(copy, sizeof copy, "%s", stats);
    ravel_free(stats);
    fail_msg("flushes and compactions did not settle (compaction-pending, "
             "running compactions or immutable memtables stayed non-zero "
             "over 12000 polls):\n%s", copy);
}

char *tu_scan_all(ravel_db *db, const ravel_snapshot *snap, size_t *len)
{
    ravel_iter *it;
    *len = 0;
    int rc = ravel_iter_new(db, snap, &it);
    if (rc != RAVEL_OK) {
        tu_thread_fail("ravel_iter_new: %s: %s", ravel_errstr(rc),
                       ravel_errmsg());
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *out = malloc(cap);
    if (!out)
        abort();
    for (ravel_iter_seek_to_first(it); ravel_iter_valid(it);
         ravel_iter_next(it)) {
        size_t kl, vl;
        const char *k = ravel_iter_key(it, &kl);
        const char *v = ravel_iter_value(it, &vl);
        while (n + kl + vl + 2 > cap) {
            cap *= 2;
            out = realloc(out, cap);
            if (!out)
                abort();
        }
        memcpy(out + n, k, kl);
        n += kl;
        out[n++] = '=';
        memcpy(out + n, v, vl);
        n += vl;
        out[n++] = '\n';
    }
    rc = ravel_iter_status(it);
    ravel_iter_free(it);
    if (rc != RAVEL_OK) {
        tu_thread_fail("iterator: %s: %s", ravel_errstr(rc), ravel_errmsg());
        free(out);
        return NULL;
    }
    *len = n;
    return out;
}
