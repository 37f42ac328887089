/*
** crash_harness.h -- the kill -9 harness every test program with child
** processes shares: spawn, pump, kill -9, reap.
**
** A child is the test program itself, re-executed to run one of its
** roles (a function of the program, chosen by name, given a block of
** arguments the parent passed).  It reports what it did -- a write
** acknowledged, its open done, a pause point reached -- as messages on a
** pipe, each one frame written with one write(2) of at most PIPE_BUF
** bytes, so that a kill never leaves half a message and threads need no
** lock to report.  The parent pumps the pipe until a deadline, handing
** each message to the program's handler, which records what was
** acknowledged; waits (bounded) until what it records says the moment has
** come; kills the child with SIGKILL; reaps it (it must have died of the
** kill); and reads every message the child sent before it died.  The
** program then reopens the database and checks it against its record.
**
** Owns: the child's command line and pipe, the framing, the deadlines (a
** wait for the child is bounded, times RAVEL_TEST_TIMEOUT_MULTIPLIER; a
** child that does not get there is shown with every thread's backtrace by
** tu_child_stuck, then killed, and the test fails), the checks that a
** child died of the kill and not before, and main() of such a program.
** Does not own: what a message says (the program's struct or text), when
** to kill (the program's handler and predicates decide), the checks after
** the reopen, the power loss (powerloss.h).
*/
#ifndef RAVEL_CRASH_HARNESS_H
#define RAVEL_CRASH_HARNESS_H

#include "testutil.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#ifdef RAVEL_TEST_HOOKS
# include "util/fault.h"
#endif

/* --------------------------------------------------- the program's main */

/* A function a child runs: ARG is the block crash_spawn was given (its
** size checked against ARG_SIZE).  Its return value is the child's exit
** status; a child that waits for its kill calls crash_child_park. */
struct crash_role {
    const char *name;
    int (*main)(const void *arg);
    size_t arg_size;
};

/* main() of a test program with children.  Run as a child (the command
** line crash_spawn builds), runs the role named there and returns its exit
** status.  Otherwise: tu_init, then the NTESTS TESTS (RAVEL_TEST_FILTER, a
** cmocka pattern such as "*kill9*", picks some).  ROLES ends with a
** {NULL} entry. */
int crash_main(int argc, char **argv, const struct crash_role *roles,
               const struct CMUnitTest *tests, size_t ntests);
#define CRASH_MAIN(argc, argv, roles, tests) \
    crash_main((argc), (argv), (roles), (tests), \
               sizeof(tests) / sizeof((tests)[0]))

/* ------------------------------------------------------------ the child */

/* The longest message crash_send takes (one frame fits in PIPE_BUF). */
#define CRASH_MSG_MAX 4000

/* Sends the LEN bytes at MSG to the parent as one message; _exit(3) if the
** pipe is gone (the parent has failed). */
void crash_send(const void *msg, size_t len);

/* Tells the parent the child failed (the message, printf-style, is also
** printed to stderr) and exits with status 2; the parent fails the test
** with the message. */
_Noreturn void crash_child_fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* Tells the parent the child opened DB (crash_opened is then true), and
** in which ordering mode: its ravel.write-ordering becomes the parent's
** crash_child.note. */
void crash_child_opened(ravel_db *db);

/* Tells the parent the child stopped at the pause point it was to reach
** (crash_paused is then true). */
void crash_child_paused(void);

/* Tells the parent the child did all it was to do (crash_done is then
** true); it waits for the kill next. */
void crash_child_done(void);

/* Waits for the kill. */
_Noreturn void crash_child_park(void);

#ifdef RAVEL_TEST_HOOKS
/* Waits until a thread waits at POINT (armed by the caller), tells the
** parent (crash_child_paused) and waits for the kill. */
_Noreturn void crash_child_park_at(enum rv_pause_point point);
#endif

/* ----------------------------------------------------------- the parent */

struct crash_child;

