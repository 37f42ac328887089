/*
** wal_format.c -- encoding of WAL segment names, segment headers and
** records.  The layout is wal_format.h's (docs/formats.md quotes it).
**
** Owns: only the bytes.  Writing them (wal_writer.c) and judging what was
** read back (wal_reader.c) live elsewhere.  A record's checksum is seeded
** with its segment number, so a stale record in a reused file, or one
** copied into another segment, never verifies there.
*/
#include "wal/wal_format.h"
#include "util/coding.h"

#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

#include <stdio.h>
#include <string.h>

void rv_wal_encode_segment_header(char *dst, uint64_t number,
                                  uint64_t prev_end)
{
    rv_put_fixed64(dst, RV_WAL_MAGIC);
    rv_put_fixed32(dst + 8, RV_WAL_VERSION);
    rv_put_fixed32(dst + 12, RV_WAL_HEADER_SIZE);
    rv_put_fixed64(dst + 16, number);
    rv_put_fixed64(dst + 24, prev_end);
    rv_put_fixed64(dst + 32, XXH3_64bits(dst, 32));
}

void rv_wal_encode_v3_header(char *dst, uint64_t number, uint64_t prev_end,
                             uint32_t block_size)
{
    rv_put_fixed64(dst, RV_WAL_MAGIC);
    rv_put_fixed32(dst + 8, RV_WAL_DIRECT_VERSION);
    rv_put_fixed32(dst + 12, RV_WAL_V3_HEADER_SIZE);
    rv_put_fixed64(dst + 16, number);
    rv_put_fixed64(dst + 24, prev_end);
    rv_put_fixed32(dst + 32, block_size);
    rv_put_fixed32(dst + 36, 0);
    rv_put_fixed64(dst + 40, XXH3_64bits(dst, 40));
}

void rv_wal_encode_seal(char *dst, uint64_t segment_number, uint64_t offset)
{
    rv_put_fixed64(dst + RV_WAL_RECORD_HEADER_SIZE, offset);
    rv_wal_seal_record(dst, segment_number, RV_WAL_SEAL, RV_WAL_SEAL_PAYLOAD);
}

void rv_wal_encode_v3_seal(char *dst, uint64_t segment_number,
                           uint64_t offset)
{
    rv_put_fixed64(dst + RV_WAL_RECORD_HEADER_SIZE, offset);
    rv_wal_seal_tagged(dst, segment_number, rv_wal_tag(segment_number),
                       RV_WAL_SEAL, RV_WAL_SEAL_PAYLOAD);
}

void rv_wal_encode_skip(char *dst, uint64_t segment_number, uint64_t data_end)
{
    rv_put_fixed64(dst + RV_WAL_RECORD_HEADER_SIZE, data_end);
    rv_wal_seal_tagged(dst, segment_number, rv_wal_tag(segment_number),
                       RV_WAL_SKIP, RV_WAL_SKIP_PAYLOAD);
}

uint64_t rv_wal_record_checksum(uint64_t segment_number, const char *hdr,
                                const char *payload, size_t len)
{
    /* Records are contiguous in both the writer's buffer and the mapped
    ** file: hash header bytes 8..16 and the payload in one call. */
    if (payload == hdr + RV_WAL_RECORD_HEADER_SIZE)
        return XXH3_64bits_withSeed(hdr + 8, RV_WAL_RECORD_HEADER_SIZE - 8 + len,
                                    segment_number);
    XXH3_state_t st;
    XXH3_INITSTATE(&st); /* reset_withSeed reads st.seed and st.extSecret */
    XXH3_64bits_reset_withSeed(&st, segment_number);
    XXH3_64bits_update(&st, hdr + 8, RV_WAL_RECORD_HEADER_SIZE - 8);
    if (len)
        XXH3_64bits_update(&st, payload, len);
    return XXH3_64bits_digest(&st);
}

size_t rv_wal_seal_record(char *dst, uint64_t segment_number, int type,
                          size_t len)
{
    return rv_wal_seal_tagged(dst, segment_number, 0, type, len);
}

size_t rv_wal_seal_tagged(char *dst, uint64_t segment_number, uint32_t tag,
                          int type, size_t len)
{
    size_t size = rv_wal_record_size(len);
    rv_put_fixed32(dst + 8, (uint32_t)len);
    dst[12] = (char)type;
    dst[13] = (char)(tag & 0xff);
    dst[14] = (char)((tag >> 8) & 0xff);
    dst[15] = (char)((tag >> 16) & 0xff);
    memset(dst + RV_WAL_RECORD_HEADER_SIZE + len, 0,
           size - RV_WAL_RECORD_HEADER_SIZE - len);
    rv_put_fixed64(dst, rv_wal_record_checksum(segment_number, dst,
                                               dst + RV_WAL_RECORD_HEADER_SIZE,
                                               len));
    return size;
}
