/*
** crash_harness.c -- spawn, pump, kill -9, reap; see crash_harness.h.
**
** A child's command line: SELF --crash-child ROLE FD HEX, where FD is the
** pipe's write end and HEX the role's argument block in hexadecimal.  A
** frame on the pipe: a 4-byte header (kind, payload length: 16 bits each,
** host order -- both ends are one program) and the payload.
*/
#include "crash_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHILD_FLAG "--crash-child"

/* Bound on the wait for a child's open or end of work (crash_kill_after). */
#define REPORT_LIMIT_MS 120000

enum frame_kind {
    FRAME_MSG = 1,    /* the program's message */
    FRAME_ERROR = 2,  /* crash_child_fail: text */
    FRAME_OPENED = 3, /* crash_child_opened: the ordering mode */
    FRAME_PAUSED = 4, /* crash_child_paused */
    FRAME_DONE = 5,   /* crash_child_done */
};

struct frame_header {
    uint16_t kind;
    uint16_t len;
};

_Static_assert(CRASH_MSG_MAX + sizeof(struct frame_header) <= PIPE_BUF,
               "a frame is written atomically");

static char *self_exe;
static int child_fd = -1; /* in a child: the pipe's write end */

/* ------------------------------------------------------------ the child */

static void send_frame(uint16_t kind, const void *msg, size_t len)
{
    unsigned char frame[sizeof(struct frame_header) + CRASH_MSG_MAX];
    if (len > CRASH_MSG_MAX)
        len = CRASH_MSG_MAX;
    struct frame_header h = {kind, (uint16_t)len};
    memcpy(frame, &h, sizeof h);
    if (len)
        memcpy(frame + sizeof h, msg, len);
    size_t n = sizeof h + len;
    ssize_t w;
    do
        w = write(child_fd, frame, n);
    while (w < 0 && errno == EINTR);
    if (w != (ssize_t)n)
        _exit(3);
}

void crash_send(const void *msg, size_t len)
{
    if (len > CRASH_MSG_MAX) {
        fprintf(stderr, "crash_send: a message of %zu bytes (at most %d)\n",
                len, CRASH_MSG_MAX);
        _exit(4);
    }
    send_frame(FRAME_MSG, msg, len);
}

void crash_child_fail(const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fprintf(stderr, "child %d: %s\n", (int)getpid(), text);
    send_frame(FRAME_ERROR, text, strlen(text));
    _exit(2);
}

void crash_child_opened(ravel_db *db)
{
    char *mode = NULL;
    int rc = ravel_property(db, "ravel.write-ordering", &mode);
    if (rc)
        crash_child_fail("ravel.write-ordering: %s: %s", ravel_errstr(rc),
                         ravel_errmsg());
    send_frame(FRAME_OPENED, mode, strnlen(mode, 63));
    ravel_free(mode);
}

void crash_child_paused(void)
{
    send_frame(FRAME_PAUSED, NULL, 0);
}

void crash_child_done(void)
{
    send_frame(FRAME_DONE, NULL, 0);
}

void crash_child_park(void)
{
    for (;;)
        pause(); /* the parent kills this process */
}

#ifdef RAVEL_TEST_HOOKS
void crash_child_park_at(enum rv_pause_point point)
{
    struct timespec nap = {.tv_sec = 0, .tv_nsec = 1000 * 1000};
    while (!rv_pause_waiting(point))
        nanosleep(&nap, NULL);
    crash_child_paused();
    crash_child_park();
}
#endif

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* argv: SELF --crash-child ROLE FD HEX */
static int child_dispatch(char **argv, const struct crash_role *roles)
{
    const struct crash_role *role = roles;
    while (role->name && strcmp(role->name, argv[2]) != 0)
        role++;
    child_fd = atoi(argv[3]);
    if (!role->name)
        crash_child_fail("no role named '%s'", argv[2]);
    const char *hex = argv[4];
    size_t len = strlen(hex) / 2;
    if (len != role->arg_size)
        crash_child_fail("role %s: %zu bytes of arguments, expected %zu",
                         role->name, len, role->arg_size);
    unsigned char *arg = malloc(len + 1);
    if (!arg)
        crash_child_fail("out of memory");
    for (size_t i = 0; i < len; i++) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            crash_child_fail("role %s: garbled arguments", role->name);
        arg[i] = (unsigned char)(hi << 4 | lo);
    }
    int rc = role->main(arg);
    free(arg); /* a role that returns exits through main: LeakSanitizer
               ** would turn a leak into exit status 1 */
    return rc;
}

/* ----------------------------------------------------------- main() */

