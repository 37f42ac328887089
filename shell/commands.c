/*
** commands.c -- the command table: names, usage, help, and dispatch data.
**
** These tables are the one place a command, a command-line option and the
** byte string syntax are described.  `.help`, `.help CMD`, `ravel -help`
** (which ends with the text of `.help`), the manual page ravel.1
** (manpage.c), tab completion and the "did you mean" suggestion are all
** generated from them, so they cannot disagree.  The README's "The shell"
** section holds a copy of `ravel -help`, which tests/shell checks.
*/
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "shell.h"

const struct shell_command shell_commands[] = {
    {"put", "K V", "set key K to value V", NULL, 2, 2, shell_cmd_put},
    {"get", "K [--for-update]", "print the value of K, or (not found)",
     "In a transaction, get reads as the transaction sees: the database as\n"
     "of its begin, with its own writes.  --for-update (only there) also\n"
     "makes K the transaction's, as a write does: locked until it ends, or,\n"
     "in an optimistic one, checked at commit; if another writer changed K\n"
     "since the transaction began, it is an error (a conflict).",
     -1, -1, shell_cmd_get},
    {"del", "K", "delete K (an absent K is not an error)", NULL,
     1, 1, shell_cmd_del},
    {"del-range", "BEGIN END", "delete every key K with BEGIN <= K < END",
     "One range delete (ravel_delete_range), not a delete per key: every key\n"
     "K with BEGIN <= K < END in bytewise order is deleted, END itself kept.\n"
     "BEGIN equal to END deletes nothing; BEGIN after END is an error.  In a\n"
     "batch it is added to the batch; in a transaction it is refused (the\n"
     "lock table locks keys, not ranges), and so it is outside one once a\n"
     "transaction has begun in this session's database.",
     2, 2, shell_cmd_del_range},
    {"scan", "[FROM [TO]] [--from F] [--to T] [--prefix P] [--limit N] "
             "[--reverse]",
     "list keys and values in key order",
     "Lists the keys K with FROM <= K < TO in bytewise key order, one\n"
     "\"KEY<tab>VALUE\" per line in .mode text.  FROM and TO may be omitted,\n"
     "or given as --from F and --to T.  --prefix P keeps the keys that start\n"
     "with P: scan --prefix user: lists user:1, user:2 ... and stops, where\n"
     "scan user: starts at user: and goes on to the last key.  --limit N\n"
     "stops after N keys; --reverse lists the same range from its end down.\n"
     "A range that can hold no key (FROM not below TO, or a prefix outside\n"
     "them) is an error that says so, not an empty listing.  Control-C stops\n"
     "a long scan.",
     -1, -1, shell_cmd_scan},
    {"count", "[FROM [TO]] [--from F] [--to T] [--prefix P]",
     "count the keys in a range, as scan lists them", NULL, -1, -1,
     shell_cmd_count},
    {"batch", "", "start a batch: put and del wait for commit",
     "Starts a batch.  Until commit or abort, put and del (and .import) add\n"
     "to it instead of writing; reads do not see them yet, and the prompt\n"
     "counts them: ravel (batch 3)>.  commit writes the whole batch with one\n"
     "atomic write: every reader sees all of it or none of it.  In a script,\n"
     "an error inside the batch makes commit refuse (nothing is written); at\n"
     "the end of input an open batch is discarded.  A transaction (begin)\n"
     "does the same and more: its reads see its writes.",
     0, 0, shell_cmd_batch},
    {"commit", "", "write the open batch or transaction (all or nothing)",
     "Ends the open batch or transaction, writing all of it atomically, or\n"
     "nothing.  A transaction's commit checks that no other writer changed\n"
     "a key it wrote or read with get --for-update since it began (an\n"
     "optimistic one checks here for the first time).  A commit that fails\n"
     "ends the transaction all the same, writing nothing; when the failure\n"
     "is retriable (a conflict, a lock wait that timed out, a deadlock),\n"
     "begin again and run the same commands.  A prepared transaction whose\n"
     "commit fails stays prepared.  In a script, a batch or transaction\n"
     "that saw an error is not committed: nothing is written.",
     0, 0, shell_cmd_commit},
    {"abort", "", "discard the open batch (or roll back the transaction)",
     NULL, 0, 0, shell_cmd_rollback},
    {"begin", "[--optimistic] [--sync]",
     "start a transaction: its reads see its writes",
     "Starts a transaction.  Until commit or rollback, put, del and .import\n"
     "write through it, and get, scan, count and .dump read through it: the\n"
     "database as it was at begin, with the transaction's own writes.  No\n"
     "one else sees its writes before commit, which writes them all at\n"
     "once.  Each key it writes or reads with get --for-update is locked\n"
     "until it ends (a writer that waits longer than the option\n"
     "txn_lock_timeout fails); --optimistic takes no locks and checks the\n"
     "keys at commit instead.  --sync (or .sync on) makes commit wait for\n"
     "stable storage.  The prompt shows it: ravel (txn)>, ravel (txn\n"
     "optimistic)>.  A command that fails inside it leaves it open; if the\n"
     "error is retriable (another writer changed a key since begin: a\n"
     "conflict; a lock wait timed out; a deadlock), roll back and run it\n"
     "again.  begin creates a database that does not exist yet (a\n"
     "transaction needs one).  A transaction still open at the end of the\n"
     "session is rolled back (in a script, an error).",
     -1, -1, shell_cmd_begin},
    {"rollback", "", "roll back the transaction (or abort the batch)",
     NULL, 0, 0, shell_cmd_rollback},
    {"savepoint", "", "mark the transaction, for rollback-to-savepoint",
     "Sets a savepoint in the open transaction; savepoints nest, and the\n"
     "prompt counts them: ravel (txn, 1 savepoint)>.",
     0, 0, shell_cmd_savepoint},
    {"rollback-to-savepoint", "", "undo the writes since the last savepoint",
     "Undoes the transaction's writes since the last savepoint, releases\n"
     "the locks taken since, and removes the savepoint; the transaction\n"
     "stays open.",
     0, 0, shell_cmd_rollback_to_savepoint},
    {"prepare", "NAME", "prepare the transaction (two-phase commit)",
     "The first phase of a two-phase commit: names the transaction NAME and\n"
     "writes it durably (under --sync) without making it visible; its keys\n"
     "stay locked.  It then takes reads, commit and rollback, not writes;\n"
     "the prompt says ravel (prepared NAME)>.  If the session ends first,\n"
     "it stays prepared, also across a crash: a later session lists it\n"
     "(prepared) and takes it back with recover NAME.",
     1, 1, shell_cmd_prepare},
    {"prepared", "", "list the prepared transactions, by name",
     "Prints the names of the prepared transactions not yet committed or\n"
     "rolled back, one per line (the ravel.prepared-transactions\n"
     "property).",
     0, 0, shell_cmd_prepared},
    {"recover", "NAME", "take a prepared transaction back, to end it",
     "Makes the prepared transaction NAME (one a session left prepared)\n"
     "the open transaction again, for commit or rollback.",
     1, 1, shell_cmd_recover},
    {"snapshot", "", "pin the current state for later reads",
     "Takes a snapshot.  get, scan, count and .dump read from it until\n"
     "release, whatever is written meanwhile.  Prints its sequence number;\n"
     "the prompt shows it, ravel (snapshot 42)>, while it is held.",
     0, 0, shell_cmd_snapshot},
    {"release", "", "release the snapshot: read the latest state",
     NULL, 0, 0, shell_cmd_release},
    {"stats", "", "write-path statistics (the ravel.stats property)", NULL, 0,
     0, shell_cmd_stats},
    {"property", "NAME", "print a database property, such as ravel.stats",
     "Prints a property of the open database (ravel_property).  NAME is\n"
     "one of these; RocksDB's name rocksdb.X is taken too for those marked\n"
     "*, and each older name (was ...) still works.  Tab completes NAME.",
     1, 1, shell_cmd_property},
    {"flush-wal", "[--sync]", "flush the WAL (--sync: to stable storage)",
     "Every acknowledged write is already in the operating system's page\n"
     "cache (ravel keeps no WAL buffer of its own), so it survives a crash\n"
     "of this process.  --sync also waits until every write acknowledged so\n"
     "far is on stable storage, surviving power loss.",
     -1, -1, shell_cmd_flush_wal},
    {"flush", "[--no-wait]", "write the memtables to table files",
     "Writes the active memtable, and every older one still in memory, to\n"
     "table files, and returns once they are on stable storage and named by\n"
     "the manifest; the WAL segments they replace are then deleted.\n"
     "--no-wait starts the flush and returns at once.  An empty memtable\n"
     "is not flushed.",
     -1, -1, shell_cmd_flush},
    {"compact", "[FROM [TO]]", "compact a key range down the levels",
     "Flushes the memtables, then compacts the keys from FROM to TO (both\n"
     "included; without them, every key) down to the last level holding\n"
     "data, dropping the versions and deletions no snapshot needs, and\n"
     "returns once done (ravel_compact_range).  files shows the result.",
     0, 2, shell_cmd_compact},
    {"files", "", "list the table files (the ravel.sstables property)",
     "One line per table file: its level, number, size in bytes, entries,\n"
     "smallest and largest user keys (cut at 48 bytes, other bytes than\n"
     "printable ASCII as \\xHH) and sequence numbers.  .sst dumps one.",
     0, 0, shell_cmd_files},
    {".help", "[CMD]", "this list, or the details of one command (or help)",
     NULL, 0, 1, shell_cmd_help},
    {".quit", "", "leave the shell (or .exit, exit, quit, end of input)",
     NULL, 0, 0, shell_cmd_quit},
    {".open", "DIR", "close this database and open the one in DIR",
     "Closes the database (releasing the snapshot; an open batch or\n"
     "transaction must be ended first) and opens the one in DIR with the\n"
     "same options (-o, -readonly).  As at the start, a DIR with no\n"
     "database is created by the first write.  If DIR cannot be opened,\n"
     "the session keeps the database it had.",
     1, 1, shell_cmd_open},
    {".timer", "on|off", "print the time each command takes", NULL, 0, 1,
     shell_cmd_timer},
    {".mode", "text|hex|quote|json|csv", "how keys and values are printed",
     "text: printable characters as they are, other bytes escaped (\\n, \\t,\n"
     "\\\\, \\xHH); scan prints KEY<tab>VALUE.  hex: x'6869'.  quote: \"hi\\x00\",\n"
     "every byte that is not printable ASCII escaped; scan prints \"KEY\"\n"
     "\"VALUE\", which put reads back exactly (hex and quote are the shell's\n"
     "own syntax, safe for any bytes).  json: one {\"key\":..,\"value\":..}\n"
     "object per line, \"key_hex\" and \"value_hex\" for bytes that are not\n"
     "UTF-8.  csv: KEY,VALUE lines (RFC 4180), bytes as they are, for files\n"
     "and spreadsheets; get of a missing key prints KEY, with nothing after\n"
     "the comma.  Without an argument, prints the current mode.",
     0, 1, shell_cmd_mode},
    {".sync", "on|off", "writes wait for stable storage (RAVEL_SYNC)",
     NULL, 0, 1, shell_cmd_sync},
    {".options", "", "the options the database was opened with", NULL, 0, 0,
     shell_cmd_options},
    {".import", "[--csv|--tsv|--json] [--sst OUT] FILE",
     "load pairs from CSV, tab-separated or JSON lines",
     "Reads FILE and puts every pair, in batched writes.  The format is\n"
     "the option's; else the extension's (.csv; .tsv or .tab; .json, .jsonl\n"
     "or .ndjson); else JSON lines (the .dump format) if the first non-blank\n"
     "byte is '{'; else CSV in .mode csv; else tab-separated.  CSV: KEY,VALUE\n"
     "records as RFC 4180 (and .mode csv) writes them.  Tab-separated:\n"
     "KEY<tab>VALUE per line, both taken literally (a trailing CR is\n"
     "dropped).  FILE is checked whole first: a bad line imports nothing,\n"
     "and the error names its line.  Inside a batch, the pairs join the\n"
     "batch.  Long imports show progress.\n"
     "--sst OUT writes the pairs to a new table file OUT instead of the\n"
     "database (no database is needed), for .ingest: the keys must be in\n"
     "strictly increasing bytewise order, and a key out of order is an\n"
     "error naming its line (OUT is then removed).",
     -1, -1, shell_cmd_import},
    {".ingest", "[--move] FILE...", "add table files (.import --sst) at once",
     "Adds the table files, written by ravel_sst_writer or .import --sst,\n"
     "to the database in one step (ravel_ingest): every reader sees all of\n"
     "them or none, and their keys replace older values.  Files whose key\n"
     "ranges overlap each other, a missing, damaged or foreign file: the\n"
     "error names it and nothing is added.  The files are copied; --move\n"
     "removes them once the ingest is durable.",
     -1, -1, shell_cmd_ingest},
    {".dump", "[FILE]", "write every pair as JSON lines (.import reads it)",
     "Writes the database (or the snapshot) to FILE, or to the output, one\n"
     "{\"key\":..,\"value\":..} line per key.  .import reads it back\n"
     "exactly, whatever bytes the keys and values hold.",
     0, 1, shell_cmd_dump},
    {".read", "FILE", "run the commands in FILE", NULL, 1, 1, shell_cmd_read},
    {".output", "[FILE]", "send output to FILE, or back to the screen",
     "Sends the output of the commands that follow to FILE (created or\n"
     "emptied), or to the standard input of a command for |COMMAND, as in\n"
     ".output |sort -r (the rest of the line is the command).  Without FILE\n"
     "(or with -), back to the screen.  Errors and notes stay on the screen;\n"
     "a command that stops reading early (|head) ends the redirection\n"
     "quietly.",
     -1, -1, shell_cmd_output},
    {".once", "FILE", "send the next command's output to FILE (or |COMMAND)",
     NULL, -1, -1, shell_cmd_once},
    {".shell", "COMMAND ...", "run a command of the system shell (or .system)",
     "Runs the rest of the line, as typed, with /bin/sh -c.  A command that\n"
     "fails (a status other than 0) is an error, as for -bail and the exit\n"
     "code.",
     -1, -1, shell_cmd_shell},
    {".verify", "", "check every block of every table file",
     "Reads every block of every table file of the database and checks its\n"
     "checksum and structure.  Prints \"ok: N files checked\", or fails\n"
     "with the first damage found, naming the file and the byte offset.",
     0, 0, shell_cmd_verify},
    {".sst", "FILE [--entries] [--limit N] [--verify]",
     "dump a table file, as ravel-sst does",
     "Prints what the table file FILE holds (any file named NNNNNN.sst: the\n"
     "number in the name seeds its checksums): its footer; its properties\n"
     "(entries, deletions, block sizes, key and sequence ranges, creation\n"
     "time, session id, bloom bits per key, compression); and its index,\n"
     "each data block's offset, size, compression and last key.  Keys are\n"
     "shown as KEY @ SEQUENCE TYPE.\n"
     "--entries lists the entries, KEY<tab>SEQUENCE<tab>TYPE<tab>VALUE\n"
     "(escaped as .mode says; JSON objects in .mode json); --limit N lists\n"
     "at most N of them.  --verify reads and checks every block instead of\n"
     "printing the properties and the index.",
     -1, -1, shell_cmd_sst},
    {".follow", "[SEQ] [--limit N] [--no-wait]",
     "print changes as they commit (the change feed)",
     "Prints the batches committed from sequence SEQ on (without SEQ: those\n"
     "committed from now on), read back from the WAL (ravel_updates_since),\n"
     "and waits for more until interrupted (Ctrl-C), N batches were\n"
     "printed (--limit), or, with --no-wait, the end of what is written.\n"
     "One line per operation: its sequence, put or del, the key and the\n"
     "value, escaped as .mode says; in .mode json (or -json) one line per\n"
     "batch, {\"seq\":N,\"ops\":[{\"op\":\"put\",\"key\":..,\"value\":..}]}.\n"
     "A sequence no longer in the WAL is an error (RAVEL_EXPIRED): keep\n"
     "flushed segments with -o wal_ttl_seconds=N or wal_size_limit_mb=N.",
     -1, -1, shell_cmd_follow},
    {".repair", "[DIR]", "salvage a damaged database, as ravel-repair does",
     "Runs ravel_repair on DIR, or on this session's database (closed for\n"
     "it and opened again after): every block of every table file and\n"
     "every WAL record that verifies is kept, the newest version of each\n"
     "key wins, and the result is written as new table files with a new\n"
     "manifest.  The original files are moved, unchanged, into\n"
     "DIR/lost-repair-TIME/.  Prints the report, one \"KIND: text\" line\n"
     "each (note, kept, lost, warn): what was kept and what was lost, with\n"
     "the key ranges.  A database another process has open is refused.",
     0, 1, shell_cmd_repair},
    {".checkpoint", "DIR", "copy the database, as of now, into a new DIR",
     "Makes DIR (which must not exist) a database holding the state of this\n"
     "one at one moment during the command: every write made before it is\n"
     "there (ravel_checkpoint).  Table files are hard-linked when DIR is on\n"
     "the same file system and copied when not; writers pause only for a\n"
     "memtable switch.  Open the copy with .open DIR or ravel DIR.  With\n"
     "-readonly (beside the application that writes the database) it\n"
     "catches up first and copies the state it then reads, writing nothing\n"
     "into the database's directory.",
     1, 1, shell_cmd_checkpoint},
    {".backup", "DIR/|FILE", "back up into a backup root, or into one file",
     "With a directory (one that exists, or a path ending in /): takes an\n"
     "incremental backup into that backup root, sharing the table files\n"
     "earlier backups copied, and prints its number, its size and the bytes\n"
     "it copied (ravel_backup_create).  Otherwise writes a full backup into\n"
     "the new file FILE, checksummed throughout (ravel_backup_write_file);\n"
     "- writes it to standard output, for a pipe (ssh, object storage).\n"
     "With -readonly it backs up a database another process has open, as\n"
     ".checkpoint does.  .backups lists, verifies and purges a root;\n"
     ".restore restores.",
     1, 1, shell_cmd_backup},
    {".backups", "ROOT [--verify] [--keep N]",
     "list the backups of a backup root",
     "One line per complete backup of ROOT, oldest first: its number, when\n"
     "it was taken (UTC, and seconds since 1970), its last sequence number, its size, the bytes it copied\n"
     "and its files.  --verify reads every file of each and checks its\n"
     "checksum (ravel_backup_verify).  --keep N first deletes all but the N\n"
     "newest backups and the files only they used (ravel_backup_purge).",
     -1, -1, shell_cmd_backups},
    {".restore", "FROM DIR [ID]", "restore a backup into a new DIR",
     "FROM is a backup root (restores backup ID, or the newest) or a\n"
     "one-file backup (- reads one from standard input).  Every file is checked against its checksum; DIR\n"
     "(which must not exist) appears only once all is there and synced.\n"
     "The session's database is not changed: .open DIR to use the copy.",
     2, 3, shell_cmd_restore},
    {".catchup", "[auto MS | auto | off]",
     "-readonly: see the writer's latest writes",
     "With -readonly, the shell is a reader beside the application that\n"
     "writes the database (in another process, or none).  .catchup catches\n"
     "up once and prints the sequence now seen: every write the writer had\n"
     "acknowledged before is visible (not those still in its buffer with\n"
     "manual_wal_flush, nor RAVEL_NO_WAL ones until flushed).  .catchup auto\n"
     "MS reopens the database with catch_up_interval_ms=MS, so it catches\n"
     "up by itself every MS milliseconds; .catchup off stops that; .catchup\n"
     "auto prints the interval in force.  Reopening releases the snapshot.\n"
     "A snapshot taken before a catch-up keeps showing its state.",
     0, 2, shell_cmd_catchup},
    {NULL, NULL, NULL, NULL, 0, 0, NULL},
};

