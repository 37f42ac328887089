/*
** sst_dump.c -- the dump of one table file (sst_dump.h), shared by the
** shell's `.sst` and `ravel-sst`: what RocksDB's sst_dump shows, for
** ravel's format (lib/table/table_format.h, docs/formats.md).
**
** The file is opened twice over: through the table reader, which checks
** the footer, index, filter and properties blocks at open and iterates
** (or verifies) the data blocks; and as plain bytes, for what the reader
** keeps to itself -- the footer's block handles, and each data block's
** compression (the type byte of its trailer, shown as found: --entries
** and --verify check it with the rest of the block).
**
** The output, for a person first, "name: value" lines in sections:
**
**   table file: PATH                   file number, size, format version
**   footer: byte offset N              the index, filter, properties blocks
**   properties:                        the properties block, the
**                                      compression of the data blocks
**   index: N data blocks               per block: offset, size,
**                                      compression, last key
**   entries:                           (--entries) KEY SEQ TYPE VALUE
**
** Keys are shown as "KEY @ SEQ TYPE"; KEY and VALUE are escaped as the
** shell's .mode says (text: \xHH for bytes that are not printable; hex:
** x'..'); entries are tab-separated, as scan prints pairs, or JSON objects
** in .mode json.  --verify prints one line instead of the properties and
** the index: "PATH: ok: ..." or the damage.
*/
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sst_dump.h"

#include "base/dbformat.h"
#include "table/block.h"
#include "table/table.h"
#include "util/filename.h"
#include "base/options.h"

/* One table file being dumped. */
struct sst_file {
    const char *path;
    int fd;                 /* our own descriptor: footer and trailers */
    uint64_t number, size;
    const char *number_from; /* "the name", "--file-number", "the footer" */
    rv_table *t;
    uint32_t version;
    uint64_t footer_offset;
    struct rv_table_handle index_h, filter_h, props_h;
    uint64_t blocks_of_type[256]; /* data blocks by compression type */
    uint64_t data_blocks;
};

