/*
** order_ring.c -- the in-order release of out-of-order batches (see
** order_ring.h).
**
** A slot is reused only after its batch was popped: the producer checks
** head - tail < slots.  A popper reads the slot at the tail it loaded and
** then swings the tail by compare-and-swap; if the slot was reused in
** between (the tail had moved on), the swap fails, since the tail only
** grows, and the popper starts again.
*/
#include "db/order_ring.h"

#include <stdlib.h>

int rv_order_ring_init(struct rv_order_ring *r, size_t slots)
{
    r->slots = calloc(slots, sizeof *r->slots);
    if (!r->slots)
        return RAVEL_NOMEM;
    r->mask = slots - 1;
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    return RAVEL_OK;
}

void rv_order_ring_destroy(struct rv_order_ring *r)
{
    free(r->slots);
    r->slots = NULL;
}

int rv_order_ring_full(struct rv_order_ring *r)
{
    /* relaxed head: the producer's own; acquire tail: the popper is done
    ** with the slot it released */
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    return head - tail > r->mask;
}

uint64_t rv_order_ring_free(struct rv_order_ring *r)
{
    /* as rv_order_ring_full */
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    return r->mask + 1 - (head - tail);
}

int rv_order_ring_empty(struct rv_order_ring *r)
{
    uint64_t tail = atomic_load(&r->tail);
    return tail == atomic_load(&r->head);
}

uint64_t rv_order_ring_push(struct rv_order_ring *r, uint64_t last_seq,
                            void *owner)
{
    uint64_t pos = atomic_load_explicit(&r->head, memory_order_relaxed);
    struct rv_order_slot *s = &r->slots[pos & r->mask];
    atomic_store_explicit(&s->last_seq, last_seq, memory_order_relaxed);
    atomic_store_explicit(&s->owner, owner, memory_order_relaxed);
    atomic_store_explicit(&s->state, RV_ORDER_PENDING, memory_order_relaxed);
    /* release: a popper that sees the new head sees the slot's contents */
    atomic_store_explicit(&r->head, pos + 1, memory_order_release);
    return pos;
}

void rv_order_ring_finish(struct rv_order_ring *r, uint64_t pos,
                          enum rv_order_state state)
{
    /* seq_cst: the finisher's store, then its pop's load of the tail,
    ** against a popper's tail swap, then its load of this state (see the
    ** header) */
    atomic_store(&r->slots[pos & r->mask].state, (uint32_t)state);
}

int rv_order_ring_pop(struct rv_order_ring *r, struct rv_order_popped *out)
{
    for (;;) {
        uint64_t tail = atomic_load(&r->tail);
        /* acquire: the slot's contents, pushed before head moved */
        if (tail == atomic_load_explicit(&r->head, memory_order_acquire))
            return 0;
        struct rv_order_slot *s = &r->slots[tail & r->mask];
        uint32_t state = atomic_load(&s->state);
        if (state == RV_ORDER_PENDING)
            return 0;
        out->last_seq = atomic_load_explicit(&s->last_seq,
                                             memory_order_relaxed);
        out->owner = atomic_load_explicit(&s->owner, memory_order_relaxed);
        out->failed = state == RV_ORDER_FAILED;
        /* seq_cst: see rv_order_ring_finish; a failure means another
        ** popper took this slot (and the slot may be reused since) */
        if (atomic_compare_exchange_strong(&r->tail, &tail, tail + 1))
            return 1;
    }
}

void rv_order_raise(_Atomic uint64_t *watermark, uint64_t seq)
{
    uint64_t cur = atomic_load_explicit(watermark, memory_order_relaxed);
    while (cur < seq &&
           !atomic_compare_exchange_weak_explicit(watermark, &cur, seq,
                                                  memory_order_release,
                                                  memory_order_relaxed))
        ;
}