/* Names that run a command without being listed. */
static const struct {
    const char *alias, *name;
} commands_aliases[] = {
    {".exit", ".quit"},
    {"exit", ".quit"},
    {"quit", ".quit"},
    {"help", ".help"},
    {".system", ".shell"},
    {"delete", "del"},
    {"delete-range", "del-range"},
    {"flush_wal", "flush-wal"},
};

const struct shell_command *shell_command_find(const char *name)
{
    for (size_t i = 0; i < sizeof commands_aliases / sizeof *commands_aliases;
         i++)
        if (strcasecmp(name, commands_aliases[i].alias) == 0)
            name = commands_aliases[i].name;
    for (const struct shell_command *c = shell_commands; c->name; c++)
        if (strcasecmp(c->name, name) == 0)
            return c;
    return NULL;
}

/* Optimal string alignment distance (Levenshtein plus transpositions),
** ignoring case; names are short. */
static int commands_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 31 || lb > 31)
        return 99;
    int d[32][32];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            int cost = tolower((unsigned char)a[i - 1]) !=
                       tolower((unsigned char)b[j - 1]);
            int v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v)
                v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
                a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    }
    return d[la][lb];
}

static void commands_consider(const char *name, const char *candidate,
                              const char **best, int *best_d)
{
    /* "quit" is ".quit" missing its dot: distance 0 on the bare names. */
    const char *bare = candidate[0] == '.' ? candidate + 1 : candidate;
    const char *given = name[0] == '.' ? name + 1 : name;
    int d = commands_distance(given, bare);
    if (d < *best_d) {
        *best_d = d;
        *best = candidate;
    }
}

