/*
** test_repair.c -- ravel_repair on real databases damaged in every way the
** corruption tests know: what it keeps is data that was written, the
** newest surviving version wins, nothing deleted comes back unless the
** report names the range it was lost in, the originals are kept byte for
** byte, an open database is refused, and a second repair changes nothing.
**
** Each database is written in phases with a model of what every key must
** hold: puts of all keys, flushed; overwrites and deletes, flushed and
** compacted to the last level (tombstones dropped there); more overwrites
** and deletes flushed to level 0 (tombstones above older values); and
** last, single-key writes left in the WAL.  Every value names its key and
** its version, so a value from the wrong key or a version never written
** is caught.  After the damage and the repair, the database must open,
** pass ravel_verify, and each key hold the model's version -- or, where
** the repair reported a loss, a version that was written to that key and
** lies in a reported lost range (a table's lost key range, or a WAL write
** counted lost).
*/
#include "testutil.h"
#include "powerloss.h"

/* the library's internals (the test library), to write table files whose
** entries are at sequence 0, as an ingested file's may be */
#include "base/dbformat.h"
#include "table/table_builder.h"
#include "util/coding.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define OPTS "write_buffer_size=64K;target_file_size_base=64K"
#define KEYS 3000
#define WAL_EVERY 13

static int db_counter;

/* The model: the versions written to each key (bit n: version n), the
** version each key must hold (0: none), and the one before the WAL's. */
struct model {
    unsigned written[KEYS];
    int final[KEYS];
    int before_wal[KEYS];
};

static void key_of(char *b, size_t n, int i)
{
    snprintf(b, n, "key%06d", i);
}

static void val_of(char *b, size_t n, int i, int version)
{
    snprintf(b, n, "v%d-%d-%040d", version, i, i);
}

static void put_v(ravel_db *db, struct model *m, int i, int version)
{
    char k[32], v[128];
    key_of(k, sizeof k, i);
    val_of(v, sizeof v, i, version);
    TU_OK(ravel_put(db, 0, k, strlen(k), v, strlen(v)));
    m->written[i] |= 1u << version;
    m->final[i] = version;
}

static void del(ravel_db *db, struct model *m, int i)
{
    char k[32];
    key_of(k, sizeof k, i);
    TU_OK(ravel_delete(db, 0, k, strlen(k)));
    m->final[i] = 0;
}

/* Builds a database in the four phases of the top of this file, with
** the options OPTS and EXTRA. */
static char *build_db_with(struct model *m, const char *extra)
{
    memset(m, 0, sizeof *m);
    char *dir = tu_path("repair-%d", db_counter++);
    char opts[256];
    snprintf(opts, sizeof opts, "%s%s%s", OPTS, extra ? ";" : "",
             extra ? extra : "");
    ravel_db *db = tu_open_ok(dir, opts);
    for (int i = 0; i < KEYS; i++)
        put_v(db, m, i, 1);
    TU_OK(ravel_flush(db, 0));
    for (int i = 0; i < KEYS; i++) {
        if (i % 3 == 0)
            put_v(db, m, i, 2);
        if (i % 5 == 0)
            del(db, m, i);
    }
    TU_OK(ravel_flush(db, 0));
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    for (int i = 0; i < KEYS; i++) {
        if (i % 7 == 0)
            put_v(db, m, i, 3);
        if (i % 11 == 0)
            del(db, m, i);
    }
    TU_OK(ravel_flush(db, 0));
    tu_wait_background_idle(db);
    memcpy(m->before_wal, m->final, sizeof m->final);
    for (int i = 0; i < KEYS; i += WAL_EVERY) /* one record each */
        put_v(db, m, i, 4);
    TU_OK(ravel_close(db));
    return dir;
}

static char *build_db(struct model *m)
{
    return build_db_with(m, NULL);
}

/* ------------------------------------------------------------- files */

static char *path_in(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* The name of the last (or first) file of DIR starting with PREFIX and
** ending with SUFFIX, sorted by name. */
static void find_file(const char *dir, const char *prefix, const char *suffix,
                      int last, char *buf, size_t n)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    buf[0] = '\0';
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name), sl = strlen(suffix);
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 || len < sl ||
            strcmp(e->d_name + len - sl, suffix) != 0)
            continue;
        int c = buf[0] ? strcmp(e->d_name, buf) : 0;
        if (!buf[0] || (last ? c > 0 : c < 0))
            snprintf(buf, n, "%.63s", e->d_name);
    }
    closedir(d);
    assert_true(buf[0] != '\0');
}

static size_t size_of(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (size_t)st.st_size;
}

static void flip_at(const char *path, size_t off)
{
    char *data;
    size_t len;
    assert_int_equal(tu_file_read(path, &data, &len), 0);
    assert_true(off < len);
    data[off] ^= 0x5a;
    assert_int_equal(tu_file_write(path, data, len), 0);
    free(data);
}

/* The largest table file of DIR (the most data blocks). */
static char *largest_table(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    char best[64] = "";
    size_t best_size = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 4, ".sst") != 0)
            continue;
        char *p = path_in(dir, e->d_name);
        size_t s = size_of(p);
        free(p);
        if (s > best_size) {
            best_size = s;
            snprintf(best, sizeof best, "%.63s", e->d_name);
        }
    }
    closedir(d);
    assert_true(best[0] != '\0');
    return path_in(dir, best);
}

/* A copy of every regular file of DIR (name and bytes) that repair moves
** aside: not LOCK, the info LOGs, IDENTITY, or wal-probe.cache (the WAL
** probe's result, which repair leaves where it is). */
struct snapshot {
    char *name[256];
    char *data[256];
    size_t len[256];
    int n;
};

static void snapshot_take(const char *dir, struct snapshot *s)
{
    memset(s, 0, sizeof *s);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *p = path_in(dir, e->d_name);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode) &&
            strcmp(e->d_name, "LOCK") != 0 && strcmp(e->d_name, "LOG") &&
            strcmp(e->d_name, "LOG.old") && strcmp(e->d_name, "IDENTITY") &&
            strcmp(e->d_name, "wal-probe.cache")) {
            assert_true(s->n < 256);
            s->name[s->n] = strdup(e->d_name);
            assert_int_equal(tu_file_read(p, &s->data[s->n], &s->len[s->n]),
                             0);
            s->n++;
        }
        free(p);
    }
    closedir(d);
}

