/*
** sync_journal.c -- the power-loss journal of test builds (see
** sync_journal.h).  Compiled to nothing without RAVEL_TEST_HOOKS.
*/
#include "util/sync_journal.h"

#ifdef RAVEL_TEST_HOOKS

#include "util/file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SYNC_JOURNAL_LINE_MAX 65536

/* The journal's descriptor, -1 when none.  Set by the test before it opens
** a database; read (relaxed) by syncing threads. */
static _Atomic int sync_journal_fd = -1;

int rv_sync_journal_open(const char *path)
{
    int fd = rv_open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0)
        return -errno;
    int old = atomic_exchange_explicit(&sync_journal_fd, fd,
                                       memory_order_relaxed);
    if (old >= 0)
        close(old);
    return 0;
}

void rv_sync_journal_close(void)
{
    int old = atomic_exchange_explicit(&sync_journal_fd, -1,
                                       memory_order_relaxed);
    if (old >= 0)
        close(old);
}

/* One line, one write: O_APPEND keeps concurrent lines whole. */
static void sync_journal_emit(const char *line, size_t len)
{
    int fd = atomic_load_explicit(&sync_journal_fd, memory_order_relaxed);
    if (fd < 0)
        return;
    ssize_t ignored = write(fd, line, len);
    (void)ignored;
}

void rv_sync_journal_file(int fd, uint64_t bytes)
{
    struct stat st;
    if (atomic_load_explicit(&sync_journal_fd, memory_order_relaxed) < 0 ||
        fstat(fd, &st) != 0)
        return;
    char line[64];
    int n = snprintf(line, sizeof line, "F %llu %llu\n",
                     (unsigned long long)st.st_ino, (unsigned long long)bytes);
    sync_journal_emit(line, (size_t)n);
}

void rv_sync_journal_dir(const char *dir)
{
    if (atomic_load_explicit(&sync_journal_fd, memory_order_relaxed) < 0)
        return;
    /* Directory fsyncs are rare: one static line buffer, under a lock. */
    static char line[SYNC_JOURNAL_LINE_MAX];
    static pthread_mutex_t line_mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&line_mu);
    DIR *d = opendir(dir);
    int n = snprintf(line, sizeof line, "D %s", dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL && n < (int)sizeof line - 32)
        n += snprintf(line + n, sizeof line - (size_t)n, " %llu",
                      (unsigned long long)e->d_ino);
    if (d)
        closedir(d);
    line[n++] = '\n';
    sync_journal_emit(line, (size_t)n);
    pthread_mutex_unlock(&line_mu);
}

#endif /* RAVEL_TEST_HOOKS */
