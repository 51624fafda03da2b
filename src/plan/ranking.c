/*
 * ranking.c - the order plans are ranked in, and the list of the best (see
 * plan/ranking.h).
 */
#include "plan/ranking.h"

#include <stdlib.h>
#include <string.h>

const char *const ppl_objective_names[] = {"time", "cost", "memory", NULL};

const char *ppl_objective_name(int v)
{
    return (unsigned)v <= PPL_OBJECTIVE_MEMORY ? ppl_objective_names[v] : "?";
}

static double objective_of(int objective, const ppl_estimate *e)
{
    switch (objective) {
    case PPL_OBJECTIVE_MEMORY: return e->memory.total;
    case PPL_OBJECTIVE_COST: /* GPU-hours per token */
        return (double)e->config.gpus / 3600.0 / e->tokens_per_s;
    default: return e->step_time_s;
    }
}

int ppl_ranking_compare(int objective, const ppl_estimate *a, const ppl_estimate *b)
{
    double x = objective_of(objective, a), y = objective_of(objective, b);
    if (x < y)
        return -1;
    if (x > y)
        return 1;
    /* a tie on the objective goes to the plan that needs less memory (the ZeRO
     * stage that shards more, at the same step), then to the knobs */
    if (a->memory.total < b->memory.total)
        return -1;
    if (a->memory.total > b->memory.total)
        return 1;
    const ppl_config *p = &a->config, *q = &b->config;
    int64_t ka[] = {p->gpus,
                    p->tp,
                    p->pp,
                    p->cp,
                    p->ep,
                    ppl_config_etp(p),
                    p->vp,
                    p->mbs,
                    p->zero,
                    p->recompute,
                    p->sequence_parallel,
                    p->flash_attention,
                    p->cp_comm,
                    p->split.first,
                    p->split.last,
                    -ppl_config_shard_group(p),
                    (int64_t)(p->offload_optimizer * 1e6)};
    int64_t kb[] = {q->gpus,
                    q->tp,
                    q->pp,
                    q->cp,
                    q->ep,
                    ppl_config_etp(q),
                    q->vp,
                    q->mbs,
                    q->zero,
                    q->recompute,
                    q->sequence_parallel,
                    q->flash_attention,
                    q->cp_comm,
                    q->split.first,
                    q->split.last,
                    -ppl_config_shard_group(q),
                    (int64_t)(q->offload_optimizer * 1e6)};
    for (size_t i = 0; i < sizeof ka / sizeof ka[0]; i++)
        if (ka[i] != kb[i])
            return ka[i] < kb[i] ? -1 : 1;
    return 0;
}

/* The knobs that make one entry of the list, whatever the stage split:
 * offload_optimizer by its bits, -0.0 as 0.0. */
#define KNOBS 15
static void knobs_of(const ppl_config *c, int64_t v[KNOBS])
{
    _Static_assert(sizeof(double) == sizeof(int64_t), "a double held as 8 bytes");
    double offload = c->offload_optimizer == 0.0 ? 0.0 : c->offload_optimizer;
    int64_t k[KNOBS] = {c->gpus,
                        c->tp,
                        c->pp,
                        c->cp,
                        c->ep,
                        ppl_config_etp(c),
                        c->vp,
                        c->mbs,
                        c->zero,
                        c->recompute,
                        c->sequence_parallel,
                        c->flash_attention,
                        c->cp_comm,
                        ppl_config_shard_group(c),
                        0};
    memcpy(&k[KNOBS - 1], &offload, sizeof offload);
    memcpy(v, k, sizeof k);
}

static bool same_knobs(const ppl_config *a, const ppl_config *b)
{
    int64_t ka[KNOBS], kb[KNOBS];
    knobs_of(a, ka);
    knobs_of(b, kb);
    return memcmp(ka, kb, sizeof ka) == 0;
}