static void snapshot_free(struct snapshot *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->name[i]);
        free(s->data[i]);
    }
}

/* Every file of S is in LOST, byte for byte. */
static void snapshot_check(const struct snapshot *s, const char *lost)
{
    for (int i = 0; i < s->n; i++) {
        char *p = path_in(lost, s->name[i]), *data;
        size_t len;
        if (tu_file_read(p, &data, &len) != 0)
            fail_msg("%s: the original %s was not kept", lost, s->name[i]);
        if (len != s->len[i] || memcmp(data, s->data[i], len) != 0)
            fail_msg("%s: the original %s was changed", lost, s->name[i]);
        free(data);
        free(p);
    }
}

/* How many lost-repair-* directories DIR holds; the last into LOST. */
static int lost_dirs(const char *dir, char *lost, size_t n)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int count = 0;
    char best[128] = "";
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "lost-repair-", 12) == 0) {
            count++;
            if (strcmp(e->d_name, best) > 0)
                snprintf(best, sizeof best, "%.127s", e->d_name);
        }
    closedir(d);
    if (lost)
        snprintf(lost, n, "%s/%s", dir, best);
    return count;
}

/* ---------------------------------------------------------- the report */

/* The key ranges the report says were lost (as key indexes). */
struct losses {
    int lo[64], hi[64];
    int n;
    int lost_lines, warn_lines, wal_lost;
    char *text;
};

static int parse_key(const char *p, int dflt)
{
    int i;
    return sscanf(p, "\"key%d\"", &i) == 1 ? i : dflt;
}

static void on_line(void *ctx, int kind, const char *line)
{
    struct losses *l = ctx;
    if (kind == RAVEL_REPAIR_WARN)
        l->warn_lines++;
    if (kind != RAVEL_REPAIR_LOST)
        return;
    l->lost_lines++;
    if (strncmp(line, "WAL:", 4) == 0) {
        l->wal_lost = 1;
        return;
    }
    const char *from = strstr(line, "keys from ");
    if (!from || l->n == 64)
        return;
    from += strlen("keys from ");
    const char *to = strstr(from, " to ");
    l->lo[l->n] = parse_key(from, 0);
    l->hi[l->n] = to ? parse_key(to + 4, KEYS - 1) : KEYS - 1;
    l->n++;
}

static int in_lost_range(const struct losses *l, int i)
{
    for (int r = 0; r < l->n; r++)
        if (i >= l->lo[r] && i <= l->hi[r])
            return 1;
    return 0;
}

/* Repairs DIR, checking the originals were kept; the report in *L. */
static void repair_ok(const char *dir, struct losses *l)
{
    struct snapshot s;
    snapshot_take(dir, &s);
    memset(l, 0, sizeof *l);
    int before = lost_dirs(dir, NULL, 0);
    TU_OK(ravel_repair(dir, NULL, on_line, l, &l->text));
    assert_non_null(l->text);
    printf("# the report:\n%s", l->text);
    assert_non_null(strstr(l->text, "summary:"));
    char lost[4096];
    assert_int_equal(lost_dirs(dir, lost, sizeof lost), before + 1);
    snapshot_check(&s, lost);
    snapshot_free(&s);
}

/* ------------------------------------------------------------ checking */

/* Opens DIR, verifies it, and checks every key against M: each value was
** written to its key; a key not at the model's version must be explained
** by L (a lost range, or a lost WAL write: then it holds the version
** before the WAL).  EXACT: no key may differ.  Returns the keys that
** differ. */
static int check_db(const char *dir, const struct model *m,
                    const struct losses *l, int exact)
{
    ravel_db *db = tu_open_ok(dir, OPTS);
    TU_OK(ravel_verify(db));
    int *got = calloc(KEYS, sizeof *got);
    assert_non_null(got);
    ravel_iter *it;
    TU_OK(ravel_iter_new(db, NULL, &it));
    int rc = ravel_iter_seek_to_first(it);
    for (; rc == RAVEL_OK && ravel_iter_valid(it); rc = ravel_iter_next(it)) {
        size_t kl, vl;
        const char *k = ravel_iter_key(it, &kl);
        const char *v = ravel_iter_value(it, &vl);
        char kb[64], vb[128];
        snprintf(kb, sizeof kb, "%.*s", (int)kl, k);
        snprintf(vb, sizeof vb, "%.*s", (int)vl, v);
        int i, version, j;
        if (sscanf(kb, "key%d", &i) != 1 || i < 0 || i >= KEYS)
            fail_msg("a key never written: %s", kb);
        if (sscanf(vb, "v%d-%d-", &version, &j) != 2 || j != i ||
            version < 1 || version > 4 || !(m->written[i] & (1u << version)))
            fail_msg("%s holds \"%s\": never written to it", kb, vb);
        char want[128];
        val_of(want, sizeof want, i, version);
        if (strcmp(vb, want) != 0)
            fail_msg("%s holds a damaged value \"%s\"", kb, vb);
        got[i] = version;
    }
    TU_OK(rc);
    TU_OK(ravel_iter_status(it));
    ravel_iter_free(it);
    TU_OK(ravel_close(db));
    int differ = 0;
    for (int i = 0; i < KEYS; i++) {
        if (got[i] == m->final[i])
            continue;
        differ++;
        int wal_loss = l && l->wal_lost && i % WAL_EVERY == 0 &&
                       got[i] == m->before_wal[i];
        if (exact || !(wal_loss || (l && in_lost_range(l, i))))
            fail_msg("key%06d holds version %d, not %d, and the report "
                     "names no loss covering it:\n%s", i, got[i],
                     m->final[i], l && l->text ? l->text : "");
    }
    free(got);
    return differ;
}

static void losses_free(struct losses *l)
{
    ravel_free(l->text);
    l->text = NULL;
}

