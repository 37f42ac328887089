/*
** complete_keys.c -- the keys tab completion offers after get, del, put,
** scan and count: the keys of the open database (or of the held snapshot,
** as get would read them) that start with what is typed, found by one
** iterator seek to that prefix, at most SHELL_COMPLETE_MAX_KEYS of them.
**
** What is typed is a partial argument in the shell's syntax (shell.h):
** a word, or a "C string", 'SQL string' or x'hex' not closed yet.  It is
** decoded to bytes as far as it goes (an escape cut short is left out),
** and each key is offered written as it would be typed: a plain word when
** it can be one and the user did not open a quote, else in the quoting the
** user opened ("C string" for a plain word), so that the completed line
** runs and names that key; when an escape was cut short ("\x0), only
** the keys whose written form starts with what is typed.  Independent of libedit (input.c offers them).
*/
#include <stdlib.h>
#include <string.h>

#include "shell.h"

/* The bytes TEXT (a partial argument) stands for, into B; its quoting:
** 0 a word, '"', '\'' or 'x'; *CUT set if an escape cut short was left
** out (the keys offered must then start with TEXT as written). */
static int complete_decode(const char *text, struct shell_buf *b, int *cut)
{
    *cut = 0;
    size_t len = strlen(text);
    int quote = text[0] == '"' || text[0] == '\'' ? text[0]
              : (text[0] == 'x' || text[0] == 'X') && text[1] == '\'' ? 'x'
              : 0;
    if (!quote)
        return shell_buf_add(b, text, len) ? -1 : 0;
    /* Close the quote and let the tokenizer decode it; drop the bytes of
    ** an escape or hex pair cut short until it accepts what is left. */
    for (size_t keep = len; keep >= (quote == 'x' ? 2u : 1u); keep--) {
        char *closed = malloc(keep + 2);
        if (!closed)
            return -1;
        memcpy(closed, text, keep);
        closed[keep] = quote == 'x' ? '\'' : (char)quote;
        closed[keep + 1] = '\0';
        struct shell_line l;
        char err[128];
        int rc = shell_tokenize(closed, keep + 1, &l, err, sizeof err);
        free(closed);
        if (rc == 0 && l.n == 1) {
            *cut = keep < len;
            rc = shell_buf_add(b, l.tok[0].p, l.tok[0].len);
            shell_line_free(&l);
            return rc ? -1 : quote;
        }
        if (rc == 0)
            shell_line_free(&l);
    }
    return quote;
}

/* Whether KEY can be typed as a plain word: printable ASCII, no blank,
** no quote or backslash, not empty, not read as a comment or as x'..'. */
static int complete_plain(const unsigned char *key, size_t len)
{
    if (len == 0 || key[0] == '#' || (len > 1 && key[0] == '-' &&
                                      key[1] == '-'))
        return 0;
    if (len > 1 && (key[0] == 'x' || key[0] == 'X') && key[1] == '\'')
        return 0;
    for (size_t i = 0; i < len; i++)
        if (key[i] <= ' ' || key[i] >= 0x7f || key[i] == '"' ||
            key[i] == '\'' || key[i] == '\\')
            return 0;
    return 1;
}

/* KEY written in QUOTE's syntax ('"', '\'' or 'x'), closed, into B. */
static int complete_quote(struct shell_buf *b, int quote,
                          const unsigned char *key, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    int rc = quote == 'x' ? shell_buf_add(b, "x'", 2)
                          : shell_buf_addc(b, quote);
    for (size_t i = 0; i < len && !rc; i++) {
        unsigned char c = key[i];
        char esc[5] = {0};
        if (quote == 'x') {
            esc[0] = hex[c >> 4];
            esc[1] = hex[c & 15];
        } else if (quote == '\'') {
            if (c < ' ' || c == 0x7f)
                return -1; /* not typeable literally: not offered */
            esc[0] = (char)c;
            if (c == '\'')
                esc[1] = '\'';
        } else if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
        } else if (c == '\n' || c == '\t') {
            esc[0] = '\\';
            esc[1] = c == '\n' ? 'n' : 't';
        } else if (c < ' ' || c >= 0x7f) {
            esc[0] = '\\';
            esc[1] = 'x';
            esc[2] = hex[c >> 4];
            esc[3] = hex[c & 15];
        } else {
            esc[0] = (char)c;
        }
        rc = shell_buf_add(b, esc, strlen(esc));
    }
    if (!rc)
        rc = shell_buf_addc(b, quote == 'x' ? '\'' : quote);
    return rc;
}

/* KEY as it would be typed after text quoted QUOTE, in a new string. */
static char *complete_written(int quote, const void *key, size_t len)
{
    struct shell_buf b = {0};
    const unsigned char *k = key;
    int rc;
    if (!quote && complete_plain(k, len))
        rc = shell_buf_add(&b, k, len);
    else
        rc = complete_quote(&b, quote ? quote : '"', k, len);
    if (!rc)
        rc = shell_buf_addc(&b, 0);
    if (rc) {
        shell_buf_free(&b);
        return NULL;
    }
    return b.p;
}

char **shell_complete_keys(struct shell *s, const char *text)
{
    struct shell_buf prefix = {0};
    ravel_iter *it = NULL;
    char **out = calloc(SHELL_COMPLETE_MAX_KEYS + 1, sizeof *out);
    int cut;
    int quote = complete_decode(text, &prefix, &cut);
    if (!out || quote < 0 || !s->db || shell_iter_new(s, &it))
        goto done;
    size_t n = 0;
    ravel_iter_seek(it, prefix.p ? prefix.p : "", prefix.len);
    for (; n < SHELL_COMPLETE_MAX_KEYS && ravel_iter_valid(it);
         ravel_iter_next(it)) {
        size_t klen;
        const void *key = ravel_iter_key(it, &klen);
        if (klen < prefix.len || memcmp(key, prefix.p, prefix.len) != 0)
            break;
        char *w = complete_written(quote, key, klen);
        if (w && cut && strncmp(w, text, strlen(text)) != 0) {
            free(w);
            w = NULL;
        }
        if (w)
            out[n++] = w;
    }
done:
    ravel_iter_free(it);
    shell_buf_free(&prefix);
    return out;
}
