/*
** wal_probe_cache.c -- the WAL probe's result kept beside the database
** (RV_WAL_PROBE_CACHE, "wal-probe.cache"), so wal_io=auto does not measure
** the disk at every open.  Owns: that file's format, when a cached result
** may be used, writing it.  Does not own: the measurements (wal_probe.c) or
** the choice made from them (wal_choose.c).
**
** Why: the probe times a few writes and fdatasyncs at each open; an
** outside user saw those timings vary more than tenfold from open to open
** on the same disk, so the mode could change between opens for no reason,
** and every open paid a few fdatasyncs.  A result measured once per file
** system is steadier and free.
**
** The file is text, written whole with rv_replace_file (a temporary file,
** fsynced, renamed, the directory fsynced), so it holds either the old
** result or the new one:
**
**   probe := "ravel-wal-probe 2\n" key measured result why settled checksum
**            | "ravel-wal-probe 1\n" key measured result why checksum
**   key := "key " st_dev:dec " " f_type:hex " " kernel_release "\n"
**   measured := "measured " unix_seconds:dec "\n"
**   result := "result " direct_ok " " uring_pays " " timings " " block "\n"
**   timings := direct_sync_ns direct_ns direct_fsync_ns pwrite_sync_ns
**              pwrite_ns
**   why := "why_not_direct " text "\n"
**   settled := "settled " ("none" | "buffered" | "direct") "\n"
**   checksum := "checksum " xxh3_64:hex16 "\n"
**
** Numbers are decimal, fields one space apart; the flags are 0 or 1, the
** timings the probe's medians in nanoseconds (struct rv_wal_probe's
** fields), block the direct I/O block size (0: none; else a power of
** two from 512 to 65536, and not 0 when direct_ok is 1), text the reason
** O_DIRECT was refused (empty when it works) up to the line's end.
** settled (version 2) is the mode wal_io=auto's adaptive WAL last moved
** to on its own (wal_auto.c), rewritten at the close of a run that
** switched, so that the next open starts there instead of spending
** segments in the mode the probe picks; version 1, written before it
** existed, is read as "none".  Version 2 is written.
** The checksum is XXH3_64 of every byte before the "checksum" line.  A
** cached result is used only when the key matches the directory's file
** system now (stat's st_dev, statfs's f_type, uname's release: another
** disk, a different file system or a new kernel is measured again), it
** is no older than WAL_PROBE_CACHE_MAX_AGE and not in the future, and the
** file parses and its checksum matches.  Anything else (missing, damaged,
** stale, foreign, not a regular file -- a FIFO is never opened
** blocking --, larger than WAL_PROBE_CACHE_MAX_BYTES) is measured again
** and the file rewritten; nothing is ever refused because of this
** file, and a failure to write it is only logged.  The file is not part of the database: checkpoints and backups
** do not copy it, repair leaves it where it is, ravel_destroy removes it.
*/
#include "wal/wal_writer_int.h"
#include "util/file.h"
#include "util/filename.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#define WAL_PROBE_CACHE_MAGIC "ravel-wal-probe 2\n"
#define WAL_PROBE_CACHE_MAGIC_V1 "ravel-wal-probe 1\n"
#define WAL_PROBE_CACHE_MAX_AGE (7 * 24 * 3600) /* seconds: a week */
#define WAL_PROBE_CACHE_MAX_BYTES 2048

/* The file system's identity, as the key line spells it. */
static int probe_cache_key(const char *dir, char *key, size_t size)
{
    struct stat st;
    struct statfs sf;
    struct utsname u;
    if (stat(dir, &st) != 0 || statfs(dir, &sf) != 0 || uname(&u) != 0)
        return -1;
    int n = snprintf(key, size, "key %" PRIu64 " %lx %s\n",
                     (uint64_t)st.st_dev, (unsigned long)sf.f_type,
                     u.release);
    return n > 0 && (size_t)n < size && !strchr(u.release, '\n') ? 0 : -1;
}