/* FNV-1a over the knobs. */
static uint64_t knob_hash(const ppl_config *c)
{
    int64_t v[KNOBS];
    knobs_of(c, v);
    uint64_t h = 1469598103934665603ULL;
    const unsigned char *p = (const unsigned char *)v;
    for (size_t i = 0; i < sizeof v; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

ppl_status ppl_ranking_init(ppl_ranking *l, size_t cap, ppl_error *err)
{
    memset(l, 0, sizeof *l);
    l->cap = cap > 0 ? cap : 1;
    l->nslots = 16;
    while (l->nslots < 2 * l->cap)
        l->nslots *= 2;
    l->items = calloc(l->cap, sizeof *l->items);
    l->slot_of = calloc(l->cap, sizeof *l->slot_of);
    l->slots = calloc(l->nslots, sizeof *l->slots);
    if (!l->items || !l->slot_of || !l->slots) {
        ppl_ranking_free(l);
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
    }
    return PPL_OK;
}

static void free_table(ppl_ranking *l)
{
    free(l->slot_of);
    free(l->slots);
    l->slot_of = NULL;
    l->slots = NULL;
    l->nslots = 0;
}

void ppl_ranking_free(ppl_ranking *l)
{
    free(l->items);
    free_table(l);
    memset(l, 0, sizeof *l);
}

const ppl_estimate *ppl_ranking_worst(const ppl_ranking *l)
{
    return l->count == l->cap ? &l->items[0] : NULL;
}

const ppl_estimate *ppl_ranking_best(const ppl_ranking *l)
{
    return l->count > 0 ? &l->items[l->best] : NULL;
}

/* The entry of e's knobs, or count when there is none. */
static size_t find(const ppl_ranking *l, const ppl_config *c)
{
    if (!l->slots) {
        for (size_t j = 0; j < l->count; j++)
            if (same_knobs(&l->items[j].config, c))
                return j;
        return l->count;
    }
    size_t mask = l->nslots - 1;
    for (size_t p = (size_t)knob_hash(c) & mask; l->slots[p]; p = (p + 1) & mask)
        if (same_knobs(&l->items[l->slots[p] - 1].config, c))
            return l->slots[p] - 1;
    return l->count;
}

static void slot_add(ppl_ranking *l, size_t i)
{
    if (!l->slots)
        return;
    size_t mask = l->nslots - 1, p = (size_t)knob_hash(&l->items[i].config) & mask;
    while (l->slots[p])
        p = (p + 1) & mask;
    l->slots[p] = (uint32_t)i + 1;
    l->slot_of[i] = (uint32_t)p;
}

/* Empties entry i's slot, shifting back the entries probed past it (linear
 * probing's deletion: no tombstones). */
static void slot_remove(ppl_ranking *l, size_t i)
{
    if (!l->slots)
        return;
    size_t mask = l->nslots - 1, hole = l->slot_of[i];
    l->slots[hole] = 0;
    for (size_t q = (hole + 1) & mask; l->slots[q]; q = (q + 1) & mask) {
        size_t home = (size_t)knob_hash(&l->items[l->slots[q] - 1].config) & mask;
        /* q's entry may move to the hole when its home is not in (hole, q] */
        bool stays = hole <= q ? (home > hole && home <= q) : (home > hole || home <= q);
        if (stays)
            continue;
        l->slots[hole] = l->slots[q];
        l->slot_of[l->slots[hole] - 1] = (uint32_t)hole;
        l->slots[q] = 0;
        hole = q;
    }
}

static void swap_entries(ppl_ranking *l, size_t i, size_t j)
{
    ppl_estimate t = l->items[i];
    l->items[i] = l->items[j];
    l->items[j] = t;
    if (l->slots) {
        uint32_t si = l->slot_of[i], sj = l->slot_of[j];
        l->slot_of[i] = sj;
        l->slot_of[j] = si;
        l->slots[sj] = (uint32_t)i + 1;
        l->slots[si] = (uint32_t)j + 1;
    }
    if (l->best == i)
        l->best = j;
    else if (l->best == j)
        l->best = i;
}

/* The heap keeps the worst at the root: a parent ranks after its children. */
static void sift_up(int objective, ppl_ranking *l, size_t i)
{
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (ppl_ranking_compare(objective, &l->items[i], &l->items[parent]) <= 0)
            break;
        swap_entries(l, i, parent);
        i = parent;
    }
}

static void sift_down(int objective, ppl_ranking *l, size_t i, size_t n)
{
    for (;;) {
        size_t worst = i, a = 2 * i + 1, b = a + 1;
        if (a < n && ppl_ranking_compare(objective, &l->items[a], &l->items[worst]) > 0)
            worst = a;
        if (b < n && ppl_ranking_compare(objective, &l->items[b], &l->items[worst]) > 0)
            worst = b;
        if (worst == i)
            return;
        swap_entries(l, i, worst);
        i = worst;
    }
}

void ppl_ranking_keep(int objective, ppl_ranking *l, const ppl_estimate *e)
{
    size_t j = find(l, &e->config);
    if (j < l->count) {
        /* the same knobs at another split: the faster one stays, and an entry
         * that got better moves away from the root */
        if (ppl_ranking_compare(objective, e, &l->items[j]) >= 0)
            return;
        l->items[j] = *e;
        if (ppl_ranking_compare(objective, e, &l->items[l->best]) < 0)
            l->best = j;
        sift_down(objective, l, j, l->count);
        return;
    }
    if (l->count < l->cap) {
        size_t i = l->count++;
        l->items[i] = *e;
        slot_add(l, i);
        if (i == 0 || ppl_ranking_compare(objective, e, &l->items[l->best]) < 0)
            l->best = i;
        sift_up(objective, l, i);
        return;
    }
    /* full: e takes the worst's place if it ranks before it */
    if (ppl_ranking_compare(objective, e, &l->items[0]) >= 0)
        return;
    slot_remove(l, 0);
    l->items[0] = *e;
    slot_add(l, 0);
    if (l->count == 1 || ppl_ranking_compare(objective, e, &l->items[l->best]) < 0)
        l->best = 0;
    sift_down(objective, l, 0, l->count);
}

void ppl_ranking_sort(int objective, ppl_ranking *l)
{
    free_table(l);
    /* heapsort: the worst to the end, one at a time */
    for (size_t n = l->count; n > 1; n--) {
        swap_entries(l, 0, n - 1);
        sift_down(objective, l, 0, n - 1);
    }
    l->best = 0;
}
