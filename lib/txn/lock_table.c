/*
** lock_table.c -- the per-key locks of pessimistic transactions
** (lock_table.h): the stripes and their maps of locked keys, the queues
** of waiters with the fair hand-off, and the wait-for graph that finds
** deadlocks.
**
** Lock order: a stripe's mutex, then the graph's mutex; never two stripes
** at once (waking a victim in another stripe lets go of the caller's
** stripe first), never a stripe while holding the graph.
**
** The invariants the deadlock detection relies on, both kept under the
** graph's mutex: a transaction is in the graph exactly while it sleeps in
** a queue, and its recorded holder is the owner of the key it waits for
** (the release that hands a key on rewrites the holder of every waiter
** left in its queue).  So the graph has one edge out of each waiter, and
** a cycle can only be closed by a new waiter -- a hand-off gives the key
** to a transaction that no longer waits -- which is the one that looks
** for it.
*/
#include "txn/lock_table.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/mutex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>

/* A transaction sleeping in rv_lock_table_acquire, on its own stack. */
struct lock_waiter {
    struct lock_waiter *next;          /* the key's queue (stripe mu) */
    struct lock_waiter *next_in_graph; /* the graph's bucket (graph mu) */
    uint64_t txn;                      /* immutable */
    struct lock_stripe *stripe;        /* immutable: the key's stripe */
    /* The transaction it waits for: written with the stripe's mutex AND
    ** the graph's held (by the waiter, or the release handing the key
    ** on), so read under either. */
    uint64_t holder;
    int granted;                       /* stripe mu: the key is its own */
    /* Set once by a detector, under graph mu, after the cycle below
    ** (release: the waiter that sees it set sees the cycle). */
    _Atomic int victim;
    int cycle_len;                     /* the cycle, from this waiter */
    uint64_t cycle[RV_LOCK_CYCLE_MAX];
    pthread_cond_t cv;                 /* granted, or made a victim */
};

/* A locked key: in its stripe's map exactly while someone holds it (so
** while anyone waits for it). All fields under the stripe's mutex. */
struct lock_entry {
    struct lock_entry *next;           /* the bucket's chain */
    uint64_t hash;
    uint64_t owner;
    struct lock_waiter *head, *tail;   /* the waiters, in arrival order */
    uint32_t nwaiters;
    size_t klen;
    unsigned char key[];
};

/* One stripe: a map of the locked keys of its hashes. Cache-line
** aligned, so neighbouring stripes' mutexes do not share a line. */
struct lock_stripe {
    rv_mutex mu;
    struct lock_entry **buckets;       /* mu; a power of two of them */
    size_t nbuckets;                   /* mu */
    size_t count;                      /* mu: entries */
} __attribute__((aligned(64)));

#define LOCK_GRAPH_BUCKETS 256
#define LOCK_STRIPE_BUCKETS 16

struct rv_lock_table {
    struct lock_stripe *stripes;       /* immutable array */
    unsigned stripe_bits;              /* immutable: 2^bits stripes */
    int detect_depth;                  /* immutable */
    /* The wait-for graph: every waiter by transaction id. */
    struct {
        rv_mutex mu;
        struct lock_waiter *buckets[LOCK_GRAPH_BUCKETS]; /* mu */
    } graph;
};

/* ------------------------------------------------------------ the table */

int rv_lock_table_new(int stripes, int detect_depth, rv_lock_table **out)
{
    *out = NULL;
    if (stripes < 0 || stripes > RV_LOCK_STRIPES_MAX)
        return rv_error(RAVEL_INVALID, "lock table: %d stripes is out of "
                        "range (0 .. %d)", stripes, RV_LOCK_STRIPES_MAX);
    if (detect_depth > RV_LOCK_DETECT_DEPTH_MAX)
        return rv_error(RAVEL_INVALID, "lock table: deadlock detect depth "
                        "%d is out of range (at most %d)", detect_depth,
                        RV_LOCK_DETECT_DEPTH_MAX);
    unsigned bits = 0;
    while ((1 << bits) < (stripes ? stripes : RV_LOCK_STRIPES_DEFAULT))
        bits++;
    size_t n = (size_t)1 << bits;
    rv_lock_table *t = calloc(1, sizeof *t);
    struct lock_stripe *s = aligned_alloc(64, n * sizeof *s);
    if (!t || !s)
        goto nomem;
    memset(s, 0, n * sizeof *s);
    t->stripes = s;
    for (size_t i = 0; i < n; i++) {
        s[i].buckets = calloc(LOCK_STRIPE_BUCKETS, sizeof *s[i].buckets);
        if (!s[i].buckets)
            goto nomem;
        s[i].nbuckets = LOCK_STRIPE_BUCKETS;
        rv_mutex_init(&s[i].mu);
    }
    t->stripe_bits = bits;
    t->detect_depth = detect_depth < 0 ? RV_LOCK_DETECT_DEPTH_DEFAULT
                                       : detect_depth;
    rv_mutex_init(&t->graph.mu);
    *out = t;
    return RAVEL_OK;
nomem:
    if (s)
        for (size_t i = 0; i < n; i++)
            free(s[i].buckets); /* mutexes of glibc need no destroy */
    free(s);
    free(t);
    return rv_error(RAVEL_NOMEM, "out of memory for a lock table of %zu "
                    "stripes", n);
}

