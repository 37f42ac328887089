/*
** reader-lag.c -- how long a write takes to become visible to a reader in
** another process that catches up by itself (catch_up_interval_ms).
**
**   reader-lag --db=DIR [--seconds=5] [--rate=1000] [--interval_ms=10]
**       [--write_buffer_size=4M] [--poll_us=100]
**
** Forks a writer process that puts key w-NNNNNNNN = the CLOCK_MONOTONIC
** time just before the put and then n = NNNNNNNN, --rate
** writes a second, for --seconds.  The parent opens the database
** read_only with catch_up_interval_ms=--interval_ms and polls n every
** --poll_us microseconds; when n moves, it reads the time of every write
** it had not seen and takes now minus that time as the write's lag: from
** the call to the first poll that saw it (the poll interval bounds the
** resolution; the write's own time, a few microseconds, is in it).  Prints p50, p90, p99 and max over every write,
** and the reader's catch-up counters.  CLOCK_MONOTONIC is one clock for
** every process of a machine.
*/
#include <ravel.h>

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct lag_args {
    const char *db;
    double seconds;
    long rate;
    long interval_ms;
    long poll_us;
    const char *write_buffer_size;
};

static uint64_t lag_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void lag_die(const char *what, int rc)
{
    fprintf(stderr, "reader-lag: %s: %s: %s\n", what, ravel_errstr(rc),
            ravel_errmsg());
    exit(1);
}

static void lag_sleep_until(uint64_t t)
{
    uint64_t now = lag_now_ns();
    if (t <= now)
        return;
    struct timespec ts = {(time_t)((t - now) / 1000000000ull),
                          (long)((t - now) % 1000000000ull)};
    nanosleep(&ts, NULL);
}

/* The writer: N writes at the rate asked, then a final n = N. */
static void lag_writer(const struct lag_args *a, long n, int ready_fd)
{
    ravel_options *o;
    ravel_options_new(&o);
    ravel_options_set(o, "create_if_missing", "true");
    ravel_options_set(o, "write_buffer_size", a->write_buffer_size);
    ravel_db *db;
    int rc = ravel_open(a->db, o, &db);
    if (rc)
        lag_die("writer open", rc);
    ravel_options_free(o);
    if (write(ready_fd, "r", 1) != 1)
        exit(1);
    close(ready_fd);
    uint64_t start = lag_now_ns(), step = 1000000000ull / (uint64_t)a->rate;
    for (long i = 1; i <= n; i++) {
        lag_sleep_until(start + (uint64_t)i * step);
        char key[32], val[32], num[32];
        snprintf(key, sizeof key, "w-%08ld", i);
        snprintf(num, sizeof num, "%ld", i);
        /* the time goes in first, then n in its own write: a reader that
        ** sees n = i sees w-i, and w-i's time is before its ack */
        snprintf(val, sizeof val, "%" PRIu64, lag_now_ns());
        if ((rc = ravel_put(db, 0, key, strlen(key), val, strlen(val))))
            lag_die("put", rc);
        if ((rc = ravel_put(db, 0, "n", 1, num, strlen(num))))
            lag_die("put", rc);
    }
    ravel_close(db);
    exit(0);
}

