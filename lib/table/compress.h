/*
** compress.h -- compression of table data blocks: lz4 and zstd, where
** ravel is built with them (RAVEL_HAVE_LZ4 / RAVEL_HAVE_ZSTD, unless
** RAVEL_OMIT_COMPRESSION; rv_compression_available says).
**
** The contents of a compressed block (its trailer's type says which
** codec, table_format.h) are
**
**   compressed := raw_len:varint32  codec_bytes
**
** raw_len is the length of the block once decompressed; codec_bytes is one
** LZ4 block (LZ4_compress_default's output, no frame) for lz4, one zstd
** frame (with its content size, level 3) for zstd.  A reader refuses a
** block whose codec_bytes do not decompress to exactly raw_len bytes.
** This layout is on disk: DO NOT CHANGE it without a new table format
** version.
**
** Does not own: when a block is worth compressing (table_builder.c keeps
** it raw unless it shrinks by 1/8), the checksum (over the stored bytes).
*/
#ifndef RAVEL_COMPRESS_H
#define RAVEL_COMPRESS_H

#include "ravel_int.h"
#include "base/options.h"

/* A writer's compression state (zstd's context, reused block after
** block). */
typedef struct rv_compressor rv_compressor;

/* A compressor for C, which this build must have: RAVEL_INVALID naming C
** otherwise, RAVEL_NOMEM. */
RAVEL_PRIVATE int rv_compressor_new(enum rv_compression c,
                                    rv_compressor **out);
RAVEL_PRIVATE void rv_compressor_free(rv_compressor *z);

/* Writes SRC (LEN bytes) compressed (the layout above) into DST; returns
** its length, or 0 if it does not fit in CAP bytes (or the codec failed),
** and the block is then stored as it is. */
RAVEL_PRIVATE size_t rv_compress(rv_compressor *z, const char *src,
                                 size_t len, char *dst, size_t cap);

/* The raw length recorded at the start of the compressed contents SRC
** (LEN bytes) of TYPE: RAVEL_CORRUPT if it cannot be read, or is more than
** the codec could have produced from LEN bytes. */
RAVEL_PRIVATE int rv_compressed_raw_length(int type, const char *src,
                                           size_t len, size_t *raw_len);

/* Decompresses the compressed contents SRC (LEN bytes) of TYPE into DST
** (RAW_LEN bytes, from rv_compressed_raw_length).  RAVEL_CORRUPT if they
** do not decompress to exactly RAW_LEN bytes; RAVEL_INVALID if this build
** has no such codec ("zstd-compressed, but this build of ravel has no
** zstd support (built without libzstd)..."); RAVEL_NOMEM.  The message names no file: the caller prefixes
** it. */
RAVEL_PRIVATE int rv_decompress(int type, const char *src, size_t len,
                                char *dst, size_t raw_len);

#ifdef RAVEL_TEST_HOOKS
/* Test builds only: makes rv_decompress act as a build without the codecs
** whose bit (1 << type) is set in MASK (0 gives them all back), so that a
** test can meet a block this build cannot read. */
RAVEL_PRIVATE void rv_compress_hide(unsigned mask);
#endif

#endif /* RAVEL_COMPRESS_H */
