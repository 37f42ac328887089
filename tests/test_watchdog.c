/*
** test_watchdog.c -- a test program that hangs ends with every thread's
** backtrace (tests/testutil.c, RAVEL_TEST_WATCHDOG), so a rare hang in CI
** can be diagnosed from its log.
**
** The program re-executes itself with a 1-second watchdog and a thread
** parked in a function of a recognisable name, and checks that the child
** was aborted and that its stderr holds the backtrace of that thread.
** Exits 77 (skip) where gdb is not installed.
*/
#include "testutil.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--hang") == 0)
        return hang_main();
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
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(self_exe);
    return rc;
}