void rv_lock_table_free(rv_lock_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < ((size_t)1 << t->stripe_bits); i++) {
        struct lock_stripe *s = &t->stripes[i];
        for (size_t b = 0; b < s->nbuckets; b++) {
            struct lock_entry *e = s->buckets[b];
            while (e) {
                struct lock_entry *next = e->next;
                free(e);
                e = next;
            }
        }
        free(s->buckets);
        rv_mutex_destroy(&s->mu);
    }
    free(t->stripes);
    rv_mutex_destroy(&t->graph.mu);
    free(t);
}

/* ---------------------------------------------------- a stripe's map */

static struct lock_stripe *lock_stripe_of(rv_lock_table *t, uint64_t hash)
{
    /* the top bits pick the stripe, the low bits the bucket in it */
    size_t i = t->stripe_bits ? (size_t)(hash >> (64 - t->stripe_bits)) : 0;
    return &t->stripes[i];
}

/* The link that points at KEY's entry (at NULL if it is not locked). */
static struct lock_entry **lock_find_locked(struct lock_stripe *s,
                                            uint64_t hash, const void *key,
                                            size_t klen) RV_REQUIRES(s->mu);
static struct lock_entry **lock_find_locked(struct lock_stripe *s,
                                            uint64_t hash, const void *key,
                                            size_t klen)
{
    struct lock_entry **p = &s->buckets[hash & (s->nbuckets - 1)];
    while (*p && ((*p)->hash != hash || (*p)->klen != klen ||
                  memcmp((*p)->key, key, klen) != 0))
        p = &(*p)->next;
    return p;
}

/* Doubles S's buckets; on allocation failure the chains just grow. */
static void lock_stripe_grow_locked(struct lock_stripe *s) RV_REQUIRES(s->mu);
static void lock_stripe_grow_locked(struct lock_stripe *s)
{
    size_t n = s->nbuckets * 2;
    struct lock_entry **b = calloc(n, sizeof *b);
    if (!b)
        return;
    for (size_t i = 0; i < s->nbuckets; i++) {
        struct lock_entry *e = s->buckets[i];
        while (e) {
            struct lock_entry *next = e->next;
            struct lock_entry **slot = &b[e->hash & (n - 1)];
            e->next = *slot;
            *slot = e;
            e = next;
        }
    }
    free(s->buckets);
    s->buckets = b;
    s->nbuckets = n;
}

/* Locks KEY, which no one holds, for TXN: a new entry in S. */
static int lock_entry_add_locked(struct lock_stripe *s, uint64_t hash,
                                 const void *key, size_t klen, uint64_t txn)
    RV_REQUIRES(s->mu);
static int lock_entry_add_locked(struct lock_stripe *s, uint64_t hash,
                                 const void *key, size_t klen, uint64_t txn)
{
    struct lock_entry *e = malloc(sizeof *e + klen);
    if (!e)
        return RAVEL_NOMEM; /* the message is set by the caller, unlocked */
    memset(e, 0, sizeof *e);
    e->hash = hash;
    e->owner = txn;
    e->klen = klen;
    if (klen)
        memcpy(e->key, key, klen);
    if (s->count >= s->nbuckets)
        lock_stripe_grow_locked(s);
    struct lock_entry **slot = &s->buckets[hash & (s->nbuckets - 1)];
    e->next = *slot;
    *slot = e;
    s->count++;
    return RAVEL_OK;
}

/* ------------------------------------------------------ the wait graph */