/* A second repair finds nothing to do and changes nothing. */
static void check_second_repair_noop(const char *dir, const struct model *m)
{
    struct snapshot before;
    snapshot_take(dir, &before);
    int dirs = lost_dirs(dir, NULL, 0);
    char *text = NULL;
    TU_OK(ravel_repair(dir, NULL, NULL, NULL, &text));
    if (!strstr(text, "nothing to repair"))
        fail_msg("a second repair did something:\n%s", text);
    ravel_free(text);
    assert_int_equal(lost_dirs(dir, NULL, 0), dirs);
    struct snapshot after;
    snapshot_take(dir, &after);
    assert_int_equal(after.n, before.n);
    snapshot_free(&after);
    snapshot_free(&before);
    (void)m;
}

/* --------------------------------------------------------------- cases */

static void test_undamaged(void **state)
{
    (void)state;
    struct model m;
    char *dir = build_db(&m);
    char *text = NULL;
    /* a whole database: nothing to do */
    TU_OK(ravel_repair(dir, NULL, NULL, NULL, &text));
    if (!strstr(text, "nothing to repair"))
        fail_msg("repair of a whole database did something:\n%s", text);
    ravel_free(text);
    assert_int_equal(lost_dirs(dir, NULL, 0), 0);
    check_db(dir, &m, NULL, 1);
    free(dir);
}

static void remove_manifests(const char *dir)
{
    char name[64];
    find_file(dir, "MANIFEST-", "", 1, name, sizeof name);
    char *p = path_in(dir, name);
    assert_int_equal(unlink(p), 0);
    free(p);
}

static void test_manifest_deleted(void **state)
{
    (void)state;
    struct model m;
    char *dir = build_db(&m);
    remove_manifests(dir);
    struct losses l;
    repair_ok(dir, &l);
    assert_int_equal(l.lost_lines, 0);
    check_db(dir, &m, &l, 1);
    check_second_repair_noop(dir, &m);
    check_db(dir, &m, NULL, 1);
    losses_free(&l);
    free(dir);
}

static void test_manifest_damaged(void **state)
{
    (void)state;
    for (int how = 0; how < 3; how++) {
        struct model m;
        char *dir = build_db(&m);
        char name[64];
        find_file(dir, "MANIFEST-", "", 1, name, sizeof name);
        char *p = path_in(dir, name);
        size_t n = size_of(p);
        if (how == 0)
            flip_at(p, 10); /* the header */
        else if (how == 1)
            flip_at(p, n / 2); /* a record */
        else
            assert_int_equal(truncate(p, (off_t)(n / 3)), 0);
        free(p);
        struct losses l;
        repair_ok(dir, &l);
        check_db(dir, &m, &l, 1);
        losses_free(&l);
        free(dir);
    }
}

static void test_current_missing(void **state)
{
    (void)state;
    struct model m;
    char *dir = build_db(&m);
    char *p = path_in(dir, "CURRENT");
    assert_int_equal(unlink(p), 0);
    free(p);
    struct losses l;
    repair_ok(dir, &l);
    assert_non_null(strstr(l.text, "CURRENT is missing"));
    check_db(dir, &m, &l, 1);
    losses_free(&l);
    free(dir);
}

static void test_wal_damaged_middle(void **state)
{
    (void)state;
    struct model m;
    char *dir = build_db(&m);
    char name[64];
    find_file(dir, "wal-", ".log", 1, name, sizeof name);
    char *p = path_in(dir, name);
    flip_at(p, size_of(p) / 2);
    free(p);
    struct losses l;
    repair_ok(dir, &l);
    assert_true(l.wal_lost);
    int differ = check_db(dir, &m, &l, 0);
    /* one or two records damaged, not the log from there on */
    if (differ < 1 || differ > 3)
        fail_msg("%d WAL writes lost for one damaged byte:\n%s", differ,
                 l.text);
    /* the writes after the damage were recovered */
    int last = (KEYS - 1) / WAL_EVERY * WAL_EVERY;
    ravel_db *db = tu_open_ok(dir, OPTS);
    char k[32], v[128];
    key_of(k, sizeof k, last);
    val_of(v, sizeof v, last, 4);
    tu_expect_at(__FILE__, __LINE__, db, NULL, k, v);
    TU_OK(ravel_close(db));
    check_second_repair_noop(dir, &m);
    losses_free(&l);
    free(dir);
}

static void test_table_data_block(void **state)
{
    (void)state;
    struct model m;
    char *dir = build_db(&m);
    char *p = largest_table(dir);
    flip_at(p, 200); /* inside its first data block */
    free(p);
    struct losses l;
    repair_ok(dir, &l);
    assert_int_equal(l.n, 1);
    assert_non_null(strstr(l.text, "entries lost"));
    check_db(dir, &m, &l, 0);
    check_second_repair_noop(dir, &m);
    losses_free(&l);
    free(dir);
}

/* The index or the footer damaged: every data block is found by walking
** the file, so nothing is lost. */
static void test_table_index_footer(void **state)
{
    (void)state;
    /* compressed too (the walk finds blocks of every type), where built */
    ravel_options *probe = NULL;
    int lz4 = tu_options_try("compression=lz4", &probe) == RAVEL_OK;
    ravel_options_free(probe);
    for (int what = 0; what < 4; what++) {
        if (what >= 2 && !lz4) {
            printf("# no lz4 in this build: compressed tables not tried\n");
            break;
        }
        struct model m;
        char *dir = build_db_with(&m, what >= 2 ? "compression=lz4" : NULL);
        char *p = largest_table(dir), *data;
        size_t len;
        assert_int_equal(tu_file_read(p, &data, &len), 0);
        uint64_t index_off = 0;
        memcpy(&index_off, data + len - 80, 8); /* little-endian hosts */
        free(data);
        flip_at(p, what % 2 == 0 ? (size_t)index_off + 3 : len - 80 + 3);
        free(p);
        struct losses l;
        repair_ok(dir, &l);
        assert_non_null(strstr(l.text, what % 2 == 0
                                           ? "its index is damaged"
                                           : "its footer is damaged"));
        assert_int_equal(l.lost_lines, 0);
        check_db(dir, &m, &l, 1);
        losses_free(&l);
        free(dir);
    }
}

static void test_table_truncated(void **state)
{
    (void)state;
    struct model m;
    char *dir = build_db(&m);
    char *p = largest_table(dir);
    assert_int_equal(truncate(p, (off_t)(size_of(p) / 2)), 0);
    free(p);
    struct losses l;
    repair_ok(dir, &l);
    assert_int_equal(l.n, 1);
    int differ = check_db(dir, &m, &l, 0);
    assert_true(differ > 0);
    check_second_repair_noop(dir, &m);
    losses_free(&l);
    free(dir);
}

