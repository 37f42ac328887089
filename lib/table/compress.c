/*
** compress.c -- lz4 and zstd for table data blocks (compress.h has the
** layout).
**
** Each codec is compiled in only where the build has it: meson defines
** RAVEL_HAVE_LZ4 / RAVEL_HAVE_ZSTD when it finds liblz4 / libzstd; the
** amalgamation has them only if its user passes those macros (and links
** -llz4 / -lzstd); RAVEL_OMIT_COMPRESSION removes both.  Without a codec,
** writing with it is refused when the builder is made and reading a block
** of it is RAVEL_INVALID with a message saying so ("zstd-compressed, but
** this build of ravel has no zstd support (built without libzstd)...").
**
** zstd decompresses with a context per thread (made on first use, freed
** when the thread exits): ZSTD_decompress would allocate one, over 100 KB,
** for every block.
*/
#include "table/compress.h"
#include "util/coding.h"
#include "util/error.h"

#include <pthread.h>
#include <stdlib.h>

#if defined(RAVEL_HAVE_LZ4) && !defined(RAVEL_OMIT_COMPRESSION)
# define COMPRESS_LZ4 1
# include <lz4.h>
#endif
#if defined(RAVEL_HAVE_ZSTD) && !defined(RAVEL_OMIT_COMPRESSION)
# define COMPRESS_ZSTD 1
# include <zstd.h>
#endif

#define COMPRESS_ZSTD_LEVEL 3
/* LZ4 expands at most 255 times (a match length byte per 255 bytes). */
#define COMPRESS_LZ4_MAX_RATIO 255

struct rv_compressor {
    enum rv_compression type;
#ifdef COMPRESS_ZSTD
    ZSTD_CCtx *zstd;
#endif
};

int rv_compressor_new(enum rv_compression c, rv_compressor **out)
{
    *out = NULL;
    if (c == RV_COMPRESSION_NONE || !rv_compression_available(c))
        return rv_error(RAVEL_INVALID, "compression %s is not available in "
                        "this build of ravel", rv_compression_name(c));
    rv_compressor *z = calloc(1, sizeof *z);
    if (!z)
        return rv_error(RAVEL_NOMEM, "out of memory for a compressor");
    z->type = c;
#ifdef COMPRESS_ZSTD
    if (c == RV_COMPRESSION_ZSTD && !(z->zstd = ZSTD_createCCtx())) {
        free(z);
        return rv_error(RAVEL_NOMEM, "out of memory for a zstd context");
    }
#endif
    *out = z;
    return RAVEL_OK;
}

void rv_compressor_free(rv_compressor *z)
{
    if (!z)
        return;
#ifdef COMPRESS_ZSTD
    ZSTD_freeCCtx(z->zstd);
#endif
    free(z);
}

size_t rv_compress(rv_compressor *z, const char *src, size_t len, char *dst,
                   size_t cap)
{
    if (len > UINT32_MAX || cap < 5 + 1)
        return 0;
    int h = rv_put_varint32(dst, (uint32_t)len);
    size_t room = cap - (size_t)h, n = 0;
    RV_UNUSED(src);  /* in a build without codecs */
    RV_UNUSED(room);
    switch (z->type) {
#ifdef COMPRESS_LZ4
    case RV_COMPRESSION_LZ4: {
        if (len > (size_t)LZ4_MAX_INPUT_SIZE)
            return 0;
        int r = LZ4_compress_default(src, dst + h, (int)len,
                                     room > INT32_MAX ? INT32_MAX : (int)room);
        n = r > 0 ? (size_t)r : 0;
        break;
    }
#endif
#ifdef COMPRESS_ZSTD
    case RV_COMPRESSION_ZSTD: {
        size_t r = ZSTD_compressCCtx(z->zstd, dst + h, room, src, len,
                                     COMPRESS_ZSTD_LEVEL);
        n = ZSTD_isError(r) ? 0 : r;
        break;
    }
#endif
    default:
        break;
    }
    return n ? (size_t)h + n : 0;
}

/* Reads the header of the compressed contents SRC (LEN bytes) of TYPE:
** *RAW_LEN, and *CODEC, where the codec's bytes begin. */
static int compress_header(int type, const char *src, size_t len,
                           size_t *raw_len, const char **codec)
{
    uint32_t raw;
    const char *p = rv_get_varint32(src, src + len, &raw);
    if (!p)
        return rv_error(RAVEL_CORRUPT, "compressed block of %zu bytes has "
                        "no length", len);
    size_t clen = len - (size_t)(p - src);
    if (type == RV_COMPRESSION_LZ4 &&
        (uint64_t)raw > (uint64_t)clen * COMPRESS_LZ4_MAX_RATIO + 64)
        return rv_error(RAVEL_CORRUPT, "lz4 block of %zu bytes says it holds "
                        "%u, more than lz4 can encode in it", clen, raw);
    *raw_len = raw;
    *codec = p;
    return RAVEL_OK;
}

int rv_compressed_raw_length(int type, const char *src, size_t len,
                             size_t *raw_len)
{
    const char *codec;
    return compress_header(type, src, len, raw_len, &codec);
}

