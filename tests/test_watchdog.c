/*
** test_watchdog.c -- a test program that hangs ends with every thread's
** backtrace (tests/testutil.c, RAVEL_TEST_WATCHDOG), so a rare hang in CI
** can be diagnosed from its log.
**
** The program re-executes itself with a 1-second watchdog and a thread
** parked in a function of a recognisable name, and checks that the child
** was aborted and that its stderr holds the backtrace of that thread.
** Likewise for tu_child_stuck, which the tests that run child processes
** call when a child stops answering: it prints the child's backtraces and
** kills it.  Exits 77 (skip) where gdb is not installed.
*/
#include "testutil.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char *self_exe;

__attribute__((noinline)) static void *watchdog_test_parked_thread(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

/* The --park child of test_stuck_child_prints_backtraces: says it is
** ready on FD, then waits to be killed. */
static int park_main(int fd)
{
    pthread_t th;
    pthread_create(&th, NULL, watchdog_test_parked_thread, NULL);
    if (write(fd, "r", 1) != 1)
        return 1;
    pthread_join(th, NULL);
    return 0;
}

static int hang_main(void)
{
    setenv("RAVEL_TEST_WATCHDOG", "1", 1);
    unsetenv("RAVEL_TEST_TIMEOUT_MULTIPLIER");
    tu_init();
    pthread_t th;
    pthread_create(&th, NULL, watchdog_test_parked_thread, NULL);
    pthread_join(th, NULL);
    return 0;
}

static void test_hang_prints_backtraces(void **state)
{
    (void)state;
    char *log = tu_path("hang.log");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (!freopen(log, "w", stderr))
            _exit(126);
        /* Its scratch directory inside ours: the abort skips its cleanup. */
        char *tmp = tu_path("child-tmp");
        if (mkdir(tmp, 0700) != 0 || setenv("TMPDIR", tmp, 1) != 0)
            _exit(125);
        execl(self_exe, self_exe, "--hang", (char *)NULL);
        _exit(127);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    char *text;
    size_t len;
    assert_int_equal(tu_file_read(log, &text, &len), 0);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
        fail_msg("the hung child was not aborted (status 0x%x): %s", status,
                 text);
    if (!strstr(text, "watchdog: pid") ||
        !strstr(text, "watchdog_test_parked_thread"))
        fail_msg("no backtrace of the parked thread in: %s", text);
    free(text);
    free(log);
}

static void test_stuck_child_prints_backtraces(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        tu_child_prepare();
        char fdtext[16];
        snprintf(fdtext, sizeof fdtext, "%d", fds[1]);
        execl(self_exe, self_exe, "--park", fdtext, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char c;
    assert_int_equal(read(fds[0], &c, 1), 1);
    close(fds[0]);

    /* tu_child_stuck writes to our stderr: point it at a file meanwhile. */
    char *log = tu_path("stuck.log");
    int logfd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(logfd >= 0);
    int saved = dup(2);
    assert_true(saved >= 0);
    dup2(logfd, 2);
    tu_child_stuck(pid, "a test of tu_child_stuck");
    dup2(saved, 2);
    close(saved);
    close(logfd);

    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    char *text;
    size_t len;
    assert_int_equal(tu_file_read(log, &text, &len), 0);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
        fail_msg("the stuck child was not killed (status 0x%x): %s", status,
                 text);
    if (!strstr(text, "a test of tu_child_stuck") ||
        !strstr(text, "watchdog_test_parked_thread"))
        fail_msg("no backtrace of the child's parked thread in: %s", text);
    free(text);
    free(log);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--hang") == 0)
        return hang_main();
    if (argc == 3 && strcmp(argv[1], "--park") == 0)
        return park_main(atoi(argv[2]));
    if (system("command -v gdb >/dev/null 2>&1") != 0) {
        printf("SKIP: gdb is not installed: the watchdog prints no "
               "backtraces without it\n");
        return 77;
    }
    self_exe = realpath("/proc/self/exe", NULL);
    unsetenv("RAVEL_TEST_WATCHDOG");
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hang_prints_backtraces),
        cmocka_unit_test(test_stuck_child_prints_backtraces),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(self_exe);
    return rc;
}
