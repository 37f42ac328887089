/*
** powerloss.c -- a simulated power loss from the library's sync journal
** (see powerloss.h; the journal's lines are described in
** lib/util/sync_journal.h).
*/
#include "powerloss.h"
#include "testutil.h"
#include "util/sync_journal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PL_PAGE 4096
#define PL_SECTOR 512
#define PL_MAX_FILES 4096

/* What the journal says: per inode, the durable prefix; the inodes whose
** directory entries are durable. */
struct pl_state {
    uint64_t ino[PL_MAX_FILES];
    uint64_t durable[PL_MAX_FILES];
    int nfiles;
    uint64_t *dir_inos;
    size_t ndir, capdir;
};

static const char *const pl_names[TU_PL_PATTERNS] = {
    "truncate", "zero", "random-pages", "prefix", "one-hole", "torn-sectors",
};

const char *tu_power_loss_name(enum tu_power_loss_pattern p)
{
    return (unsigned)p < TU_PL_PATTERNS ? pl_names[p] : "?";
}

void tu_sync_journal_start(const char *path)
{
    int r = rv_sync_journal_open(path);
    if (r != 0)
        fail_msg("cannot open the sync journal %s: %s", path, strerror(-r));
}

static void pl_set_durable(struct pl_state *st, uint64_t ino, uint64_t n)
{
    for (int i = 0; i < st->nfiles; i++) {
        if (st->ino[i] == ino) {
            st->durable[i] = n; /* the latest sync describes the file */
            return;
        }
    }
    assert_true(st->nfiles < PL_MAX_FILES);
    st->ino[st->nfiles] = ino;
    st->durable[st->nfiles++] = n;
}

static uint64_t pl_durable(const struct pl_state *st, uint64_t ino)
{
    for (int i = 0; i < st->nfiles; i++)
        if (st->ino[i] == ino)
            return st->durable[i];
    return 0;
}

static int pl_entry_durable(const struct pl_state *st, uint64_t ino)
{
    for (size_t i = 0; i < st->ndir; i++)
        if (st->dir_inos[i] == ino)
            return 1;
    return 0;
}

static void pl_read_journal(struct pl_state *st, const char *journal,
                            const char *dir)
{
    char *text;
    size_t len;
    int r = tu_file_read(journal, &text, &len);
    if (r == -ENOENT)
        return; /* killed before it opened the journal: nothing synced */
    if (r != 0)
        fail_msg("cannot read the sync journal %s", journal);
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == 'F') {
            unsigned long long ino, n;
            if (sscanf(line, "F %llu %llu", &ino, &n) == 2)
                pl_set_durable(st, ino, n);
        } else if (line[0] == 'D') {
            char *p = line + 2;
            char *sp = strchr(p, ' ');
            size_t dl = sp ? (size_t)(sp - p) : strlen(p);
            if (dl != strlen(dir) || strncmp(p, dir, dl) != 0)
                continue; /* another directory (the parent, at creation) */
            for (char *q = sp; q && *q;) {
                char *end;
                unsigned long long ino = strtoull(q, &end, 10);
                if (end == q)
                    break;
                if (st->ndir == st->capdir) {
                    st->capdir = st->capdir ? st->capdir * 2 : 256;
                    st->dir_inos = realloc(st->dir_inos,
                                           st->capdir * sizeof *st->dir_inos);
                    assert_non_null(st->dir_inos);
                }
                st->dir_inos[st->ndir++] = ino;
                q = end;
            }
        }
    }
    free(text);
}

static void pl_zero(int fd, uint64_t off, uint64_t len)
{
    static const char zeros[PL_PAGE];
    while (len) {
        size_t n = len < sizeof zeros ? (size_t)len : sizeof zeros;
        assert_int_equal(pwrite(fd, zeros, n, (off_t)off), (ssize_t)n);
        off += n;
        len -= n;
    }
}

/* Takes away unsynced bytes [durable, size) of one file, page by page. */
static uint64_t pl_damage_file(const char *path, uint64_t durable,
                               uint64_t size, enum tu_power_loss_pattern p,
                               uint64_t *rng)
{
    int fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    uint64_t first = durable / PL_PAGE, last = (size - 1) / PL_PAGE;
    uint64_t npages = last - first + 1, lost = 0;
    uint64_t pick = first + tu_rand(rng) % npages;
    if (p == TU_PL_TRUNCATE) {
        assert_int_equal(ftruncate(fd, (off_t)durable), 0);
        lost = size - durable;
    }
    for (uint64_t pg = first; p != TU_PL_TRUNCATE && pg <= last; pg++) {
        uint64_t from = pg * PL_PAGE < durable ? durable : pg * PL_PAGE;
        uint64_t to = (pg + 1) * PL_PAGE < size ? (pg + 1) * PL_PAGE : size;
        int zero = 0;
        switch (p) {
        case TU_PL_ZERO: zero = 1; break;
        case TU_PL_RANDOM_PAGES: zero = tu_rand(rng) & 1; break;
        case TU_PL_PREFIX: zero = pg >= pick; break;
        case TU_PL_ONE_HOLE: zero = pg == pick; break;
        case TU_PL_TORN_SECTORS: {
            uint64_t keep = pg * PL_PAGE +
                            (tu_rand(rng) % (PL_PAGE / PL_SECTOR + 1)) *
                                PL_SECTOR;
            if (keep > from)
                from = keep < to ? keep : to;
            zero = 1;
            break;
        }
        default: break;
        }
        if (zero && from < to) {
            pl_zero(fd, from, to - from);
            lost += to - from;
        }
    }
    close(fd);
    return lost;
}

uint64_t tu_power_loss(const char *dir, const char *journal,
                       enum tu_power_loss_pattern pattern, uint64_t *rng)
{
    struct pl_state *st = calloc(1, sizeof *st);
    assert_non_null(st);
    pl_read_journal(st, journal, dir);
    DIR *d = opendir(dir);
    if (!d && errno == ENOENT) {
        /* killed before it created the database: nothing to lose */
        free(st->dir_inos);
        free(st);
        return 0;
    }
    assert_non_null(d);
    uint64_t lost = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[4096];
        struct stat sb;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
            continue;
        /* The killed process's direct writes may still be in flight
        ** (wal_io=direct): let them land before the damage, as the power
        ** loss would have come after them. */
        int qfd = open(path, O_WRONLY);
        if (qfd >= 0) {
            (void)fallocate(qfd, FALLOC_FL_KEEP_SIZE, 0, 1);
            close(qfd);
        }
        if (stat(path, &sb) != 0)
            continue;
        int gone = !pl_entry_durable(st, sb.st_ino) &&
                   (pattern == TU_PL_TRUNCATE || (tu_rand(rng) & 1));
        if (gone) {
            printf("#   power loss (%s): %s never reached a directory "
                   "fsync: gone\n", pl_names[pattern], e->d_name);
            assert_int_equal(unlink(path), 0);
            lost++;
            continue;
        }
        uint64_t durable = pl_durable(st, sb.st_ino);
        if (durable >= (uint64_t)sb.st_size)
            continue;
        uint64_t n = pl_damage_file(path, durable, (uint64_t)sb.st_size,
                                    pattern, rng);
        if (n)
            printf("#   power loss (%s): %s: %" PRIu64 " of %" PRIu64
                   " unsynced bytes lost (synced: %" PRIu64 ")\n",
                   pl_names[pattern], e->d_name, n,
                   (uint64_t)sb.st_size - durable, durable);
        lost += n;
    }
    closedir(d);
    free(st->dir_inos);
    free(st);
    return lost;
}
