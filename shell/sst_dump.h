/*
** sst_dump.h -- dumping one table file, as RocksDB's sst_dump does: the
** shell's `.sst` and the `ravel-sst` program share this one
** implementation (sst_dump.c) and its option parser.
**
** Unlike the rest of the shell, the dump reads a table file directly
** through the table reader of lib/ (lib/table/table.h), not through a
** database: it is linked with the library's internals (the static
** library, whose rv_ functions are not hidden).
*/
#ifndef RAVEL_SST_DUMP_H
#define RAVEL_SST_DUMP_H

#include <stdint.h>

#include "shell.h"

/* What to show of a table file. */
struct shell_sst_options {
    int entries;        /* list the entries (--entries, or --limit N) */
    int has_limit;      /* --limit N: at most LIMIT entries */
    uint64_t limit;
    int verify;         /* --verify: read and check every block */
    int has_file_number; /* --file-number N: N seeds the checksums */
    uint64_t file_number;
    enum shell_mode mode; /* how keys and values are printed */
};

/* An option of the dump, for usage texts and the manual page: NAME, its
** argument ("" if none) and HELP (a phrase; may hold newlines). */
struct shell_sst_option_doc {
    const char *name, *arg, *help;
};

/* The options shell_sst_parse_option takes, ending with a NULL name. */
extern const struct shell_sst_option_doc shell_sst_option_docs[];

/* Parses ARG if it is an option of the dump (--entries, --limit N,
** --limit=N, --verify, --file-number N), NEXT being the argument after it
** (NULL if none), taken as N when needed.  Returns how many arguments were used (1 or 2),
** 0 if ARG is not an option (a file name: it does not start with '-'), or
** -1 with a message in ERR when it is malformed (an unknown option, a
** missing or bad number). */
int shell_sst_parse_option(const char *arg, const char *next,
                           struct shell_sst_options *o, char *err,
                           size_t errlen);

/* Dumps the table file PATH to OUT as O says.  The file number, which
** seeds the checksums, is O's --file-number, else the number in the file's
** name (NNNNNN.sst), else the one its footer records.  Returns
** 0, or -1 with a message in ERR naming the file and, for damage, the
** byte offset; what was printed before the damage was found stays. */
int shell_sst_dump(FILE *out, const char *path,
                   const struct shell_sst_options *o, char *err,
                   size_t errlen);

#endif /* RAVEL_SST_DUMP_H */
