/*
** order_ring.h -- batches that finish out of order, released in order.
**
** The unordered write modes (db_write.c) hand each batch to whoever
** finishes it (its own writer), so batches finish in any order.  Two of
** them must still advance a watermark in sequence order: in-order
** publication raises last_visible_seq past a batch only once it and every
** earlier batch have been inserted, and write_prepared raises the commit
** watermark past a batch only once it and every earlier batch have
** committed.  This ring is how, without a lock or a heap.
**
** The group leader (one at a time: the single producer) pushes each batch
** in sequence order, getting its position.  Whoever finishes a batch
** marks its position done, then pops: taking the oldest batch while it is
** done, any number of threads at once (each pop is a compare-and-swap of
** the tail), so every batch is popped exactly once and in order.  The
** popper raises the watermark to the popped batch's last sequence (a
** max: two poppers may finish their raises in either order).
**
** No finished batch is left unpopped: a thread that marks its batch done
** and then finds an older one not done leaves it, and the older one's
** finisher, popping after it marks its own, meets the newer one done.
** Marking and popping are sequentially consistent for that reason (each
** side stores, then loads what the other stores).
**
** Owns: the slots and the two positions.  Does not own: what a watermark
** means or who waits on it (db_write.c).
*/
#ifndef RAVEL_ORDER_RING_H
#define RAVEL_ORDER_RING_H

#include "ravel_int.h"

enum rv_order_state {
    RV_ORDER_PENDING = 0,   /* pushed, not finished */
    RV_ORDER_DONE = 1,      /* finished: may be popped */
    RV_ORDER_FAILED = 2,    /* finished without its effect (an insert
                            ** failed): popped, but nothing past it may be
                            ** published */
};

struct rv_order_slot {
    _Atomic uint64_t last_seq;  /* the batch's last sequence */
    _Atomic(void *) owner;      /* whom to tell once popped, or NULL */
    _Atomic uint32_t state;     /* enum rv_order_state */
};

struct rv_order_ring {
    struct rv_order_slot *slots;
    uint64_t mask;              /* slots - 1; slots a power of two */
    _Atomic uint64_t head;      /* next position to push; the producer's */
    _Atomic uint64_t tail;      /* oldest position not yet popped */
};

/* A popped batch. */
struct rv_order_popped {
    uint64_t last_seq;
    void *owner;
    int failed;                 /* it was marked RV_ORDER_FAILED */
};

/* SLOTS (a power of two) batches may be pushed and not yet popped. */
RAVEL_PRIVATE int rv_order_ring_init(struct rv_order_ring *r, size_t slots);
RAVEL_PRIVATE void rv_order_ring_destroy(struct rv_order_ring *r);

/* Producer only: 1 if a push would find no free slot. */
RAVEL_PRIVATE int rv_order_ring_full(struct rv_order_ring *r);

/* Producer only: how many pushes would find a free slot now (more may
** free up, none may be taken but by the producer). */
RAVEL_PRIVATE uint64_t rv_order_ring_free(struct rv_order_ring *r);

/* 1 if every pushed batch has been popped. */
RAVEL_PRIVATE int rv_order_ring_empty(struct rv_order_ring *r);

/* Producer only, when not full: appends a batch ending at LAST_SEQ, owned
** by OWNER; returns its position. */
RAVEL_PRIVATE uint64_t rv_order_ring_push(struct rv_order_ring *r,
                                          uint64_t last_seq, void *owner);

/* The batch at POS is finished, with STATE (DONE or FAILED). */
RAVEL_PRIVATE void rv_order_ring_finish(struct rv_order_ring *r,
                                        uint64_t pos,
                                        enum rv_order_state state);

/* Pops the oldest batch if it is finished: 1 and *OUT filled, or 0 if
** the ring is empty or its oldest batch is still pending. */
RAVEL_PRIVATE int rv_order_ring_pop(struct rv_order_ring *r,
                                    struct rv_order_popped *out);

/* Raises *WATERMARK to SEQ unless it is already higher (release). */
RAVEL_PRIVATE void rv_order_raise(_Atomic uint64_t *watermark, uint64_t seq);

#endif /* RAVEL_ORDER_RING_H */
