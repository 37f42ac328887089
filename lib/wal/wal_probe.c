/*
** wal_probe.c -- what wal_io=auto measures at open to pick how the WAL is
** written (wal_choose.c applies the rule and says why; docs/performance.md
** has the numbers behind it).  Owns: the measurements only; it decides
** nothing.
**
** In a scratch file RV_WAL_PROBE_FILE of the database directory (created,
** zeroed, fsynced, then deleted), the probe times, WAL_PROBE_ROUNDS times
** each, taking medians:
**   - a buffered 128-byte write through io_uring against pwrite: io_uring
**     pays for buffered writes only where the file system completes them
**     inline (XFS, btrfs); elsewhere (ext4) a kernel worker thread runs
**     each one, about 30x slower;
**   - a direct one-block write with RWF_DSYNC, without, and followed by
**     an fdatasync, against a 128-byte pwrite followed by fdatasync (into
**     space fallocate reserved past the zeros, as the buffered WAL
**     appends: the fdatasync then also commits the extents' conversion
**     from unwritten, which an overwrite of durable zeros would not pay,
**     and which made the probe price a synced buffered append at under
**     half its real cost on ext4): what
**     a RAVEL_SYNC write costs each way, whether the direct mode should
**     sync with RWF_DSYNC or an fdatasync, and what a plain write costs
**     in the direct mode.
** It also names the file system (statfs) and finds the block size direct
** writes need (statx STATX_DIOALIGN), or that O_DIRECT is refused (tmpfs
** before Linux 6.6).  The scratch writes overwrite zeros already made
** durable, as a WAL write into a prepared segment does.
*/
#include "util/clock.h"
#include "wal/wal_writer_int.h"
#include "util/file.h"
#include "util/filename.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define PROBE_ROUNDS 5
#define PROBE_SMALL 128
#define PROBE_FILE_BYTES (128 * 1024)

void rv_wal_probe_fs(const char *dir, char *fs, size_t size)
{
    static const struct {
        unsigned long magic;
        const char *name;
    } names[] = {
        {0xEF53, "ext4"},       {0x58465342, "xfs"},
        {0x9123683E, "btrfs"},  {0x01021994, "tmpfs"},
        {0x2FC12FC1, "zfs"},    {0xF2F52010, "f2fs"},
        {0x6969, "nfs"},        {0x794c7630, "overlayfs"},
        {0x65735546, "fuse"},   {0x858458f6, "ramfs"},
    };
    struct statfs st;
    if (statfs(dir, &st) != 0) {
        snprintf(fs, size, "unknown");
        return;
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if ((unsigned long)st.f_type == names[i].magic) {
            snprintf(fs, size, "%s", names[i].name);
            return;
        }
    }
    snprintf(fs, size, "fs 0x%lx", (unsigned long)st.f_type);
}

uint32_t rv_wal_direct_block(int fd)
{
    uint32_t block = 4096; /* a page: the unit a power loss tears */
#ifdef STATX_DIOALIGN
    struct statx sx;
    if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
        (sx.stx_mask & STATX_DIOALIGN)) {
        if (sx.stx_dio_offset_align == 0)
            return 0; /* the file system says: no direct I/O here */
        if (sx.stx_dio_offset_align > block)
            block = sx.stx_dio_offset_align;
        if (sx.stx_dio_mem_align > block)
            block = sx.stx_dio_mem_align;
    }
#else
    (void)fd;
#endif
    return block <= 65536 ? block : 0;
}

#ifndef RAVEL_OMIT_IO_URING
static int probe_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t probe_median(uint64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], probe_cmp_u64);
    return v[n / 2];
}

/* One write through the ring, waited for: its duration in ns, 0 if it
** failed. */
static uint64_t probe_ring_write(rv_wal *w, int fd, const void *p, size_t len,
                                 uint64_t off, int flags)
{
    uint64_t t0 = rv_now_nanos();
    struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);
    if (!sqe)
        return 0;
    io_uring_prep_write(sqe, fd, p, (unsigned)len, off);
    sqe->rw_flags = flags;
    io_uring_sqe_set_data(sqe, NULL);
    struct io_uring_cqe *cqe;
    if (io_uring_submit(&w->ring) < 0 || io_uring_wait_cqe(&w->ring, &cqe) < 0)
        return 0;
    int res = cqe->res;
    io_uring_cqe_seen(&w->ring, cqe);
    return res == (int)len ? rv_now_nanos() - t0 + 1 : 0;
}

