/*
** property_names.c -- the property names the shell offers: the list that
** `.help property` and the page ravel.1 print, and the words tab
** completion offers after `property`.  All read the library's own table (rv_property_info,
** lib/db/properties.c), so they are exactly the names ravel_property
** takes, with their RocksDB and deprecated aliases.
*/
#include <string.h>

#include "shell.h"
#include "db/properties.h"

/* The name of the Ith property ravel_property takes (every level of
** ravel.num-files-at-levelN), then RocksDB's aliases; NULL past the last.
** The deprecated spellings are not offered. */
const char *shell_property_word(size_t i)
{
    struct rv_property_info info;
    size_t n = 0;
    while (rv_property_info(n, &info))
        n++;
    if (i < n) {
        rv_property_info(i, &info);
        return info.name;
    }
    for (size_t j = 0; rv_property_info(j, &info); j++)
        if (info.rocksdb && i-- == n)
            return info.rocksdb;
    return NULL;
}

/* Whether INFO is one of ravel.num-files-at-level1..6, which the lists
** show once, as ravel.num-files-at-levelN, at level 0. */
static int property_later_level(const struct rv_property_info *info)
{
    return info->level > 0;
}

/* Whether INFO's RocksDB name is rocksdb.X for its name ravel.X. */
static int property_rocksdb_same(const struct rv_property_info *info)
{
    return info->rocksdb && strncmp(info->rocksdb, "rocksdb.", 8) == 0 &&
           strcmp(info->rocksdb + 8, info->name + 6) == 0;
}

/* INFO's name, its aliases and what it is, for .help property:
**   ravel.wal-io  (was ravel.wal_io)
**       the WAL I/O path in use (sync, uring, direct) and why
** a name RocksDB has too marked with a '*'. */
static void property_help_entry(FILE *f, const struct rv_property_info *info)
{
    int level = info->level == 0;
    fprintf(f, "  %.*s%s", (int)strlen(info->name) - level, info->name,
            level ? "N" : "");
    if (property_rocksdb_same(info))
        fputs(" *", f);
    else if (info->rocksdb)
        fprintf(f, "  (or %s)", info->rocksdb);
    if (info->deprecated)
        fprintf(f, "  (was %s)", info->deprecated);
    if (level)
        fprintf(f, "\n      table files at level N, 0 .. 6\n");
    else
        fprintf(f, "\n      %s\n", info->doc);
}

void shell_property_help(FILE *f)
{
    struct rv_property_info info;
    for (size_t i = 0; rv_property_info(i, &info); i++)
        if (!property_later_level(&info))
            property_help_entry(f, &info);
}

/* The same list as roff paragraphs, TEXT escaping:
** .TP
** \fBravel.wal-io\fR
** the WAL I/O path in use (sync, uring, direct) and why.
** Was ravel.wal_io. */
void shell_property_manpage(FILE *f, void (*text)(FILE *f, const char *s))
{
    struct rv_property_info info;
    for (size_t i = 0; rv_property_info(i, &info); i++) {
        if (property_later_level(&info))
            continue;
        int level = info.level == 0;
        char name[96];
        snprintf(name, sizeof name, "%.*s%s%s",
                 (int)strlen(info.name) - level, info.name, level ? "N" : "",
                 property_rocksdb_same(&info) ? " *" : "");
        fputs(".TP\n\\fB", f);
        text(f, name);
        fputs("\\fR\n", f);
        text(f, level ? "table files at level N, 0 .. 6" : info.doc);
        fputs(".\n", f);
        if (info.rocksdb && !property_rocksdb_same(&info)) {
            text(f, "Also ");
            text(f, info.rocksdb);
            fputs(".\n", f);
        }
        if (info.deprecated) {
            text(f, "Was ");
            text(f, info.deprecated);
            fputs(".\n", f);
        }
    }
}