static int sst_error(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int sst_error(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* The message of the library's last failure (which names the file). */
static int sst_library_error(char *err, size_t errlen, int rc)
{
    const char *msg = ravel_errmsg();
    return sst_error(err, errlen, "%s", msg && msg[0] ? msg
                                                      : ravel_errstr(rc));
}

/* ------------------------------------------------------------- options */

const struct shell_sst_option_doc shell_sst_option_docs[] = {
    {"--entries", "", "list every entry: key, sequence, type, value"},
    {"--limit", "N", "list at most N entries (implies --entries)"},
    {"--verify", "", "read and check every block instead of printing\n"
                     "the properties and the index"},
    {"--file-number", "N", "the number the file was written as (by default\n"
                           "from its name NNNNNN.sst, else from its footer)"},
    {NULL, NULL, NULL},
};

int shell_sst_parse_option(const char *arg, const char *next,
                           struct shell_sst_options *o, char *err,
                           size_t errlen)
{
    if (arg[0] != '-' || arg[1] == '\0')
        return 0;
    if (strcmp(arg, "--entries") == 0) {
        o->entries = 1;
        return 1;
    }
    if (strcmp(arg, "--verify") == 0) {
        o->verify = 1;
        return 1;
    }
    int used = 1;
    const char *n = NULL, *name = NULL;
    static const char *const with_number[] = {"--limit", "--file-number"};
    for (int i = 0; i < 2 && !name; i++) {
        size_t len = strlen(with_number[i]);
        if (strcmp(arg, with_number[i]) == 0) {
            if (!next)
                return sst_error(err, errlen, "%s needs a number", arg);
            name = with_number[i];
            n = next;
            used = 2;
        } else if (strncmp(arg, with_number[i], len) == 0 && arg[len] == '=') {
            name = with_number[i];
            n = arg + len + 1;
        }
    }
    if (!name)
        return sst_error(err, errlen, "unknown option '%s' (--entries, "
                         "--limit N, --verify, --file-number N)", arg);
    char *end;
    errno = 0;
    unsigned long long v = strtoull(n, &end, 10);
    if (n[0] < '0' || n[0] > '9' || *end || errno)
        return sst_error(err, errlen, "%s needs a whole number, not '%s'",
                         name, n);
    if (strcmp(name, "--file-number") == 0) {
        o->file_number = v;
        o->has_file_number = 1;
        return used;
    }
    o->limit = v;
    o->has_limit = 1;
    o->entries = 1;
    return used;
}

/* ---------------------------------------------------------- opening */

static int sst_pread(struct sst_file *f, char *buf, size_t len, uint64_t off,
                     char *err, size_t errlen)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(f->fd, buf + done, len - done, (off_t)(off + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return sst_error(err, errlen, "read %s at byte offset %" PRIu64
                             ": %s", f->path, off + done, strerror(errno));
        if (n == 0)
            return sst_error(err, errlen, "%s: the file ends at byte offset "
                             "%" PRIu64, f->path, off + done);
        done += (size_t)n;
    }
    return 0;
}

/* The footer's handles and version (the reader checked them at open). */
static int sst_read_footer(struct sst_file *f, char *err, size_t errlen)
{
    char b[RV_TABLE_FOOTER_SIZE];
    f->footer_offset = f->size - RV_TABLE_FOOTER_SIZE;
    if (sst_pread(f, b, sizeof b, f->footer_offset, err, errlen))
        return -1;
    struct rv_table_handle *h[3] = {&f->index_h, &f->filter_h, &f->props_h};
    for (int i = 0; i < 3; i++) {
        h[i]->offset = rv_get_fixed64(b + 16 * i);
        h[i]->size = rv_get_fixed64(b + 16 * i + 8);
    }
    f->version = rv_get_fixed32(b + 56);
    return 0;
}

/* The file number the footer of F records, if the footer's own checksum
** (seeded by that number) verifies: 1 and *NUMBER set, else 0. */
static int sst_footer_number(struct sst_file *f, uint64_t *number)
{
    char b[RV_TABLE_FOOTER_SIZE], ignored[200];
    if (f->size < RV_TABLE_FOOTER_SIZE ||
        sst_pread(f, b, sizeof b, f->size - RV_TABLE_FOOTER_SIZE, ignored,
                  sizeof ignored))
        return 0;
    uint64_t written_as = rv_get_fixed64(b + 48);
    if (rv_get_fixed64(b + 72) != RV_TABLE_MAGIC ||
        rv_get_fixed64(b + 64) != XXH3_64bits_withSeed(b, 64, written_as))
        return 0;
    *number = written_as;
    return 1;
}

/* After an open that failed: if the footer verifies under the file number
** it records itself, the file was written under another name, and its
** checksums cannot verify under this one.  Appends that to ERR. */
static void sst_renamed_hint(struct sst_file *f, char *err, size_t errlen)
{
    uint64_t written_as;
    if (!sst_footer_number(f, &written_as) || written_as == f->number)
        return;
    size_t n = strlen(err);
    snprintf(err + n, errlen - n, " (the file was written as %06" PRIu64
             ".sst: the number in its name seeds its checksums, so it must "
             "keep that name, or be given with --file-number %" PRIu64 ")",
             written_as, written_as);
}

/* The number that seeds F's checksums: --file-number N, else the number in
** a name NNNNNN.sst, else the one the footer records (a copy under
** another name).  -1 with a message in ERR if none can be told. */
static int sst_file_number(struct sst_file *f,
                           const struct shell_sst_options *o, char *err,
                           size_t errlen)
{
    const char *base = strrchr(f->path, '/');
    base = base ? base + 1 : f->path;
    if (o->has_file_number) {
        f->number = o->file_number;
        f->number_from = "--file-number";
    } else if (rv_parse_table_file_name(base, &f->number)) {
        f->number_from = "the name";
        uint64_t written_as;
        if (sst_footer_number(f, &written_as) && written_as == 0 &&
            f->number != 0) {
            /* an external table an ingest linked in as it is: its footer
            ** says 0, which seeds its checksums (table/sst_writer.h) */
            f->number = 0;
            f->number_from = "the footer: an external table placed by an "
                             "ingest";
        }
    } else if (sst_footer_number(f, &f->number)) {
        f->number_from = "the footer";
    } else {
        return sst_error(err, errlen, "%s: cannot tell the file number: "
                         "the name is not NNNNNN.sst and the file ends in no "
                         "table footer that verifies (not a table file, or "
                         "damaged: --file-number N gives the number, which "
                         "seeds the checksums)", f->path);
    }
    return 0;
}

static int sst_open(struct sst_file *f, const char *path,
                    const struct shell_sst_options *o, char *err,
                    size_t errlen)
{
    f->path = path;
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0)
        return sst_error(err, errlen, "cannot open %s: %s", path,
                         strerror(errno));
    struct stat st;
    if (fstat(f->fd, &st) != 0)
        return sst_error(err, errlen, "cannot stat %s: %s", path,
                         strerror(errno));
    if (!S_ISREG(st.st_mode))
        return sst_error(err, errlen, "%s: not a regular file", path);
    f->size = (uint64_t)st.st_size;
    if (sst_file_number(f, o, err, errlen))
        return -1;
    int tfd = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
    if (tfd < 0)
        return sst_error(err, errlen, "cannot open %s: %s", path,
                         strerror(errno));
    struct rv_table_read_options ro = {.verify_checksums = 1,
                                       .block_cache = NULL};
    int rc = rv_table_open(tfd, path, f->number, f->size, &ro, &f->t);
    if (rc) {
        sst_library_error(err, errlen, rc);
        sst_renamed_hint(f, err, errlen);
        return -1;
    }
    return sst_read_footer(f, err, errlen);
}

static void sst_close(struct sst_file *f)
{
    rv_table_close(f->t);
    if (f->fd >= 0)
        close(f->fd);
}

/* ---------------------------------------------------------- printing */

static void sst_put_bytes(FILE *out, enum shell_mode mode, const char *p,
                          size_t n)
{
    if (mode == SHELL_MODE_HEX)
        shell_put_hex(out, p, n);
    else if (mode == SHELL_MODE_QUOTE)
        shell_put_quoted(out, p, n);
    else
        shell_put_text(out, p, n);
}

static const char *sst_type_name(uint64_t tag)
{
    switch (rv_tag_type(tag)) {
    case RV_TYPE_PUT: return "put";
    case RV_TYPE_DELETE: return "delete";
    default: return NULL;
    }
}

static void sst_put_type(FILE *out, uint64_t tag)
{
    const char *name = sst_type_name(tag);
    if (name)
        fputs(name, out);
    else
        fprintf(out, "type %d", rv_tag_type(tag));
}

/* "KEY @ SEQ TYPE" for the internal key IKEY (LEN bytes). */
static void sst_put_ikey(FILE *out, enum shell_mode mode, const char *ikey,
                         size_t len)
{
    if (len < RV_TAG_SIZE) {
        fprintf(out, "(%zu bytes: too short for a key)", len);
        return;
    }
    uint64_t tag = rv_get_fixed64(ikey + len - RV_TAG_SIZE);
    sst_put_bytes(out, mode, ikey, len - RV_TAG_SIZE);
    fprintf(out, " @ %" PRIu64 " ", rv_tag_sequence(tag));
    sst_put_type(out, tag);
}

static void sst_put_compression(FILE *out, unsigned type)
{
    const char *name = rv_compression_name((enum rv_compression)type);
    if (strcmp(name, "unknown") == 0)
        fprintf(out, "unknown type %u", type);
    else
        fputs(name, out);
}

static void sst_print_header(FILE *out, const struct sst_file *f)
{
    fprintf(out, "table file: %s\n", f->path);
    fprintf(out, "  file number: %" PRIu64 " (from %s)\n", f->number,
            f->number_from);
    fprintf(out, "  file size: %" PRIu64 " bytes\n", f->size);
    fprintf(out, "  format version: %" PRIu32 "\n", f->version);
}

static void sst_print_handle(FILE *out, const char *what,
                             const struct rv_table_handle *h)
{
    fprintf(out, "  %s: offset %" PRIu64 ", %" PRIu64 " bytes\n", what,
            h->offset, h->size);
}

static void sst_print_footer(FILE *out, const struct sst_file *f)
{
    fprintf(out, "footer: byte offset %" PRIu64 ", %d bytes\n",
            f->footer_offset, RV_TABLE_FOOTER_SIZE);
    sst_print_handle(out, "index block", &f->index_h);
    if (f->filter_h.size)
        sst_print_handle(out, "filter block", &f->filter_h);
    else
        fputs("  filter block: none\n", out);
    sst_print_handle(out, "properties block", &f->props_h);
}

static void sst_print_time(FILE *out, uint64_t secs)
{
    time_t t = (time_t)secs;
    struct tm tm;
    char when[64];
    if (gmtime_r(&t, &tm) &&
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm))
        fprintf(out, "%s (%" PRIu64 ")\n", when, secs);
    else
        fprintf(out, "%" PRIu64 "\n", secs);
}