/* Buffered writes: through the ring, and by pwrite (+ fdatasync). */
static int probe_buffered(rv_wal *w, int fd, struct rv_wal_probe *p)
{
    static const char small[PROBE_SMALL];
    uint64_t ring[PROBE_ROUNDS], plain[PROBE_ROUNDS], synced[PROBE_ROUNDS];
    for (int i = 0; i < PROBE_ROUNDS; i++) {
        uint64_t off = (uint64_t)i * 3 * PROBE_SMALL;
        ring[i] = probe_ring_write(w, fd, small, sizeof small, off, 0);
        uint64_t t0 = rv_now_nanos();
        ssize_t n = pwrite(fd, small, sizeof small, (off_t)(off + PROBE_SMALL));
        plain[i] = rv_now_nanos() - t0;
        /* as the buffered WAL appends: into space fallocate reserved
        ** (its extents unwritten, so the fdatasync also commits their
        ** conversion), a block of its own each round */
        uint64_t fresh = PROBE_FILE_BYTES + (uint64_t)i * 4096;
        t0 = rv_now_nanos();
        ssize_t m = pwrite(fd, small, sizeof small, (off_t)fresh);
        int s = fdatasync(fd);
        synced[i] = rv_now_nanos() - t0;
        if (!ring[i] || n != (ssize_t)sizeof small ||
            m != (ssize_t)sizeof small || s != 0)
            return -1;
    }
    /* before probe_median sorts PLAIN: both are medians, order-free */
    p->uring_pays = probe_median(ring, PROBE_ROUNDS) <=
                      probe_median(plain, PROBE_ROUNDS);
    p->pwrite_sync_ns = probe_median(synced, PROBE_ROUNDS);
    p->pwrite_ns = probe_median(plain, PROBE_ROUNDS);
    return 0;
}

/* Direct block writes with and without RWF_DSYNC, in the second half of
** the scratch file. */
static void probe_direct(rv_wal *w, const char *path, struct rv_wal_probe *p)
{
    int fd = rv_open(path, O_RDWR | O_DIRECT, 0);
    if (fd < 0) {
        snprintf(p->why_not_direct, sizeof p->why_not_direct,
                 "the %s file system refuses O_DIRECT (%s)", p->fs,
                 strerror(errno));
        return;
    }
    p->block = rv_wal_direct_block(fd);
    void *buf = NULL;
    if (!p->block || 3 * p->block * PROBE_ROUNDS > PROBE_FILE_BYTES / 2 ||
        posix_memalign(&buf, p->block, p->block)) {
        snprintf(p->why_not_direct, sizeof p->why_not_direct,
                 "direct I/O on the %s file system has no usable block "
                 "size", p->fs);
        close(fd);
        return;
    }
    memset(buf, 0, p->block);
    uint64_t dsync[PROBE_ROUNDS], plain[PROBE_ROUNDS], fsynced[PROBE_ROUNDS];
    int ok = 1;
    for (int i = 0; i < PROBE_ROUNDS && ok; i++) {
        uint64_t off = PROBE_FILE_BYTES / 2 + (uint64_t)i * 3 * p->block;
        dsync[i] = probe_ring_write(w, fd, buf, p->block, off, RWF_DSYNC);
        plain[i] = probe_ring_write(w, fd, buf, p->block, off + p->block, 0);
        uint64_t t0 = rv_now_nanos();
        ok = dsync[i] && plain[i] &&
             probe_ring_write(w, fd, buf, p->block, off + 2 * p->block, 0) &&
             fdatasync(fd) == 0;
        fsynced[i] = rv_now_nanos() - t0;
    }
    if (ok) {
        p->direct_ok = 1;
        p->why_not_direct[0] = '\0';
        p->direct_sync_ns = probe_median(dsync, PROBE_ROUNDS);
        p->direct_ns = probe_median(plain, PROBE_ROUNDS);
        p->direct_fsync_ns = probe_median(fsynced, PROBE_ROUNDS);
    } else {
        snprintf(p->why_not_direct, sizeof p->why_not_direct,
                 "a direct write through io_uring failed on the %s file "
                 "system", p->fs);
    }
    free(buf);
    close(fd);
}
#endif

void rv_wal_probe_run(rv_wal *w, struct rv_wal_probe *p)
{
    memset(p, 0, sizeof *p);
    rv_wal_probe_fs(w->dir, p->fs, sizeof p->fs);
    snprintf(p->why_not_direct, sizeof p->why_not_direct,
             "the probe could not run");
#ifndef RAVEL_OMIT_IO_URING
    char path[RV_PATH_MAX];
    if (rv_path_join(path, w->dir, RV_WAL_PROBE_FILE) != RAVEL_OK)
        return;
    int fd = rv_open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return;
    static const char zeros[4096];
    int ok = 1;
    for (uint64_t off = 0; off < PROBE_FILE_BYTES && ok; off += sizeof zeros)
        ok = pwrite(fd, zeros, sizeof zeros, (off_t)off) ==
             (ssize_t)sizeof zeros;
    /* the buffered WAL's preallocation, refused: the appends extend the
    ** file instead, as the WAL's then do */
    if (ok)
        (void)fallocate(fd, 0, PROBE_FILE_BYTES, PROBE_ROUNDS * 4096);
    if (ok && fdatasync(fd) == 0 && probe_buffered(w, fd, p) == 0)
        probe_direct(w, path, p);
    close(fd);
    unlink(path);
#endif
}
