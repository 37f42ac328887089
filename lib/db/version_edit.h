/*
** version_edit.h -- a change to the set of table files that make up a
** database, as the manifest records it: files added and removed per level,
** and the counters a reopen needs (the WAL segment below which segments
** are obsolete, the next file number, the last sequence).  A manifest is a
** log of these edits; replaying them gives the current version.
**
**   edit     := field*
**   field    := tag:varint32 payload
**   tag 1    log_number:varint64       WAL segments below it are flushed
**   tag 2    next_file_number:varint64
**   tag 3    last_sequence:varint64
**   tag 4    new file: level:varint32 number:varint64 size:varint64
**            smallest:bytes largest:bytes smallest_seq:varint64
**            largest_seq:varint64 entries:varint64
**   tag 5    deleted file: level:varint32 number:varint64
**   tag 6    closed: segment:varint64  (manifest version 2) the database
**            was closed cleanly, its log ending with this segment, sealed
**            and durable; only ever the manifest's last edit
**   bytes    := length:varint32 data[length]
**
** Tags and their payloads are on disk: DO NOT CHANGE THEM; a new field
** takes a new tag, and a reader refuses tags it does not know (it cannot
** tell what an unknown field would have meant for the file set).
*/
#ifndef RAVEL_VERSION_EDIT_H
#define RAVEL_VERSION_EDIT_H

#include "ravel_int.h"
#include "base/dbformat.h"


/* One table file as the manifest knows it. */
struct rv_file_meta {
    int level;
    uint64_t number;
    uint64_t size;
    char *smallest, *largest;   /* internal keys, malloc'd */
    size_t smallest_len, largest_len;
    uint64_t smallest_seq, largest_seq;
    uint64_t entries;
};

struct rv_deleted_file {
    int level;
    uint64_t number;
};

struct rv_version_edit {
    int has_log_number, has_next_file_number, has_last_sequence;
    uint64_t log_number, next_file_number, last_sequence;
    uint64_t closed_segment; /* tag 6, or 0 */
    struct rv_file_meta *added;
    int n_added, cap_added;
    struct rv_deleted_file *deleted;
    int n_deleted, cap_deleted;
};

RAVEL_PRIVATE void rv_version_edit_init(struct rv_version_edit *e);
/* Frees what the edit holds and empties it. */
RAVEL_PRIVATE void rv_version_edit_clear(struct rv_version_edit *e);

/* Adds a file (its keys are copied).  RAVEL_NOMEM, or RAVEL_INVALID for a
** level out of range. */
RAVEL_PRIVATE int rv_version_edit_add_file(struct rv_version_edit *e,
                                           const struct rv_file_meta *f);
RAVEL_PRIVATE int rv_version_edit_delete_file(struct rv_version_edit *e,
                                              int level, uint64_t number);

/* Applies the files E adds and deletes to the list of live files FILES
** (an edit used as a list: its added files), as replaying a manifest
** does.  RAVEL_CORRUPT if E deletes a file FILES lacks or adds one it
** holds already; RAVEL_NOMEM. */
RAVEL_PRIVATE int rv_version_edit_apply_files(struct rv_version_edit *files,
                                              const struct rv_version_edit *e);

/* Encodes E into a new buffer (*OUT, malloc'd, *LEN bytes). */
RAVEL_PRIVATE int rv_version_edit_encode(const struct rv_version_edit *e,
                                         char **out, size_t *len);

/* Decodes DATA (LEN bytes) into E (which must be empty): RAVEL_OK, or
** RAVEL_CORRUPT naming the byte offset and what is wrong. */
RAVEL_PRIVATE int rv_version_edit_decode(struct rv_version_edit *e,
                                         const char *data, size_t len);

#endif /* RAVEL_VERSION_EDIT_H */
