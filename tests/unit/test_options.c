/*
** test_options.c -- ravel_options: every option's accepted values
** round-tripping through get, every kind of bad value rejected with a
** message naming it, ravel_options_parse's item syntax, and the checks of
** options against each other.  The defaults are not restated here: the
** options table is their one home, and tests/docs/test_options_table.py
** checks ravel.h and the manual pages against it.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/options.h"
#include "ravel.h"

/* The number of options in the table, and of those with a range. */
static size_t table_count(int ranged_only)
{
    struct rv_option_info info;
    size_t n = 0;
    for (size_t i = 0; rv_option_info(i, &info); i++)
        n += !ranged_only || info.min[0];
    return n;
}

static ravel_options *opts_new(void)
{
    ravel_options *o = NULL;
    assert_int_equal(ravel_options_new(&o), RAVEL_OK);
    assert_non_null(o);
    return o;
}

static void opt_expect_value(const ravel_options *o, const char *name,
                         const char *want)
{
    char *got = NULL;
    assert_int_equal(ravel_options_get(o, name, &got), RAVEL_OK);
    assert_non_null(got);
    if (strcmp(got, want) != 0)
        fail_msg("option %s: got '%s', want '%s'", name, got, want);
    free(got);
}

static void opt_expect_set(ravel_options *o, const char *name, const char *value,
                       const char *want)
{
    int rc = ravel_options_set(o, name, value);
    if (rc != RAVEL_OK)
        fail_msg("set %s=%s: rc %d (%s)", name, value, rc, ravel_errmsg());
    opt_expect_value(o, name, want);
}

/* A rejected value: RAVEL_INVALID, message names option and value, and
** the old value is kept. */
static void opt_expect_bad(ravel_options *o, const char *name, const char *value)
{
    char *before = NULL;
    assert_int_equal(ravel_options_get(o, name, &before), RAVEL_OK);
    int rc = ravel_options_set(o, name, value);
    if (rc != RAVEL_INVALID)
        fail_msg("set %s='%s' accepted (rc %d)", name, value, rc);
    const char *msg = ravel_errmsg();
    if (!strstr(msg, name) || !strstr(msg, value) ||
        (!strstr(msg, "expected") && !strstr(msg, "range")))
        fail_msg("message for %s='%s' does not name both and what is "
                 "accepted: %s", name, value, msg);
    opt_expect_value(o, name, before);
    free(before);
}

static const char *const bool_names[] = {
    "create_if_missing", "error_if_exists", "read_only",
    "allow_concurrent_memtable_write", "wal_preallocate", "manual_wal_flush",
};

static void test_bools(void **state)
{
    (void)state;
    ravel_options *o = opts_new();
    for (size_t i = 0; i < sizeof bool_names / sizeof bool_names[0]; i++) {
        const char *n = bool_names[i];
        opt_expect_set(o, n, "true", "true");
        opt_expect_set(o, n, "false", "false");
        opt_expect_set(o, n, "1", "true");
        opt_expect_set(o, n, "0", "false");
        opt_expect_set(o, n, "on", "true");
        opt_expect_set(o, n, "off", "false");
        opt_expect_set(o, n, "yes", "true");
        opt_expect_set(o, n, "no", "false");
        opt_expect_set(o, n, "TRUE", "true");
        opt_expect_set(o, n, "Off", "false");
        opt_expect_bad(o, n, "");
        opt_expect_bad(o, n, "2");
        opt_expect_bad(o, n, "tru");
        opt_expect_bad(o, n, "truex");
        opt_expect_bad(o, n, " true");
        opt_expect_bad(o, n, "-1");
    }
    ravel_options_free(o);
}

