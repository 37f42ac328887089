/*
** test_txn_conflict.c -- rv_db_key_changed_since, the check a
** transaction's get_for_update and commit validation rest on: a key has
** changed since a snapshot exactly when its newest entry now is not the
** one the snapshot sees, wherever the entries are (memtables, level 0,
** deeper levels after compaction), in every ordering mode the suite runs
** it in.
*/
#include "testutil.h"

#include "db/db.h"
#include "db/db_read.h"

#include <stdlib.h>
#include <string.h>

static int changed(ravel_db *db, ravel_snapshot *snap, const char *key)
{
    int c = -1;
    TU_OK(rv_db_key_changed_since(db, &snap->view, key, strlen(key), &c));
    return c;
}

static void test_changed_since(void **state)
{
    (void)state;
    char *dir = tu_path("txn-conflict");
    ravel_db *db = tu_open_ok(dir, NULL);
    tu_put(db, 0, "a", "1");
    tu_put(db, 0, "gone", "x");
    ravel_snapshot *s1 = NULL;
    TU_OK(ravel_snapshot_acquire(db, &s1));
    assert_int_equal(changed(db, s1, "a"), 0);
    assert_int_equal(changed(db, s1, "never"), 0);
    tu_put(db, 0, "a", "2");              /* overwritten */
    tu_put(db, 0, "b", "new");            /* absent then */
    TU_OK(ravel_delete(db, 0, "gone", 4)); /* deleted */
    TU_OK(ravel_delete(db, 0, "never", 5)); /* a delete of nothing */
    assert_int_equal(changed(db, s1, "a"), 1);
    assert_int_equal(changed(db, s1, "b"), 1);
    assert_int_equal(changed(db, s1, "gone"), 1);
    assert_int_equal(changed(db, s1, "never"), 1);
    assert_int_equal(changed(db, s1, "other"), 0);

    ravel_snapshot *s2 = NULL;
    TU_OK(ravel_snapshot_acquire(db, &s2));
    assert_int_equal(changed(db, s2, "a"), 0);
    assert_int_equal(changed(db, s2, "gone"), 0);

    /* the same answers once every entry is in table files, flushed and
    ** compacted down the levels: no memtable history is needed */
    TU_OK(ravel_flush(db, 1));
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    assert_int_equal(changed(db, s1, "a"), 1);
    assert_int_equal(changed(db, s1, "b"), 1);
    assert_int_equal(changed(db, s1, "gone"), 1);
    assert_int_equal(changed(db, s1, "other"), 0);
    assert_int_equal(changed(db, s2, "a"), 0);
    assert_int_equal(changed(db, s2, "gone"), 0);
    tu_put(db, 0, "a", "3");
    assert_int_equal(changed(db, s2, "a"), 1);

    TU_OK(ravel_snapshot_release(db, s2));
    TU_OK(ravel_snapshot_release(db, s1));
    TU_OK(ravel_close(db));
    free(dir);
}

int main(void)
{
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_changed_since),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
