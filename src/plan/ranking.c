/*
 * ranking.c - the order plans are ranked in, and the list of the best (see
 * plan/ranking.h).
 */
#include "plan/ranking.h"

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

/* The same knobs, whatever the stage split. */
static bool same_knobs(const ppl_config *a, const ppl_config *b)
{
    return a->gpus == b->gpus && a->tp == b->tp && a->pp == b->pp && a->cp == b->cp &&
           a->ep == b->ep && ppl_config_etp(a) == ppl_config_etp(b) && a->vp == b->vp &&
           a->mbs == b->mbs && a->zero == b->zero && a->recompute == b->recompute &&
           a->sequence_parallel == b->sequence_parallel &&
           a->flash_attention == b->flash_attention && a->cp_comm == b->cp_comm &&
           ppl_config_shard_group(a) == ppl_config_shard_group(b) &&
           a->offload_optimizer == b->offload_optimizer;
}

const ppl_estimate *ppl_ranking_worst(const ppl_ranking *l)
{
    return l->count == l->cap ? &l->items[l->count - 1] : NULL;
}

void ppl_ranking_keep(int objective, ppl_ranking *l, const ppl_estimate *e)
{
    for (size_t j = 0; j < l->count; j++) {
        if (!same_knobs(&l->items[j].config, &e->config))
            continue;
        if (ppl_ranking_compare(objective, e, &l->items[j]) >= 0)
            return;
        memmove(&l->items[j], &l->items[j + 1], (l->count - j - 1) * sizeof *l->items);
        l->count--;
        break;
    }
    size_t n = l->count;
    if (n == l->cap && ppl_ranking_compare(objective, e, &l->items[n - 1]) >= 0)
        return;
    size_t i = n < l->cap ? n : l->cap - 1;
    while (i > 0 && ppl_ranking_compare(objective, e, &l->items[i - 1]) < 0) {
        l->items[i] = l->items[i - 1];
        i--;
    }
    l->items[i] = *e;
    if (n < l->cap)
        l->count++;
}