#ifdef COMPRESS_ZSTD
static pthread_key_t compress_dctx_key;
static pthread_once_t compress_dctx_once = PTHREAD_ONCE_INIT;
static int compress_dctx_key_ok;

static void compress_free_dctx(void *p)
{
    ZSTD_freeDCtx(p);
}

static void compress_make_key(void)
{
    compress_dctx_key_ok =
        pthread_key_create(&compress_dctx_key, compress_free_dctx) == 0;
}

/* The calling thread's zstd decompression context; NULL on failure. */
static ZSTD_DCtx *compress_thread_dctx(void)
{
    pthread_once(&compress_dctx_once, compress_make_key);
    if (!compress_dctx_key_ok)
        return NULL;
    ZSTD_DCtx *d = pthread_getspecific(compress_dctx_key);
    if (d)
        return d;
    d = ZSTD_createDCtx();
    if (d && pthread_setspecific(compress_dctx_key, d) != 0) {
        ZSTD_freeDCtx(d);
        d = NULL;
    }
    return d;
}

static int compress_zstd_decode(const char *src, size_t len, char *dst,
                                size_t raw_len)
{
    unsigned long long fcs = ZSTD_getFrameContentSize(src, len);
    if (fcs != raw_len)
        return rv_error(RAVEL_CORRUPT, "zstd frame does not hold the %zu "
                        "bytes the block says", raw_len);
    ZSTD_DCtx *d = compress_thread_dctx();
    if (!d)
        return rv_error(RAVEL_NOMEM, "out of memory for a zstd context");
    size_t r = ZSTD_decompressDCtx(d, dst, raw_len, src, len);
    if (ZSTD_isError(r))
        return rv_error(RAVEL_CORRUPT, "zstd: %s", ZSTD_getErrorName(r));
    if (r != raw_len)
        return rv_error(RAVEL_CORRUPT, "zstd frame decompresses to %zu bytes, "
                        "not the %zu the block says", r, raw_len);
    return RAVEL_OK;
}
#endif

#ifdef RAVEL_TEST_HOOKS
static _Atomic unsigned compress_hidden; /* relaxed: set by a test between
                                         ** reads, nothing else depends on it */

void rv_compress_hide(unsigned mask)
{
    atomic_store_explicit(&compress_hidden, mask, memory_order_relaxed);
}

/* Whether the build has the codec of TYPE, as far as the test lets it. */
static int compress_have(int type)
{
    return rv_compression_available((enum rv_compression)type) &&
           !(atomic_load_explicit(&compress_hidden, memory_order_relaxed) &
             (1u << type));
}
#else
static int compress_have(int type)
{
    return rv_compression_available((enum rv_compression)type);
}
#endif

/* The refusal of a block of TYPE, a known codec this build lacks: not
** damage (the block passed its checksum, unless the read was told not to
** verify, so the message does not promise the data is intact), so
** RAVEL_INVALID, and a message that says which library the build was made
** without. */
static int compress_missing(int type)
{
    const char *name = rv_compression_name((enum rv_compression)type);
    return rv_error(RAVEL_INVALID, "%s-compressed, but this build of ravel "
                    "has no %s support (built without lib%s%s): a ravel "
                    "built with lib%s reads it", name, name,
                    name,
#ifdef RAVEL_OMIT_COMPRESSION
                    ", with RAVEL_OMIT_COMPRESSION",
#else
                    "",
#endif
                    name);
}

int rv_decompress(int type, const char *src, size_t len, char *dst,
                  size_t raw_len)
{
    if (type != RV_COMPRESSION_LZ4 && type != RV_COMPRESSION_ZSTD)
        return rv_error(RAVEL_CORRUPT, "unknown compression type %d", type);
    if (!compress_have(type))
        return compress_missing(type);
    size_t recorded;
    const char *p;
    int rc = compress_header(type, src, len, &recorded, &p);
    if (rc)
        return rc;
    if (recorded != raw_len)
        return rv_error(RAVEL_CORRUPT, "compressed block holds %zu bytes, "
                        "not %zu", recorded, raw_len);
    size_t clen = len - (size_t)(p - src);
    RV_UNUSED(dst);
    RV_UNUSED(clen);
#ifdef COMPRESS_LZ4
    if (type == RV_COMPRESSION_LZ4) {
        if (clen > INT32_MAX || raw_len > INT32_MAX)
            return rv_error(RAVEL_CORRUPT, "lz4 block of %zu bytes is too "
                            "large", clen);
        int r = LZ4_decompress_safe(p, dst, (int)clen, (int)raw_len);
        if (r < 0)
            return rv_error(RAVEL_CORRUPT, "lz4 data does not decompress");
        if ((size_t)r != raw_len)
            return rv_error(RAVEL_CORRUPT, "lz4 data decompresses to %d "
                            "bytes, not the %zu the block says", r, raw_len);
        return RAVEL_OK;
    }
#endif
#ifdef COMPRESS_ZSTD
    if (type == RV_COMPRESSION_ZSTD)
        return compress_zstd_decode(p, clen, dst, raw_len);
#endif
    return rv_error(RAVEL_INVALID, "no decoder for compression type %d",
                    type);
}