static struct lock_waiter **lock_graph_slot_locked(rv_lock_table *t,
                                                   uint64_t txn)
    RV_REQUIRES(t->graph.mu);
static struct lock_waiter **lock_graph_slot_locked(rv_lock_table *t,
                                                   uint64_t txn)
{
    /* Fibonacci hashing: consecutive ids spread over the buckets */
    size_t b = (size_t)((txn * 0x9e3779b97f4a7c15ull) >> 56);
    struct lock_waiter **p = &t->graph.buckets[b % LOCK_GRAPH_BUCKETS];
    while (*p && (*p)->txn != txn)
        p = &(*p)->next_in_graph;
    return p;
}

static struct lock_waiter *lock_graph_find_locked(rv_lock_table *t,
                                                  uint64_t txn)
    RV_REQUIRES(t->graph.mu);
static struct lock_waiter *lock_graph_find_locked(rv_lock_table *t,
                                                  uint64_t txn)
{
    return *lock_graph_slot_locked(t, txn);
}

static void lock_graph_insert_locked(rv_lock_table *t, struct lock_waiter *w)
    RV_REQUIRES(t->graph.mu);
static void lock_graph_insert_locked(rv_lock_table *t, struct lock_waiter *w)
{
    struct lock_waiter **p = lock_graph_slot_locked(t, w->txn);
    w->next_in_graph = *p; /* NULL: one wait per transaction at a time */
    *p = w;
}

static void lock_graph_remove_locked(rv_lock_table *t, struct lock_waiter *w)
    RV_REQUIRES(t->graph.mu);
static void lock_graph_remove_locked(rv_lock_table *t, struct lock_waiter *w)
{
    struct lock_waiter **p = lock_graph_slot_locked(t, w->txn);
    while (*p && *p != w)
        p = &(*p)->next_in_graph;
    if (*p)
        *p = w->next_in_graph;
}

/* The ids of the N waiters of PATH (a cycle), from PATH[START] on, into
** IDS (RV_LOCK_CYCLE_MAX at most); returns N. */
static int lock_cycle_ids(struct lock_waiter *const *path, int n, int start,
                          uint64_t *ids)
{
    for (int i = 0; i < n && i < RV_LOCK_CYCLE_MAX; i++)
        ids[i] = path[(start + i) % n]->txn;
    return n;
}

/* Follows the wait-for chain from W, just inserted, up to the detect
** depth.  If W's wait closes a cycle that has no victim yet, returns the
** waiter of the cycle that is to fail -- the youngest, the highest id --
** having marked it as the victim (W too, so that a detector running before
** W leaves the graph sees the cycle's victim chosen) and recorded the
** cycle in it, from it; otherwise NULL. */
static struct lock_waiter *lock_detect_locked(rv_lock_table *t,
                                              struct lock_waiter *w)
    RV_REQUIRES(t->graph.mu);
static struct lock_waiter *lock_detect_locked(rv_lock_table *t,
                                              struct lock_waiter *w)
{
    struct lock_waiter *path[RV_LOCK_DETECT_DEPTH_MAX + 1];
    int n = 0, youngest = 0;
    path[n++] = w;
    uint64_t next = w->holder;
    for (;;) {
        struct lock_waiter *h = lock_graph_find_locked(t, next);
        if (!h || n > t->detect_depth)
            return NULL; /* the chain ends in a running transaction */
        /* a cycle away from W has its victim already, which wakes */
        if (atomic_load_explicit(&h->victim, memory_order_relaxed))
            return NULL;
        if (h->txn > path[youngest]->txn)
            youngest = n;
        path[n++] = h;
        next = h->holder;
        if (next == w->txn)
            break;
    }
    struct lock_waiter *v = path[youngest];
    v->cycle_len = lock_cycle_ids(path, n, youngest, v->cycle);
    /* release: the victim that sees the mark sees its cycle */
    atomic_store_explicit(&v->victim, 1, memory_order_release);
    return v;
}

/* Wakes the waiter of transaction VICTIM, if it still waits in VS (the
** caller holds VS's mutex, so the waiter cannot leave meanwhile). */
static void lock_signal_locked(rv_lock_table *t, struct lock_stripe *vs,
                               uint64_t victim) RV_REQUIRES(vs->mu);
