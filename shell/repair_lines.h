/*
** repair_lines.h -- how ravel-repair and the shell's .repair print the
** lines of ravel_repair's report: "KIND: line", KIND one of note, kept,
** lost, warn (ravel.h's RAVEL_REPAIR_*).
*/
#ifndef SHELL_REPAIR_LINES_H
#define SHELL_REPAIR_LINES_H

#include <stdio.h>

#include "ravel.h"

/* The printed name of a report line's KIND ("note" for an unknown one). */
const char *shell_repair_kind(int kind);

/* What shell_repair_print writes to, and what it saw. */
struct shell_repair_out {
    FILE *f;
    int quiet;  /* print only lost and warn lines (and the summary) */
    int losses; /* lost or warn lines seen */
};

/* A ravel_repair_fn: prints LINE to ((struct shell_repair_out *)CTX)->f. */
void shell_repair_print(void *ctx, int kind, const char *line);

#endif /* SHELL_REPAIR_LINES_H */
