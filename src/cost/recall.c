/*
 * cost/recall.c - what the pipeline executor remembers, per thread (recall.h).
 */
#include "cost/recall.h"

#include <stdbool.h>
#include <string.h>

#include "base/pages.h"

/* A pipeline's shape: what a line's order depends on, and the head of a run's
 * inputs. */
typedef struct shape {
    int64_t schedule, pp, vp, m, group;
} shape;

static shape shape_of(const ppl_pipe_in *in)
{
    return (shape){in->schedule, in->pp, in->vp, in->microbatches, in->group};
}

static bool same(const shape *a, const shape *b)
{
    return a->schedule == b->schedule && a->pp == b->pp && a->vp == b->vp && a->m == b->m &&
           a->group == b->group;
}

/* ---- whole runs, by their inputs ------------------------------------------- */

/* The last runs, remembered: a search costs many configurations whose pipelines
 * are the same (ZeRO stages, sharding groups and offload change the reduction and
 * the optimizer, not the passes), and a run is a pure function of its inputs.  A
 * run of up to PPL_RECALL_STAGES stages without events is looked up by its inputs,
 * compared in full; per thread, so that threads never share it.  A fit re-costs
 * its runs' configurations under each trial of its constants; most trials leave
 * most runs' pipelines as they were (another GPU's constant), in 256 slots.
 * PPL_RECALL_STAGES covers a stage a layer up to 128 layers (Megatron 1T's): a mixed
 * cluster's pipelines run to 96 stages and more, and at 64 their runs were not
 * kept (Megatron 1T on mixed-h100-b200: 916 M instructions, 819 M with them).
 * The table (1.3 MB, within one huge page where granted: base/pages.h) is
 * allocated at a thread's first run and freed with the thread: static
 * thread-local storage would be cleared at every process's start, and a page
 * touched first costs about 10 us on a virtual machine.  So its slots fill in
 * order, a hash position holding its slot's index + 1 (0: none), and a slot's
 * stages and hops sit side by side: where the pages are small, those written are
 * the runs met, and a run of p stages writes its first p stages and no more. */
#define MEMO_SLOTS 256
typedef struct memo_stage {
    ppl_passes passes;
    double hop_s; /* to the next stage; 0 without hops */
} memo_stage;
typedef struct memo {
    shape shape;
    ppl_run_figures run;
    memo_stage stage[PPL_RECALL_STAGES];
} memo;
typedef struct memo_table {
    uint16_t at[MEMO_SLOTS];
    size_t n;
    memo slot[MEMO_SLOTS];
} memo_table;

/* ---- line orders, by shape -------------------------------------------------- */

/* The ring's bytes: 8 MiB, 1 M steps, its pages touched as orders fill them.
 * Megatron 1T's longest line (96 ranks, 1,024 microbatches) is 196,608 steps,
 * 1.5 MiB; its plan on mixed-h100-b200 records 49 orders, about 14 MiB: at 8 MiB
 * 569 M instructions and a peak of 25 MiB resident, at 16 MiB 566 M and 31 MiB,
 * at 4 MiB 625 M (callgrind, /usr/bin/time).  SHAPES: the orders it can name at
 * once. */
#define ORDERS_BYTES ((size_t)8 << 20)
#define SHAPES 64

typedef struct order {
    shape shape;
    size_t at, n; /* steps: the ring's from at, n of them */
    bool kept;
} order;

typedef struct orders_table {
    order slot[SHAPES];
    size_t next;      /* the slot the next order takes, round */
    size_t free_at;   /* the step the next order starts at */
    size_t room_slot; /* the slot ppl_recall_order_room handed, until kept */
    ppl_line_step ring[ORDERS_BYTES / sizeof(ppl_line_step)];
} orders_table;

#define RING_STEPS (ORDERS_BYTES / sizeof(ppl_line_step))

/* ---- the thread's table ----------------------------------------------------- */

/* Both, in one table a thread holds (base/pages.h ppl_pages_local), allocated at its
 * first run and freed with it; NULL when it cannot be had (nothing is then kept). */
typedef struct recall_table {
    memo_table runs;
    orders_table orders;
} recall_table;

static const char recall_owner; /* its name among the thread's tables */
static recall_table *recall_get(void)
{
    bool fresh;
    recall_table *t = ppl_pages_local(&recall_owner, sizeof *t, &fresh);
    if (t && fresh) {
        memset(t->runs.at, 0, sizeof t->runs.at);
        t->runs.n = 0;
        memset(t->orders.slot, 0, sizeof t->orders.slot);
        t->orders.next = t->orders.free_at = 0;
    }
    return t;
}

static memo_table *memo_table_get(void)
{
    recall_table *t = recall_get();
    return t ? &t->runs : NULL;
}

