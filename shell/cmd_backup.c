/*
** cmd_backup.c -- the commands that copy the database: .checkpoint (a
** database directory, ravel_checkpoint), .backup (into a backup root, or
** one file), .backups (list, verify, purge a root) and .restore.
*/
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shell.h"

void shell_cmd_checkpoint(struct shell *s, struct shell_line *l)
{
    if (shell_db_needed(s, ".checkpoint"))
        return;
    int rc = ravel_checkpoint(s->db, l->tok[1].p);
    if (rc) {
        shell_api_error(s, ".checkpoint", rc);
        return;
    }
    fprintf(s->out, "checkpoint written to %s\n", l->tok[1].p);
}

/* Whether TARGET of .backup names a backup root: an existing directory,
** or a path ending in '/'. */
static int backup_is_root(const char *target)
{
    struct stat st;
    size_t n = strlen(target);
    return (n > 0 && target[n - 1] == '/') ||
           (stat(target, &st) == 0 && S_ISDIR(st.st_mode));
}

static uint64_t backup_info(const char *root, uint64_t id, int what)
{
    uint64_t v = 0;
    (void)ravel_backup_info(root, id, what, &v);
    return v;
}

void shell_cmd_backup(struct shell *s, struct shell_line *l)
{
    const char *target = l->tok[1].p;
    if (shell_db_needed(s, ".backup"))
        return;
    if (strcmp(target, "-") == 0) { /* to standard output: a pipe */
        fflush(stdout);
        int rc = ravel_backup_write_fd(s->db, STDOUT_FILENO);
        if (rc)
            shell_api_error(s, ".backup", rc);
        return;
    }
    if (!backup_is_root(target)) {
        int rc = ravel_backup_write_file(s->db, target);
        if (rc)
            shell_api_error(s, ".backup", rc);
        else
            fprintf(s->out, "one-file backup written to %s\n", target);
        return;
    }
    uint64_t id = 0;
    int rc = ravel_backup_create(s->db, target, &id);
    if (rc) {
        shell_api_error(s, ".backup", rc);
        return;
    }
    fprintf(s->out, "backup %" PRIu64 " in %s: %" PRIu64 " bytes, %" PRIu64
            " copied\n", id, target,
            backup_info(target, id, RAVEL_BACKUP_BYTES),
            backup_info(target, id, RAVEL_BACKUP_COPIED));
}

/* ------------------------------------------------------------ .backups */

struct backups_list {
    struct shell *s;
    const char *root;
    int verify, failed;
};

static int backups_print(void *ctx, uint64_t id)
{
    struct backups_list *b = ctx;
    time_t t = (time_t)backup_info(b->root, id, RAVEL_BACKUP_TIME);
    char when[32];
    struct tm tm;
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", gmtime_r(&t, &tm));
    fprintf(b->s->out, "%" PRIu64 "\t%s UTC (%" PRIu64 ")\tsequence %"
            PRIu64 "\t%" PRIu64 " bytes\t%" PRIu64 " copied\t%" PRIu64
            " files", id, when, (uint64_t)t,
            backup_info(b->root, id, RAVEL_BACKUP_SEQUENCE),
            backup_info(b->root, id, RAVEL_BACKUP_BYTES),
            backup_info(b->root, id, RAVEL_BACKUP_COPIED),
            backup_info(b->root, id, RAVEL_BACKUP_FILES));
    if (b->verify) {
        int rc = ravel_backup_verify(b->root, id);
        fprintf(b->s->out, "\t%s\n", rc ? "DAMAGED" : "verified");
        if (rc) {
            shell_api_error(b->s, ".backups --verify", rc);
            b->failed = 1;
        }
    } else {
        fputc('\n', b->s->out);
    }
    return 0;
}

void shell_cmd_backups(struct shell *s, struct shell_line *l)
{
    struct backups_list b = {.s = s};
    long keep = 0;
    for (int i = 1; i < l->n; i++) {
        const char *t = l->tok[i].p;
        if (!l->tok[i].quoted && strcmp(t, "--verify") == 0) {
            b.verify = 1;
        } else if (!l->tok[i].quoted && strcmp(t, "--keep") == 0 &&
                   i + 1 < l->n) {
            char *end;
            errno = 0;
            keep = strtol(l->tok[++i].p, &end, 10);
            /* above INT_MAX would wrap in ravel_backup_purge's int: a
            ** typo must not become "keep 1" and purge the rest */
            if (*end || errno || keep < 1 || keep > INT_MAX) {
                shell_error(s, ".backups: --keep takes a number of backups "
                            "of at least 1, not '%s'", l->tok[i].p);
                return;
            }
        } else if (!b.root && (l->tok[i].quoted || t[0] != '-')) {
            b.root = t;
        } else {
            shell_usage_error(s, shell_command_find(".backups"));
            return;
        }
    }
    if (!b.root) {
        shell_usage_error(s, shell_command_find(".backups"));
        return;
    }
    int rc = keep ? ravel_backup_purge(b.root, (int)keep) : RAVEL_OK;
    if (rc == RAVEL_OK)
        rc = ravel_backup_list(b.root, backups_print, &b);
    if (rc)
        shell_api_error(s, ".backups", rc);
}

/* ------------------------------------------------------------ .restore */

void shell_cmd_restore(struct shell *s, struct shell_line *l)
{
    const char *from = l->tok[1].p, *dir = l->tok[2].p;
    uint64_t id = 0;
    if (l->n == 4) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(l->tok[3].p, &end, 10);
        /* strtoull takes "-1" as 2^64 - 1: a sign is not a number here */
        if (*end || errno || v == 0 || l->tok[3].p[0] == '-') {
            shell_error(s, ".restore: ID is a backup's number (1, 2, ...), "
                        "not '%s'", l->tok[3].p);
            return;
        }
        id = v;
    }
    struct stat st;
    int root = strcmp(from, "-") != 0 && stat(from, &st) == 0 &&
               S_ISDIR(st.st_mode);
    if (!root && id) {
        shell_error(s, ".restore: %s is a one-file backup, which holds one "
                    "backup: no ID is taken", from);
        return;
    }
    int rc = root ? ravel_backup_restore(from, id, dir)
             : strcmp(from, "-") == 0
                 ? ravel_backup_restore_fd(STDIN_FILENO, dir)
                 : ravel_backup_restore_file(from, dir);
    if (rc) {
        shell_api_error(s, ".restore", rc);
        return;
    }
    fprintf(s->out, "restored into %s (open it with .open %s)\n", dir, dir);
}