static void lock_signal_locked(rv_lock_table *t, struct lock_stripe *vs,
                               uint64_t victim)
{
    (void)vs;
    rv_mutex_lock(&t->graph.mu);
    struct lock_waiter *v = lock_graph_find_locked(t, victim);
    if (v)
        pthread_cond_signal(&v->cv);
    rv_mutex_unlock(&t->graph.mu);
}

/* Wakes VICTIM, waiting in stripe VS, from a caller holding stripe S:
** S is let go of and taken again if VS is another stripe (never two
** stripes at once).  Not analysed: which mutex is taken depends on
** whether VS is S, which the analysis cannot follow. */
static void lock_wake_victim(rv_lock_table *t, struct lock_stripe *s,
                             struct lock_stripe *vs, uint64_t victim)
    RV_REQUIRES(s->mu) RV_NO_THREAD_SAFETY_ANALYSIS;
static void lock_wake_victim(rv_lock_table *t, struct lock_stripe *s,
                             struct lock_stripe *vs, uint64_t victim)
{
    if (vs != s) {
        rv_mutex_unlock(&s->mu);
        rv_mutex_lock(&vs->mu);
    }
    lock_signal_locked(t, vs, victim);
    if (vs != s) {
        rv_mutex_unlock(&vs->mu);
        rv_mutex_lock(&s->mu);
    }
}

/* ------------------------------------------------------------- waiting */

static void lock_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &attr);
    pthread_condattr_destroy(&attr);
}

/* Sleeps until W is granted its key (RAVEL_OK), made a victim
** (RV_LOCK_DEADLOCK) or DEADLINE (monotonic ns; with TIMEOUT_NS < 0
** none) passes (RV_LOCK_TIMEDOUT).  A grant wins over the others. */
static int lock_sleep_locked(struct lock_stripe *s, struct lock_waiter *w,
                             int64_t timeout_ns, uint64_t deadline)
    RV_REQUIRES(s->mu);
static int lock_sleep_locked(struct lock_stripe *s, struct lock_waiter *w,
                             int64_t timeout_ns, uint64_t deadline)
{
    for (;;) {
        if (w->granted)
            return RAVEL_OK;
        /* acquire: pairs with the detector's release of the mark */
        if (atomic_load_explicit(&w->victim, memory_order_acquire))
            return RV_LOCK_DEADLOCK;
        if (timeout_ns < 0) {
            rv_cond_wait(&w->cv, &s->mu);
            continue;
        }
        if (rv_now_nanos() >= deadline)
            return RV_LOCK_TIMEDOUT;
        struct timespec until = {
            .tv_sec = (time_t)(deadline / 1000000000u),
            .tv_nsec = (long)(deadline % 1000000000u),
        };
        rv_cond_timedwait(&w->cv, &s->mu, &until);
    }
}

static void lock_enqueue_locked(struct lock_stripe *s, struct lock_entry *e,
                                struct lock_waiter *w) RV_REQUIRES(s->mu);
static void lock_enqueue_locked(struct lock_stripe *s, struct lock_entry *e,
                                struct lock_waiter *w)
{
    (void)s;
    w->next = NULL;
    if (e->tail)
        e->tail->next = w;
    else
        e->head = w;
    e->tail = w;
    e->nwaiters++;
}

/* W gives up its wait on E: out of the queue and the graph; INFO gets
** the holder it waited for, and the cycle if it was made a victim. */
static void lock_leave_locked(rv_lock_table *t, struct lock_stripe *s,
                              struct lock_entry *e, struct lock_waiter *w,
                              struct rv_lock_wait_info *info)
    RV_REQUIRES(s->mu);
static void lock_leave_locked(rv_lock_table *t, struct lock_stripe *s,
                              struct lock_entry *e, struct lock_waiter *w,
                              struct rv_lock_wait_info *info)
{
    (void)s;
    struct lock_waiter **p = &e->head, *prev = NULL;
    while (*p != w) {
        prev = *p;
        p = &(*p)->next;
    }
    *p = w->next;
    if (e->tail == w)
        e->tail = prev;
    e->nwaiters--;
    rv_mutex_lock(&t->graph.mu);
    lock_graph_remove_locked(t, w);
    info->holder = w->holder;
    if (atomic_load_explicit(&w->victim, memory_order_relaxed)) {
        info->cycle_len = w->cycle_len;
        memcpy(info->cycle, w->cycle, sizeof info->cycle);
    }
    rv_mutex_unlock(&t->graph.mu);
}

