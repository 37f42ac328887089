/*
** write_group.c -- the leader/follower write queue (see write_group.h).
**
** The queue is a mutex-protected FIFO: joining and forming a group are a
** few pointer moves under the mutex, and with only one group in progress
** at a time the mutex is never held across I/O.  The expensive part,
** waking sleepers, happens outside it.
*/
#include "db/write_group.h"
#include "util/futex.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <unistd.h>

/* Spins before sleeping.  Short: on a 2-core machine with dozens of
** writers a long spin steals the core the leader needs. */
#define GROUP_SPIN_LIMIT 16

/* Smaller group cap for small leaders (as RocksDB): a leader whose batch
** is at most cap/8 gathers at most its size + cap/8. */
#define GROUP_SMALL_LEADER_DIVISOR 8

static void group_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Moves W to STATE, waking it if it sleeps.  W may return (and its stack
** vanish) as soon as the store lands: the caller must not touch W after. */
static void group_set_state(struct rv_writer *w, uint32_t state)
{
    /* acq_rel: release publishes what the setter wrote for W (status,
    ** first_seq, group); acquire orders the SLEEPING check. */
    uint32_t old = atomic_exchange_explicit(&w->state, state,
                                            memory_order_acq_rel);
    if (old == RV_WRITER_SLEEPING)
        rv_futex_wake_all(&w->state);
}

/* Waits until W's state is at least MIN (states only move forward, except
** the writer's own WAITING <-> SLEEPING). */
static uint32_t group_await(struct rv_writer *w, uint32_t min)
{
    int spins = 0;
    for (;;) {
        /* acquire: pairs with group_set_state's release */
        uint32_t s = atomic_load_explicit(&w->state, memory_order_acquire);
        if (s >= min)
            return s;
        if (s == RV_WRITER_SLEEPING) {
            rv_futex_wait(&w->state, RV_WRITER_SLEEPING, NULL);
            continue;
        }
        if (spins < GROUP_SPIN_LIMIT) {
            spins++;
            group_cpu_relax();
            continue;
        }
        /* Announce the sleep; if the state moved meanwhile, re-check. */
        atomic_compare_exchange_strong_explicit(
            &w->state, &s, RV_WRITER_SLEEPING, memory_order_acq_rel,
            memory_order_acquire);
    }
}

void rv_write_queue_init(struct rv_write_queue *q)
{
    rv_mutex_init(&q->mu);
    q->head = q->tail = NULL;
    atomic_init(&q->groups, 0);
    atomic_init(&q->writers, 0);
    atomic_init(&q->max_group, 0);
}

void rv_write_queue_destroy(struct rv_write_queue *q)
{
    rv_mutex_destroy(&q->mu);
}

int rv_write_queue_join(struct rv_write_queue *q, struct rv_writer *w)
{
    w->next = NULL;
    w->group = NULL;
    atomic_store_explicit(&w->state, RV_WRITER_WAITING, memory_order_relaxed);

    rv_mutex_lock(&q->mu);
    int leads = q->head == NULL;
    if (leads)
        q->head = w;
    else
        q->tail->next = w;
    q->tail = w;
    rv_mutex_unlock(&q->mu);

    if (leads) {
        atomic_store_explicit(&w->state, RV_WRITER_LEADER,
                              memory_order_relaxed);
        return RV_WRITER_LEADER;
    }
    return (int)group_await(w, RV_WRITER_LEADER);
}

void rv_write_group_form(struct rv_write_queue *q, struct rv_writer *leader,
                         struct rv_write_group *g, size_t max_bytes,
                         uint64_t max_seqs, int max_writers)
{
    size_t cap = max_bytes;
    if (leader->size <= max_bytes / GROUP_SMALL_LEADER_DIVISOR)
        cap = leader->size + max_bytes / GROUP_SMALL_LEADER_DIVISOR;

    g->leader = g->last = leader;
    g->size = 1;
    g->bytes = leader->size;
    uint64_t seqs = leader->seqs;
    g->last_seq = 0;
    g->memtable = NULL;
    atomic_init(&g->pending, 0);
    atomic_init(&g->failed, 0);

    rv_mutex_lock(&q->mu);
    /* an exclusive writer is alone in its group */
    for (struct rv_writer *w = leader->exclusive ? NULL : leader->next; w;
         w = w->next) {
        if (w->exclusive)
            break;
        /* RocksDB's rule: the write controller decides once per group,
        ** so writers that must not be slowed down do not share a group
        ** with those that may be */
        if (g->bytes + w->size > cap || seqs + w->seqs > max_seqs ||
            g->size >= max_writers ||
            ((w->flags ^ leader->flags) & RAVEL_NO_SLOWDOWN))
            break;
        g->bytes += w->size;
        seqs += w->seqs;
        g->last = w;
        g->size++;
    }
    rv_mutex_unlock(&q->mu);

    atomic_fetch_add_explicit(&q->groups, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&q->writers, (uint64_t)g->size,
                              memory_order_relaxed);
    if ((uint64_t)g->size >
        atomic_load_explicit(&q->max_group, memory_order_relaxed))
        atomic_store_explicit(&q->max_group, (uint64_t)g->size,
                              memory_order_relaxed);
}