/* "none (3 data blocks)", or one such part per compression used. */
static void sst_print_compressions(FILE *out, const struct sst_file *f)
{
    fputs("  compression: ", out);
    int parts = 0;
    for (unsigned type = 0; type < 256; type++) {
        uint64_t n = f->blocks_of_type[type];
        if (!n)
            continue;
        fputs(parts++ ? ", " : "", out);
        sst_put_compression(out, type);
        fprintf(out, " (%" PRIu64 " data block%s)", n, n == 1 ? "" : "s");
    }
    fputs(parts ? "\n" : "no data blocks\n", out);
}

static void sst_print_props(FILE *out, const struct sst_file *f,
                            enum shell_mode mode)
{
    const struct rv_table_props *p = rv_table_props(f->t);
    fputs("properties:\n", out);
    fprintf(out, "  entries: %" PRIu64 "\n", p->entries);
    fprintf(out, "  deletions: %" PRIu64 "\n", p->deletions);
    fprintf(out, "  data blocks: %" PRIu64 "\n", p->data_blocks);
    fprintf(out, "  data size: %" PRIu64 " bytes\n", p->data_size);
    /* The properties block is written before the index, so it does not
    ** record the index's size: the footer's handle does. */
    fprintf(out, "  index size: %" PRIu64 " bytes\n", f->index_h.size);
    fprintf(out, "  filter size: %" PRIu64 " bytes\n", p->filter_size);
    fprintf(out, "  bloom bits per key: %" PRIu64 "\n", p->bloom_bits_per_key);
    fprintf(out, "  sequence range: %" PRIu64 " .. %" PRIu64 "\n",
            p->smallest_seq, p->largest_seq);
    size_t len;
    const char *k = rv_table_smallest_key(f->t, &len);
    fputs("  smallest key: ", out);
    sst_put_ikey(out, mode, k, len);
    k = rv_table_largest_key(f->t, &len);
    fputs("\n  largest key: ", out);
    sst_put_ikey(out, mode, k, len);
    fputs("\n  creation time: ", out);
    sst_print_time(out, p->creation_time);
    /* The writing handle's random id (ravel.session_id); backups name
    ** shared files by it.  Files written before it existed lack it. */
    if (p->session_id)
        fprintf(out, "  session id: %016" PRIx64 "\n", p->session_id);
    else
        fputs("  session id: none (written before ravel.session_id)\n", out);
    sst_print_compressions(out, f);
}

