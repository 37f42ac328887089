/*
** wal_format.h -- the write-ahead log's on-disk format, shared by the
** writer (wal_writer.c) and the reader (wal_reader.c).  docs/formats.md
** describes the same layout in prose.
**
** The WAL is a sequence of segment files "wal-NNNNNNNN.log" (decimal
** segment number, 8 digits or more) in the database directory.  Segment
** numbers are consecutive; replay reads segments in that order.
**
**   segment := header  record*  [zero padding or preallocated space]
**   header  := magic:fixed64 ("RAVELWAL")  version:fixed32 (2)
**              header_size:fixed32 (40)  segment_number:fixed64
**              prev_end:fixed64
**              checksum:fixed64            XXH3_64 of the first 32 bytes
**   record  := checksum:fixed64  length:fixed32  type:u8  zero:u8[3]
**              payload[length]  zero padding to a multiple of 8 bytes
**
** Version 3 segments are written by the direct-I/O writer (wal_io=direct,
** wal_direct.c) in whole blocks into pre-zeroed, possibly recycled files:
**   header  := magic:fixed64  version:fixed32 (3)  header_size:fixed32 (48)
**              segment_number:fixed64  prev_end:fixed64
**              block_size:fixed32  flags:fixed32 (0)
**              checksum:fixed64            XXH3_64 of the first 40 bytes
**   record  := checksum:fixed64  length:fixed32  type:u8  tag:u8[3]
**              payload[length]  zero padding to a multiple of 8 bytes
** tag is the segment number's low 24 bits (little-endian).  A recycled
** file still holds records of its earlier lives past the new data: their
** tags differ (and their checksums, seeded with the old number, fail), so
** the data of a version 3 segment ends at the first record header that is
** zero or carries another tag.  Only at that point may a skip record
** continue it: the writer does not rewrite a block while an earlier write
** of it is in flight, and starts the next write at the next block
** boundary instead, with a skip record naming where the data before it
** ended.  A crash can lose the in-flight write and keep the later one; the
** skip record then names an offset that is not where the data ends, and
** replay stops there: what it replays is always a prefix of the log.
** A file whose first 48 bytes are zero is a spare: created and zeroed in
** advance for the next segment, never started (its header is written by
** its first write).  Replay ignores a spare at the end of the log.
**
** prev_end is the byte offset at which the data of segment number - 1
** ended (where replay finds its clean end), or 0 for a segment that starts
** the log.  Together with consecutive numbering it makes a missing or
** shortened segment detectable: a hole in the log is never mistaken for
** its end.  Version 1 headers (32 bytes, no prev_end; ravel 0.1.0) are
** still read; they vouch for nothing.
**
** A record's checksum is XXH3_64bits_withSeed over bytes 8..16 of its
** header followed by its payload, seeded with the segment number, so a
** record left over from a recycled or reused file never verifies.
** A record header of 16 zero bytes marks the end of the written data
** (the rest of a preallocated segment).  Records start at 8-byte aligned
** offsets.
**
** Record types (on disk: DO NOT CHANGE THESE VALUES):
**   1 = RV_WAL_BATCH: payload is one batch rep (batch.h), sequence filled.
**   2 = RV_WAL_SEAL: payload is fixed64, the record's own offset in the
**       segment.  Written as the last record when a database is closed,
**       after an fdatasync of everything before it: a segment that ends
**       with a seal was complete and durable, so damage anywhere in it is
**       corruption, never a torn write.
**   3 = RV_WAL_SKIP (version 3 only): payload is fixed64, the offset in
**       the segment where the data before it ended; the record starts at
**       a multiple of block_size.  Replay goes on after it only when the
**       data did end there.
*/
#ifndef RAVEL_WAL_FORMAT_H
#define RAVEL_WAL_FORMAT_H

#include "ravel_int.h"

#define RV_WAL_MAGIC 0x4c41574c45564152ull /* "RAVELWAL" little-endian */
#define RV_WAL_VERSION 2
#define RV_WAL_HEADER_SIZE 40    /* version 2 */
#define RV_WAL_V1_HEADER_SIZE 32 /* version 1: no prev_end */
#define RV_WAL_DIRECT_VERSION 3
#define RV_WAL_V3_HEADER_SIZE 48 /* version 3: block_size, flags */
#define RV_WAL_TAG_MASK 0xffffffu
#define RV_WAL_RECORD_HEADER_SIZE 16
#define RV_WAL_ALIGN 8