const char *shell_command_suggest(const char *name)
{
    const char *best = NULL;
    int best_d = 99;
    for (const struct shell_command *c = shell_commands; c->name; c++)
        commands_consider(name, c->name, &best, &best_d);
    for (size_t i = 0; i < sizeof commands_aliases / sizeof *commands_aliases;
         i++)
        commands_consider(name, commands_aliases[i].alias, &best, &best_d);
    size_t len = strlen(name[0] == '.' ? name + 1 : name);
    int limit = len <= 4 ? 1 : 2;
    return best_d <= limit ? best : NULL;
}

const char shell_description[] =
    "Opens the ravel database in directory DIR and runs commands: the\n"
    "COMMANDs given as arguments, else the lines of standard input --\n"
    "interactively (prompt, line editing, history in ~/.ravel_history) when\n"
    "it is a terminal.  A DIR holding no database is created by the first\n"
    "command that writes; until then reads see it empty, and a session that\n"
    "only reads leaves nothing on disk.  First, ~/.ravelrc (or the -init\n"
    "FILE) is run, then each -cmd COMMAND.";

const struct shell_option shell_options[] = {
    {"-bail", "", "stop at the first error"},
    {"-batch", "", "no prompts or banner, even on a terminal"},
    {"-interactive", "", "prompts and banner, even from a pipe"},
    {"-readonly", "", "open the database read-only (it must exist), beside\n"
     "the application writing it: .catchup follows it"},
    {"-cmd", "COMMAND", "run COMMAND before the others (or before\n"
                        "the interactive session); repeatable"},
    {"-init", "FILE", "run FILE first instead of ~/.ravelrc"},
    {"-json", "", "start in .mode json"},
    {"-csv", "", "start in .mode csv (also -quote, -hex and\n"
                 "-text)"},
    {"-o", "NAME=VALUE", "set a database option (ravel(1) lists\n"
                         "them), e.g. -o wal_io=sync; repeatable"},
    {"-version", "", "print the version and exit"},
    {"-manpage", "", "print the manual page ravel(1) (roff) and exit"},
    {"-help", "", "print this text and exit"},
    {NULL, NULL, NULL},
};