/* TXN waits for E, held by another: queues, looks for a deadlock its
** wait closes, sleeps; the result of lock_sleep_locked, or a deadlock
** found at once. */
static int lock_wait_locked(rv_lock_table *t, struct lock_stripe *s,
                            struct lock_entry *e, uint64_t txn,
                            int64_t timeout_ns,
                            struct rv_lock_wait_info *info)
    RV_REQUIRES(s->mu);
static int lock_wait_locked(rv_lock_table *t, struct lock_stripe *s,
                            struct lock_entry *e, uint64_t txn,
                            int64_t timeout_ns,
                            struct rv_lock_wait_info *info)
{
    if (timeout_ns == 0) {
        info->holder = e->owner;
        return RV_LOCK_TIMEDOUT;
    }
    uint64_t deadline = timeout_ns > 0 ? rv_now_nanos() + (uint64_t)timeout_ns
                                       : 0;
    struct lock_waiter w = {.txn = txn, .stripe = s};
    atomic_init(&w.victim, 0);
    lock_cond_init(&w.cv);
    lock_enqueue_locked(s, e, &w);

    rv_mutex_lock(&t->graph.mu);
    w.holder = e->owner;
    lock_graph_insert_locked(t, &w);
    struct lock_waiter *v = lock_detect_locked(t, &w);
    uint64_t victim = v && v != &w ? v->txn : 0;
    struct lock_stripe *vs = v ? v->stripe : NULL;
    rv_mutex_unlock(&t->graph.mu);

    int rc = RV_LOCK_DEADLOCK;
    if (v != &w) {
        if (victim)
            lock_wake_victim(t, s, vs, victim);
        rc = lock_sleep_locked(s, &w, timeout_ns, deadline);
    }
    if (rc != RAVEL_OK)
        lock_leave_locked(t, s, e, &w, info);
    pthread_cond_destroy(&w.cv);
    return rc;
}

/* --------------------------------------------------------- the messages */

/* KEY made printable into BUF (SIZE bytes): bytes outside printable ASCII
** as \xNN, cut with "..." past 48 bytes. */
static void lock_key_text(char *buf, size_t size, const void *key,
                          size_t klen)
{
    const unsigned char *k = key;
    size_t n = 0;
    for (size_t i = 0; i < klen && i < 48 && n + 8 < size; i++) {
        if (k[i] >= 0x20 && k[i] < 0x7f && k[i] != '\\' && k[i] != '\'')
            buf[n++] = (char)k[i];
        else
            n += (size_t)snprintf(buf + n, size - n, "\\x%02x", k[i]);
    }
    if (klen > 48 && n + 4 < size)
        n += (size_t)snprintf(buf + n, size - n, "...");
    buf[n] = '\0';
}

/* The cycle of INFO as "7 -> 5 -> 6 -> 7" into BUF (SIZE bytes). */
static void lock_cycle_text(char *buf, size_t size,
                            const struct rv_lock_wait_info *info)
{
    size_t n = 0;
    int shown = info->cycle_len < 8 ? info->cycle_len : 8;
    buf[0] = '\0';
    for (int i = 0; i < shown && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%llu -> ",
                              (unsigned long long)info->cycle[i]);
    if (shown < info->cycle_len && n < size)
        n += (size_t)snprintf(buf + n, size - n, "(%d more) -> ",
                              info->cycle_len - shown);
    if (n < size)
        snprintf(buf + n, size - n, "%llu",
                 (unsigned long long)info->cycle[0]);
}

/* Sets the message of RC, a failure of TXN's acquire. */
static int lock_fail(int rc, uint64_t txn, int64_t timeout_ns,
                     const struct rv_lock_wait_info *info)
{
    char key[256];
    lock_key_text(key, sizeof key, info->key, info->klen);
    unsigned long long me = (unsigned long long)txn;
    unsigned long long holder = (unsigned long long)info->holder;
    if (rc == RAVEL_NOMEM)
        return rv_error(rc, "txn %llu: out of memory locking key '%s'", me,
                        key);
    if (rc == RV_LOCK_TIMEDOUT && timeout_ns == 0)
        return rv_error(rc, "txn %llu: key '%s' is locked by txn %llu (lock "
                        "timeout 0: no wait)", me, key, holder);
    if (rc == RV_LOCK_TIMEDOUT)
        return rv_error(rc, "txn %llu: lock on key '%s' timed out after "
                        "%.3f ms waiting for txn %llu, which holds it", me,
                        key, (double)timeout_ns / 1e6, holder);
    char cycle[200];
    lock_cycle_text(cycle, sizeof cycle, info);
    return rv_error(rc, "txn %llu: deadlock locking key '%s', held by txn "
                    "%llu: cycle %s; txn %llu, the youngest in it, fails",
                    me, key, holder, cycle, me);
}