static void test_sizes(void **state)
{
    (void)state;
    ravel_options *o = opts_new();
    const char *n = "write_buffer_size";
    opt_expect_set(o, n, "4096", "4096");
    opt_expect_set(o, n, "4K", "4096");
    opt_expect_set(o, n, "4k", "4096");
    opt_expect_set(o, n, "64M", "67108864");
    opt_expect_set(o, n, "3m", "3145728");
    opt_expect_set(o, n, "1G", "1073741824");
    opt_expect_set(o, n, "4G", "4294967296");
    opt_expect_set(o, n, "4294967296", "4294967296");
    opt_expect_set(o, n, "00008192", "8192");
    opt_expect_bad(o, n, "");
    opt_expect_bad(o, n, "-4096");
    opt_expect_bad(o, n, "+4096");
    opt_expect_bad(o, n, "4096x");
    opt_expect_bad(o, n, "4KB");
    opt_expect_bad(o, n, "K");
    opt_expect_bad(o, n, "abc");
    opt_expect_bad(o, n, " 4096");
    opt_expect_bad(o, n, "4096 ");
    opt_expect_bad(o, n, "1.5M");
    opt_expect_bad(o, n, "0x1000");
    opt_expect_bad(o, n, "4095");          /* below the range */
    opt_expect_bad(o, n, "3K");
    opt_expect_bad(o, n, "4294967297");    /* above the range */
    opt_expect_bad(o, n, "5G");
    opt_expect_bad(o, n, "18446744073709551615");
    opt_expect_bad(o, n, "18446744073709551616"); /* overflows 64 bits */
    opt_expect_bad(o, n, "99999999999999999999999");
    opt_expect_bad(o, n, "17179869184G");  /* 2^34 G overflows on the shift */
    /* Overflows that would wrap around into the accepted range. */
    opt_expect_bad(o, n, "17179869185G");  /* (2^34 + 1) G = 2^64 + 1G */
    opt_expect_bad(o, n, "18446744073709617152"); /* 2^64 + 64K */
    opt_expect_bad(o, n, "0");

    n = "max_write_batch_group_size_bytes";
    opt_expect_set(o, n, "1K", "1024");
    opt_expect_set(o, n, "1024", "1024");
    opt_expect_set(o, n, "1M", "1048576");
    opt_expect_set(o, n, "1G", "1073741824");
    opt_expect_bad(o, n, "1023");
    opt_expect_bad(o, n, "1073741825");
    opt_expect_bad(o, n, "2G");
    opt_expect_bad(o, n, "-1K");
    opt_expect_bad(o, n, "1M1");
    ravel_options_free(o);
}

static void test_enums(void **state)
{
    (void)state;
    ravel_options *o = opts_new();
    opt_expect_set(o, "wal_io", "uring", "uring");
    opt_expect_set(o, "wal_io", "sync", "sync");
    opt_expect_set(o, "wal_io", "auto", "auto");
    opt_expect_bad(o, "wal_io", "");
    opt_expect_bad(o, "wal_io", "pwrite");
    opt_expect_bad(o, "wal_io", "1");
    assert_non_null(strstr(ravel_errmsg(), "auto | uring | sync"));

    const char *m = "wal_recovery_mode";
    opt_expect_set(o, m, "absolute_consistency", "absolute_consistency");
    opt_expect_set(o, m, "point_in_time", "point_in_time");
    opt_expect_set(o, m, "skip_any_corrupted_records",
               "skip_any_corrupted_records");
    opt_expect_set(o, m, "tolerate_corrupted_tail_records",
               "tolerate_corrupted_tail_records");
    opt_expect_set(o, m, "1", "absolute_consistency");
    opt_expect_set(o, m, "2", "point_in_time");
    opt_expect_set(o, m, "3", "skip_any_corrupted_records");
    opt_expect_set(o, m, "0", "tolerate_corrupted_tail_records");
    opt_expect_set(o, m, "kPointInTimeRecovery", "point_in_time");
    opt_expect_bad(o, m, "4");
    opt_expect_bad(o, m, "-1");
    opt_expect_bad(o, m, "");
    opt_expect_bad(o, m, "point-in-time");
    opt_expect_bad(o, m, "02");

    /* The parsed struct holds the RocksDB numbering. */
    assert_int_equal(ravel_options_set(o, m, "2"), RAVEL_OK);
    assert_int_equal(o->wal_recovery_mode, RV_RECOVERY_POINT_IN_TIME);
    assert_int_equal(ravel_options_set(o, "wal_io", "sync"), RAVEL_OK);
    assert_int_equal(o->wal_io, RV_WAL_IO_SYNC);
    ravel_options_free(o);
}

/* The recovery modes have one list of names: what the WAL reader prints in
** its messages is what the option accepts and reads back. */
static void test_recovery_mode_names(void **state)
{
    (void)state;
    static const struct {
        enum rv_recovery_mode mode;
        const char *name;
    } modes[] = {
        {RV_RECOVERY_TOLERATE_CORRUPTED_TAIL,
         "tolerate_corrupted_tail_records"},
        {RV_RECOVERY_ABSOLUTE_CONSISTENCY, "absolute_consistency"},
        {RV_RECOVERY_POINT_IN_TIME, "point_in_time"},
        {RV_RECOVERY_SKIP_ANY_CORRUPTED, "skip_any_corrupted_records"},
    };
    ravel_options *o = opts_new();
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        assert_string_equal(rv_recovery_mode_name(modes[i].mode),
                            modes[i].name);
        opt_expect_set(o, "wal_recovery_mode", modes[i].name, modes[i].name);
    }
    assert_string_equal(rv_recovery_mode_name((enum rv_recovery_mode)42),
                        "unknown");
    ravel_options_free(o);
}

