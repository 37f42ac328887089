/*
** close_stdout.h -- an exit status that says whether the output was
** written (close_stdout.c).
*/
#ifndef RAVEL_SHELL_CLOSE_STDOUT_H
#define RAVEL_SHELL_CLOSE_STDOUT_H

/* At exit, flushes stdout; if that or an earlier write failed, says so
** (PROGRAM names the program) and exits 1. */
void shell_close_stdout_at_exit(const char *program);

#endif
