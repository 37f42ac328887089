/*
** fsync-probe.c -- how fast can one writer append and fdatasync a file,
** depending on how the file's space was reserved?  The measurement behind
** wal_preallocate (docs/performance.md).
**
**   ravel-fsync-probe PATH [COUNT]
**
** For each way of preparing a 64 MiB file -- plain appends, fallocate,
** zero-filled, fallocate with FALLOC_FL_KEEP_SIZE -- appends COUNT
** (default 3000) records of 1,000 bytes, each followed by fdatasync, and
** prints fdatasync/s.  PATH is created and removed.
*/
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROBE_FILE_SIZE (64 << 20)
#define PROBE_RECORD 1000

static double probe_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int probe_prepare(int fd, int mode)
{
    static char zeros[1 << 20];
    switch (mode) {
    case 1:
        return fallocate(fd, 0, 0, PROBE_FILE_SIZE);
    case 2:
        for (off_t off = 0; off < PROBE_FILE_SIZE; off += sizeof zeros)
            if (pwrite(fd, zeros, sizeof zeros, off) != (ssize_t)sizeof zeros)
                return -1;
        return 0;
    case 3:
        return fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, PROBE_FILE_SIZE);
    default:
        return 0;
    }
}

static int probe_run(const char *path, int mode, int count)
{
    static const char *names[] = {"appended (file grows)", "fallocate",
                                  "zero-filled", "fallocate KEEP_SIZE"};
    unlink(path);
    int fd = open(path, O_CREAT | O_RDWR | O_EXCL, 0644);
    if (fd < 0 || probe_prepare(fd, mode) != 0 || fsync(fd) != 0) {
        fprintf(stderr, "fsync-probe: %s: %s\n", path, strerror(errno));
        return 1;
    }
    char record[PROBE_RECORD];
    memset(record, 'x', sizeof record);
    double start = probe_now();
    for (int i = 0; i < count; i++) {
        off_t off = (off_t)i * PROBE_RECORD;
        if (pwrite(fd, record, sizeof record, off) != (ssize_t)sizeof record ||
            fdatasync(fd) != 0) {
            fprintf(stderr, "fsync-probe: %s: %s\n", path, strerror(errno));
            return 1;
        }
    }
    double elapsed = probe_now() - start;
    printf("%-24s %8.0f fdatasync/s\n", names[mode], count / elapsed);
    close(fd);
    unlink(path);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s PATH [COUNT]\n", argv[0]);
        return 2;
    }
    int count = argc == 3 ? atoi(argv[2]) : 3000;
    if (count <= 0 || count > PROBE_FILE_SIZE / PROBE_RECORD) {
        fprintf(stderr, "fsync-probe: COUNT must be 1..%d\n",
                PROBE_FILE_SIZE / PROBE_RECORD);
        return 2;
    }
    for (int mode = 0; mode < 4; mode++)
        if (probe_run(argv[1], mode, count))
            return 1;
    return 0;
}
