/*
** version.h -- what a read sees, as immutable objects: the memtables
** (active and immutable) and the table files per level.
**
** A version is never changed once installed: whoever changes the database
** (the write-group leader switching memtables, a flush adding files)
** builds a new one and installs it under db->mu.lock; readers take a reference
** (rv_db_ref_version) and use it without locks.  The version is the one
** home of "which memtable is active": the write-group leader inserts into
** db->read.current->mem.
**
** The table files live in a file set (struct rv_files) of its own,
** shared by every version that differs only in its memtables, so a
** memtable switch copies no file list.  Each file (struct rv_file) is
** reference-counted by the file sets holding it; once a version edit has
** removed it (rv_file_mark_obsolete) and the last file set holding it is
** gone, its file is deleted -- so a file disappears only when no reader
** can still need it.  A file moved to another level by a compaction (a
** trivial move) gets a new struct rv_file naming the same file; the new
** one holds a reference to the old (moved_from), and its obsolescence
** passes to the old one when it goes, so the file is deleted only when
** no file set names it at any level.
**
** Level 0 holds the files flushes write, newest first (by file number),
** with overlapping key ranges; levels 1 .. RV_NUM_LEVELS-1 are sorted by
** smallest key and do not overlap (compaction fills them).
*/
#ifndef RAVEL_VERSION_H
#define RAVEL_VERSION_H

#include "ravel_int.h"
#include "db/version_edit.h"
#include "memtable/memtable.h"

/* The file numbering in the handle (db->mu.files, read and written with
** db->mu.lock held; recovery sets it before any other thread exists). */
struct rv_db_files {
    uint64_t log_number;            /* WAL segments below it hold only
                                    ** flushed data (the manifest says so) */
    uint64_t next_file_number;      /* the next table or manifest number */
    /* Checkpoints and backups copying WAL segments (checkpoint.c): while
    ** wal_holds > 0 a flush deletes no segment and widens
    ** [wal_held_from, wal_held_to) instead; the last hold to go deletes
    ** that range (a crash meanwhile leaves it to the next open). */
    int wal_holds;
    uint64_t wal_held_from, wal_held_to;
};

struct rv_file;

/* Called once the last reference to a file is gone, before it is freed:
** releases what the owner attached to it (db.c: the pinned open table)
** and, if the file is obsolete, deletes it. */
typedef void (*rv_file_release_fn)(void *ctx, struct rv_file *f);

/* One table file. */
struct rv_file {
    _Atomic int refs;
    struct rv_file_meta meta;   /* keys owned by the file */
    _Atomic int obsolete;       /* removed by an edit: delete when unused */
    /* The open table, pinned for the file's life once a reader opened it
    ** (table_cache.c), so reads find it without a cache lookup; NULL
    ** until then, or when max_open_files leaves no room to pin. */
    struct rv_cache_handle *_Atomic table;
    rv_file_release_fn release;
    void *release_ctx;
    /* A reader's descriptor of the file (db/reader.c), -1 in a writer: set
    ** before the file is shared, closed when the file is freed, so the
    ** file's data stays readable through it after the writer deletes it;
    ** the table cache opens the table from a dup of it. */
    int hold_fd;
    int compacting;             /* an input of a running compaction
                                ** (db->mu.lock) */
    /* The same table file's entry at the level it was moved from (a
    ** reference), or NULL: set before the file is shared, never changed;
    ** older versions may still hold that entry and read the file. */
    struct rv_file *moved_from;
};

/* A file set: the table files of every level. */
struct rv_files {
    _Atomic int refs;
    int n[RV_NUM_LEVELS];
    struct rv_file **level[RV_NUM_LEVELS];
};

struct rv_version {
    _Atomic int refs;
    rv_memtable *mem;       /* the active memtable */
    uint64_t mem_wal;       /* the first WAL segment mem's data is in */
    int n_imm;
    rv_memtable **imm;      /* immutable memtables, newest first */
    uint64_t *imm_wal;      /* the first WAL segment each imm's data is in:
                            ** once imm[i] is flushed, the segments before
                            ** imm_wal[i-1] (or mem_wal) are obsolete */
    struct rv_files *files; /* never NULL */
    uint64_t visible_seq;   /* a reader's (db/reader.c): the sequence reads
                            ** of this version use, so that version and
                            ** sequence change as one; 0 in a writer */
    struct rv_version *retired_next; /* read_epoch.h's lists, under
                                     ** db->mu.lock */
};

