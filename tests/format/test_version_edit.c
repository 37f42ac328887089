/*
** test_version_edit.c -- manifest records (lib/db/version_edit.c): every
** edit decodes to what was encoded; every truncation, an unknown tag, a
** level out of range or a key range turned around is RAVEL_CORRUPT naming
** the byte offset.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dbformat.h"
#include "db/version_edit.h"
#include "util/coding.h"

static void ikey(char *buf, size_t *len, const char *user, uint64_t seq)
{
    size_t n = strlen(user);
    memcpy(buf, user, n);
    rv_put_fixed64(buf + n, rv_pack_tag(seq, RV_TYPE_PUT));
    *len = n + 8;
}

static void sample_edit(struct rv_version_edit *e)
{
    rv_version_edit_init(e);
    e->has_log_number = e->has_next_file_number = e->has_last_sequence = 1;
    e->log_number = 12;
    e->next_file_number = 1ull << 40;
    e->last_sequence = RV_MAX_SEQUENCE;
    e->closed_segment = 77;
    char s[64], l[64];
    struct rv_file_meta f = {.level = 0, .number = 17, .size = 123456,
                             .smallest = s, .largest = l, .smallest_seq = 5,
                             .largest_seq = 900, .entries = 4000};
    ikey(s, &f.smallest_len, "apple", 900);
    ikey(l, &f.largest_len, "zebra", 5);
    assert_int_equal(rv_version_edit_add_file(e, &f), RAVEL_OK);
    f.level = 6;
    f.number = 18;
    ikey(l, &f.largest_len, "apple", 5); /* same user key, older */
    assert_int_equal(rv_version_edit_add_file(e, &f), RAVEL_OK);
    assert_int_equal(rv_version_edit_delete_file(e, 0, 3), RAVEL_OK);
    assert_int_equal(rv_version_edit_delete_file(e, 2, 1ull << 50),
                     RAVEL_OK);
}

static void expect_same(const struct rv_version_edit *a,
                        const struct rv_version_edit *b)
{
    assert_int_equal(a->has_log_number, b->has_log_number);
    assert_int_equal(a->log_number, b->log_number);
    assert_int_equal(a->next_file_number, b->next_file_number);
    assert_int_equal(a->last_sequence, b->last_sequence);
    assert_int_equal(a->closed_segment, b->closed_segment);
    assert_int_equal(a->n_added, b->n_added);
    assert_int_equal(a->n_deleted, b->n_deleted);
    for (int i = 0; i < a->n_added; i++) {
        const struct rv_file_meta *x = &a->added[i], *y = &b->added[i];
        assert_int_equal(x->level, y->level);
        assert_int_equal(x->number, y->number);
        assert_int_equal(x->size, y->size);
        assert_int_equal(x->smallest_len, y->smallest_len);
        assert_memory_equal(x->smallest, y->smallest, x->smallest_len);
        assert_int_equal(x->largest_len, y->largest_len);
        assert_memory_equal(x->largest, y->largest, x->largest_len);
        assert_int_equal(x->smallest_seq, y->smallest_seq);
        assert_int_equal(x->largest_seq, y->largest_seq);
        assert_int_equal(x->entries, y->entries);
    }
    for (int i = 0; i < a->n_deleted; i++) {
        assert_int_equal(a->deleted[i].level, b->deleted[i].level);
        assert_int_equal(a->deleted[i].number, b->deleted[i].number);
    }
}

static void test_round_trip(void **state)
{
    (void)state;
    struct rv_version_edit e, d;
    sample_edit(&e);
    char *buf;
    size_t len;
    assert_int_equal(rv_version_edit_encode(&e, &buf, &len), RAVEL_OK);
    rv_version_edit_init(&d);
    assert_int_equal(rv_version_edit_decode(&d, buf, len), RAVEL_OK);
    expect_same(&e, &d);
    rv_version_edit_clear(&d);
    free(buf);

    /* An empty edit is empty bytes, and decodes as empty. */
    rv_version_edit_clear(&e);
    assert_int_equal(rv_version_edit_encode(&e, &buf, &len), RAVEL_OK);
    assert_int_equal(len, 0);
    assert_int_equal(rv_version_edit_decode(&d, buf, len), RAVEL_OK);
    assert_int_equal(d.n_added + d.n_deleted + d.has_log_number, 0);
    free(buf);
}

static void test_every_truncation_refused(void **state)
{
    (void)state;
    struct rv_version_edit e, d;
    sample_edit(&e);
    char *buf;
    size_t len;
    assert_int_equal(rv_version_edit_encode(&e, &buf, &len), RAVEL_OK);
    int refused = 0;
    for (size_t cut = 1; cut < len; cut++) {
        rv_version_edit_init(&d);
        int rc = rv_version_edit_decode(&d, buf, cut);
        /* a cut between fields decodes as a shorter, valid edit */
        if (rc == RAVEL_OK) {
            rv_version_edit_clear(&d);
            continue;
        }
        assert_int_equal(rc, RAVEL_CORRUPT);
        assert_non_null(strstr(ravel_errmsg(), "byte offset"));
        assert_int_equal(d.n_added, 0); /* nothing half-decoded is kept */
        refused++;
    }
    assert_true(refused > (int)len / 2);
    free(buf);
    rv_version_edit_clear(&e);
}

static void expect_corrupt(const char *data, size_t len, const char *what)
{
    struct rv_version_edit d;
    rv_version_edit_init(&d);
    assert_int_equal(rv_version_edit_decode(&d, data, len), RAVEL_CORRUPT);
    if (!strstr(ravel_errmsg(), what))
        fail_msg("message '%s' lacks '%s'", ravel_errmsg(), what);
}

static void test_malformed_fields(void **state)
{
    (void)state;
    expect_corrupt("\x09\x01", 2, "unknown tag");
    expect_corrupt("\x06\x00", 2, "closed segment 0");
    expect_corrupt("\x00", 1, "unknown tag");
    expect_corrupt("\x05\x07\x01", 3, "level out of range");
    char buf[64], *p = buf;
    p += rv_put_varint32(p, 3);
    p += rv_put_varint64(p, RV_MAX_SEQUENCE + 1);
    expect_corrupt(buf, (size_t)(p - buf), "last sequence out of range");
    /* a file whose smallest key sorts after its largest */
    struct rv_version_edit e;
    rv_version_edit_init(&e);
    char s[32], l[32];
    struct rv_file_meta f = {.level = 1, .number = 2, .smallest = s,
                             .largest = l};
    ikey(s, &f.smallest_len, "b", 1);
    ikey(l, &f.largest_len, "a", 1);
    assert_int_equal(rv_version_edit_add_file(&e, &f), RAVEL_OK);
    char *enc;
    size_t len;
    assert_int_equal(rv_version_edit_encode(&e, &enc, &len), RAVEL_OK);
    expect_corrupt(enc, len, "smallest key sorts after its largest");
    free(enc);
    rv_version_edit_clear(&e);
    f.level = 7;
    assert_int_equal(rv_version_edit_add_file(&e, &f), RAVEL_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_every_truncation_refused),
        cmocka_unit_test(test_malformed_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