/* TEXT (LEN bytes, NUL-terminated) ends in a checksum line matching the
** bytes before it: the length of those bytes, or 0. */
static size_t probe_cache_checked_len(const char *text, size_t len)
{
    const char *line = NULL;
    for (const char *p = text; (p = strstr(p, "checksum ")) != NULL; p++)
        if (p == text || p[-1] == '\n')
            line = p;
    unsigned long long sum;
    char end;
    if (!line || sscanf(line, "checksum %16llx%c", &sum, &end) != 2 ||
        end != '\n' || line + strlen("checksum ") + 17 != text + len)
        return 0;
    size_t body = (size_t)(line - text);
    return XXH3_64bits(text, body) == (uint64_t)sum ? body : 0;
}

static const char *const probe_cache_settled_names[] = {
    [RV_WAL_SETTLED_NONE] = "none",
    [RV_WAL_SETTLED_BUFFERED] = "buffered",
    [RV_WAL_SETTLED_DIRECT] = "direct",
};

/* Parses the settled line at S (the whole rest of the body): 0 and
** *SETTLED, or -1. */
static int probe_cache_parse_settled(const char *s,
                                     enum rv_wal_settled *settled)
{
    for (int i = RV_WAL_SETTLED_NONE; i <= RV_WAL_SETTLED_DIRECT; i++) {
        char line[32];
        snprintf(line, sizeof line, "settled %s\n",
                 probe_cache_settled_names[i]);
        if (strcmp(s, line) == 0) {
            *settled = (enum rv_wal_settled)i;
            return 0;
        }
    }
    return -1;
}

/* Parses the lines after the key, up to BODY_END (the checksum line) --
** with a settled line if V2: 0 and *P filled, or -1. */
static int probe_cache_parse(const char *s, const char *body_end, int v2,
                             struct rv_wal_probe *p, int64_t *measured,
                             enum rv_wal_settled *settled)
{
    long long when;
    int n = 0;
    if (sscanf(s, "measured %lld\n%n", &when, &n) != 1 || n == 0)
        return -1;
    s += n;
    unsigned long long v[7];
    unsigned block;
    n = 0;
    if (sscanf(s, "result %llu %llu %llu %llu %llu %llu %llu %u\n%n", &v[0],
               &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &block, &n) != 8 ||
        n == 0 || v[0] > 1 || v[1] > 1 || block > 65536 ||
        (block && (block < 512 || (block & (block - 1)) != 0)) ||
        (v[0] && !block))
        return -1; /* a block no probe gives (rv_wal_direct_block): the
                   ** direct WAL would align its writes to it */
    s += n;
    if (strncmp(s, "why_not_direct ", 15) != 0)
        return -1;
    s += 15;
    const char *eol = strchr(s, '\n');
    if (!eol || (size_t)(eol - s) >= sizeof p->why_not_direct)
        return -1;
    memcpy(p->why_not_direct, s, (size_t)(eol - s));
    p->why_not_direct[eol - s] = '\0';
    const char *rest = eol + 1;
    *settled = RV_WAL_SETTLED_NONE;
    if (!v2 && rest != body_end)
        return -1;
    if (v2) {
        char tail[32];
        size_t tl = (size_t)(body_end - rest);
        if (tl >= sizeof tail)
            return -1;
        memcpy(tail, rest, tl);
        tail[tl] = '\0';
        if (probe_cache_parse_settled(tail, settled) != 0)
            return -1;
    }
    p->direct_ok = (int)v[0];
    p->uring_pays = (int)v[1];
    p->direct_sync_ns = v[2];
    p->direct_ns = v[3];
    p->direct_fsync_ns = v[4];
    p->pwrite_sync_ns = v[5];
    p->pwrite_ns = v[6];
    p->block = block;
    *measured = when;
    return 0;
}