static void test_everything_at_once(void **state)
{
    (void)state;
    struct model m;
    char *dir = build_db(&m);
    remove_manifests(dir);
    char *p = path_in(dir, "CURRENT");
    assert_int_equal(unlink(p), 0);
    free(p);
    char name[64];
    find_file(dir, "wal-", ".log", 1, name, sizeof name);
    p = path_in(dir, name);
    flip_at(p, size_of(p) / 3);
    free(p);
    find_file(dir, "", ".sst", 0, name, sizeof name);
    p = path_in(dir, name);
    flip_at(p, 100);
    free(p);
    find_file(dir, "", ".sst", 1, name, sizeof name);
    p = path_in(dir, name);
    assert_int_equal(truncate(p, (off_t)(size_of(p) * 2 / 3)), 0);
    free(p);
    struct losses l;
    repair_ok(dir, &l);
    check_db(dir, &m, &l, 0);
    check_second_repair_noop(dir, &m);
    losses_free(&l);
    free(dir);
}

/* A table file a compaction replaced, left behind (a crash before its
** deletion): merging it would bring back the keys deleted since. */
static void test_compaction_input_left_behind(void **state)
{
    (void)state;
    char *dir = tu_path("repair-%d", db_counter++);
    ravel_db *db = tu_open_ok(dir, OPTS ";disable_auto_compactions=true");
    char k[32], v[128];
    for (int i = 0; i < 500; i++) {
        key_of(k, sizeof k, i);
        val_of(v, sizeof v, i, 1);
        TU_OK(ravel_put(db, 0, k, strlen(k), v, strlen(v)));
    }
    TU_OK(ravel_flush(db, 0));
    char name[64];
    find_file(dir, "", ".sst", 0, name, sizeof name);
    char *p = path_in(dir, name), *old;
    size_t old_len;
    assert_int_equal(tu_file_read(p, &old, &old_len), 0);
    for (int i = 0; i < 500; i += 2) {
        key_of(k, sizeof k, i);
        TU_OK(ravel_delete(db, 0, k, strlen(k)));
    }
    TU_OK(ravel_flush(db, 0));
    TU_OK(ravel_compact_range(db, NULL, 0, NULL, 0));
    TU_OK(ravel_close(db));
    assert_int_not_equal(access(p, F_OK), 0); /* the compaction deleted it */
    assert_int_equal(tu_file_write(p, old, old_len), 0);
    free(old);
    struct losses l;
    repair_ok(dir, &l);
    assert_non_null(strstr(l.text, "not merged"));
    db = tu_open_ok(dir, OPTS);
    for (int i = 0; i < 500; i++) {
        key_of(k, sizeof k, i);
        val_of(v, sizeof v, i, 1);
        tu_expect_at(__FILE__, __LINE__, db, NULL, k, i % 2 ? v : NULL);
    }
    TU_OK(ravel_close(db));
    losses_free(&l);
    free(p);
    free(dir);
}

