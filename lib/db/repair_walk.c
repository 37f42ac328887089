/*
** repair_walk.c -- finding a table file's data blocks without its index
** (repair.h, rv_repair_walk), for repair_table.c.
**
** A table's data blocks lie one after another from byte 0, each followed
** by its 9-byte trailer (type, checksum); the
** end of the block starting at POS is the first E where the byte at E is a
** block type and the 8 bytes after it are the checksum of [POS, E) --
** found with one streaming hash per type, so the walk reads each byte
** about once.  A false match needs a 64-bit checksum collision.  Without
** an index, nothing says where the block after a damaged one starts: the
** walk searches on from each later byte where a block may start (an
** uncompressed block begins with a whole key of a put or a deletion, a
** zstd one with the frame's magic; an lz4 block has no such mark, and is
** not searched for), each candidate at most twice the largest block seen
** long.  The walk ends at the first block that verifies but holds no data
** entries (the filter, properties and index blocks follow the data; an
** index block is told from data by its values, handles chaining the
** blocks from byte 0), or at the data's end when the footer says where
** that is.
*/
#include "db/repair.h"
#include "base/dbformat.h"
#include "util/coding.h"
#include "util/error.h"

#include <xxhash.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The streaming hashes of the walk: one per block type, each fed from the
** block's start up to FED. */
struct repair_hashes {
    XXH3_state_t *state[3]; /* XXH3_createState's (its size is not public) */
    uint64_t fed[3];
};

static struct repair_hashes *repair_hashes_new(void)
{
    struct repair_hashes *hs = calloc(1, sizeof *hs);
    for (int i = 0; hs && i < 3; i++)
        if (!(hs->state[i] = XXH3_createState())) {
            for (int j = 0; j < i; j++)
                XXH3_freeState(hs->state[j]);
            free(hs);
            hs = NULL;
        }
    return hs;
}

static void repair_hashes_free(struct repair_hashes *hs)
{
    for (int i = 0; i < 3; i++)
        XXH3_freeState(hs->state[i]);
    free(hs);
}

static void repair_hashes_reset(struct repair_hashes *hs,
                                const struct rv_repair_table *t, uint64_t pos)
{
    for (int type = 0; type < 3; type++) {
        XXH3_64bits_reset_withSeed(hs->state[type],
                                   t->seed ^ ((uint64_t)type << 56));
        hs->fed[type] = pos;
    }
}

/* The size of the block starting at POS, whose trailer ends by LIMIT: 1
** and *SIZE, or 0 if no trailer there verifies. */
static int repair_find_block(const struct rv_repair_table *t, uint64_t pos,
                             uint64_t limit, struct repair_hashes *hs,
                             uint64_t *size)
{
    repair_hashes_reset(hs, t, pos);
    for (uint64_t e = pos + 1; e + RV_TABLE_BLOCK_TRAILER <= limit; e++) {
        int type = (unsigned char)t->map[e];
        if (type > 2)
            continue;
        XXH3_64bits_update(hs->state[type], t->map + hs->fed[type],
                           (size_t)(e - hs->fed[type]));
        hs->fed[type] = e;
        if (XXH3_64bits_digest(hs->state[type]) ==
            rv_get_fixed64(t->map + e + 1)) {
            *size = e - pos;
            return 1;
        }
    }
    return 0;
}

/* 1 if a data block may start at S: an uncompressed one begins with a
** whole key (shared 0, its lengths, a tag of a put or a deletion), a
** zstd one with its raw length and the frame's magic.  (An lz4 block has
** no mark to find it by: after damage, lz4 blocks are not searched for.) */
static int repair_plausible_start(const struct rv_repair_table *t,
                                  uint64_t s, uint64_t limit)
{
    const char *p = t->map + s, *end = t->map + limit;
    uint32_t klen, vlen, raw;
    if (p[0] == 0) {
        const char *q = rv_get_varint32(p + 1, end, &klen);
        if (q)
            q = rv_get_varint32(q, end, &vlen);
        if (q && klen >= RV_TAG_SIZE && (uint64_t)(end - q) >= klen) {
            const char *tag = q + klen - RV_TAG_SIZE;
            if ((tag[0] == RV_TYPE_PUT || tag[0] == RV_TYPE_DELETE) &&
                tag[7] == 0)
                return 1;
        }
    }
    const char *q = rv_get_varint32(p, end, &raw);
    return q && end - q >= 4 && memcmp(q, "\x28\xb5\x2f\xfd", 4) == 0;
}

/* After damage at FROM: the next data block that verifies and follows
** LAST, at most MAXLEN bytes long, starting before LIMIT: 1 with *START,
** *SIZE and the block kept (*FIRST its first key); 0 if none. */
static int repair_resync(struct rv_repair_table *t, uint64_t from,
                         uint64_t limit, uint64_t maxlen,
                         struct repair_hashes *hs,
                         struct rv_repair_key_buf *last,
                         struct rv_repair_key_buf *first, uint64_t *start,
                         uint64_t *size, int *rc)
{
    for (uint64_t s = from + 1; !*rc && s + RV_TABLE_BLOCK_TRAILER < limit;
         s++) {
        if (!repair_plausible_start(t, s, limit))
            continue;
        uint64_t end = limit - s > maxlen + RV_TABLE_BLOCK_TRAILER
                           ? s + maxlen + RV_TABLE_BLOCK_TRAILER : limit;
        char why[256];
        int kept = 0;
        if (repair_find_block(t, s, end, hs, size))
            *rc = rv_repair_try_block(t, s, *size, last, first, &kept, why,
                                   sizeof why);
        if (kept) {
            *start = s;
            return 1;
        }
    }
    return 0;
}