/* ------------------------------------------------------------- index */

typedef void (*sst_block_fn)(FILE *out, enum shell_mode mode, uint64_t n,
                             const struct rv_block_cursor *c,
                             const struct rv_table_handle *h, unsigned type);

static void sst_print_block(FILE *out, enum shell_mode mode, uint64_t n,
                            const struct rv_block_cursor *c,
                            const struct rv_table_handle *h, unsigned type)
{
    fprintf(out, "  block %" PRIu64 ": offset %" PRIu64 ", %" PRIu64
            " bytes, ", n, h->offset, h->size);
    sst_put_compression(out, type);
    fputs(", last key ", out);
    sst_put_ikey(out, mode, c->key, c->key_len);
    fputc('\n', out);
}

/* The compression type of data block N, at H: its trailer's first byte. */
static int sst_block_type(struct sst_file *f, uint64_t n,
                          const struct rv_table_handle *h, unsigned char *type,
                          char *err, size_t errlen)
{
    if (h->offset > f->size || f->size - h->offset < RV_TABLE_BLOCK_TRAILER ||
        h->size > f->size - h->offset - RV_TABLE_BLOCK_TRAILER)
        return sst_error(err, errlen, "%s: index entry %" PRIu64 " names a "
                         "block (byte offset %" PRIu64 ", %" PRIu64 " bytes) "
                         "past the end of the %" PRIu64 "-byte file", f->path,
                         n, h->offset, h->size, f->size);
    return sst_pread(f, (char *)type, 1, h->offset + h->size, err, errlen);
}

