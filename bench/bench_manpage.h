/*
** bench_manpage.h -- ravel-bench(1), printed by `ravel-bench --manpage`
** (bench_manpage.c) from the flag tables --help prints, which ravel-bench.c
** hands over one row at a time.
*/
#ifndef RAVEL_BENCH_MANPAGE_H
#define RAVEL_BENCH_MANPAGE_H

#include <stddef.h>
#include <stdio.h>

/* A benchmark flag: its name (without dashes), its default as text, and
** what it does. */
struct bench_manpage_flag {
    const char *name, *def, *help;
};

/* Fills *OUT with the Ith benchmark flag and returns 1, or returns 0 past
** the last (FLAG_AT); fills *DBBENCH and *RAVEL with the Ith db_bench
** spelling of a ravel option, or returns 0 past the last (ALIAS_AT). */
typedef int (*bench_manpage_flag_at)(size_t i,
                                     struct bench_manpage_flag *out);
typedef int (*bench_manpage_alias_at)(size_t i, const char **dbbench,
                                      const char **ravel);

/* Writes ravel-bench(1) in roff to F. */
void bench_print_manpage(FILE *f, bench_manpage_flag_at flag_at,
                         bench_manpage_alias_at alias_at);

#endif /* RAVEL_BENCH_MANPAGE_H */
