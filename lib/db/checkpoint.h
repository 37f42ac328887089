/*
** checkpoint.h -- a consistent copy of a live database (checkpoint.c):
** the moment it holds, the list of files that make it up (a plan), and
** the plan written into a new directory (ravel_checkpoint).  backup.c and
** backup_archive.c write the same plan into a backup root and into a
** one-file archive; copy.c holds the file copying they share.
**
** The moment is a memtable switch made by the call (the write group's
** leader closes the WAL segment, durable, and starts the next one): every
** write acknowledged before the call began is in a segment before the
** new one, or in a table file, and no write after the switch is.  Under
** db->mu.lock the plan then takes, together, the current table files (a
** reference keeps them on disk), the log number L, and a hold on the WAL
** (flushes leave segments in place while it is held), and the active
** memtable's segment A (the one made by that switch, or a later one).
** The state is the table files plus segments L .. A-1, all closed: every
** write up to the switch to A, a moment during the call (flushes install
** their files and move L in one step under the same lock, so the files
** and L always agree).
**
** A reader handle (read_only=true) makes its plan in checkpoint_reader.c:
** the state it holds after a catch-up, its table files read through the
** descriptors it holds, its memtable written out as a table file, and
** nothing of the source directory written.
*/
#ifndef RAVEL_CHECKPOINT_H
#define RAVEL_CHECKPOINT_H

#include "db/db.h"

/* What an item of a plan is and where its bytes come from. */
enum rv_cp_kind {
    RV_CP_TABLE = 1, /* a table file of the database (immutable) */
    RV_CP_FILE = 2,  /* a WAL segment, closed (no longer written) */
    RV_CP_DATA = 3,  /* bytes made by the plan (DATA) */
};

struct rv_cp_item {
    int kind;
    char name[48];      /* its name in a database directory */
    char *src;          /* RV_CP_TABLE, RV_CP_FILE: the source path
                        ** (NULL for a table made by the plan) */
    char *data;         /* RV_CP_DATA: the bytes (malloc'd) */
    uint64_t size;      /* bytes (RV_CP_FILE: stat'ed at the moment) */
    int fd;             /* RV_CP_TABLE of a reader's plan: a descriptor of
                        ** the file, read instead of SRC (the writer may
                        ** have deleted SRC); -1: read SRC */
    int own_fd;         /* FD is the plan's to close (a table it made);
                        ** else the reader's file, held by FILES */
};

/* The files of a database's state at one moment, in the order a copy
** writes them (tables, WAL, prepared transactions, IDENTITY, the
** manifest; CURRENT last). */
struct rv_cp_plan {
    ravel_db *db;
    struct rv_files *files;  /* referenced: its table files stay on disk */
    int wal_held;            /* a WAL hold to release */
    struct rv_cp_item *items;
    int n, cap;
    uint64_t sequence;       /* every sequence up to it is in the state
                             ** (a few just above it may be too) */
    uint64_t pause_micros;   /* the memtable switch writers waited for */
};

/* Takes the moment and makes the plan of DB's state (see above); a
** reader's plan is checkpoint_reader.c's.  RAVEL_READONLY for stopped
** writes. */
RAVEL_PRIVATE int rv_checkpoint_plan(ravel_db *db, struct rv_cp_plan *p);

/* rv_checkpoint_plan of a reader handle (checkpoint_reader.c). */
RAVEL_PRIVATE int rv_checkpoint_plan_reader(ravel_db *db,
                                            struct rv_cp_plan *p);

/* The pieces of a plan, for both kinds (checkpoint.c).  A new item of
** KIND named NAME (NULL when out of memory); its fd is -1. */
RAVEL_PRIVATE struct rv_cp_item *rv_checkpoint_add(struct rv_cp_plan *p,
                                                   int kind,
                                                   const char *name);
/* The table files of P->files, each with its reader's descriptor if it
** has one (rv_file.hold_fd). */
RAVEL_PRIVATE int rv_checkpoint_add_tables(struct rv_cp_plan *p);
/* The database file NAME read into the plan whole. */
RAVEL_PRIVATE int rv_checkpoint_add_copy_of(struct rv_cp_plan *p,
                                            const char *name);
/* The manifest of the state as manifest NUMBER (one edit: every table
** file of P->files, and EXTRA when not NULL; log number LOG_NUMBER; the
** last sequence P->sequence), and CURRENT naming it. */
RAVEL_PRIVATE int rv_checkpoint_add_manifest(struct rv_cp_plan *p,
                                             uint64_t number,
                                             uint64_t log_number,
                                             const struct rv_file_meta
                                             *extra);

/* Releases what the plan holds (the files, the WAL hold: the segments a
** flush let go meanwhile are deleted now). */
RAVEL_PRIVATE void rv_checkpoint_plan_free(struct rv_cp_plan *p);

/* Under db->mu.lock, from a flush that moved the log number from FROM to
** TO: 1 if a checkpoint holds the WAL (the range is remembered and
** deleted when the last hold goes), 0 if the caller deletes it. */
RAVEL_PRIVATE int rv_checkpoint_defer_wal_locked(ravel_db *db, uint64_t from,
                                                 uint64_t to)
    RV_REQUIRES(db->mu.lock);

/* Writes plan P into directory DIR, which must not exist: built in
** DIR.partial, everything fsynced, then renamed to DIR.  Table files are
** hard-linked where DIR is on the same file system, copied where not.
** *LINKED and *COPIED (may be NULL) count the bytes linked and copied. */
RAVEL_PRIVATE int rv_checkpoint_write_dir(const struct rv_cp_plan *p,
                                          const char *dir, uint64_t *linked,
                                          uint64_t *copied);

/* Copies table item IT into the new file DST: from its descriptor when
** it has one, else from its path.  *CHECKSUM as rv_copy_file. */
RAVEL_PRIVATE int rv_checkpoint_copy_item(const struct rv_cp_item *it,
                                          const char *dst,
                                          uint64_t *checksum);

#ifdef RAVEL_TEST_HOOKS
/* For tests: when ON, hard links fail as across file systems (EXDEV). */
RAVEL_PRIVATE void rv_test_checkpoint_no_links(int on);
/* For tests: how many table files a reader's checkpoint copied from its
** descriptor because the writer had deleted the name (ENOENT at the
** link), since the process started. */
RAVEL_PRIVATE uint64_t rv_test_checkpoint_deleted_copies(void);
#endif

#endif /* RAVEL_CHECKPOINT_H */