static int lag_cmp(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

static long lag_get_number(ravel_db *db, const char *key)
{
    char buf[32];
    size_t vlen = 0;
    int rc = ravel_get_into(db, NULL, key, strlen(key), buf, sizeof buf - 1,
                            &vlen);
    if (rc == RAVEL_NOTFOUND)
        return -1;
    if (rc)
        lag_die("get", rc);
    buf[vlen < sizeof buf ? vlen : sizeof buf - 1] = 0;
    return strtol(buf, NULL, 10);
}

static uint64_t lag_get_time(ravel_db *db, long i)
{
    char key[32], buf[32];
    size_t vlen = 0;
    snprintf(key, sizeof key, "w-%08ld", i);
    int rc = ravel_get_into(db, NULL, key, strlen(key), buf, sizeof buf - 1,
                            &vlen);
    if (rc)
        lag_die("get of a write the reader saw counted", rc);
    buf[vlen < sizeof buf ? vlen : sizeof buf - 1] = 0;
    return strtoull(buf, NULL, 10);
}

static int lag_parse(int argc, char **argv, struct lag_args *a)
{
    *a = (struct lag_args){.seconds = 5, .rate = 1000, .interval_ms = 10,
                           .poll_us = 100, .write_buffer_size = "4M"};
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (strncmp(s, "--db=", 5) == 0)
            a->db = s + 5;
        else if (strncmp(s, "--seconds=", 10) == 0)
            a->seconds = atof(s + 10);
        else if (strncmp(s, "--rate=", 7) == 0)
            a->rate = atol(s + 7);
        else if (strncmp(s, "--interval_ms=", 14) == 0)
            a->interval_ms = atol(s + 14);
        else if (strncmp(s, "--poll_us=", 10) == 0)
            a->poll_us = atol(s + 10);
        else if (strncmp(s, "--write_buffer_size=", 20) == 0)
            a->write_buffer_size = s + 20;
        else
            return -1;
    }
    return a->db && a->rate > 0 && a->seconds > 0 && a->interval_ms > 0
               ? 0 : -1;
}

int main(int argc, char **argv)
{
    struct lag_args a;
    if (lag_parse(argc, argv, &a)) {
        fprintf(stderr, "usage: reader-lag --db=DIR [--seconds=5] "
                "[--rate=1000] [--interval_ms=10] [--poll_us=100] "
                "[--write_buffer_size=4M]\n");
        return 2;
    }
    long n = (long)(a.seconds * (double)a.rate);
    int pipefd[2];
    if (pipe(pipefd))
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        close(pipefd[0]);
        lag_writer(&a, n, pipefd[1]);
    }
    close(pipefd[1]);
    char c;
    if (read(pipefd[0], &c, 1) != 1) {
        fprintf(stderr, "reader-lag: the writer did not open\n");
        return 1;
    }
    ravel_options *o;
    ravel_options_new(&o);
    char ms[32];
    snprintf(ms, sizeof ms, "%ld", a.interval_ms);
    ravel_options_set(o, "read_only", "true");
    ravel_options_set(o, "catch_up_interval_ms", ms);
    ravel_db *db;
    int rc = ravel_open(a.db, o, &db);
    if (rc)
        lag_die("reader open", rc);
    ravel_options_free(o);

    uint64_t *lags = calloc((size_t)n + 1, sizeof *lags);
    long seen = lag_get_number(db, "n");
    long first = seen < 0 ? 1 : seen + 1; /* writes before the open: not
                                          ** a catch-up's to show */
    if (seen < 0)
        seen = 0;
    long measured = 0;
    struct timespec poll = {0, a.poll_us * 1000};
    while (seen < n) {
        long now_n = lag_get_number(db, "n");
        if (now_n > seen) {
            uint64_t t = lag_now_ns();
            for (long i = seen + 1; i <= now_n; i++)
                if (i >= first)
                    lags[measured++] = t - lag_get_time(db, i);
            seen = now_n;
        } else {
            nanosleep(&poll, NULL);
        }
    }
    int status;
    waitpid(pid, &status, 0);
    qsort(lags, (size_t)measured, sizeof *lags, lag_cmp);
    char *lag = NULL;
    ravel_property(db, "ravel.reader-lag", &lag);
    printf("writes %ld at %ld/s, catch_up_interval_ms=%ld, poll %ld us, "
           "write_buffer_size=%s\n", measured, a.rate, a.interval_ms,
           a.poll_us, a.write_buffer_size);
    if (measured)
        printf("lag (ms): p50 %.2f  p90 %.2f  p99 %.2f  max %.2f\n",
               lags[measured / 2] / 1e6, lags[measured * 9 / 10] / 1e6,
               lags[measured * 99 / 100] / 1e6, lags[measured - 1] / 1e6);
    printf("%s", lag ? lag : "");
    ravel_free(lag);
    free(lags);
    ravel_close(db);
    return 0;
}