void rv_write_group_launch(struct rv_write_group *g)
{
    atomic_store_explicit(&g->pending, g->size, memory_order_relaxed);
    /* The links leader..last cannot change while the group is in
    ** progress: only writers after g->last are appended. */
    struct rv_writer *w = g->leader;
    for (;;) {
        struct rv_writer *next = w == g->last ? NULL : w->next;
        w->group = g;
        if (w != g->leader)
            group_set_state(w, RV_WRITER_INSERT);
        if (!next)
            break;
        w = next;
    }
}

void rv_write_group_insert_failed(struct rv_write_group *g, int rc)
{
    int none = 0;
    /* relaxed: the completer reads it after its acq_rel insert_done, which
    ** follows this member's own insert_done (release) */
    atomic_compare_exchange_strong_explicit(&g->failed, &none, rc,
                                            memory_order_relaxed,
                                            memory_order_relaxed);
}

int rv_write_group_insert_done(struct rv_write_group *g)
{
    /* acq_rel: the last member must see every other member's inserts
    ** before it publishes the group's sequence. */
    return atomic_fetch_sub_explicit(&g->pending, 1, memory_order_acq_rel) == 1;
}

/* Hands Q's leadership to the writer after G's last member, if any. */
static void group_pass_leadership(struct rv_write_queue *q,
                                  struct rv_write_group *g)
{
    rv_mutex_lock(&q->mu);
    struct rv_writer *next_leader = g->last->next;
    q->head = next_leader;
    if (!next_leader)
        q->tail = NULL;
    rv_mutex_unlock(&q->mu);
    if (next_leader)
        group_set_state(next_leader, RV_WRITER_LEADER);
}

/* Hands Q's leadership on, then moves every member of G but SELF to
** STATE.  A member moved may return, or join another queue (overwriting
** its next link), at once: each link is read before its writer moves. */
static void group_hand_off(struct rv_write_queue *q, struct rv_write_group *g,
                           struct rv_writer *self, uint32_t state)
{
    struct rv_writer *w = g->leader;
    struct rv_writer *last = g->last;
    /* The next group may start at once. */
    group_pass_leadership(q, g);
    for (;;) {
        struct rv_writer *next = w == last ? NULL : w->next;
        if (w != self)
            group_set_state(w, state);
        if (!next)
            break;
        w = next;
    }
}

void rv_write_group_complete(struct rv_write_queue *q,
                             struct rv_write_group *g, struct rv_writer *self)
{
    group_hand_off(q, g, self, RV_WRITER_DONE);
    /* SELF may be in the middle of the list: its own state is set last,
    ** so the group (possibly on the leader's stack) outlives our use. */
    atomic_store_explicit(&self->state, RV_WRITER_DONE, memory_order_relaxed);
}

int rv_write_queue_fail_flagged(struct rv_write_queue *q,
                                struct rv_writer *last, int flag, int status)
{
    struct rv_writer *failed = NULL;
    int sync = 0;
    rv_mutex_lock(&q->mu);
    struct rv_writer *prev = last;
    for (struct rv_writer *w = last->next; w;) {
        struct rv_writer *next = w->next;
        if (w->flags & flag) {
            prev->next = next;
            if (q->tail == w)
                q->tail = prev;
            w->status = status;
            w->next = failed; /* the list of those to wake */
            failed = w;
            sync += (w->flags & RAVEL_SYNC) != 0;
        } else {
            prev = w;
        }
        w = next;
    }
    rv_mutex_unlock(&q->mu);
    while (failed) {
        struct rv_writer *next = failed->next;
        group_set_state(failed, RV_WRITER_DONE); /* may vanish now */
        failed = next;
    }
    return sync;
}

int rv_write_queue_waiting(struct rv_write_queue *q)
{
    int n = 0;
    rv_mutex_lock(&q->mu);
    for (struct rv_writer *w = q->head; w; w = w->next)
        n++;
    rv_mutex_unlock(&q->mu);
    return n > 0 ? n - 1 : 0;
}

void rv_write_group_release(struct rv_write_queue *q,
                            struct rv_write_group *g, struct rv_writer *self)
{
    group_hand_off(q, g, self, RV_WRITER_INSERT);
}

void rv_writer_set_done(struct rv_writer *w)
{
    group_set_state(w, RV_WRITER_DONE);
}

void rv_writer_await_done(struct rv_writer *w)
{
    group_await(w, RV_WRITER_DONE);
}