/* Refused while another process has the database open; nothing changed. */
static void test_refused_when_open(void **state)
{
    (void)state;
    struct model m;
    char *dir = build_db(&m);
    int ready[2], done[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(done), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(ready[0]);
        close(done[1]);
        ravel_db *db = NULL;
        ravel_options *o = NULL;
        if (ravel_options_new(&o) || ravel_open(dir, o, &db))
            _exit(2);
        char c = 'r';
        if (write(ready[1], &c, 1) != 1)
            _exit(3);
        while (read(done[0], &c, 1) > 0)
            ;
        ravel_close(db);
        _exit(0);
    }
    close(ready[1]);
    close(done[0]);
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    struct snapshot before;
    snapshot_take(dir, &before);
    char *text = NULL;
    int rc = ravel_repair(dir, NULL, NULL, NULL, &text);
    assert_int_equal(rc, RAVEL_LOCKED);
    assert_non_null(strstr(ravel_errmsg(), "open"));
    ravel_free(text);
    assert_int_equal(lost_dirs(dir, NULL, 0), 0);
    close(done[1]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* nothing was moved: every file is where it was */
    for (int i = 0; i < before.n; i++) {
        char *p = path_in(dir, before.name[i]);
        if (access(p, F_OK) != 0 && strncmp(before.name[i], "wal-", 4) != 0)
            fail_msg("%s moved by a refused repair", before.name[i]);
        free(p);
    }
    snapshot_free(&before);
    close(ready[0]);
    free(dir);
}

static void test_not_a_database(void **state)
{
    (void)state;
    char *dir = tu_path("repair-empty-%d", db_counter++);
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(ravel_repair(dir, NULL, NULL, NULL, NULL),
                     RAVEL_INVALID);
    assert_non_null(strstr(ravel_errmsg(), dir));
    char *lock = path_in(dir, "LOCK");
    assert_int_not_equal(access(lock, F_OK), 0); /* nothing made there */
    free(lock);
    free(dir);
}


/* A table file a flush created and died before writing, and a damaged
** IDENTITY: no data lost, the IDENTITY written again. */
static void test_empty_table_and_identity(void **state)
{
    (void)state;
    struct model m;
    char *dir = build_db(&m);
    char *p = path_in(dir, "000999.sst");
    assert_int_equal(tu_file_write(p, "", 0), 0);
    free(p);
    p = path_in(dir, "IDENTITY");
    assert_int_equal(tu_file_write(p, "garbage\n", 8), 0);
    free(p);
    struct losses l;
    repair_ok(dir, &l);
    assert_int_equal(l.lost_lines, 0);
    assert_int_equal(l.warn_lines, 0);
    check_db(dir, &m, &l, 1);
    char lost[4096];
    lost_dirs(dir, lost, sizeof lost);
    p = path_in(lost, "IDENTITY");
    char *data;
    size_t len;
    assert_int_equal(tu_file_read(p, &data, &len), 0);
    assert_string_equal(data, "garbage\n"); /* kept, as it was */
    free(data);
    free(p);
    losses_free(&l);
    free(dir);
}

/* Writes table file NUMBER of DIR holding KEYS[i] = VALS[i] (sorted) at
** sequence 0, its checksums seeded with SEED: NUMBER, or 0 as in an
** external table an ingest placed as it is. */
static void write_seq0_table(const char *dir, uint64_t number, int n,
                             const char **keys, const char **vals,
                             uint64_t seed)
{
    char name[32];
    snprintf(name, sizeof name, "%06llu.sst", (unsigned long long)number);
    char *p = path_in(dir, name);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    struct rv_table_options to = {.block_size = 4096,
                                  .block_restart_interval = 16,
                                  .bloom_bits_per_key = 10};
    rv_table_builder *tb;
    assert_int_equal(rv_table_builder_new(fd, p, seed, &to, &tb), 0);
    for (int i = 0; i < n; i++) {
        char ik[64];
        size_t kl = strlen(keys[i]);
        memcpy(ik, keys[i], kl);
        rv_put_fixed64(ik + kl, rv_pack_tag(0, RV_TYPE_PUT));
        assert_int_equal(rv_table_builder_add(tb, ik, kl + 8, vals[i],
                                              strlen(vals[i])), 0);
    }
    struct rv_table_props props;
    uint64_t size;
    assert_int_equal(rv_table_builder_finish(tb, &props, &size), 0);
    rv_table_builder_free(tb);
    close(fd);
    free(p);
}

/* Entries at sequence 0 lose to every other version of their key; among
** several, the highest-numbered file's wins, and the report counts them. */
static void test_sequence_zero(void **state)
{
    (void)state;
    char *dir = tu_path("repair-%d", db_counter++);
    ravel_db *db = tu_open_ok(dir, OPTS);
    tu_put(db, 0, "k1", "written");
    TU_OK(ravel_flush(db, 0));
    TU_OK(ravel_close(db));
    const char *keys[] = {"k1", "k2", "k3"};
    const char *old[] = {"ingested-old", "ingested-old", "ingested-old"};
    const char *newer[] = {"ingested-new", "ingested-new"};
    write_seq0_table(dir, 900, 3, keys, old, 0); /* as an ingest's */
    write_seq0_table(dir, 901, 2, keys, newer, 901);
    remove_manifests(dir);
    struct losses l;
    repair_ok(dir, &l);
    assert_non_null(strstr(l.text, "at sequence 0"));
    assert_non_null(strstr(l.text, "000900.sst: an external table"));
    assert_int_equal(l.lost_lines, 0);
    /* k2 only: k1's written version is newer than its two at 0 */
    assert_int_equal(l.warn_lines, 1);
    assert_non_null(strstr(l.text, "1 key had several versions"));
    db = tu_open_ok(dir, OPTS);
    tu_expect_at(__FILE__, __LINE__, db, NULL, "k1", "written");
    tu_expect_at(__FILE__, __LINE__, db, NULL, "k2", "ingested-new");
    tu_expect_at(__FILE__, __LINE__, db, NULL, "k3", "ingested-old");
    TU_OK(ravel_verify(db));
    TU_OK(ravel_close(db));
    losses_free(&l);
    free(dir);
}

static void txn_named(ravel_db *db, const char *name, const char *key,
                      const char *val, ravel_txn **out)
{
    TU_OK(ravel_txn_begin(db, RAVEL_SYNC, out));
    TU_OK(ravel_txn_put(*out, key, strlen(key), val, strlen(val)));
    TU_OK(ravel_txn_set_name(*out, name));
    TU_OK(ravel_txn_prepare(*out));
}

/* A prepared transaction's writes are not data until it commits: repair
** keeps the prepared ones prepared (one spilled to its file by a flush,
** one only in the WAL), the committed one's writes, and no rolled-back
** one's. */
static void test_prepared_transactions(void **state)
{
    (void)state;
    char *dir = tu_path("repair-%d", db_counter++);
    ravel_db *db = tu_open_ok(dir, OPTS);
    ravel_txn *t;
    tu_put(db, 0, "base", "1");
    txn_named(db, "spilled", "tx-a", "a", &t);
    ravel_txn_free(t); /* stays prepared */
    TU_OK(ravel_flush(db, 0)); /* spills it: its WAL segment goes */
    txn_named(db, "committed", "tx-b", "b", &t);
    TU_OK(ravel_txn_commit(t));
    ravel_txn_free(t);
    txn_named(db, "rolled-back", "tx-c", "c", &t);
    TU_OK(ravel_txn_rollback(t));
    ravel_txn_free(t);
    txn_named(db, "in-wal", "tx-d", "d", &t);
    ravel_txn_free(t);
    TU_OK(ravel_close(db));
    remove_manifests(dir);
    struct losses l;
    repair_ok(dir, &l);
    assert_int_equal(l.lost_lines, 0);
    assert_non_null(strstr(l.text, "'spilled'"));
    assert_non_null(strstr(l.text, "'in-wal'"));
    db = tu_open_ok(dir, OPTS);
    tu_expect_at(__FILE__, __LINE__, db, NULL, "base", "1");
    tu_expect_at(__FILE__, __LINE__, db, NULL, "tx-a", NULL);
    tu_expect_at(__FILE__, __LINE__, db, NULL, "tx-b", "b");
    tu_expect_at(__FILE__, __LINE__, db, NULL, "tx-c", NULL);
    tu_expect_at(__FILE__, __LINE__, db, NULL, "tx-d", NULL);
    char *names = tu_prop(db, "ravel.prepared-transactions");
    assert_non_null(strstr(names, "spilled"));
    assert_non_null(strstr(names, "in-wal"));
    assert_null(strstr(names, "committed"));
    assert_null(strstr(names, "rolled-back"));
    ravel_free(names);
    TU_OK(ravel_txn_recover(db, "spilled", &t));
    TU_OK(ravel_txn_commit(t));
    ravel_txn_free(t);
    TU_OK(ravel_txn_recover(db, "in-wal", &t));
    TU_OK(ravel_txn_rollback(t));
    ravel_txn_free(t);
    tu_expect_at(__FILE__, __LINE__, db, NULL, "tx-a", "a");
    tu_expect_at(__FILE__, __LINE__, db, NULL, "tx-d", NULL);
    TU_OK(ravel_close(db));
    losses_free(&l);
    free(dir);
}

/* ---------------------------------------------------------- power loss */

#define PL_VALUE 200

static void pl_value(char *b, size_t n, int i)
{
    snprintf(b, n, "pl-%d-%0*d", i, PL_VALUE, i);
}

/* The child: synced writes, each acknowledged on FD, until killed. */
static void pl_child(const char *dir, const char *journal, int fd)
{
    tu_sync_journal_start(journal);
    ravel_db *db = NULL;
    if (tu_open(dir, OPTS, &db) != RAVEL_OK)
        _exit(2);
    for (int i = 0;; i++) {
        char k[32], v[PL_VALUE + 32];
        key_of(k, sizeof k, i);
        pl_value(v, sizeof v, i);
        if (ravel_put(db, RAVEL_SYNC, k, strlen(k), v, strlen(v)))
            _exit(3);
        if (write(fd, &i, sizeof i) != sizeof i)
            _exit(4);
    }
}

/* A power loss after a kill -9 under synced writes, in each pattern, then
** repair: every acknowledged write is there, every value right. */
static void test_power_loss(void **state)
{
    (void)state;
    uint64_t rng = tu_seed();
    for (int pattern = 0; pattern < TU_PL_PATTERNS; pattern++) {
        char *dir = tu_path("repair-pl-%d", db_counter++);
        char *journal = tu_path("repair-pl-%d.journal", db_counter++);
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            tu_child_prepare();
            close(fds[0]);
            pl_child(dir, journal, fds[1]);
        }
        close(fds[1]);
        int acked = -1, i;
        while (acked < 2000 && read(fds[0], &i, sizeof i) == sizeof i)
            acked = i;
        kill(pid, SIGKILL);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        close(fds[0]);
        assert_true(acked >= 2000);
        printf("# %s: %d writes acknowledged\n",
               tu_power_loss_name((enum tu_power_loss_pattern)pattern),
               acked + 1);
        tu_power_loss(dir, journal, (enum tu_power_loss_pattern)pattern,
                      &rng);
        char *text = NULL;
        TU_OK(ravel_repair(dir, NULL, NULL, NULL, &text));
        ravel_db *db = tu_open_ok(dir, OPTS);
        TU_OK(ravel_verify(db));
        for (int j = 0; j <= acked; j++) {
            char k[32], v[PL_VALUE + 32];
            key_of(k, sizeof k, j);
            pl_value(v, sizeof v, j);
            void *got = NULL;
            size_t len = 0;
            int rc = ravel_get(db, NULL, k, strlen(k), &got, &len);
            if (rc != RAVEL_OK || len != strlen(v) || memcmp(got, v, len))
                fail_msg("%s: acknowledged %s lost or wrong after repair "
                         "(%s):\n%s", tu_power_loss_name(pattern), k,
                         ravel_errstr(rc), text);
            ravel_free(got);
        }
        TU_OK(ravel_close(db));
        ravel_free(text);
        free(journal);
        free(dir);
    }
}