const char shell_exit_status[] = "The exit code is 1 if a command failed, "
                                 "else 0.";

const struct shell_syntax shell_syntaxes[] = {
    {"word", "a word without blanks, taken literally"},
    {"\"a b\\n\\x00\"", "C escapes: \\n \\t \\r \\0 \\\\ \\\" \\xHH \\NNN"},
    {"'it''s'", "SQL quoting, taken literally"},
    {"x'68656c6c6f'", "hex bytes"},
    {NULL, NULL},
};

const char shell_syntax_notes[] =
    "Output escapes bytes that are not printable.  Lines starting with\n"
    "# or -- are comments.  \".help CMD\" tells more about one command.";

/* "  HEAD                    TEXT", TEXT's later lines under its first. */
static void commands_two_columns(FILE *f, const char *head, const char *text)
{
    if (strlen(head) <= 22)
        fprintf(f, "  %-22s  ", head);
    else
        fprintf(f, "  %s\n  %-22s  ", head, "");
    for (const char *p = text; *p; p++) {
        fputc(*p, f);
        if (*p == '\n')
            fprintf(f, "%26s", "");
    }
    fputc('\n', f);
}

void shell_usage(FILE *f)
{
    fprintf(f, "Usage: ravel [OPTIONS] DIR [COMMAND ...]\n\n%s\n\nOptions:\n",
            shell_description);
    for (const struct shell_option *o = shell_options; o->name; o++) {
        char head[64];
        snprintf(head, sizeof head, "%s%s%s", o->name, o->arg[0] ? " " : "",
                 o->arg);
        commands_two_columns(f, head, o->help);
    }
    fprintf(f, "%s\n\n", shell_exit_status);
}

