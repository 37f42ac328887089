/*
** demo.c -- a tour of the ravel API on a demo database.
**
**   ravel-demo DIR      opens (creating) the database in DIR, writes, reads,
**                       iterates, takes a snapshot, and prints ravel.stats.
**
** Every call's result is checked: this is also how to handle errors.
*/
#include <ravel.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(int rc, const char *what)
{
    if (rc != RAVEL_OK) {
        fprintf(stderr, "ravel-demo: %s: %s (%s)\n", what, ravel_errstr(rc),
                ravel_errmsg());
        exit(1);
    }
}

static void print_entry(const char *label, const void *k, size_t kl,
                        const void *v, size_t vl)
{
    printf("%s %.*s = %.*s\n", label, (int)kl, (const char *)k, (int)vl,
           (const char *)v);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    ravel_options *opts;
    check(ravel_options_new(&opts), "options");
    check(ravel_options_parse(opts, "create_if_missing=true;"
                                    "write_buffer_size=4M"), "options");
    ravel_db *db;
    check(ravel_open(argv[1], opts, &db), "open");
    ravel_options_free(opts);
    printf("ravel %s, database %s\n", ravel_libversion(), argv[1]);

    /* Single writes; RAVEL_SYNC makes this one durable before returning. */
    check(ravel_put(db, RAVEL_SYNC, "fruit:apple", 11, "red", 3), "put");
    check(ravel_put(db, 0, "fruit:kiwi", 10, "green", 5), "put");

    /* A batch is atomic: readers see all of it or none of it. */
    ravel_batch *b;
    check(ravel_batch_new(&b), "batch");
    check(ravel_batch_put(b, "fruit:banana", 12, "yellow", 6), "batch put");
    check(ravel_batch_put(b, "fruit:plum", 10, "purple", 6), "batch put");
    check(ravel_batch_delete(b, "fruit:kiwi", 10), "batch delete");
    check(ravel_write(db, RAVEL_SYNC, b), "write");
    ravel_batch_free(b);

    /* A snapshot does not change, whatever is written after it. */
    ravel_snapshot *snap;
    check(ravel_snapshot_acquire(db, &snap), "snapshot");
    check(ravel_put(db, 0, "fruit:apple", 11, "green", 5), "put");

    void *val;
    size_t vlen;
    check(ravel_get(db, snap, "fruit:apple", 11, &val, &vlen), "get");
    print_entry("snapshot:", "fruit:apple", 11, val, vlen);
    ravel_free(val);
    check(ravel_get(db, NULL, "fruit:apple", 11, &val, &vlen), "get");
    print_entry("latest:  ", "fruit:apple", 11, val, vlen);
    ravel_free(val);
    int rc = ravel_get(db, NULL, "fruit:kiwi", 10, &val, &vlen);
    printf("latest:   fruit:kiwi -> %s\n", ravel_errstr(rc));

    /* Iterate in key order, forward then backward. */
    ravel_iter *it;
    check(ravel_iter_new(db, NULL, &it), "iterator");
    for (ravel_iter_seek(it, "fruit:", 6); ravel_iter_valid(it);
         ravel_iter_next(it)) {
        size_t kl, vl;
        const void *k = ravel_iter_key(it, &kl);
        const void *v = ravel_iter_value(it, &vl);
        print_entry("scan:    ", k, kl, v, vl);
    }
    check(ravel_iter_status(it), "iterate");
    check(ravel_iter_seek_to_last(it), "seek_to_last");
    if (ravel_iter_valid(it)) {
        size_t kl, vl;
        const void *k = ravel_iter_key(it, &kl);
        const void *v = ravel_iter_value(it, &vl);
        print_entry("last:    ", k, kl, v, vl);
    }
    ravel_iter_free(it);
    check(ravel_snapshot_release(db, snap), "release");

    char *stats;
    check(ravel_property(db, "ravel.stats", &stats), "property");
    printf("\n%s", stats);
    ravel_free(stats);
    check(ravel_close(db), "close");
    return 0;
}