/* Records one message of the child (MSG_SIZE bytes at MSG, aligned for
** any type); may fail the test (a check of its own). */
typedef void (*crash_msg_fn)(struct crash_child *c, const void *msg);
/* Whether what has been recorded says the moment waited for has come. */
typedef int (*crash_reached_fn)(struct crash_child *c);

struct crash_child {
    /* Set by the caller before crash_spawn: */
    crash_msg_fn on_msg;        /* NULL: the program sends no messages */
    size_t msg_size;            /* the size of every message: another is
                                ** garbled, and fails the test */
    void *ctx;                  /* for ON_MSG and the predicates */
    char label[96];             /* starts the harness's failure messages,
                                ** e.g. "round 3"; may stay "" */
    /* What the child said so far, beyond its messages (optional): appended
    ** to a failure message of the harness. */
    void (*describe)(struct crash_child *c, char *buf, size_t n);

    /* The harness's: */
    int opened;                 /* crash_child_opened was received ... */
    char note[64];              /* ... with the child's ordering mode */
    int paused;                 /* crash_child_paused was received */
    int done;                   /* crash_child_done was received */
    uint64_t spawned_ms;        /* tu_now_ms() when spawned ... */
    uint64_t opened_ms;         /* ... and when the open was reported */
    pid_t pid;                  /* -1 once reaped */
    int fd;                     /* the pipe's read end; -1 once closed */
    int status;                 /* waitpid's, once reaped */
    size_t have;                /* bytes of a frame not yet handled */
    unsigned char buf[16384];
    _Alignas(max_align_t) unsigned char msg[CRASH_MSG_MAX];
};

/* Starts a child running ROLE with the ARG_LEN bytes at ARG (a struct of
** the program's, copied to the child: no pointers in it). */
void crash_spawn(struct crash_child *c, const char *role, const void *arg,
                 size_t arg_len);

/* Handles the child's messages until tu_now_ms() reaches DEADLINE_MS (0:
** until the pipe's end).  Returns 0 at the pipe's end (the child is gone),
** else 1. */
int crash_pump(struct crash_child *c, uint64_t deadline_ms);

/* Handles the child's messages until REACHED says so (tested after each
** message and at least every millisecond: a predicate may read the
** clock).  Fails the test if the child ends first, or if LIMIT_MS (times
** RAVEL_TEST_TIMEOUT_MULTIPLIER) passes first -- then after printing the
** child's backtraces (tu_child_stuck), saying it did not get to WHAT. */
void crash_wait(struct crash_child *c, crash_reached_fn reached,
                uint64_t limit_ms, const char *what);

/* Predicates for crash_wait: the child reported its open, its pause, the
** end of its work. */
int crash_opened(struct crash_child *c);
int crash_paused(struct crash_child *c);
int crash_done(struct crash_child *c);

/* Kills the child with SIGKILL, reaps it, handles every message it sent
** before it died and closes the pipe.  Fails the test unless the kill is
** what ended it. */
void crash_kill(struct crash_child *c);

/* When crash_kill_after counts its delay from. */
enum crash_from {
    CRASH_FROM_SPAWN, /* its start: the kill may land during its open,
                      ** which is a recovery */
    CRASH_FROM_OPEN,  /* the child's report of its open (crash_wait, two
                      ** minutes at most) */
    CRASH_FROM_DONE,  /* its report of the end of its work (the same) */
};

/* Pumps for DELAY_MS from FROM, then crash_kill. */
void crash_kill_after(struct crash_child *c, enum crash_from from,
                      uint64_t delay_ms);

/* Runs ROLE with ARG to its end (bounded, as crash_wait: LIMIT_MS times
** the multiplier), handling its messages.  Fails the test if a signal
** ended it; returns its exit status. */
int crash_run(struct crash_child *c, const char *role, const void *arg,
              size_t arg_len, uint64_t limit_ms);

#endif /* RAVEL_CRASH_HARNESS_H */