static const char *const not_built[] = {
    "enable_pipelined_write",
    "min_write_buffer_number_to_merge", "max_subcompactions",
    "compaction_style",
    "use_direct_io_for_flush_and_compaction",
    "use_direct_reads",
    "paranoid_checks", /* was accepted and never read: now refused */
};

/* RocksDB's and db_bench's names for options ravel has under another name
** and the same meaning: set and get take them as the option itself. */
static void test_aliases(void **state)
{
    (void)state;
    static const struct { const char *alias, *name, *value, *want; } a[] = {
        {"compression_type", "compression", "none", "none"},
        {"bloom_bits", "bloom_bits_per_key", "7", "7"},
        {"cache_size", "block_cache_size", "8M", "8388608"},
    };
    ravel_options *o = opts_new();
    for (size_t i = 0; i < sizeof a / sizeof *a; i++) {
        assert_int_equal(rv_option_is_not_built(a[i].alias), 0);
        opt_expect_set(o, a[i].alias, a[i].value, a[i].want);
        opt_expect_value(o, a[i].name, a[i].want);
    }
    /* in an options string too, and a bad value names the range */
    assert_int_equal(ravel_options_parse(o, "cache_size=1M;bloom_bits=3"),
                     RAVEL_OK);
    opt_expect_value(o, "block_cache_size", "1048576");
    opt_expect_value(o, "bloom_bits_per_key", "3");
    opt_expect_bad(o, "bloom_bits", "101");
    assert_non_null(strstr(ravel_errmsg(), "0 .. 100"));
    /* describe lists each option once, under ravel's name */
    char *text = rv_options_describe(o);
    assert_non_null(strstr(text, "bloom_bits_per_key=3\n"));
    assert_null(strstr(text, "\nbloom_bits="));
    assert_null(strstr(text, "\ncache_size="));
    assert_null(strstr(text, "\ncompression_type="));
    free(text);
    ravel_options_free(o);
}

/* RocksDB options ravel has no option of the same meaning for, but one that
** does the job: refused, naming the option to use. */
static void test_not_built_names_the_option_to_use(void **state)
{
    (void)state;
    static const char *const renamed[] = {"max_background_compactions",
                                          "max_background_flushes"};
    ravel_options *o = opts_new();
    for (size_t i = 0; i < sizeof renamed / sizeof *renamed; i++) {
        assert_int_equal(rv_option_is_not_built(renamed[i]), 1);
        assert_int_equal(ravel_options_set(o, renamed[i], "4"),
                         RAVEL_INVALID);
        if (!strstr(ravel_errmsg(), "use max_background_jobs"))
            fail_msg("%s: the message names no option to use: %s",
                     renamed[i], ravel_errmsg());
    }
    ravel_options_free(o);
}

static void test_unknown_and_not_built(void **state)
{
    (void)state;
    ravel_options *o = opts_new();
    char *out = NULL;

    assert_int_equal(ravel_options_set(o, "no_such_option", "1"),
                     RAVEL_INVALID);
    assert_string_equal(ravel_errmsg(), "unknown option 'no_such_option'");
    assert_int_equal(ravel_options_get(o, "no_such_option", &out),
                     RAVEL_INVALID);
    assert_null(out);
    assert_int_equal(ravel_options_set(o, "Read_Only", "1"), RAVEL_INVALID);
    assert_int_equal(rv_option_is_not_built("no_such_option"), 0);
    assert_int_equal(rv_option_is_not_built("write_buffer_size"), 0);
    assert_int_equal(rv_option_is_not_built(NULL), 0);

    for (size_t i = 0; i < sizeof not_built / sizeof not_built[0]; i++) {
        char want[128];
        snprintf(want, sizeof want, "option '%s' is not built yet in ravel",
                 not_built[i]);
        assert_int_equal(rv_option_is_not_built(not_built[i]), 1);
        assert_int_equal(ravel_options_set(o, not_built[i], "1"),
                         RAVEL_INVALID);
        assert_string_equal(ravel_errmsg(), want);
    }
    ravel_options_free(o);
}

