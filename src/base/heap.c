/*
 * heap.c - a binary min-heap of (time, id) slots (see base/heap.h).
 */
#include "base/heap.h"

#include <stdbool.h>

static bool before(const ppl_heap_slot *x, const ppl_heap_slot *y)
{
    return x->t < y->t || (x->t == y->t && x->id < y->id);
}

static void swap(ppl_heap_slot *x, ppl_heap_slot *y)
{
    ppl_heap_slot tmp = *x;
    *x = *y;
    *y = tmp;
}

void ppl_heap_push(ppl_heap *h, double t, int64_t id)
{
    size_t i = h->n++;
    h->a[i] = (ppl_heap_slot){t, id};
    while (i > 0 && before(&h->a[i], &h->a[(i - 1) / 2])) {
        swap(&h->a[i], &h->a[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
}

ppl_heap_slot ppl_heap_pop(ppl_heap *h)
{
    ppl_heap_slot top = h->a[0];
    h->a[0] = h->a[--h->n];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, b = i;
        if (l < h->n && before(&h->a[l], &h->a[b]))
            b = l;
        if (r < h->n && before(&h->a[r], &h->a[b]))
            b = r;
        if (b == i)
            break;
        swap(&h->a[i], &h->a[b]);
        i = b;
    }
    return top;
}
