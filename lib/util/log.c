/*
** log.c -- the LOG file (see log.h).  Each line goes out in one write()
** on a descriptor opened O_APPEND, so lines of concurrent writers never
** interleave.
*/
#include "util/log.h"
#include "util/file.h"
#include "util/filename.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOG_LINE_MAX 1024

/* Past this size an open starts a new LOG, the old one kept as LOG.old
** (replacing the one before): a database opened thousands of times, as a
** shell's scripts do, keeps at most about twice this much log. */
#define LOG_ROTATE_BYTES (1u << 20)

int rv_log_open(const char *dir)
{
    char path[RV_PATH_MAX], old[RV_PATH_MAX];
    if (rv_path_join(path, dir, RV_FILE_LOG) != RAVEL_OK ||
        rv_path_join(old, dir, RV_FILE_LOG_OLD) != RAVEL_OK)
        return -1;
    struct stat st;
    if (stat(path, &st) == 0 && st.st_size > LOG_ROTATE_BYTES)
        (void)rename(path, old); /* best effort: the LOG is for people */
    return rv_open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
}

void rv_log_vprintf(int fd, const char *fmt, va_list ap)
{
    if (fd < 0)
        return;
    char line[LOG_LINE_MAX];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    int n = (int)strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
    n += snprintf(line + n, sizeof line - (size_t)n, ".%06ldZ ",
                  ts.tv_nsec / 1000);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    n = m < 0 ? n : n + m;
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    ssize_t ignored = write(fd, line, (size_t)n);
    RV_UNUSED(ignored);
}