/* A name near one of the table's, by edit distance, is suggested; one near
** a name not built yet is suggested as such; a name near nothing gets no
** suggestion. */
static void expect_unknown(ravel_options *o, const char *name,
                           const char *want)
{
    assert_int_equal(ravel_options_set(o, name, "1"), RAVEL_INVALID);
    if (strcmp(ravel_errmsg(), want) != 0)
        fail_msg("set %s: message '%s', want '%s'", name, ravel_errmsg(),
                 want);
    char *out = NULL;
    assert_int_equal(ravel_options_get(o, name, &out), RAVEL_INVALID);
    assert_null(out);
    assert_string_equal(ravel_errmsg(), want);
}

static void test_did_you_mean(void **state)
{
    (void)state;
    ravel_options *o = opts_new();
    expect_unknown(o, "write_bufer_size", "unknown option 'write_bufer_size' "
                   "(did you mean 'write_buffer_size'?)");
    expect_unknown(o, "creat_if_missing", "unknown option 'creat_if_missing' "
                   "(did you mean 'create_if_missing'?)");
    expect_unknown(o, "wal_preallcoate", "unknown option 'wal_preallcoate' "
                   "(did you mean 'wal_preallocate'?)"); /* transposition */
    expect_unknown(o, "Read_Only", "unknown option 'Read_Only' "
                   "(did you mean 'read_only'?)");
    expect_unknown(o, "walio", "unknown option 'walio' "
                   "(did you mean 'wal_io'?)");
    expect_unknown(o, "unordered_writes", "unknown option 'unordered_writes' "
                   "(did you mean 'unordered_write'?)");
    expect_unknown(o, "manual_wal_flushes", "unknown option "
                   "'manual_wal_flushes' (did you mean 'manual_wal_flush'?)");
    expect_unknown(o, "enable_pipelined_writes", "unknown option "
                   "'enable_pipelined_writes' (did you mean "
                   "'enable_pipelined_write'? it is not built yet in ravel)");
    /* a near miss of a RocksDB option ravel answers with another one */
    char *m = NULL;
    assert_int_equal(ravel_options_set(o, "max_background_compaction", "4"),
                     RAVEL_INVALID);
    m = strstr(ravel_errmsg(), "did you mean 'max_background_compactions'? "
               "it is not an option of ravel: use max_background_jobs");
    assert_non_null(m);
    expect_unknown(o, "no_such_option", "unknown option 'no_such_option'");
    expect_unknown(o, "x", "unknown option 'x'");
    expect_unknown(o, "", "unknown option ''");
    /* Longer than any name the distance is computed for. */
    char longname[300];
    memset(longname, 'w', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_int_equal(ravel_options_set(o, longname, "1"), RAVEL_INVALID);
    assert_null(strstr(ravel_errmsg(), "did you mean"));
    ravel_options_free(o);
}

static void test_null_args(void **state)
{
    (void)state;
    ravel_options *o = opts_new();
    char *out = NULL;
    assert_int_equal(ravel_options_new(NULL), RAVEL_INVALID);
    assert_int_equal(ravel_options_set(NULL, "read_only", "1"),
                     RAVEL_INVALID);
    assert_int_equal(ravel_options_set(o, NULL, "1"), RAVEL_INVALID);
    assert_int_equal(ravel_options_set(o, "read_only", NULL), RAVEL_INVALID);
    assert_int_equal(ravel_options_get(NULL, "read_only", &out),
                     RAVEL_INVALID);
    assert_int_equal(ravel_options_get(o, NULL, &out), RAVEL_INVALID);
    assert_int_equal(ravel_options_get(o, "read_only", NULL), RAVEL_INVALID);
    assert_int_equal(ravel_options_parse(NULL, "read_only=1"),
                     RAVEL_INVALID);
    assert_int_equal(ravel_options_parse(o, NULL), RAVEL_INVALID);
    ravel_options_free(o);
    ravel_options_free(NULL);
}

static void test_parse(void **state)
{
    (void)state;
    ravel_options *o = opts_new();
    assert_int_equal(ravel_options_parse(o, "  write_buffer_size = 8M ;;"
                     "read_only=true; ; wal_io=sync;\twal_recovery_mode=2 ;"),
                     RAVEL_OK);
    opt_expect_value(o, "write_buffer_size", "8388608");
    opt_expect_value(o, "read_only", "true");
    opt_expect_value(o, "wal_io", "sync");
    opt_expect_value(o, "wal_recovery_mode", "point_in_time");
    assert_int_equal(ravel_options_parse(o, ""), RAVEL_OK);
    assert_int_equal(ravel_options_parse(o, "  ;  ; "), RAVEL_OK);

    /* An item without '=' is named; earlier items stay set. */
    assert_int_equal(ravel_options_parse(o, "wal_preallocate=off; bogus item;"
                                         " wal_io=auto"), RAVEL_INVALID);
    assert_non_null(strstr(ravel_errmsg(), "'bogus item'"));
    opt_expect_value(o, "wal_preallocate", "false");
    opt_expect_value(o, "wal_io", "sync");

    /* A bad value or name inside a list names the option. */
    assert_int_equal(ravel_options_parse(o, "read_only=maybe"),
                     RAVEL_INVALID);
    assert_non_null(strstr(ravel_errmsg(), "read_only"));
    assert_non_null(strstr(ravel_errmsg(), "maybe"));
    assert_int_equal(ravel_options_parse(o, "compaction_style=1"),
                     RAVEL_INVALID);
    assert_non_null(strstr(ravel_errmsg(), "not built yet"));
    assert_int_equal(ravel_options_parse(o, "=1"), RAVEL_INVALID);
    assert_int_equal(ravel_options_parse(o, "read_only="), RAVEL_INVALID);
    ravel_options_free(o);
}

static void test_describe(void **state)
{
    (void)state;
    ravel_options *o = opts_new();
    assert_int_equal(ravel_options_parse(o, "write_buffer_size=1M;"
                                         "wal_io=uring;read_only=1;"
                                         "wal_recovery_mode=2"),
                     RAVEL_OK);
    char *text = rv_options_describe(o);
    assert_non_null(text);
    assert_non_null(strstr(text, "write_buffer_size=1048576\n"));
    assert_non_null(strstr(text, "wal_io=uring\n"));
    assert_non_null(strstr(text, "read_only=true\n"));
    assert_non_null(strstr(text, "wal_recovery_mode=point_in_time\n"));

    /* Every described line sets back to the same state. */
    ravel_options *copy = opts_new();
    char *line = text;
    int lines = 0;
    while (*line) {
        char *nl = strchr(line, '\n');
        assert_non_null(nl);
        *nl = '\0';
        assert_int_equal(ravel_options_parse(copy, line), RAVEL_OK);
        lines++;
        line = nl + 1;
    }
    assert_int_equal(lines, table_count(0));
    assert_memory_equal(copy, o, sizeof *o);
    free(text);
    ravel_options_free(copy);
    ravel_options_free(o);
}

/* A count is refused in its own unit: commit_table_size counts entries of
** the commit table, and a message saying "(3 bytes)" sends the reader
** looking for a byte size. */
static void test_range_units(void **state)
{
    (void)state;
    ravel_options *o = opts_new();
    opt_expect_bad(o, "commit_table_size", "3");
    const char *msg = ravel_errmsg();
    if (!strstr(msg, "(3 entries)") || strstr(msg, "bytes"))
        fail_msg("commit_table_size=3: message should count entries: %s",
                 msg);
    opt_expect_bad(o, "commit_table_size", "x");
    if (!strstr(ravel_errmsg(), "entries") || strstr(ravel_errmsg(), "bytes"))
        fail_msg("commit_table_size=x: message should count entries: %s",
                 ravel_errmsg());
    opt_expect_bad(o, "write_buffer_size", "3");
    assert_non_null(strstr(ravel_errmsg(), "(3 bytes)"));
    opt_expect_bad(o, "delayed_write_rate", "3");
    assert_non_null(strstr(ravel_errmsg(), "(3 bytes per second)"));
    ravel_options_free(o);
}

/* The limits as the header prints them (1K .. 1T) are accepted, and so is
** every suffix a message can print; a value past 2^64 - 1 with a suffix is
** refused as out of range, never wrapped. */
static void test_size_suffixes(void **state)
{
    (void)state;
    ravel_options *o = opts_new();
    opt_expect_set(o, "delayed_write_rate", "1T", "1099511627776");
    opt_expect_set(o, "delayed_write_rate", "1K", "1024");
    opt_expect_set(o, "block_cache_size", "1T", "1099511627776");
    opt_expect_set(o, "block_cache_size", "1t", "1099511627776");
    opt_expect_set(o, "max_bytes_for_level_base", "1P", "1125899906842624");
    opt_expect_set(o, "max_bytes_for_level_base", "1p", "1125899906842624");
    opt_expect_set(o, "soft_pending_compaction_bytes_limit", "16383P",
                   "18445618173802708992");
    opt_expect_bad(o, "delayed_write_rate", "2T");
    opt_expect_bad(o, "block_cache_size", "1025G");
    opt_expect_bad(o, "max_bytes_for_level_base", "2P");
    opt_expect_bad(o, "soft_pending_compaction_bytes_limit", "16384P");
    opt_expect_bad(o, "soft_pending_compaction_bytes_limit", "16777216T");
    opt_expect_bad(o, "soft_pending_compaction_bytes_limit", "16385P");
    opt_expect_bad(o, "block_cache_size", "1E");  /* never printed */
    opt_expect_bad(o, "block_cache_size", "1TB");
    opt_expect_bad(o, "block_cache_size", "1TT");
    /* The limits in a message are the header's. */
    opt_expect_bad(o, "delayed_write_rate", "2T");
    assert_non_null(strstr(ravel_errmsg(), "1K .. 1T"));
    ravel_options_free(o);
}

/* The int options take what RocksDB's int of the same name takes, up to
** INT_MAX (db_bench command lines give 99999 for "never"); a value RocksDB
** would take that ravel refuses is refused with the reason. */
static void test_rocksdb_int_ranges(void **state)
{
    (void)state;
    ravel_options *o = opts_new();
    static const char *const any_positive[] = {
        "level0_file_num_compaction_trigger", "level0_slowdown_writes_trigger",
        "level0_stop_writes_trigger", "max_write_buffer_number",
        "target_file_size_multiplier", "max_bytes_for_level_multiplier",
        "block_restart_interval",
    };
    for (size_t i = 0; i < sizeof any_positive / sizeof *any_positive; i++) {
        const char *n = any_positive[i];
        opt_expect_set(o, n, "99999", "99999");
        opt_expect_set(o, n, "2147483647", "2147483647");
        opt_expect_bad(o, n, "2147483648"); /* past the int it is */
        opt_expect_bad(o, n, "-1");
        if (!strstr(ravel_errmsg(), "1 .. 2147483647)") &&
            !strstr(ravel_errmsg(), "2 .. 2147483647)"))
            fail_msg("%s=-1: range not printed: %s", n, ravel_errmsg());
    }
    /* The seed's command line: all three triggers at 99999 pass the
    ** stop >= slowdown >= compaction check. */
    ravel_options *seed = opts_new();
    assert_int_equal(ravel_options_parse(seed,
                         "level0_file_num_compaction_trigger=99999;"
                         "level0_slowdown_writes_trigger=99999;"
                         "level0_stop_writes_trigger=99999"), RAVEL_OK);
    assert_int_equal(rv_options_check(seed), RAVEL_OK);
    ravel_options_free(seed);

    /* Refusals of what RocksDB takes say why. */
    static const struct { const char *name, *value, *why; } refused[] = {
        {"level0_file_num_compaction_trigger", "0", "RocksDB reads 0 as 1"},
        {"level0_slowdown_writes_trigger", "-1", "2147483647 means here"},
        {"level0_stop_writes_trigger", "0", "would stop every write"},
        {"max_write_buffer_number", "1", "RocksDB reads less than 2 as 2"},
        {"num_levels", "8", "RV_NUM_LEVELS"},
        {"max_background_jobs", "65", "one thread per job"},
        {"recycle_log_file_num", "65", "at most 64 spare WAL segments"},
        {"max_open_files", "15", "RocksDB reads fewer than 20 as 20"},
        {"max_bytes_for_level_multiplier", "1", "at least twice"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        opt_expect_bad(o, refused[i].name, refused[i].value);
        if (!strstr(ravel_errmsg(), refused[i].why))
            fail_msg("%s=%s: the message does not say why (\"%s\"): %s",
                     refused[i].name, refused[i].value, refused[i].why,
                     ravel_errmsg());
    }
    ravel_options_free(o);
}

/* Values RocksDB takes and ravel once refused: bloom_bits_per_key up to
** RocksDB's cap of 100 (the filter builder caps there too), and
** delayed_write_rate=0, RocksDB's default (16M). */
static void test_rocksdb_values_taken(void **state)
{
    (void)state;
    ravel_options *o = opts_new();
    opt_expect_set(o, "bloom_bits_per_key", "100", "100");
    opt_expect_bad(o, "bloom_bits_per_key", "101");
    assert_non_null(strstr(ravel_errmsg(), "RocksDB reads more than 100"));
    opt_expect_set(o, "delayed_write_rate", "4M", "4194304");
    opt_expect_set(o, "delayed_write_rate", "0", "16777216");
    opt_expect_bad(o, "delayed_write_rate", "1023");
    assert_non_null(strstr(ravel_errmsg(), "0 is RocksDB's default"));
    ravel_options_free(o);
}

/* RocksDB's max_open_files=-1, no limit (db_bench's default): the most
** ravel keeps open.  Other negative values of other options stay refused. */
static void test_max_open_files_unlimited(void **state)
{
    (void)state;
    ravel_options *o = opts_new();
    opt_expect_set(o, "max_open_files", "-1", "1000000");
    opt_expect_set(o, "max_open_files", "500", "500");
    assert_int_equal(ravel_options_parse(o, "max_open_files=-1"), RAVEL_OK);
    opt_expect_value(o, "max_open_files", "1000000");
    opt_expect_bad(o, "max_open_files", "-");
    opt_expect_bad(o, "max_open_files", "-0");
    opt_expect_bad(o, "max_open_files", "-1x");
    /* only -1: RocksDB reads -5 as 20, not as no limit */
    opt_expect_bad(o, "max_open_files", "-5");
    opt_expect_bad(o, "max_open_files", "-1K");
    opt_expect_bad(o, "block_restart_interval", "-1");
    ravel_options_free(o);
}

/* Copies the number before (BEFORE != 0) or after " .. " in MSG into BUF. */
static void limit_token(const char *msg, int before, char *buf, size_t size)
{
    const char *dots = strstr(msg, " .. ");
    assert_non_null(dots);
    const char *s = dots + 4, *e = s;
    if (before) {
        e = dots;
        for (s = e; s > msg && s[-1] != ' ' && s[-1] != '('; s--)
            ;
    } else {
        while (*e && *e != ')' && *e != ' ')
            e++;
    }
    assert_true(e > s && (size_t)(e - s) < size);
    memcpy(buf, s, (size_t)(e - s));
    buf[e - s] = '\0';
}

/* Sets NAME to the limit LIMIT as printed, and checks it is the limit: it
** is accepted, and the next value beyond it (below a minimum, above a
** maximum) is refused. */
static void expect_limit(ravel_options *o, const char *name,
                         const char *limit, int is_max)
{
    int rc = ravel_options_set(o, name, limit);
    if (rc != RAVEL_OK)
        fail_msg("%s: printed limit '%s' is refused: %s", name, limit,
                 ravel_errmsg());
    char *got = NULL;
    assert_int_equal(ravel_options_get(o, name, &got), RAVEL_OK);
    unsigned long long v = strtoull(got, NULL, 10);
    free(got);
    if (is_max ? v == ULLONG_MAX : v == 0)
        return;
    char beyond[32];
    snprintf(beyond, sizeof beyond, "%llu", is_max ? v + 1 : v - 1);
    if (ravel_options_set(o, name, beyond) != RAVEL_INVALID)
        fail_msg("%s: '%s' is printed as a limit, but %s is accepted", name,
                 limit, beyond);
}

/* Every limit a message prints reads back as that limit: for each option
** with a range, the range of its "bad value" and of its "out of range"
** message, set at both ends. */
static void test_printed_limits_parse(void **state)
{
    (void)state;
    ravel_options *o = opts_new();
    char *text = rv_options_describe(o);
    assert_non_null(text);
    int ranged = 0;
    for (char *line = text, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
        *nl = '\0';
        *strchr(line, '=') = '\0';
        static const char *const probes[] = {"x", "16384P"};
        for (size_t p = 0; p < 2; p++) {
            ravel_options *fresh = opts_new();
            assert_int_equal(ravel_options_set(fresh, line, probes[p]),
                             RAVEL_INVALID);
            char msg[512], lo[32], hi[32];
            snprintf(msg, sizeof msg, "%s", ravel_errmsg());
            if (!strstr(msg, " .. ")) {
                ravel_options_free(fresh);
                break; /* a boolean or an enum */
            }
            assert_non_null(strstr(msg, line));
            limit_token(msg, 1, lo, sizeof lo);
            limit_token(msg, 0, hi, sizeof hi);
            expect_limit(fresh, line, lo, 0);
            expect_limit(fresh, line, hi, 1);
            ranged += p == 0;
            ravel_options_free(fresh);
        }
    }
    assert_int_equal(ranged, table_count(1));
    free(text);
    ravel_options_free(o);
}

/* 1 if the space-separated LIST holds the word NAME. */
static int list_has(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

static const char *conflicts_of(const char *name)
{
    static struct rv_option_info info;
    for (size_t i = 0; rv_option_info(i, &info); i++)
        if (strcmp(info.name, name) == 0)
            return info.conflicts;
    fail_msg("option %s is not in the table", name);
    return NULL;
}

/* Every refusal of a combination of options comes from rv_options_check,
** which ravel_open calls, and names both options; the table lists each as
** the other's conflict, and every pair it lists has a refusal here. */
static void test_cross_option_checks(void **state)
{
    (void)state;
    static const struct { const char *opts, *a, *b; } bad[] = {
        {"write_policy=write_prepared;two_write_queues=true",
         "write_policy", "unordered_write"},
        {"write_policy=write_prepared;unordered_write=true",
         "write_policy", "two_write_queues"},
        {"two_write_queues=true;unordered_write=true",
         "two_write_queues", "write_policy"},
        {"unordered_write=true;allow_concurrent_memtable_write=false",
         "unordered_write", "allow_concurrent_memtable_write"},
        {"in_order_publication=true", "in_order_publication",
         "unordered_write"},
        {"unordered_write=true;in_order_publication=true;"
         "two_write_queues=true;write_policy=write_prepared",
         "in_order_publication", "write_policy"},
        {"wal_io=direct;manual_wal_flush=true", "wal_io",
         "manual_wal_flush"},
        {"recycle_log_file_num=1;wal_io=sync", "recycle_log_file_num",
         "wal_io"},
        {"recycle_log_file_num=64;wal_io=uring", "recycle_log_file_num",
         "wal_io"},
        {"level0_file_num_compaction_trigger=21",
         "level0_slowdown_writes_trigger",
         "level0_file_num_compaction_trigger"},
        {"level0_slowdown_writes_trigger=37", "level0_stop_writes_trigger",
         "level0_slowdown_writes_trigger"},
        {"soft_pending_compaction_bytes_limit=512G",
         "soft_pending_compaction_bytes_limit",
         "hard_pending_compaction_bytes_limit"},
    };
    static const char *const good[] = {
        "wal_io=sync;manual_wal_flush=true",
        "wal_io=auto;manual_wal_flush=true",
        "wal_io=direct;recycle_log_file_num=4",
        "wal_io=auto;recycle_log_file_num=4",
        "soft_pending_compaction_bytes_limit=512G;"
        "hard_pending_compaction_bytes_limit=0",
        "level0_file_num_compaction_trigger=36;"
        "level0_slowdown_writes_trigger=36",
    };
    size_t pairs = 0;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ravel_options *o = opts_new();
        assert_int_equal(ravel_options_parse(o, bad[i].opts), RAVEL_OK);
        if (rv_options_check(o) != RAVEL_INVALID)
            fail_msg("%s: accepted", bad[i].opts);
        const char *msg = ravel_errmsg();
        if (!strstr(msg, bad[i].a) || !strstr(msg, bad[i].b))
            fail_msg("%s: the message should name %s and %s: %s",
                     bad[i].opts, bad[i].a, bad[i].b, msg);
        if (!list_has(conflicts_of(bad[i].a), bad[i].b) ||
            !list_has(conflicts_of(bad[i].b), bad[i].a))
            fail_msg("%s: the options table should list %s and %s as each "
                     "other's conflicts", bad[i].opts, bad[i].a, bad[i].b);
        int seen = 0; /* the pair counted once */
        for (size_t j = 0; j < i; j++)
            seen |= (!strcmp(bad[j].a, bad[i].a) &&
                     !strcmp(bad[j].b, bad[i].b)) ||
                    (!strcmp(bad[j].a, bad[i].b) &&
                     !strcmp(bad[j].b, bad[i].a));
        pairs += !seen;
        ravel_options_free(o);
    }
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        ravel_options *o = opts_new();
        assert_int_equal(ravel_options_parse(o, good[i]), RAVEL_OK);
        if (rv_options_check(o) != RAVEL_OK)
            fail_msg("%s: refused: %s", good[i], ravel_errmsg());
        ravel_options_free(o);
    }
    /* Each pair the table lists (twice, once from each side) is refused
    ** above. */
    struct rv_option_info info;
    size_t listed = 0;
    for (size_t i = 0; rv_option_info(i, &info); i++) {
        for (const char *p = info.conflicts; *p; p++)
            listed += p == info.conflicts || p[-1] == ' ';
    }
    assert_int_equal(listed, 2 * pairs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bools),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_range_units),
        cmocka_unit_test(test_size_suffixes),
        cmocka_unit_test(test_printed_limits_parse),
        cmocka_unit_test(test_rocksdb_int_ranges),
        cmocka_unit_test(test_enums),
        cmocka_unit_test(test_recovery_mode_names),
        cmocka_unit_test(test_unknown_and_not_built),
        cmocka_unit_test(test_aliases),
        cmocka_unit_test(test_not_built_names_the_option_to_use),
        cmocka_unit_test(test_max_open_files_unlimited),
        cmocka_unit_test(test_rocksdb_values_taken),
        cmocka_unit_test(test_did_you_mean),
        cmocka_unit_test(test_null_args),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_describe),
        cmocka_unit_test(test_cross_option_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
