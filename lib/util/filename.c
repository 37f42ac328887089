/*
** filename.c -- file names of a database directory (see filename.h).
*/
#include "util/filename.h"
#include "util/error.h"

#include <stdio.h>
#include <string.h>

int rv_path_join(char *buf, const char *dir, const char *name)
{
    int n = snprintf(buf, RV_PATH_MAX, "%s/%s", dir, name);
    if (n < 0 || n >= RV_PATH_MAX)
        return rv_error(RAVEL_INVALID, "path %s/%s is longer than %d bytes",
                        dir, name, RV_PATH_MAX - 1);
    return RAVEL_OK;
}

void rv_wal_segment_name(char *buf, size_t size, uint64_t number)
{
    snprintf(buf, size, "wal-%08llu.log", (unsigned long long)number);
}

int rv_wal_segment_path(char *buf, const char *dir, uint64_t number)
{
    char name[32];
    rv_wal_segment_name(name, sizeof name, number);
    return rv_path_join(buf, dir, name);
}

/* Parses PREFIX, a number zero-padded to at least WIDTH digits (no leading
** zero beyond the padding: one name per number), then SUFFIX, as the whole
** of NAME.  1 and *NUMBER, or 0. */
static int filename_parse_number(const char *name, const char *prefix,
                                 size_t width, const char *suffix,
                                 uint64_t *number)
{
    size_t plen = strlen(prefix);
    if (strncmp(name, prefix, plen) != 0)
        return 0;
    const char *p = name + plen;
    uint64_t v = 0;
    size_t digits = 0;
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
        uint64_t d = (uint64_t)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    if (digits < width || strcmp(p, suffix) != 0)
        return 0;
    if (digits > width && name[plen] == '0')
        return 0;
    *number = v;
    return 1;
}

/* Accepts exactly the names rv_wal_segment_name produces. */
int rv_wal_parse_segment_name(const char *name, uint64_t *number)
{
    return filename_parse_number(name, "wal-", 8, ".log", number);
}

void rv_manifest_name(char *buf, size_t size, uint64_t number)
{
    snprintf(buf, size, "MANIFEST-%06llu", (unsigned long long)number);
}

int rv_parse_manifest_name(const char *name, uint64_t *number)
{
    return filename_parse_number(name, "MANIFEST-", 6, "", number);
}

void rv_table_file_name(char *buf, size_t size, uint64_t number)
{
    snprintf(buf, size, "%06llu.sst", (unsigned long long)number);
}

int rv_table_file_path(char *buf, const char *dir, uint64_t number)
{
    char name[32];
    rv_table_file_name(name, sizeof name, number);
    return rv_path_join(buf, dir, name);
}

int rv_parse_table_file_name(const char *name, uint64_t *number)
{
    return filename_parse_number(name, "", 6, ".sst", number);
}

void rv_prepared_file_name(char *buf, size_t size, uint64_t number)
{
    snprintf(buf, size, "prepared-%06llu.txn", (unsigned long long)number);
}

int rv_parse_prepared_file_name(const char *name, uint64_t *number)
{
    return filename_parse_number(name, "prepared-", 6, ".txn", number);
}

/* NAME is one of ravel's names, as it is (no ".tmp" stripped). */
static int filename_is_ours(const char *name)
{
    static const char *const fixed[] = {
        RV_FILE_IDENTITY, RV_FILE_LOCK, RV_FILE_LOG, RV_FILE_LOG_OLD,
        RV_FILE_CURRENT, RV_DIR_LOST, RV_DIR_ARCHIVE, RV_WAL_PROBE_FILE,
        RV_WAL_PROBE_CACHE,
        NULL,
    };
    for (int i = 0; fixed[i]; i++)
        if (strcmp(name, fixed[i]) == 0)
            return 1;
    uint64_t number;
    return rv_wal_parse_segment_name(name, &number) ||
           rv_parse_manifest_name(name, &number) ||
           rv_parse_table_file_name(name, &number) ||
           rv_parse_prepared_file_name(name, &number);
}

int rv_is_database_file_name(const char *name)
{
    if (filename_is_ours(name))
        return 1;
    /* NAME.tmp: one of ours being written before its rename into place */
    char base[64];
    size_t n = strlen(name);
    if (n <= 4 || n - 4 >= sizeof base || strcmp(name + n - 4, ".tmp") != 0)
        return 0;
    memcpy(base, name, n - 4);
    base[n - 4] = '\0';
    return filename_is_ours(base);
}