/* ------------------------------------------------- acquire and release */

int rv_lock_table_acquire(rv_lock_table *t, uint64_t txn, const void *key,
                          size_t klen, int64_t timeout_ns,
                          struct rv_lock_wait_info *info)
{
    struct rv_lock_wait_info local;
    if (!info)
        info = &local;
    memset(info, 0, sizeof *info);
    info->key = key;
    info->klen = klen;
    if (txn == 0)
        return rv_error(RAVEL_INVALID, "lock table: transaction id 0");
    uint64_t hash = XXH3_64bits(key, klen);
    struct lock_stripe *s = lock_stripe_of(t, hash);
    int rc = RAVEL_OK;
    rv_mutex_lock(&s->mu);
    struct lock_entry *e = *lock_find_locked(s, hash, key, klen);
    if (!e)
        rc = lock_entry_add_locked(s, hash, key, klen, txn);
    else if (e->owner == txn)
        info->already_held = 1;
    else
        rc = lock_wait_locked(t, s, e, txn, timeout_ns, info);
    rv_mutex_unlock(&s->mu);
    if (rc != RAVEL_OK)
        return lock_fail(rc, txn, timeout_ns, info);
    return RAVEL_OK;
}

/* E is TXN's no more: its first waiter's, woken, or nobody's. */
static void lock_hand_off_locked(rv_lock_table *t, struct lock_stripe *s,
                                 struct lock_entry **slot)
    RV_REQUIRES(s->mu);
static void lock_hand_off_locked(rv_lock_table *t, struct lock_stripe *s,
                                 struct lock_entry **slot)
{
    struct lock_entry *e = *slot;
    struct lock_waiter *w = e->head;
    if (!w) {
        *slot = e->next;
        s->count--;
        free(e);
        return;
    }
    e->head = w->next;
    if (!e->head)
        e->tail = NULL;
    e->nwaiters--;
    e->owner = w->txn;
    w->granted = 1;
    rv_mutex_lock(&t->graph.mu);
    lock_graph_remove_locked(t, w);
    for (struct lock_waiter *r = e->head; r; r = r->next)
        r->holder = w->txn;
    rv_mutex_unlock(&t->graph.mu);
    /* W leaves only with S's mutex, which is held: it is there */
    pthread_cond_signal(&w->cv);
}

void rv_lock_table_release(rv_lock_table *t, uint64_t txn, const void *key,
                           size_t klen)
{
    uint64_t hash = XXH3_64bits(key, klen);
    struct lock_stripe *s = lock_stripe_of(t, hash);
    rv_mutex_lock(&s->mu);
    struct lock_entry **slot = lock_find_locked(s, hash, key, klen);
    if (*slot && (*slot)->owner == txn)
        lock_hand_off_locked(t, s, slot);
    rv_mutex_unlock(&s->mu);
}

void rv_lock_table_release_all(rv_lock_table *t, uint64_t txn,
                               const struct rv_lock_key *keys, size_t n)
{
    for (size_t i = 0; i < n; i++)
        rv_lock_table_release(t, txn, keys[i].key, keys[i].klen);
}

uint64_t rv_lock_table_owner(rv_lock_table *t, const void *key, size_t klen)
{
    uint64_t hash = XXH3_64bits(key, klen);
    struct lock_stripe *s = lock_stripe_of(t, hash);
    rv_mutex_lock(&s->mu);
    struct lock_entry *e = *lock_find_locked(s, hash, key, klen);
    uint64_t owner = e ? e->owner : 0;
    rv_mutex_unlock(&s->mu);
    return owner;
}

uint32_t rv_lock_table_waiters(rv_lock_table *t, const void *key, size_t klen)
{
    uint64_t hash = XXH3_64bits(key, klen);
    struct lock_stripe *s = lock_stripe_of(t, hash);
    rv_mutex_lock(&s->mu);
    struct lock_entry *e = *lock_find_locked(s, hash, key, klen);
    uint32_t n = e ? e->nwaiters : 0;
    rv_mutex_unlock(&s->mu);
    return n;
}
