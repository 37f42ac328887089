/*
** manifest.h -- the manifest: the log of version edits (version_edit.h)
** that says which table files make up the database, and CURRENT, which
** names the manifest in use.
**
**   MANIFEST-n := header  record*
**   header     := magic:fixed64 ("RAVLMANI")  version:fixed32 (2; 1 is
**                 read too: it has no edit with tag 6)
**                 header_size:fixed32 (32)  number:fixed64
**                 checksum:fixed64            XXH3_64 of the first 24 bytes
**   record     := the WAL's record framing (wal/wal_format.h), type 3, its
**                 payload one encoded version edit, its checksum seeded
**                 with the manifest's number
**   CURRENT    := "MANIFEST-n\n"
**
** Every edit is fdatasynced before rv_manifest_append returns, so a crash
** can only tear the last record, and never the first (CURRENT names a
** manifest only once its first record is durable).  Replay ends at damage
** that can be a torn last append and says so (rv_manifest_tail); damage
** with a good record after it is corruption.  Whether the dropped record
** really was never durable is for the caller to check against the
** directory (recovery.c): what only its durability could have deleted
** must still be there.  A new
** manifest (the first, or one that rewrites a long log as a single edit)
** is made durable before CURRENT is switched to it by write to
** CURRENT.tmp, fsync, rename and directory fsync: a crash leaves CURRENT
** naming the old manifest or the new one, each whole.
*/
#ifndef RAVEL_MANIFEST_H
#define RAVEL_MANIFEST_H

#include "ravel_int.h"
#include "db/version_edit.h"

#define RV_MANIFEST_MAGIC 0x494e414d4c564152ull /* "RAVLMANI" */
#define RV_MANIFEST_VERSION 2     /* written */
#define RV_MANIFEST_VERSION_MIN 1 /* the oldest read */
#define RV_MANIFEST_HEADER_SIZE 32
#define RV_MANIFEST_RECORD_EDIT 3 /* record type, on disk */

typedef struct rv_manifest rv_manifest;

/* Creates MANIFEST-NUMBER in DIR holding FIRST (typically the whole
** current state as one edit), makes it durable, then points CURRENT at
** it.  The old manifest, if any, is left for the caller to delete. */
RAVEL_PRIVATE int rv_manifest_create(const char *dir, uint64_t number,
                                     const struct rv_version_edit *first,
                                     rv_manifest **out);

/* Appends E and fdatasyncs: once it returns RAVEL_OK the edit survives a
** crash or power loss.  A failure leaves the manifest unusable: every
** later append fails too (the caller stops writes). */
RAVEL_PRIVATE int rv_manifest_append(rv_manifest *m,
                                     const struct rv_version_edit *e);

/* The bytes of a whole manifest NUMBER holding the one edit E, as
** rv_manifest_create would write it, into *OUT (malloc'd, *LEN bytes):
** for a copy of the database made elsewhere (checkpoint.c). */
RAVEL_PRIVATE int rv_manifest_image(uint64_t number,
                                    const struct rv_version_edit *e,
                                    char **out, size_t *len);

RAVEL_PRIVATE uint64_t rv_manifest_number(const rv_manifest *m);
RAVEL_PRIVATE void rv_manifest_close(rv_manifest *m);

/* What replay found at the manifest's end. */
struct rv_manifest_tail {
    uint64_t size;       /* the file's size */
    int records;         /* the edits replayed */
    uint64_t dropped_at; /* 0, or the offset of a damaged last record that
                         ** may be a torn append: replay ended there */
    char why[64];        /* what was wrong with it */
};

/* Called with each edit of the manifest in order; non-zero stops the
** replay and is returned. */
typedef int (*rv_manifest_edit_fn)(void *ctx, struct rv_version_edit *e);

/* Reads CURRENT in DIR and replays the manifest it names, calling FN for
** every edit; *NUMBER is that manifest's number.  RAVEL_NOTFOUND if there
** is no CURRENT (a database without tables yet); RAVEL_CORRUPT naming the
** file and offset for damage.  *TAIL says where the replay ended. */
RAVEL_PRIVATE int rv_manifest_replay(const char *dir, rv_manifest_edit_fn fn,
                                     void *ctx, uint64_t *number,
                                     struct rv_manifest_tail *tail);

/* Replays MANIFEST-NUMBER of DIR, whatever CURRENT says. */
RAVEL_PRIVATE int rv_manifest_replay_file(const char *dir, uint64_t number,
                                          rv_manifest_edit_fn fn, void *ctx,
                                          struct rv_manifest_tail *tail);

#endif /* RAVEL_MANIFEST_H */