static orders_table *orders_get(void)
{
    recall_table *t = recall_get();
    return t ? &t->orders : NULL;
}

/* ---- whole runs: lookup and keeping ---------------------------------------- */

static uint64_t memo_hash(const ppl_pipe_in *in)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the inputs' bytes */
    const shape head = shape_of(in);
    const unsigned char *parts[] = {(const unsigned char *)&head, (const unsigned char *)in->stage,
                                    (const unsigned char *)in->hop_s};
    const size_t sizes[] = {sizeof head, (size_t)in->pp * sizeof *in->stage,
                            in->hop_s ? (size_t)(in->pp - 1) * sizeof *in->hop_s : 0};
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < sizes[i]; j++)
            h = (h ^ parts[i][j]) * 1099511628211ull;
    return h;
}

static double memo_hop_in(const ppl_pipe_in *in, int64_t k)
{
    return in->hop_s && k < in->pp - 1 ? in->hop_s[k] : 0.0;
}

static bool memo_holds(const memo *e, const ppl_pipe_in *in)
{
    const shape key = shape_of(in);
    if (!same(&e->shape, &key))
        return false;
    for (int64_t k = 0; k < in->pp; k++)
        if (memcmp(&e->stage[k].passes, &in->stage[k], sizeof in->stage[k]) != 0 ||
            memcmp(&e->stage[k].hop_s, &(double){memo_hop_in(in, k)}, sizeof(double)) != 0)
            return false;
    return true;
}

static void memo_keep(memo *e, const ppl_pipe_in *in, const ppl_run_figures *run)
{
    e->shape = shape_of(in);
    e->run = *run;
    for (int64_t k = 0; k < in->pp; k++) {
        e->stage[k].passes = in->stage[k];
        e->stage[k].hop_s = memo_hop_in(in, k);
    }
}

bool ppl_recall_run(const ppl_pipe_in *in, ppl_run_figures *out)
{
    memo_table *table = in->pp > PPL_RECALL_STAGES ? NULL : memo_table_get();
    if (!table)
        return false;
    const size_t at = memo_hash(in) % MEMO_SLOTS;
    const memo *e = table->at[at] ? &table->slot[table->at[at] - 1u] : NULL;
    if (!e || !memo_holds(e, in))
        return false;
    *out = e->run;
    return true;
}

void ppl_recall_keep_run(const ppl_pipe_in *in, const ppl_run_figures *run)
{
    memo_table *table = in->pp > PPL_RECALL_STAGES ? NULL : memo_table_get();
    if (!table)
        return;
    /* the position's slot, else the next unused, else (the table full) the
     * position's own */
    const size_t at = memo_hash(in) % MEMO_SLOTS;
    if (!table->at[at]) {
        const size_t i = table->n < MEMO_SLOTS ? table->n++ : at;
        table->at[at] = (uint16_t)(i + 1);
    }
    memo_keep(&table->slot[table->at[at] - 1u], in, run);
}

/* ---- line orders: lookup and keeping --------------------------------------- */

const ppl_line_step *ppl_recall_order(const ppl_pipe_in *in, size_t *n)
{
    orders_table *t = orders_get();
    const shape key = shape_of(in);
    for (size_t i = 0; t && i < SHAPES; i++) {
        const order *o = &t->slot[i];
        if (o->kept && same(&o->shape, &key)) {
            *n = o->n;
            return t->ring + o->at;
        }
    }
    return NULL;
}

ppl_line_step *ppl_recall_order_room(const ppl_pipe_in *in, size_t n)
{
    orders_table *t = n > 0 && n <= RING_STEPS ? orders_get() : NULL;
    if (!t)
        return NULL;
    size_t at = t->free_at;
    if (at + n > RING_STEPS)
        at = 0;
    /* the orders the new one overwrites are forgotten, and the slot it takes */
    for (size_t i = 0; i < SHAPES; i++) {
        order *o = &t->slot[i];
        if (o->kept && o->at < at + n && at < o->at + o->n)
            o->kept = false;
    }
    order *o = &t->slot[t->next];
    o->kept = false;
    o->shape = shape_of(in);
    o->at = at;
    o->n = 0;
    t->room_slot = t->next;
    return t->ring + at;
}

void ppl_recall_keep_order(const ppl_pipe_in *in, size_t n)
{
    orders_table *t = orders_get();
    if (!t)
        return;
    order *o = &t->slot[t->room_slot];
    const shape key = shape_of(in);
    if (!same(&o->shape, &key))
        return;
    o->n = n;
    o->kept = true;
    t->free_at = o->at + n;
    t->next = (t->room_slot + 1) % SHAPES;
}
