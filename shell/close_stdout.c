/*
** close_stdout.c -- the exit status of the command-line programs (ravel,
** ravel-sst, ravel-bench) says whether their output was written: a
** program whose output could not be written (a full disk, ravel -help >
** /dev/full) exits 1 saying so, as gnulib's close_stdout makes coreutils
** do, instead of 0.  A reader that went away (ravel DIR scan | head)
** is no error message, but still no success.
*/
#include "close_stdout.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *close_stdout_program = "ravel";

static void close_stdout_check(void)
{
    int failed_before = ferror(stdout);
    if (fflush(stdout) == 0 && !failed_before)
        return;
    /* a write that failed before this flush was met by the program, which
    ** said so where it could (the shell does); this flush's own failure is
    ** said here */
    if (!failed_before && errno != EPIPE)
        fprintf(stderr, "%s: writing the output failed: %s\n",
                close_stdout_program, strerror(errno));
    _exit(1); /* from an atexit handler: the status is this one */
}

void shell_close_stdout_at_exit(const char *program)
{
    close_stdout_program = program;
    atexit(close_stdout_check);
}