/* Walks the index block, calling FN (if any) for each data block with its
** handle and compression type; counts the blocks by type in F. */
static int sst_walk_index(struct sst_file *f, FILE *out, enum shell_mode mode,
                          sst_block_fn fn, char *err, size_t errlen)
{
    size_t len;
    struct rv_table_handle ih;
    const char *index = rv_table_index(f->t, &len, &ih);
    struct rv_block_cursor c;
    int failed = 0;
    memset(f->blocks_of_type, 0, sizeof f->blocks_of_type);
    f->data_blocks = 0;
    /* A failed init leaves the cursor invalid, with its status set. */
    rv_block_cursor_init(&c, index, len, rv_ikey_compare, RV_TAG_SIZE);
    rv_block_cursor_seek_to_first(&c);
    for (; !failed && rv_block_cursor_valid(&c); rv_block_cursor_next(&c)) {
        struct rv_table_handle h;
        unsigned char type;
        int rc = rv_table_index_handle(f->t, c.val, c.val_len, &h);
        if (rc)
            failed = sst_library_error(err, errlen, rc);
        else
            failed = sst_block_type(f, f->data_blocks, &h, &type, err,
                                    errlen);
        if (failed)
            break;
        if (fn)
            fn(out, mode, f->data_blocks, &c, &h, type);
        f->blocks_of_type[type]++;
        f->data_blocks++;
    }
    if (!failed && c.status)
        failed = sst_library_error(err, errlen,
                                   rv_table_block_error(f->t, "index", &ih,
                                                        c.status));
    rv_block_cursor_destroy(&c);
    return failed;
}

/* ----------------------------------------------------------- entries */

static void sst_print_entry_json(FILE *out, const char *k, size_t kl,
                                 uint64_t tag, const char *v, size_t vl)
{
    fputc('{', out);
    shell_put_json_member(out, "key", k, kl);
    fprintf(out, ",\"sequence\":%" PRIu64 ",\"type\":", rv_tag_sequence(tag));
    const char *name = sst_type_name(tag);
    if (name)
        fprintf(out, "\"%s\"", name);
    else
        fprintf(out, "%d", rv_tag_type(tag));
    if (rv_tag_type(tag) == RV_TYPE_PUT) {
        fputc(',', out);
        shell_put_json_member(out, "value", v, vl);
    }
    fputs("}\n", out);
}

