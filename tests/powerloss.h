/*
** powerloss.h -- simulating a power loss on a database directory, for the
** tests.
**
** A process under test opens the library's sync journal (test builds:
** lib/util/sync_journal.h) before it opens a database; the library then
** appends one line per completed fsync/fdatasync.  After the process is
** killed, tu_power_loss() reads the journal and takes away what a power
** loss may take: every byte of a file past what its last completed sync
** covered, in 4 KiB pages, in one of several patterns, and every directory
** entry no directory fsync covered.  Bytes a completed sync covered are
** never touched: that is the promise fdatasync makes.
*/
#ifndef RAVEL_TEST_POWERLOSS_H
#define RAVEL_TEST_POWERLOSS_H

#include <stdint.h>

enum tu_power_loss_pattern {
    TU_PL_TRUNCATE,     /* unsynced bytes gone, files cut where syncs ended,
                        ** unsynced directory entries gone */
    TU_PL_ZERO,         /* unsynced pages read back as zeros, sizes kept */
    TU_PL_RANDOM_PAGES, /* each unsynced page kept or zeroed at random: the
                        ** page cache wrote back some, in no order */
    TU_PL_PREFIX,       /* unsynced pages kept up to a random page, the rest
                        ** zeroed: in-order write-back cut short */
    TU_PL_ONE_HOLE,     /* one unsynced page zeroed, the ones after it kept */
    TU_PL_TORN_SECTORS, /* every unsynced page keeps a random prefix of its
                        ** 512-byte sectors: torn page writes */
    TU_PL_PATTERNS
};

/* The pattern's name, for test output. */
const char *tu_power_loss_name(enum tu_power_loss_pattern p);

/* Opens the library's sync journal at PATH in this process (a test build
** of the library has it); fails the test if it cannot. */
void tu_sync_journal_start(const char *path);

/* Damages DIR as PATTERN says, from the sync journal JOURNAL, choosing
** pages with the PRNG state *RNG.  Prints one line per file it changed.
** Returns the number of bytes or entries it took away (0 if the journal
** covered everything). */
uint64_t tu_power_loss(const char *dir, const char *journal,
                       enum tu_power_loss_pattern pattern, uint64_t *rng);

#endif /* RAVEL_TEST_POWERLOSS_H */