/* A file for META (whose keys are copied), one reference held by the
** caller.  RELEASE is called with RELEASE_CTX and the file when the
** last reference goes.  NULL on allocation failure. */
RAVEL_PRIVATE struct rv_file *rv_file_new(const struct rv_file_meta *meta,
                                          rv_file_release_fn release,
                                          void *release_ctx);
RAVEL_PRIVATE void rv_file_ref(struct rv_file *f);
RAVEL_PRIVATE void rv_file_unref(struct rv_file *f);
/* The file was removed from the database: delete it once unused. */
RAVEL_PRIVATE void rv_file_mark_obsolete(struct rv_file *f);
/* F (not yet shared) is FROM moved to another level: FROM stays alive,
** and the table file on disk, until F is gone. */
RAVEL_PRIVATE void rv_file_set_moved_from(struct rv_file *f,
                                          struct rv_file *from);

/* An empty file set, one reference held by the caller; NULL on OOM. */
RAVEL_PRIVATE struct rv_files *rv_files_new_empty(void);
RAVEL_PRIVATE void rv_files_ref(struct rv_files *fs);
RAVEL_PRIVATE void rv_files_unref(struct rv_files *fs);

/* A new file set: BASE plus the files of ADD (N_ADD of them, each gaining
** a reference), minus the files named in E's deleted list (which are
** marked obsolete, unless ADD holds the same file number: a file moved to
** another level).  Level 0 stays newest first, the other levels sorted by
** smallest key.  NULL on allocation failure (nothing changed then). */
RAVEL_PRIVATE struct rv_files *rv_files_apply(const struct rv_files *base,
                                              struct rv_file **add, int n_add,
                                              const struct rv_version_edit *e);

/* Total files in FS, and bytes of its table files. */
RAVEL_PRIVATE int rv_files_count(const struct rv_files *fs);
RAVEL_PRIVATE uint64_t rv_files_bytes(const struct rv_files *fs);

/* A version whose active memtable is MEM (a reference is taken) with room
** for N_IMM immutable ones and file set FILES (a reference is taken), one
** reference held by the caller.  NULL on allocation failure. */
RAVEL_PRIVATE struct rv_version *rv_version_new(rv_memtable *mem,
                                                uint64_t mem_wal, int n_imm,
                                                struct rv_files *files);
RAVEL_PRIVATE void rv_version_unref(struct rv_version *v);

/* The handle's versions (version.c). */

/* The current version with a reference taken (version.c). */
RAVEL_PRIVATE struct rv_version *rv_db_ref_version(ravel_db *db);

/* The current version without a reference, for a short read: valid until
** rv_db_unpin_version(db, *TOKEN).  No lock (read_epoch.h). */
RAVEL_PRIVATE struct rv_version *rv_db_pin_version(ravel_db *db,
                                                   unsigned *token);
RAVEL_PRIVATE void rv_db_unpin_version(ravel_db *db, unsigned token);

/* The memtable the write-group leader inserts into.  Leader only. */
RAVEL_PRIVATE rv_memtable *rv_db_active_memtable(ravel_db *db);

/* Installs a version whose active memtable is MEM (a fresh one), moving
** the previous active memtable to the immutable list.  Leader only. */
RAVEL_PRIVATE int rv_db_install_memtable(ravel_db *db, rv_memtable *mem,
                                         uint64_t wal_segment);

/* Appends E to the manifest, with the next file number and the last
** sequence as of now, and makes it durable (version.c).  Flushes and
** compactions append one at a time (db->manifest.lock). */
RAVEL_PRIVATE int rv_db_log_edit(ravel_db *db, struct rv_version_edit *e);

#endif /* RAVEL_VERSION_H */