/* Reads the cache file PATH into TEXT (WAL_PROBE_CACHE_MAX_BYTES + 1
** bytes), its length in *LEN: 0, or -1 when it is missing, unreadable,
** not a regular file or too large.  Opened O_NONBLOCK and checked by
** fstat before any read: a FIFO put in its place would block the open
** forever, a huge file would be read whole.  O_NOFOLLOW: a symlink there
** is not the cache this database wrote (it is replaced at the next
** store, never written through). */
static int probe_cache_read(const char *path, char *text, size_t *len)
{
    int fd = rv_open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW, 0);
    if (fd < 0)
        return -1;
    struct stat st;
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
             st.st_size <= WAL_PROBE_CACHE_MAX_BYTES;
    size_t got = 0, want = ok ? (size_t)st.st_size : 0;
    while (ok && got < want) {
        ssize_t n = pread(fd, text + got, want - got, (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            ok = 0;
        else
            got += (size_t)n;
    }
    close(fd);
    *len = got;
    return ok ? 0 : -1;
}

int rv_wal_probe_cache_load(const char *dir, struct rv_wal_probe *p,
                            int64_t *measured, enum rv_wal_settled *settled)
{
    char key[512], path[RV_PATH_MAX], text[WAL_PROBE_CACHE_MAX_BYTES + 1];
    size_t len = 0;
    if (probe_cache_key(dir, key, sizeof key) != 0 ||
        rv_path_join(path, dir, RV_WAL_PROBE_CACHE) != RAVEL_OK ||
        probe_cache_read(path, text, &len) != 0)
        return 0;
    text[len] = '\0';
    size_t magic = strlen(WAL_PROBE_CACHE_MAGIC), klen = strlen(key);
    struct rv_wal_probe got;
    memset(&got, 0, sizeof got);
    int64_t when = 0;
    enum rv_wal_settled how = RV_WAL_SETTLED_NONE;
    size_t body = len <= WAL_PROBE_CACHE_MAX_BYTES && strlen(text) == len
                      ? probe_cache_checked_len(text, len) : 0;
    int v2 = body > magic + klen &&
             memcmp(text, WAL_PROBE_CACHE_MAGIC, magic) == 0;
    int ok = body > magic + klen &&
             (v2 || memcmp(text, WAL_PROBE_CACHE_MAGIC_V1, magic) == 0) &&
             memcmp(text + magic, key, klen) == 0 &&
             probe_cache_parse(text + magic + klen, text + body, v2, &got,
                               &when, &how) == 0;
    int64_t now = (int64_t)time(NULL);
    /* WHEN checked against NOW before it is subtracted: "now - when"
    ** overflows for a WHEN far enough in the past, and a wrapped age
    ** would pass for a fresh one */
    if (!ok || when < 0 || when > now + 60 ||
        now - when > WAL_PROBE_CACHE_MAX_AGE)
        return 0;
    rv_wal_probe_fs(dir, got.fs, sizeof got.fs);
    *p = got;
    *measured = when;
    *settled = how;
    return 1;
}

int rv_wal_probe_cache_store(const char *dir, const struct rv_wal_probe *p,
                             int64_t measured, enum rv_wal_settled settled)
{
    char key[512], text[WAL_PROBE_CACHE_MAX_BYTES];
    if (probe_cache_key(dir, key, sizeof key) != 0)
        return RAVEL_OK; /* nothing to key it by: measured at each open */
    int n = snprintf(text, sizeof text,
                     "%s%smeasured %lld\nresult %d %d %" PRIu64 " %" PRIu64
                     " %" PRIu64 " %" PRIu64 " %" PRIu64 " %u\n"
                     "why_not_direct %s\nsettled %s\n",
                     WAL_PROBE_CACHE_MAGIC, key, (long long)measured,
                     p->direct_ok, p->uring_pays, p->direct_sync_ns,
                     p->direct_ns, p->direct_fsync_ns, p->pwrite_sync_ns,
                     p->pwrite_ns, p->block, p->why_not_direct,
                     probe_cache_settled_names[settled]);
    if (n <= 0 || (size_t)n + 32 > sizeof text ||
        strchr(p->why_not_direct, '\n'))
        return RAVEL_OK;
    n += snprintf(text + n, sizeof text - (size_t)n, "checksum %016llx\n",
                  (unsigned long long)XXH3_64bits(text, (size_t)n));
    return rv_replace_file(dir, RV_WAL_PROBE_CACHE, text, (size_t)n);
}
