/*
** coding.h -- little-endian fixed-width and varint encodings used by every
** on-disk format of ravel.  All integers on disk are little-endian.
*/
#ifndef RAVEL_CODING_H
#define RAVEL_CODING_H

#include <stdint.h>
#include <string.h>

static inline void rv_put_fixed32(char *dst, uint32_t v)
{
    unsigned char *p = (unsigned char *)dst;
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static inline void rv_put_fixed64(char *dst, uint64_t v)
{
    rv_put_fixed32(dst, (uint32_t)v);
    rv_put_fixed32(dst + 4, (uint32_t)(v >> 32));
}

static inline uint32_t rv_get_fixed32(const char *src)
{
    const unsigned char *p = (const unsigned char *)src;
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static inline uint64_t rv_get_fixed64(const char *src)
{
    return (uint64_t)rv_get_fixed32(src) |
           ((uint64_t)rv_get_fixed32(src + 4) << 32);
}

/* Writes V as a varint (7 bits a byte, high bit = more); returns the byte
** count (at most 5). */
static inline int rv_put_varint32(char *dst, uint32_t v)
{
    unsigned char *p = (unsigned char *)dst;
    int n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

static inline int rv_varint32_length(uint32_t v)
{
    int n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Reads a varint from [P, LIMIT).  Returns the byte after it, or NULL if it
** is truncated or longer than 5 bytes. */
static inline const char *rv_get_varint32(const char *p, const char *limit,
                                          uint32_t *v)
{
    uint32_t result = 0;
    for (int shift = 0; shift <= 28 && p < limit; shift += 7) {
        uint32_t byte = (unsigned char)*p++;
        result |= (byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *v = result;
            return p;
        }
    }
    return NULL;
}

/* 64-bit varints: the same encoding, at most 10 bytes. */
static inline int rv_put_varint64(char *dst, uint64_t v)
{
    unsigned char *p = (unsigned char *)dst;
    int n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

static inline const char *rv_get_varint64(const char *p, const char *limit,
                                          uint64_t *v)
{
    uint64_t result = 0;
    for (int shift = 0; shift <= 63 && p < limit; shift += 7) {
        uint64_t byte = (unsigned char)*p++;
        result |= (byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *v = result;
            return p;
        }
    }
    return NULL;
}

#endif /* RAVEL_CODING_H */
