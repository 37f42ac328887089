/*
** write_group.h -- the leader/follower protocol that turns concurrent
** writers into write groups.
**
** A writer joins a FIFO queue.  The writer at the head leads: it gathers
** the writers queued behind it (up to a byte cap) into a group, does the
** group's shared work (sequence numbers, one WAL write -- db_write.c), then
** either lets every member insert its own batch into the memtable at once
** or inserts them all itself.  The member that finishes last completes the
** group: the caller publishes the group's last sequence -- or, if any
** member's insert failed (recorded in the group's FAILED), publishes
** nothing and gives every member the error -- then rv_write_group_complete
** hands leadership to the next writer in the queue and releases the
** members.  Only one group is in progress at a time.
**
** Only writers with a batch join the queue: ravel_close does not queue,
** it waits at the database's gate (db.c) until no call is in progress.
**
** Waiting is adaptive: a writer spins briefly, then sleeps on a futex, so
** idle waiters cost no CPU; a waker makes a system call only if the
** waiter is actually asleep.
**
** The unordered modes (unordered_write) release a group right after its
** WAL write instead (rv_write_group_release): leadership passes on and
** every member inserts on its own, while the next group forms.  With
** write_prepared a second queue, of commits, uses this same protocol.
*/
#ifndef RAVEL_WRITE_GROUP_H
#define RAVEL_WRITE_GROUP_H

#include "ravel_int.h"
#include "util/mutex.h"

#include <pthread.h>

/* Writer states.  A writer's state is written by the thread that moves it
** on (leader, completer) and read by the writer itself. */
enum rv_writer_state {
    RV_WRITER_WAITING = 0,  /* queued, awake (spinning) */
    RV_WRITER_SLEEPING = 1, /* queued, asleep on the futex */
    RV_WRITER_LEADER = 2,   /* at the head of the queue: lead a group */
    RV_WRITER_INSERT = 3,   /* member: insert your batch, then report done */
    RV_WRITER_DONE = 4,     /* your group is complete; status is final */
};

struct rv_write_group;

struct rv_writer {
    struct ravel_batch *batch;  /* the caller's batch (read-only) */
    int flags;                  /* RAVEL_SYNC, RAVEL_NO_WAL,
                                ** RAVEL_NO_SLOWDOWN */
    size_t size;                /* batch bytes, for the group cap */
    uint64_t seqs;              /* sequences the batch takes (its ops) */
    uint64_t first_seq;         /* set by the leader */
    uint64_t wal_end;           /* logical WAL offset after the record;
                                ** for ravel_flush's request, the new
                                ** active memtable's segment instead */
    uint64_t wal_segment;       /* the WAL segment the record went to */
    int status;                 /* set by the leader or the completer
                                ** before DONE (release), final at DONE */
    struct rv_write_group *group; /* set by the leader before INSERT
                                ** (ordered mode) */
    /* Unordered modes, set by the leader before INSERT: where to insert,
    ** and the batch's position in the database's order ring. */
    void *memtable;
    uint64_t order_pos;
    /* An exclusive writer (ravel_ingest, db/ingest.c): instead of a
    ** batch, its leader runs exclusive(exclusive_ctx, itself) in a group
    ** of its own, no other group in progress, and the result is its
    ** status.  NULL for a batch.  Set by the writer before it queues. */
    int (*exclusive)(void *ctx, struct rv_writer *self);
    void *exclusive_ctx;
    _Atomic uint32_t state;     /* enum rv_writer_state; futex word */
    struct rv_writer *next;     /* next queued writer; queue mutex */
};

struct rv_write_group {
    struct rv_writer *leader;   /* first member */
    struct rv_writer *last;     /* last member; leader..last via next */
    int size;                   /* members */
    size_t bytes;               /* sum of member batch sizes */
    uint64_t last_seq;          /* set by the leader */
    void *memtable;             /* where members insert (set by leader) */
    _Atomic int pending;        /* members still inserting */
    _Atomic int failed;         /* 0, or the result code of the first
                                ** failed insert; set by members (CAS),
                                ** read by the completer after the last
                                ** rv_write_group_insert_done (acq_rel) */
};