enum rv_wal_record_type {
    RV_WAL_BATCH = 1,
    RV_WAL_SEAL = 2,
    RV_WAL_SKIP = 3,
};

#define RV_WAL_SKIP_PAYLOAD 8
#define RV_WAL_SKIP_SIZE (RV_WAL_RECORD_HEADER_SIZE + RV_WAL_SKIP_PAYLOAD)

#define RV_WAL_SEAL_PAYLOAD 8
#define RV_WAL_SEAL_SIZE (RV_WAL_RECORD_HEADER_SIZE + RV_WAL_SEAL_PAYLOAD)

static inline size_t rv_wal_padded(size_t n)
{
    return (n + RV_WAL_ALIGN - 1) & ~(size_t)(RV_WAL_ALIGN - 1);
}

/* Bytes a record with a LEN-byte payload occupies, padding included. */
static inline size_t rv_wal_record_size(size_t len)
{
    return RV_WAL_RECORD_HEADER_SIZE + rv_wal_padded(len);
}

/* Fills a version-2 segment header (RV_WAL_HEADER_SIZE bytes) for segment
** NUMBER whose predecessor's data ended at PREV_END (0: none). */
RAVEL_PRIVATE void rv_wal_encode_segment_header(char *dst, uint64_t number,
                                               uint64_t prev_end);

/* Fills a version-3 segment header (RV_WAL_V3_HEADER_SIZE bytes). */
RAVEL_PRIVATE void rv_wal_encode_v3_header(char *dst, uint64_t number,
                                          uint64_t prev_end,
                                          uint32_t block_size);

/* The tag records of segment NUMBER carry in a version 3 segment. */
static inline uint32_t rv_wal_tag(uint64_t number)
{
    return (uint32_t)(number & RV_WAL_TAG_MASK);
}

/* The tag of the record header HDR (0 in versions 1 and 2). */
static inline uint32_t rv_wal_record_tag(const char *hdr)
{
    return (uint32_t)(unsigned char)hdr[13] |
           (uint32_t)(unsigned char)hdr[14] << 8 |
           (uint32_t)(unsigned char)hdr[15] << 16;
}

/* Writes a skip record at DST (RV_WAL_SKIP_SIZE bytes) into version-3
** segment SEGMENT_NUMBER, naming DATA_END, where the data before it
** ended. */
RAVEL_PRIVATE void rv_wal_encode_skip(char *dst, uint64_t segment_number,
                                      uint64_t data_end);

/* Writes a seal record at DST (RV_WAL_SEAL_SIZE bytes) for a segment whose
** data ends at OFFSET, where the seal goes. */
RAVEL_PRIVATE void rv_wal_encode_seal(char *dst, uint64_t segment_number,
                                      uint64_t offset);

/* Like rv_wal_encode_seal, for a version-3 segment (tagged). */
RAVEL_PRIVATE void rv_wal_encode_v3_seal(char *dst, uint64_t segment_number,
                                         uint64_t offset);

/* The checksum a record with header HDR (its 16 bytes; bytes 8..16 are
** hashed) and LEN-byte PAYLOAD must carry in segment SEGMENT_NUMBER.  Used
** by the reader to verify what rv_wal_seal_record wrote. */
RAVEL_PRIVATE uint64_t rv_wal_record_checksum(uint64_t segment_number,
                                              const char *hdr,
                                              const char *payload,
                                              size_t len);

/* Completes a record whose LEN-byte payload was already placed at
** DST + RV_WAL_RECORD_HEADER_SIZE: fills the header (checksum included) and
** the zero padding.  Returns rv_wal_record_size(len).  Lets the writer
** patch the payload (the batch's sequence) in place before sealing. */
RAVEL_PRIVATE size_t rv_wal_seal_record(char *dst, uint64_t segment_number,
                                        int type, size_t len);

/* Like rv_wal_seal_record, with TAG (rv_wal_tag; 0 for versions 1 and 2)
** in the header's last three bytes. */
RAVEL_PRIVATE size_t rv_wal_seal_tagged(char *dst, uint64_t segment_number,
                                        uint32_t tag, int type, size_t len);

#endif /* RAVEL_WAL_FORMAT_H */