/* The other ways test_table_corruption.c damages a database: the filter
** block, the properties block (no entries in either: nothing lost), a
** table file the manifest names gone (its range reported lost), CURRENT
** naming a manifest that is not there. */
static void test_other_damage(void **state)
{
    (void)state;
    for (int what = 0; what < 4; what++) {
        struct model m;
        char *dir = build_db(&m);
        char *p = largest_table(dir), *data;
        size_t len;
        assert_int_equal(tu_file_read(p, &data, &len), 0);
        uint64_t filter_off = 0, props_off = 0;
        memcpy(&filter_off, data + len - 80 + 16, 8);
        memcpy(&props_off, data + len - 80 + 32, 8);
        free(data);
        if (what == 0)
            flip_at(p, (size_t)filter_off + 2);
        else if (what == 1)
            flip_at(p, (size_t)props_off + 2);
        else if (what == 2)
            assert_int_equal(unlink(p), 0);
        else {
            char *c = path_in(dir, "CURRENT");
            assert_int_equal(tu_file_write(c, "MANIFEST-000999\n", 16), 0);
            free(c);
        }
        free(p);
        struct losses l;
        repair_ok(dir, &l);
        if (what == 2) {
            assert_int_equal(l.n, 1); /* the manifest's range for it */
            assert_non_null(strstr(l.text, "is missing (the manifest "
                                           "names it)"));
            check_db(dir, &m, &l, 0);
        } else {
            assert_int_equal(l.lost_lines, 0);
            check_db(dir, &m, &l, 1);
        }
        check_second_repair_noop(dir, &m);
        losses_free(&l);
        free(dir);
    }
}

/* 1 if a file named NAME holding DATA (LEN bytes) is in DIR or in one of
** its lost-repair-* directories. */
static int kept_somewhere(const char *dir, const char *name,
                          const char *data, size_t len)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int found = 0;
    struct dirent *e;
    char *cands[64];
    int n = 0;
    cands[n++] = path_in(dir, name);
    while ((e = readdir(d)) != NULL && n < 64)
        if (strncmp(e->d_name, "lost-repair-", 12) == 0) {
            char *sub = path_in(dir, e->d_name);
            cands[n++] = path_in(sub, name);
            free(sub);
        }
    closedir(d);
    for (int i = 0; i < n; i++) {
        char *got;
        size_t got_len;
        if (!found && tu_file_read(cands[i], &got, &got_len) == 0) {
            found = got_len == len && memcmp(got, data, len) == 0;
            free(got);
        }
        free(cands[i]);
    }
    return found;
}