int crash_main(int argc, char **argv, const struct crash_role *roles,
               const struct CMUnitTest *tests, size_t ntests)
{
    if (argc == 5 && strcmp(argv[1], CHILD_FLAG) == 0)
        return child_dispatch(argv, roles);
    self_exe = realpath("/proc/self/exe", NULL);
    if (!self_exe) {
        perror("realpath /proc/self/exe");
        return 1;
    }
    tu_init();
    const char *only = getenv("RAVEL_TEST_FILTER");
    if (only && only[0])
        cmocka_set_test_filter(only);
    int rc = _cmocka_run_group_tests("tests", tests, ntests, NULL, NULL);
    free(self_exe);
    return rc;
}

/* ----------------------------------------------------------- the parent */

void crash_spawn(struct crash_child *c, const char *role, const void *arg,
                 size_t arg_len)
{
    assert_non_null(self_exe); /* crash_main sets it */
    /* everything the child's exec needs, made before the fork */
    char *hex = malloc(2 * arg_len + 1);
    assert_non_null(hex);
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < arg_len; i++) {
        unsigned char b = ((const unsigned char *)arg)[i];
        hex[2 * i] = digits[b >> 4];
        hex[2 * i + 1] = digits[b & 15];
    }
    hex[2 * arg_len] = '\0';
    int fds[2];
    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    char fdtext[16];
    snprintf(fdtext, sizeof fdtext, "%d", fds[1]);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        tu_child_prepare();
        fcntl(fds[1], F_SETFD, 0); /* the write end stays open in exec */
        execl(self_exe, self_exe, CHILD_FLAG, role, fdtext, hex,
              (char *)NULL);
        _exit(127);
    }
    free(hex);
    close(fds[1]);
    c->pid = pid;
    c->fd = fds[0];
    c->status = 0;
    c->have = 0;
    c->opened = c->paused = c->done = 0;
    c->note[0] = '\0';
    c->spawned_ms = tu_now_ms();
    c->opened_ms = 0;
}

static const char *label_of(const struct crash_child *c)
{
    return c->label[0] ? c->label : "child";
}

/* What describe says, as ", ..." (or ""), into BUF. */
static const char *described(struct crash_child *c, char *buf, size_t n)
{
    buf[0] = '\0';
    if (c->describe && n > 2) {
        buf[0] = ',';
        buf[1] = ' ';
        c->describe(c, buf + 2, n - 2);
        if (!buf[2])
            buf[0] = '\0';
    }
    return buf;
}

static void handle_frame(struct crash_child *c, uint16_t kind,
                         const unsigned char *p, size_t len)
{
    switch (kind) {
    case FRAME_MSG:
        if (!c->on_msg)
            fail_msg("%s: a message from a child that sends none",
                     label_of(c));
        if (len != c->msg_size)
            fail_msg("%s: a garbled message from the child (%zu bytes, "
                     "not %zu)", label_of(c), len, c->msg_size);
        memcpy(c->msg, p, len); /* aligned */
        c->on_msg(c, c->msg);
        break;
    case FRAME_ERROR:
        fail_msg("%s: the child failed: %.*s", label_of(c), (int)len,
                 (const char *)p);
        break;
    case FRAME_OPENED:
        c->opened = 1;
        c->opened_ms = tu_now_ms();
        snprintf(c->note, sizeof c->note, "%.*s", (int)len, (const char *)p);
        break;
    case FRAME_PAUSED:
        c->paused = 1;
        break;
    case FRAME_DONE:
        c->done = 1;
        break;
    default:
        fail_msg("%s: a garbled frame from the child (kind %u)",
                 label_of(c), kind);
    }
}

/* Handles the whole frames in the buffer, stopping early once REACHED
** (may be NULL) says so; keeps what is left for the next call.  Returns
** whether REACHED stopped it. */
static int handle_frames(struct crash_child *c, crash_reached_fn reached)
{
    size_t off = 0;
    int stop = 0;
    while (!stop && c->have - off >= sizeof(struct frame_header)) {
        struct frame_header h;
        memcpy(&h, c->buf + off, sizeof h);
        if (h.len > CRASH_MSG_MAX)
            fail_msg("%s: a garbled frame from the child (%u bytes)",
                     label_of(c), h.len);
        if (c->have - off < sizeof h + h.len)
            break;
        off += sizeof h + h.len;
        handle_frame(c, h.kind, c->buf + off - h.len, h.len);
        stop = reached && reached(c);
    }
    memmove(c->buf, c->buf + off, c->have - off);
    c->have -= off;
    return stop;
}

enum pump_end { PUMP_EOF, PUMP_DEADLINE, PUMP_REACHED };

