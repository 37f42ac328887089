/*
** dbformat.h -- internal keys: how a user key, a sequence number and an
** operation type are combined in the memtable and in table files; and the
** number of levels of the LSM tree.
**
**   internal_key := user_key  tag:fixed64
**   tag          := (sequence << 8) | type        sequence < 2^56
**
** Ordering: user keys ascending (bytewise, a shorter key first on a common
** prefix), then tag descending, so the newest version of a key comes first.
** Sequence numbers start at 1; 0 means "before any write".
*/
#ifndef RAVEL_DBFORMAT_H
#define RAVEL_DBFORMAT_H

#include "ravel_int.h"
#include "util/coding.h"

/* Operation types.  They are stored on disk (WAL, batches): DO NOT CHANGE
** THESE VALUES. */
enum rv_value_type {
    RV_TYPE_DELETE = 0,
    RV_TYPE_PUT = 1,
    /* A range deletion (RocksDB's kTypeRangeDeletion): key = BEGIN, value
    ** = END; every key in [BEGIN, END) is deleted at its sequence.  In
    ** batches, the WAL and memtables (memtable/range_del.c), and in table
    ** files' range-deletion blocks (format version 2,
    ** table/range_del_block.h), where flushes and compactions write it
    ** (db/range_del_out.c).  A ravel older than it refuses a WAL record
    ** holding it ("unknown type 0x0f") instead of misreading it. */
    RV_TYPE_RANGE_DELETE = 0x0F,
    /* Markers of a prepared transaction's records (db/prepared.h), WAL
    ** only, never in a memtable or a table file: key = its name, value =
    ** its number as fixed64.  Each is its batch's last op, takes a
    ** sequence number like any op and inserts nothing.  A batch ending
    ** with PREPARE is a prepare (none of it is inserted); with COMMIT,
    ** the commit of its writes (the rest inserted); ROLLBACK is alone. */
    RV_TYPE_TXN_COMMIT = 0x10,
    RV_TYPE_TXN_PREPARE = 0x11,
    RV_TYPE_TXN_ROLLBACK = 0x12,
};

#define RV_MAX_SEQUENCE ((((uint64_t)1) << 56) - 1)
#define RV_TAG_SIZE 8

/* Levels 0 .. RV_NUM_LEVELS - 1 (num_levels may use fewer). */
#define RV_NUM_LEVELS 7

/* 1 for the markers of transactions' records. */
static inline int rv_type_is_txn_marker(int type)
{
    return type >= RV_TYPE_TXN_COMMIT && type <= RV_TYPE_TXN_ROLLBACK;
}

static inline uint64_t rv_pack_tag(uint64_t seq, int type)
{
    return (seq << 8) | (uint64_t)type;
}

static inline uint64_t rv_tag_sequence(uint64_t tag) { return tag >> 8; }
static inline int rv_tag_type(uint64_t tag) { return (int)(tag & 0xff); }

/* Bytewise comparison of user keys, shorter first on a common prefix. */
static inline int rv_user_key_compare(const void *a, size_t alen,
                                      const void *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    const unsigned char *p = a, *q = b;
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* Compare 8 bytes at a time as big-endian words, without a call to
    ** memcmp (measured: the skiplist spends most of its time here, and
    ** db_bench's 16-byte keys share their first 8 bytes). */
    while (n >= 8) {
        uint64_t x, y;
        memcpy(&x, p, 8);
        memcpy(&y, q, 8);
        if (x != y)
            return __builtin_bswap64(x) < __builtin_bswap64(y) ? -1 : 1;
        p += 8;
        q += 8;
        n -= 8;
    }
#endif
    int r = n ? memcmp(p, q, n) : 0;
    if (r)
        return r;
    return alen < blen ? -1 : alen > blen ? 1 : 0;
}

/* Compares two internal keys (each at least RV_TAG_SIZE bytes). */
static inline int rv_ikey_compare(const char *a, size_t alen, const char *b,
                                  size_t blen)
{
    int r = rv_user_key_compare(a, alen - RV_TAG_SIZE, b, blen - RV_TAG_SIZE);
    if (r)
        return r;
    uint64_t ta = rv_get_fixed64(a + alen - RV_TAG_SIZE);
    uint64_t tb = rv_get_fixed64(b + blen - RV_TAG_SIZE);
    return ta > tb ? -1 : ta < tb ? 1 : 0;
}

#endif /* RAVEL_DBFORMAT_H */