/* A repair killed (kill -9) at a random point, then run again: the
** database holds exactly the model, and every original file is still
** somewhere, byte for byte. */
static void test_killed_during_repair(void **state)
{
    (void)state;
    uint64_t rng = tu_seed();
    int rounds = (int)tu_env_u64("RAVEL_TEST_REPAIR_KILLS", 10);
    for (int round = 0; round < rounds; round++) {
        struct model m;
        char *dir = build_db(&m);
        remove_manifests(dir);
        struct snapshot before;
        snapshot_take(dir, &before);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            tu_child_prepare();
            _exit(ravel_repair(dir, NULL, NULL, NULL, NULL) ? 1 : 0);
        }
        /* from "before it begins" to "after it ends" (no timing is
        ** asserted: every point is a correct one to be killed at) */
        usleep((useconds_t)(tu_rand(&rng) % 25000));
        kill(pid, SIGKILL);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        printf("# round %d: the repair %s\n", round,
               WIFSIGNALED(status) ? "was killed" : "had finished");
        char *text = NULL;
        TU_OK(ravel_repair(dir, NULL, NULL, NULL, &text));
        check_db(dir, &m, NULL, 1);
        for (int i = 0; i < before.n; i++)
            if (!kept_somewhere(dir, before.name[i], before.data[i],
                                before.len[i]))
                fail_msg("round %d: the original %s is nowhere:\n%s", round,
                         before.name[i], text);
        ravel_free(text);
        snapshot_free(&before);
        free(dir);
    }
}

/* A database made with num_levels=4, repaired with the default options
** (7 levels): the new files go no deeper than its manifest's, so it opens
** with its own options again. */
static void test_levels_kept_openable(void **state)
{
    (void)state;
    struct model m;
    char *dir = build_db_with(&m, "num_levels=4");
    char *p = largest_table(dir);
    flip_at(p, 200);
    free(p);
    struct losses l;
    repair_ok(dir, &l);
    ravel_db *db = NULL;
    int rc = tu_open(dir, OPTS ";num_levels=4", &db);
    if (rc)
        fail_msg("the repaired database does not open with its own "
                 "num_levels=4: %s\n%s", ravel_errmsg(), l.text);
    TU_OK(ravel_close(db));
    losses_free(&l);
    free(dir);
}

/* The index damaged and a data block too: the walk finds the blocks after
** the damaged one again (uncompressed blocks begin with a whole key), so
** only that block's range is lost. */
static void test_walk_resync(void **state)
{
    (void)state;
    for (int what = 0; what < 2; what++) {
        struct model m;
        char *dir = build_db(&m);
        char *p = largest_table(dir), *data;
        size_t len;
        assert_int_equal(tu_file_read(p, &data, &len), 0);
        uint64_t index_off = 0;
        memcpy(&index_off, data + len - 80, 8);
        free(data);
        if (what == 0)
            flip_at(p, (size_t)index_off + 3); /* index */
        else
            flip_at(p, len - 80 + 3); /* footer */
        flip_at(p, 6000); /* in the second data block */
        free(p);
        struct losses l;
        repair_ok(dir, &l);
        assert_int_equal(l.n, 1);
        if (strstr(l.text, "no later block was found"))
            fail_msg("the walk did not find the blocks after the damaged "
                     "one:\n%s", l.text);
        assert_true(l.hi[0] < KEYS - 1); /* a bounded range */
        int differ = check_db(dir, &m, &l, 0);
        assert_true(differ > 0);
        check_second_repair_noop(dir, &m);
        losses_free(&l);
        free(dir);
    }
}

/* Names of DIR's files ending with SUFFIX, in *NAMES (up to 64). */
static int list_files(const char *dir, const char *suffix, char names[][64])
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 64) {
        size_t len = strlen(e->d_name), sl = strlen(suffix);
        if (len > sl && strcmp(e->d_name + len - sl, suffix) == 0)
            snprintf(names[n++], 64, "%.63s", e->d_name);
    }
    closedir(d);
    return n;
}

/* Random damage -- bytes flipped anywhere in the table files and the WAL,
** a table cut short -- then repair: every key holds a version written to
** it, and one not at the model's version lies in a range the report
** names. */
static void test_random_damage(void **state)
{
    (void)state;
    uint64_t rng = tu_seed();
    int rounds = (int)tu_env_u64("RAVEL_TEST_REPAIR_ROUNDS", 6);
    for (int round = 0; round < rounds; round++) {
        struct model m;
        char *dir = build_db(&m);
        char names[64][64];
        int n = list_files(dir, ".sst", names);
        int flips = 1 + (int)(tu_rand(&rng) % 6);
        for (int i = 0; i < flips; i++) {
            char *p = path_in(dir, names[tu_rand(&rng) % (uint64_t)n]);
            size_t len = size_of(p);
            if (len)
                flip_at(p, (size_t)(tu_rand(&rng) % len));
            free(p);
        }
        if (tu_rand(&rng) % 2) {
            char *p = path_in(dir, names[tu_rand(&rng) % (uint64_t)n]);
            size_t len = size_of(p);
            assert_int_equal(truncate(p, (off_t)(tu_rand(&rng) %
                                                 (len + 1))), 0);
            free(p);
        }
        if (tu_rand(&rng) % 2) {
            n = list_files(dir, ".log", names);
            char *p = path_in(dir, names[0]);
            size_t len = size_of(p);
            if (len)
                flip_at(p, (size_t)(tu_rand(&rng) % len));
            free(p);
        }
        struct losses l;
        repair_ok(dir, &l);
        int differ = check_db(dir, &m, &l, 0);
        printf("# round %d: %d keys differ, %d lost ranges\n", round, differ,
               l.n);
        check_second_repair_noop(dir, &m);
        losses_free(&l);
        free(dir);
    }
}