/* Reports bytes FROM to TO of T's data lost: keys from LAST (NULL: the
** first) to HI (NULL: the file's last). */
static int repair_walk_lost(struct rv_repair_table *t,
                            struct rv_repair_report *r,
                            struct rv_repair_ranges *lost, uint64_t from,
                            uint64_t to, const struct rv_repair_key_buf *lo,
                            const struct rv_repair_key_buf *hi,
                            const char *why)
{
    char a[RV_REPAIR_KEY_TEXT] = "(the first key)";
    char b[RV_REPAIR_KEY_TEXT] = "the file's last";
    if (lo && lo->len)
        rv_repair_key(a, sizeof a, lo->key, lo->len - RV_TAG_SIZE);
    if (hi)
        rv_repair_key(b, sizeof b, hi->key, hi->len - RV_TAG_SIZE);
    if (hi)
        t->lost_blocks++;
    else
        t->lost_tail = 1;
    rv_repair_say(r, RAVEL_REPAIR_LOST, "%06llu.sst: bytes %llu to %llu of "
                  "its data could not be read (%s)%s: keys from %s to %s "
                  "are lost", (unsigned long long)t->number,
                  (unsigned long long)from, (unsigned long long)to, why,
                  hi ? "" : ", and no later block was found", a, b);
    return rv_repair_ranges_add(lost, t->number,
                                lo && lo->len ? lo->key : NULL,
                                lo && lo->len ? lo->len - RV_TAG_SIZE : 0,
                                hi ? hi->key : NULL,
                                hi ? hi->len - RV_TAG_SIZE : 0,
                                t->props_known ? t->max_seq
                                               : RV_MAX_SEQUENCE);
}

/* An external table (written by the SST writer, placed as it is by an
** ingest) has its checksums seeded with file number 0, whatever its name
** says; its footer says so, but the walk runs when the footer may be
** gone: if no first block verifies under the name's number and one does
** under 0, T is read under 0. */
static void repair_walk_seed(struct rv_repair_table *t, uint64_t limit,
                             struct repair_hashes *hs,
                             struct rv_repair_report *r)
{
    uint64_t size, named = t->seed;
    if (named == 0 || repair_find_block(t, 0, limit, hs, &size))
        return;
    t->seed = 0;
    if (!repair_find_block(t, 0, limit, hs, &size)) {
        t->seed = named;
        return;
    }
    rv_repair_say(r, RAVEL_REPAIR_NOTE, "%06llu.sst: its blocks verify "
                  "under file number 0 (an external table, as an ingest "
                  "places them): read as that",
                  (unsigned long long)t->number);
}

/* Walks the data blocks from byte 0 up to LIMIT; after a damaged block,
** searches for the next one (repair_resync). */
int rv_repair_walk(struct rv_repair_table *t, uint64_t limit,
                   int limit_known, struct rv_repair_report *r,
                   struct rv_repair_ranges *lost)
{
    struct repair_hashes *hs = repair_hashes_new();
    if (!hs)
        return rv_error(RAVEL_NOMEM, "out of memory reading %s", t->path);
    struct rv_repair_key_buf last = {0}, first = {0}, before = {0};
    uint64_t pos = 0, size, maxlen = 64 << 10;
    int rc = RAVEL_OK;
    repair_walk_seed(t, limit, hs, r);
    while (!rc && pos < limit) {
        int kept = 0, found = repair_find_block(t, pos, limit, hs, &size);
        char why[256] = "no block trailer verifies there";
        if (found)
            rc = rv_repair_try_block(t, pos, size, &last, NULL, &kept, why,
                                  sizeof why);
        if (kept) {
            pos += size + RV_TABLE_BLOCK_TRAILER;
            if (size * 2 > maxlen)
                maxlen = size * 2;
            continue;
        }
        if (rc || (found && !limit_known))
            break; /* past the data: the filter, properties or index */
        uint64_t start;
        if (rv_repair_key_buf_set(&before, last.key, last.len)) {
            rc = RAVEL_NOMEM;
            break;
        }
        if (repair_resync(t, pos, limit, maxlen, hs, &last, &first, &start,
                          &size, &rc)) {
            rc = repair_walk_lost(t, r, lost, pos, start, &before, &first,
                                  why);
            pos = start + size + RV_TABLE_BLOCK_TRAILER;
            continue;
        }
        if (!rc)
            rc = repair_walk_lost(t, r, lost, pos, limit, &last, NULL, why);
        break;
    }
    /* past the data: a version-2 file's range-deletion block is among the
    ** meta blocks that follow (a walk stops at the first of them) */
    for (uint64_t at = pos; !rc && !t->tombs && at < t->size;) {
        if (!repair_find_block(t, at, t->size, hs, &size))
            break;
        rv_repair_try_range_dels(t, at, size);
        at += size + RV_TABLE_BLOCK_TRAILER;
    }
    if (t->tombs)
        rv_repair_say(r, RAVEL_REPAIR_KEPT, "%06llu.sst: %d range tombstone "
                      "fragments found by the walk", (unsigned long long)
                      t->number, t->tombs->n);
    free(last.key);
    free(first.key);
    free(before.key);
    repair_hashes_free(hs);
    return rc;
}