static void commands_help_line(FILE *f, const struct shell_command *c)
{
    char head[96];
    snprintf(head, sizeof head, "%s%s%s", c->name, c->args[0] ? " " : "",
             c->args);
    commands_two_columns(f, head, c->summary);
}

void shell_help_all(FILE *f)
{
    fputs("Commands:\n", f);
    const struct shell_command *c = shell_commands;
    for (; c->name && c->name[0] != '.'; c++)
        commands_help_line(f, c);
    fputs("\nDot commands (the session, and checks of the files):\n", f);
    for (; c->name; c++)
        commands_help_line(f, c);
    fputs("\nKeys and values are byte strings, written as:\n", f);
    for (const struct shell_syntax *x = shell_syntaxes; x->form; x++)
        commands_two_columns(f, x->form, x->meaning);
    fprintf(f, "%s\n", shell_syntax_notes);
}

int shell_help_one(FILE *f, const char *name)
{
    const struct shell_command *c = shell_command_find(name);
    if (!c)
        return -1;
    fprintf(f, "usage: %s%s%s\n%s.\n", c->name, c->args[0] ? " " : "",
            c->args, c->summary);
    if (c->details)
        fprintf(f, "\n%s\n", c->details);
    if (c->run == shell_cmd_property)
        shell_property_help(f);
    return 0;
}

void shell_usage_error(struct shell *s, const struct shell_command *c)
{
    shell_error(s, "usage: %s%s%s", c->name, c->args[0] ? " " : "", c->args);
}