/* A WAL segment a flush let go but a crash left behind (below the
** manifest's log number), even damaged, is no reason to repair: the
** tables hold its writes.  The segment is the one "a" went to: the
** lowest-numbered of a new database -- with wal_io=direct a spare for
** the next one is already there, which "b" will go to after the flush.
** recycle_log_file_num=0 (the default): the flush deletes the segment
** in every WAL mode rather than keeping it for reuse. */
static void test_flushed_wal_left_behind(void **state)
{
    (void)state;
    char *dir = tu_path("repair-%d", db_counter++);
    ravel_db *db = tu_open_ok(dir, OPTS ";recycle_log_file_num=0");
    tu_put(db, 0, "a", "1");
    char name[64];
    find_file(dir, "wal-", ".log", 0, name, sizeof name);
    char *p = path_in(dir, name), *data;
    size_t len;
    TU_OK(ravel_flush_wal(db, 1));
    assert_int_equal(tu_file_read(p, &data, &len), 0);
    TU_OK(ravel_flush(db, 0));
    tu_put(db, 0, "b", "2");
    TU_OK(ravel_close(db));
    /* the flush deleted it: what is written back below is not the live
    ** segment "b" is in */
    assert_int_not_equal(access(p, F_OK), 0);
    /* damage its record, not the preallocated zeros after it */
    size_t end = len;
    while (end > 0 && data[end - 1] == 0)
        end--;
    assert_true(end > 8);
    data[end - 1] ^= 0x5a;
    assert_int_equal(tu_file_write(p, data, len), 0);
    free(data);
    char *text = NULL;
    TU_OK(ravel_repair(dir, NULL, NULL, NULL, &text));
    if (!strstr(text, "nothing to repair") || !strstr(text, "flushed"))
        fail_msg("a flushed segment left behind made repair act:\n%s", text);
    if (!strstr(text, "the tables hold): 0 batches")) /* damage seen */
        fail_msg("the damaged record was read:\n%s", text);
    ravel_free(text);
    db = tu_open_ok(dir, OPTS);
    tu_expect_at(__FILE__, __LINE__, db, NULL, "a", "1");
    tu_expect_at(__FILE__, __LINE__, db, NULL, "b", "2");
    TU_OK(ravel_close(db));
    free(p);
    free(dir);
}

/* The log of a cleanly closed database cut short (the manifest records
** that it ended in a segment, sealed): with only the seal cut off, the
** report says so and nothing is lost; with that segment gone, the writes
** it held are reported lost (a "WAL:" loss), the others kept. */
static void test_closed_log_cut(void **state)
{
    (void)state;
    for (int gone = 0; gone < 2; gone++) {
        struct model m;
        char *dir = build_db(&m);
        char name[64];
        find_file(dir, "wal-", ".log", 1, name, sizeof name);
        char *p = path_in(dir, name);
        if (gone)
            assert_int_equal(unlink(p), 0);
        else /* the seal, 24 bytes, ends the file (docs/formats.md) */
            assert_int_equal(truncate(p, (off_t)(size_of(p) - 24)), 0);
        free(p);
        struct losses l;
        repair_ok(dir, &l);
        if (!strstr(l.text, gone ? "is missing, though MANIFEST-"
                                 : "no longer ends with its seal"))
            fail_msg("the report does not say the log was cut:\n%s",
                     l.text);
        if (gone != l.wal_lost || (!gone && l.lost_lines))
            fail_msg("%s, the report says:\n%s", gone ? "the WAL's writes "
                     "are lost" : "nothing is lost", l.text);
        int differ = check_db(dir, &m, &l, !gone);
        if (gone && differ != (KEYS - 1) / WAL_EVERY + 1)
            fail_msg("%d keys differ, not the WAL's %d writes:\n%s", differ,
                     (KEYS - 1) / WAL_EVERY + 1, l.text);
        check_second_repair_noop(dir, &m);
        losses_free(&l);
        free(dir);
    }
}

/* A table file renamed (its name's number no longer seeds its checksums)
** is read under the number its footer records. */
static void test_renamed_table(void **state)
{
    (void)state;
    struct model m;
    char *dir = build_db(&m);
    char *p = largest_table(dir), *q = path_in(dir, "000777.sst");
    assert_int_equal(rename(p, q), 0);
    free(p);
    free(q);
    struct losses l;
    repair_ok(dir, &l);
    assert_non_null(strstr(l.text, "a renamed copy"));
    assert_int_equal(l.lost_lines, 0);
    check_db(dir, &m, &l, 1);
    losses_free(&l);
    free(dir);
}

/* An external table (checksums seeded with 0, as an ingest places one)
** whose footer is damaged: the walk finds its blocks under number 0. */
static void test_external_table_footer(void **state)
{
    (void)state;
    char *dir = tu_path("repair-%d", db_counter++);
    ravel_db *db = tu_open_ok(dir, OPTS);
    tu_put(db, 0, "k0", "written");
    TU_OK(ravel_flush(db, 0));
    TU_OK(ravel_close(db));
    const char *keys[] = {"k1", "k2"};
    const char *vals[] = {"ingested-1", "ingested-2"};
    write_seq0_table(dir, 900, 2, keys, vals, 0);
    char *p = path_in(dir, "000900.sst");
    flip_at(p, size_of(p) - 10); /* the footer */
    free(p);
    remove_manifests(dir);
    struct losses l;
    repair_ok(dir, &l);
    assert_non_null(strstr(l.text, "under file number 0"));
    assert_int_equal(l.lost_lines, 0);
    db = tu_open_ok(dir, OPTS);
    tu_expect_at(__FILE__, __LINE__, db, NULL, "k0", "written");
    tu_expect_at(__FILE__, __LINE__, db, NULL, "k1", "ingested-1");
    tu_expect_at(__FILE__, __LINE__, db, NULL, "k2", "ingested-2");
    TU_OK(ravel_verify(db));
    TU_OK(ravel_close(db));
    losses_free(&l);
    free(dir);
}

int main(void)
{
    tu_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_undamaged),
        cmocka_unit_test(test_manifest_deleted),
        cmocka_unit_test(test_manifest_damaged),
        cmocka_unit_test(test_current_missing),
        cmocka_unit_test(test_wal_damaged_middle),
        cmocka_unit_test(test_table_data_block),
        cmocka_unit_test(test_table_index_footer),
        cmocka_unit_test(test_table_truncated),
        cmocka_unit_test(test_walk_resync),
        cmocka_unit_test(test_everything_at_once),
        cmocka_unit_test(test_compaction_input_left_behind),
        cmocka_unit_test(test_refused_when_open),
        cmocka_unit_test(test_not_a_database),
        cmocka_unit_test(test_empty_table_and_identity),
        cmocka_unit_test(test_sequence_zero),
        cmocka_unit_test(test_external_table_footer),
        cmocka_unit_test(test_prepared_transactions),
        cmocka_unit_test(test_other_damage),
        cmocka_unit_test(test_levels_kept_openable),
        cmocka_unit_test(test_flushed_wal_left_behind),
        cmocka_unit_test(test_closed_log_cut),
        cmocka_unit_test(test_renamed_table),
        cmocka_unit_test(test_random_damage),
        cmocka_unit_test(test_power_loss),
        cmocka_unit_test(test_killed_during_repair),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