static enum pump_end pump(struct crash_child *c, uint64_t deadline_ms,
                          crash_reached_fn reached)
{
    if (handle_frames(c, reached))
        return PUMP_REACHED;
    if (c->fd < 0)
        return PUMP_EOF;
    for (;;) {
        int timeout = -1;
        if (deadline_ms) {
            uint64_t now = tu_now_ms();
            if (now >= deadline_ms)
                return PUMP_DEADLINE;
            timeout = (int)(deadline_ms - now);
        }
        /* room for a whole frame: handle_frames left less than one */
        assert_true(sizeof c->buf - c->have > CRASH_MSG_MAX);
        struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
        int n = poll(&pfd, 1, timeout);
        if (n < 0 && errno == EINTR)
            continue;
        assert_true(n >= 0);
        if (n == 0)
            continue;
        ssize_t got = read(c->fd, c->buf + c->have, sizeof c->buf - c->have);
        if (got < 0 && errno == EINTR)
            continue;
        assert_true(got >= 0);
        if (got == 0) {
            if (c->have)
                fail_msg("%s: the child's last message is cut short "
                         "(%zu bytes)", label_of(c), c->have);
            close(c->fd);
            c->fd = -1;
            return PUMP_EOF;
        }
        c->have += (size_t)got;
        if (handle_frames(c, reached))
            return PUMP_REACHED;
    }
}

int crash_pump(struct crash_child *c, uint64_t deadline_ms)
{
    return pump(c, deadline_ms, NULL) != PUMP_EOF;
}

static void reap(struct crash_child *c)
{
    if (c->pid < 0)
        return;
    int status = 0;
    pid_t w;
    do
        w = waitpid(c->pid, &status, 0);
    while (w < 0 && errno == EINTR);
    assert_int_equal(w, c->pid);
    c->status = status;
    c->pid = -1;
}

/* A wait's bound, stretched as the watchdog's is (testutil.c). */
static uint64_t stretched(uint64_t limit_ms)
{
    return limit_ms * tu_timeout_multiplier();
}

void crash_wait(struct crash_child *c, crash_reached_fn reached,
                uint64_t limit_ms, const char *what)
{
    uint64_t bound = stretched(limit_ms);
    uint64_t limit = tu_now_ms() + bound;
    char more[512];
    while (!reached(c)) {
        uint64_t now = tu_now_ms();
        if (now >= limit) {
            tu_child_stuck(c->pid, what);
            reap(c);
            fail_msg("%s: the child did not get to %s within %" PRIu64
                     " s%s", label_of(c), what, bound / 1000,
                     described(c, more, sizeof more));
        }
        if (pump(c, now + 1 < limit ? now + 1 : limit, reached) ==
            PUMP_EOF) {
            reap(c);
            fail_msg("%s: the child ended before it got to %s (status "
                     "0x%x)%s", label_of(c), what, c->status,
                     described(c, more, sizeof more));
        }
    }
}

int crash_opened(struct crash_child *c)
{
    return c->opened;
}

int crash_paused(struct crash_child *c)
{
    return c->paused;
}

int crash_done(struct crash_child *c)
{
    return c->done;
}

void crash_kill(struct crash_child *c)
{
    if (c->pid > 0)
        kill(c->pid, SIGKILL);
    reap(c);
    pump(c, 0, NULL); /* every message sent before the kill */
    if (!WIFSIGNALED(c->status) || WTERMSIG(c->status) != SIGKILL) {
        char more[512];
        fail_msg("%s: the child ended before the kill (status 0x%x)%s",
                 label_of(c), c->status, described(c, more, sizeof more));
    }
}

void crash_kill_after(struct crash_child *c, enum crash_from from,
                      uint64_t delay_ms)
{
    if (from == CRASH_FROM_OPEN)
        crash_wait(c, crash_opened, REPORT_LIMIT_MS,
                   "its open of the database");
    else if (from == CRASH_FROM_DONE)
        crash_wait(c, crash_done, REPORT_LIMIT_MS, "the end of its work");
    crash_pump(c, tu_now_ms() + delay_ms);
    crash_kill(c);
}

int crash_run(struct crash_child *c, const char *role, const void *arg,
              size_t arg_len, uint64_t limit_ms)
{
    crash_spawn(c, role, arg, arg_len);
    uint64_t bound = stretched(limit_ms);
    if (pump(c, tu_now_ms() + bound, NULL) != PUMP_EOF) {
        tu_child_stuck(c->pid, "its end");
        reap(c);
        fail_msg("%s: the child (%s) did not end within %" PRIu64 " s",
                 label_of(c), role, bound / 1000);
    }
    reap(c);
    if (!WIFEXITED(c->status))
        fail_msg("%s: the child (%s) died (status 0x%x)", label_of(c), role,
                 c->status);
    return WEXITSTATUS(c->status);
}
