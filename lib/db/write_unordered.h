/*
** write_unordered.h -- the write path of the unordered modes
** (unordered_write; docs/ordering.md), called by db_write.c.
**
** In every unordered mode the leader of a write group does what it does
** in the ordered mode up to the WAL write (db_write.c), then releases the
** group (rv_write_unordered_release): the next group forms at once while
** each member inserts its own batch (rv_write_unordered_insert).  What
** makes a batch visible differs:
**   unordered             the leader publishes the group's last sequence
**                         before releasing it: read-your-own-writes only;
**   in-order publication  each batch, once inserted, is published as soon
**                         as every earlier batch is (the order ring); its
**                         writer returns once it is;
**   write_prepared        each batch, once inserted, joins the commit
**                         queue, whose leader gives the group a commit
**                         sequence, records it in the commit table for
**                         every prepared sequence, and publishes it.
** A memtable switch waits until every released insert is done
** (rv_write_wait_for_inserts), so a flush never reads a memtable that is
** still being written.
*/
#ifndef RAVEL_WRITE_UNORDERED_H
#define RAVEL_WRITE_UNORDERED_H

#include "db/db.h"

/* Sets up what DB's ordering mode needs (the order ring, the commit
** table) once recovery has set last_seq; tears it down. */
RAVEL_PRIVATE int rv_write_ordering_init(ravel_db *db);
RAVEL_PRIVATE void rv_write_ordering_destroy(ravel_db *db);

/* Leader only: reserves N consecutive sequences, the first in *FIRST.
** With write_prepared, waits while they would run more than the commit
** table's size past the commit watermark (commit_table.h); returns the
** refusal if writes are stopped meanwhile. */
RAVEL_PRIVATE int rv_write_reserve_sequences(ravel_db *db, uint64_t n,
                                             uint64_t *first);

/* Leader only: waits until no released insert is in flight. */
RAVEL_PRIVATE void rv_write_wait_for_inserts(ravel_db *db);

/* The most writers one group may hold: what the order ring can take at
** once (INT_MAX when the mode has no ring). */
RAVEL_PRIVATE int rv_write_unordered_max_group(ravel_db *db);

/* Leader only, after G's WAL write: publishes or queues G's batches as
** the mode wants, releases the group, and inserts the leader's own batch.
** Returns RAVEL_OK once the leader's write is complete (its status
** final), or, having released and published nothing, the refusal if
** writes stopped while it waited for room in the order ring, or the
** error of a transaction's commit the leader inserts first
** (unordered_write alone, RV_WRITE_ATOMIC): the caller fails the
** group. */
RAVEL_PRIVATE int rv_write_unordered_release(ravel_db *db,
                                             struct rv_write_group *g,
                                             struct rv_writer *leader);

/* A released member: inserts W's batch and completes it as the mode
** wants.  Returns once W's write is complete (its status final). */
RAVEL_PRIVATE void rv_write_unordered_insert(ravel_db *db,
                                             struct rv_writer *w);

/* Inserts W's batch into MEM at W's sequences (db_write.c).  On failure
** stops writes and returns the code. */
RAVEL_PRIVATE int rv_write_insert_batch(ravel_db *db, rv_memtable *mem,
                                        const struct rv_writer *w);

#endif /* RAVEL_WRITE_UNORDERED_H */