/* One entry (K is its internal key, KL bytes): KEY SEQ TYPE VALUE. */
static void sst_print_entry(FILE *out, enum shell_mode mode, const char *k,
                            size_t kl, const char *v, size_t vl)
{
    uint64_t tag = rv_get_fixed64(k + kl - RV_TAG_SIZE);
    kl -= RV_TAG_SIZE;
    if (mode == SHELL_MODE_JSON) {
        sst_print_entry_json(out, k, kl, tag, v, vl);
        return;
    }
    fputs("  ", out);
    sst_put_bytes(out, mode, k, kl);
    fprintf(out, "\t%" PRIu64 "\t", rv_tag_sequence(tag));
    sst_put_type(out, tag);
    fputc('\t', out);
    if (rv_tag_type(tag) == RV_TYPE_PUT || vl)
        sst_put_bytes(out, mode, v, vl);
    fputc('\n', out);
}

static int sst_print_entries(struct sst_file *f, FILE *out,
                             const struct shell_sst_options *o, char *err,
                             size_t errlen)
{
    struct rv_iter *it = rv_table_iter_new(f->t, rv_table_read_flags(f->t));
    if (!it)
        return sst_error(err, errlen, "out of memory reading %s", f->path);
    fputs("entries:\n", out);
    uint64_t n = 0;
    int stopped = 0;
    for (it->ops->seek_to_first(it); it->ops->valid(it); it->ops->next(it)) {
        if (o->has_limit && n >= o->limit) {
            stopped = 1;
            break;
        }
        if (shell_interrupted || ferror(out))
            break;
        size_t kl, vl;
        const char *k = it->ops->key(it, &kl);
        const char *v = it->ops->value(it, &vl);
        sst_print_entry(out, o->mode, k, kl, v, vl);
        n++;
    }
    int rc = it->ops->status(it);
    it->ops->destroy(it);
    if (rc)
        return sst_library_error(err, errlen, rc);
    if (shell_interrupted)
        return sst_error(err, errlen, "%s: interrupted after %" PRIu64
                         " entries", f->path, n);
    uint64_t all = rv_table_props(f->t)->entries;
    if (stopped)
        fprintf(out, "  (--limit %" PRIu64 " reached; the file holds %"
                PRIu64 " %s)\n", o->limit, all, all == 1 ? "entry" : "entries");
    return 0;
}

/* -------------------------------------------------------------- dump */

static int sst_verify(struct sst_file *f, FILE *out, char *err, size_t errlen)
{
    int rc = rv_table_verify(f->t);
    if (rc)
        return sst_library_error(err, errlen, rc);
    uint64_t entries = rv_table_props(f->t)->entries;
    fprintf(out, "%s: ok: %" PRIu64 " entr%s in %" PRIu64 " data block%s "
            "checked\n", f->path, entries, entries == 1 ? "y" : "ies",
            f->data_blocks, f->data_blocks == 1 ? "" : "s");
    return 0;
}

/* Everything but the entries: the file, the footer, the properties, the
** index (a second walk of it, now printing each block). */
static int sst_print_summary(struct sst_file *f, FILE *out,
                             enum shell_mode mode, char *err, size_t errlen)
{
    sst_print_header(out, f);
    sst_print_footer(out, f);
    sst_print_props(out, f, mode);
    fprintf(out, "index: %" PRIu64 " data block%s\n", f->data_blocks,
            f->data_blocks == 1 ? "" : "s");
    return sst_walk_index(f, out, mode, sst_print_block, err, errlen);
}

int shell_sst_dump(FILE *out, const char *path,
                   const struct shell_sst_options *o, char *err,
                   size_t errlen)
{
    struct sst_file f = {.fd = -1};
    int rc = sst_open(&f, path, o, err, errlen);
    /* A first walk of the index counts the data blocks by compression. */
    if (!rc)
        rc = sst_walk_index(&f, out, o->mode, NULL, err, errlen);
    if (!rc && !o->verify)
        rc = sst_print_summary(&f, out, o->mode, err, errlen);
    else if (!rc && o->entries)
        sst_print_header(out, &f);
    if (!rc && o->entries)
        rc = sst_print_entries(&f, out, o, err, errlen);
    if (!rc && o->verify)
        rc = sst_verify(&f, out, err, errlen);
    sst_close(&f);
    return rc;
}
