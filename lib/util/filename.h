/*
** filename.h -- the names of the files in a database directory, and the
** one place their paths are built.
**
** Owns: every file name ravel writes (IDENTITY, LOCK, LOG, CURRENT, WAL
** segments "wal-NNNNNNNN.log", manifests "MANIFEST-NNNNNN", table files
** "NNNNNN.sst") and joining
** them to the directory.  A path that does
** not fit in RV_PATH_MAX bytes is an error naming it, never a silently
** truncated name that would open some other file.
*/
#ifndef RAVEL_FILENAME_H
#define RAVEL_FILENAME_H

#include "ravel_int.h"

#define RV_PATH_MAX 4096

#define RV_FILE_IDENTITY "IDENTITY"
#define RV_FILE_LOCK "LOCK"
#define RV_FILE_LOG "LOG"
#define RV_FILE_LOG_OLD "LOG.old" /* the LOG before the last rotation */
#define RV_DIR_LOST "lost"        /* files recovery could not vouch for */
#define RV_DIR_ARCHIVE "archive"  /* flushed WAL segments kept for the change
                                  ** feed (wal/wal_archive.h) */
/* The WAL probe's scratch file (wal_probe.c); rv_wal_open deletes one a
** crash left behind. */
#define RV_WAL_PROBE_FILE "wal-probe.tmp"
/* The probe's result, kept for the next opens (wal_probe_cache.c): not
** part of the database, never copied by checkpoints or backups. */
#define RV_WAL_PROBE_CACHE "wal-probe.cache"
#define RV_FILE_CURRENT "CURRENT"

/* DIR "/" NAME into BUF (RV_PATH_MAX bytes).  RAVEL_INVALID with a message
** naming the path when it would not fit. */
RAVEL_PRIVATE int rv_path_join(char *buf, const char *dir, const char *name);

/* The path of WAL segment NUMBER of directory DIR into BUF (RV_PATH_MAX
** bytes); RAVEL_INVALID when it would not fit. */
RAVEL_PRIVATE int rv_wal_segment_path(char *buf, const char *dir,
                                      uint64_t number);

/* WAL segment file name for NUMBER into BUF ("wal-00000012.log"); SIZE
** of at least 32 bytes always suffices. */
RAVEL_PRIVATE void rv_wal_segment_name(char *buf, size_t size,
                                       uint64_t number);

/* Parses a directory entry name; returns 1 and sets *number if it is a
** WAL segment name as rv_wal_segment_name writes it. */
RAVEL_PRIVATE int rv_wal_parse_segment_name(const char *name,
                                            uint64_t *number);

/* The manifest file name for NUMBER into BUF ("MANIFEST-000005"); SIZE of
** at least 32 bytes always suffices. */
RAVEL_PRIVATE void rv_manifest_name(char *buf, size_t size, uint64_t number);

/* Parses "MANIFEST-NNNNNN" as rv_manifest_name writes it: 1 and *number,
** or 0. */
RAVEL_PRIVATE int rv_parse_manifest_name(const char *name, uint64_t *number);

/* The table file name for NUMBER into BUF ("000012.sst"); SIZE of at
** least 32 bytes always suffices. */
RAVEL_PRIVATE void rv_table_file_name(char *buf, size_t size,
                                      uint64_t number);

/* The path of table file NUMBER of DIR into BUF (RV_PATH_MAX bytes). */
RAVEL_PRIVATE int rv_table_file_path(char *buf, const char *dir,
                                     uint64_t number);

/* Parses "NNNNNN.sst" as rv_table_file_name writes it: 1 and *number, or
** 0. */
RAVEL_PRIVATE int rv_parse_table_file_name(const char *name,
                                           uint64_t *number);

/* A prepared transaction's file ("prepared-000003.txn"; db/prepared.h):
** name (SIZE >= 32) and parse (1 and *NUMBER, or 0). */
RAVEL_PRIVATE void rv_prepared_file_name(char *buf, size_t size,
                                         uint64_t number);
RAVEL_PRIVATE int rv_parse_prepared_file_name(const char *name,
                                              uint64_t *number);

/* Whether NAME is a file (or lost/) that ravel makes in a database
** directory: one of the names above, a WAL segment, a manifest, a table
** file, a prepared transaction's file, or one of their ".tmp" files (and
** the directories lost/ and archive/).  What ravel_destroy removes. */
RAVEL_PRIVATE int rv_is_database_file_name(const char *name);

#endif /* RAVEL_FILENAME_H */