struct rv_write_queue {
    rv_mutex mu;         /* guards head, tail and every next link */
    struct rv_writer *head;     /* current group's leader, or NULL */
    struct rv_writer *tail;
    /* Statistics, written by leaders only (relaxed). */
    _Atomic uint64_t groups;
    _Atomic uint64_t writers;
    _Atomic uint64_t max_group;
};

RAVEL_PRIVATE void rv_write_queue_init(struct rv_write_queue *q);
RAVEL_PRIVATE void rv_write_queue_destroy(struct rv_write_queue *q);

/* Queues W and waits until it leads, must insert, or is done.  Returns the
** state reached (LEADER, INSERT or DONE). */
RAVEL_PRIVATE int rv_write_queue_join(struct rv_write_queue *q,
                                      struct rv_writer *w);

/* Leader only: forms G from LEADER and the writers queued behind it, up to
** MAX_BYTES (a smaller cap when the leader's own batch is small, so a tiny
** write does not wait behind a huge group), MAX_SEQS sequences and
** MAX_WRITERS members (the leader always belongs to its group). */
RAVEL_PRIVATE void rv_write_group_form(struct rv_write_queue *q,
                                       struct rv_writer *leader,
                                       struct rv_write_group *g,
                                       size_t max_bytes, uint64_t max_seqs,
                                       int max_writers);

/* Leader only: sets every member to INSERT (waking them) so they insert
** their own batches; G->pending counts them, the leader included. */
RAVEL_PRIVATE void rv_write_group_launch(struct rv_write_group *g);

/* A member's insert failed with RC: the group will publish nothing.  The
** first failure's code is kept. */
RAVEL_PRIVATE void rv_write_group_insert_failed(struct rv_write_group *g,
                                                int rc);

/* A member finished inserting.  Returns 1 if it was the last one: the
** caller must then publish (unless G->failed) and call
** rv_write_group_complete. */
RAVEL_PRIVATE int rv_write_group_insert_done(struct rv_write_group *g);

/* Completes G (called by exactly one member, SELF): hands leadership to
** the next queued writer and moves every other member to DONE.  G and the
** members must not be touched by SELF afterwards (their stacks may go). */
RAVEL_PRIVATE void rv_write_group_complete(struct rv_write_queue *q,
                                           struct rv_write_group *g,
                                           struct rv_writer *self);

/* Takes out of Q every writer queued behind LAST (the last member of the
** group being prepared) whose flags include FLAG, gives each STATUS and
** wakes it as done: nothing of it is written.  Returns how many had
** RAVEL_SYNC among them (for the WAL's count of sync writers inbound).
** The write controller's stall uses it for RAVEL_NO_SLOWDOWN writers, so
** that none waits behind a stalled leader (RocksDB's BeginWriteStall). */
RAVEL_PRIVATE int rv_write_queue_fail_flagged(struct rv_write_queue *q,
                                              struct rv_writer *last,
                                              int flag, int status);

/* The writers in Q behind the current leader (for tests and stats). */
RAVEL_PRIVATE int rv_write_queue_waiting(struct rv_write_queue *q);

/* Unordered modes: releases G (called by its leader, SELF, after the WAL
** write): hands leadership to the next queued writer and moves every
** other member to INSERT, to insert on its own with no group (each
** member's memtable and order_pos set beforehand).  G is not used
** afterwards and may go. */
RAVEL_PRIVATE void rv_write_group_release(struct rv_write_queue *q,
                                          struct rv_write_group *g,
                                          struct rv_writer *self);

/* Moves W, a writer out of any group, to DONE, waking it.  W may return
** (and its stack vanish) at once: the caller must not touch W after. */
RAVEL_PRIVATE void rv_writer_set_done(struct rv_writer *w);

/* Waits until W is DONE. */
RAVEL_PRIVATE void rv_writer_await_done(struct rv_writer *w);

#endif /* RAVEL_WRITE_GROUP_H */
