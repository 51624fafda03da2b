/*
 * base/heap.h - a binary min-heap of (time, id) slots: the event queue of a
 * simulation, earliest time first, ties to the smaller id (so that runs are
 * reproducible).  The caller owns the array and its capacity.
 */
#ifndef PARPLAN_HEAP_H
#define PARPLAN_HEAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct ppl_heap_slot {
    double t;   /* seconds */
    int64_t id; /* what is due then (a rank) */
} ppl_heap_slot;

typedef struct ppl_heap {
    ppl_heap_slot *a; /* room for every slot pushed and not popped */
    size_t n;
} ppl_heap;

void ppl_heap_push(ppl_heap *h, double t, int64_t id);
/* The earliest slot, removed; the heap must not be empty. */
ppl_heap_slot ppl_heap_pop(ppl_heap *h);

#endif
