/*
** sst_main.c -- ravel-sst, the table file dump tool (RocksDB's sst_dump
** for ravel's table files):
**
**   ravel-sst [--entries] [--limit N] [--verify] [--file-number N] FILE...
**
** Each FILE is dumped (or checked, with --verify) by sst_dump.c, the code
** behind the shell's .sst.  Options may come before or after the files;
** "--" ends them.  A file that cannot be read or is damaged is reported on
** standard error, naming it and the byte offset, and the others are still
** dumped.  The exit code is 0 when every file was dumped (and, with
** --verify, verified) whole, 1 otherwise or on a bad argument.
*/
#include <stdlib.h>
#include <string.h>

#include "sst_dump.h"

/* The dump stops early when this is set; ravel-sst never sets it (^C
** simply ends the program). */
volatile sig_atomic_t shell_interrupted;

static const char sstmain_usage[] =
    "Usage: ravel-sst [OPTIONS] FILE...\n"
    "\n"
    "Dumps ravel table files: footer, properties, index and, on request,\n"
    "entries.  Keys are shown as KEY @ SEQUENCE TYPE, bytes that are not\n"
    "printable escaped as \\xHH.  A file's number seeds its checksums: it\n"
    "is read from the name NNNNNN.sst, else (a copy under another name)\n"
    "from the file's footer, or given with --file-number N.\n"
    "\n"
    "Options:\n" SHELL_SST_OPTIONS_HELP
    "  --hex            print keys and values as x'hex'\n"
    "  --help           print this text and exit\n"
    "  --version        print the version and exit\n"
    "The exit code is 1 if a file could not be dumped or is damaged, or an\n"
    "argument is wrong; else 0.\n";

/* Fills O and FILES from the arguments: -1 on a bad one (reported), 1 if
** the program is done (--help, --version), 0 to go on. */
static int sstmain_parse(int argc, char **argv, struct shell_sst_options *o,
                         char **files, int *nfiles)
{
    int only_files = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!only_files && strcmp(arg, "--") == 0) {
            only_files = 1;
            continue;
        }
        if (!only_files && (strcmp(arg, "--help") == 0 ||
                            strcmp(arg, "-h") == 0)) {
            fputs(sstmain_usage, stdout);
            return 1;
        }
        if (!only_files && strcmp(arg, "--version") == 0) {
            printf("ravel-sst %s (library %s)\n", RAVEL_VERSION,
                   ravel_libversion());
            return 1;
        }
        if (!only_files && strcmp(arg, "--hex") == 0) {
            o->mode = SHELL_MODE_HEX;
            continue;
        }
        char err[200];
        int used = only_files ? 0
                              : shell_sst_parse_option(arg, i + 1 < argc
                                                                ? argv[i + 1]
                                                                : NULL,
                                                       o, err, sizeof err);
        if (used < 0) {
            fprintf(stderr, "ravel-sst: %s (ravel-sst --help lists the "
                    "options)\n", err);
            return -1;
        }
        if (used > 0) {
            i += used - 1;
            continue;
        }
        files[(*nfiles)++] = argv[i];
    }
    if (*nfiles == 0) {
        fprintf(stderr, "ravel-sst: no table file given\n"
                "usage: ravel-sst [--entries] [--limit N] [--verify] "
                "FILE...   (ravel-sst --help tells more)\n");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct shell_sst_options o = {.mode = SHELL_MODE_TEXT};
    char **files = calloc((size_t)argc, sizeof *files);
    int nfiles = 0, failed = 0, dumped = 0;
    if (!files) {
        fputs("ravel-sst: out of memory\n", stderr);
        return 1;
    }
    shell_format_init();
    int rc = sstmain_parse(argc, argv, &o, files, &nfiles);
    if (rc) {
        free(files);
        return rc > 0 ? 0 : 1;
    }
    for (int i = 0; i < nfiles; i++) {
        char err[600];
        if (dumped && !o.verify)
            putchar('\n'); /* a blank line between two dumps */
        if (shell_sst_dump(stdout, files[i], &o, err, sizeof err)) {
            fflush(stdout);
            fprintf(stderr, "ravel-sst: %s\n", err);
            failed = 1;
        } else {
            dumped = 1;
        }
    }
    free(files);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fputs("ravel-sst: cannot write the output\n", stderr);
        failed = 1;
    }
    return failed;
}
