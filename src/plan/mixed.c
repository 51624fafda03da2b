/*
 * mixed.c - mixed clusters: costing pipelines across pools (the pools
 * themselves are loaded with the topology, topology.c).
 *
 * The step of a pipeline across pools is costed from the same per-stage lines
 * the balancer uses (balance.c): stage k, on the pool that holds it, takes
 * tau_k n + c_k per microbatch and needs mu_k n + f_k bytes for n layers, both
 * from ppl_stage_time_cached under that pool's evaluation context (its GPU, its
 * NVLink, its network).  What differs from a single pool:
 *  - the stages are balanced over all pools at once (ppl_balance_solve), so a
 *    faster pool's stages take more layers, up to its memory;
 *  - a send across a pool boundary goes over the cross-pool link instead of the
 *    pool's own network;
 *  - each pool reduces its stages' gradients over its own data-parallel group.
 * Assembled as 1F1B is everywhere else (schedule.h): (m - 1) x the slowest stage
 * plus one pass through all, then the exposed gradient reduction and the stack's
 * per-step overhead.  What this model leaves out is said where it is left out.
 */
#include "plan/mixed.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/minmax.h"
#include "base/jsonread.h"
#include "cost/rules.h"
#include "plan/balance.h"
#include "plan/search.h"

#define MIXED_SEEN 16 /* distinct stage time lines kept: six across two pools */

double ppl_mixed_send_s(double bytes, double bps, double latency_s)
{
    return latency_s + bytes / bps;
}

/* One pool's share of the pipeline: its context, the layout of its stages (placed
 * on its own servers: the configuration with its stages alone) and the parts of a
 * microbatch under it, which its stages' classes run under (ppl_stage_env). */
typedef struct pool_part {
    ppl_config local; /* the configuration with this pool's stages alone */
    ppl_layout layout;
    ppl_micro micro;
    ppl_stage_env env;
    double send_in_s; /* one pipeline send inside the pool (0 with one stage) */
} pool_part;

/* The assignment's own rules: what the mixed model costs, pools that exist once
 * each, every pool's stages within its GPUs and its GPU with the precision. */
static ppl_status check_assignment(const ppl_eval_ctx *ctx, const ppl_pools *pools,
                                   ppl_mixed_plan *plan, int64_t *stages, ppl_error *err)
{
    const ppl_config *c = &plan->config;
    const ppl_model *m = ctx[0].model;
    if (c->vp != 1 || c->cp != 1 || c->ep != 1 || m->has_moe || c->zero >= 3 ||
        ppl_schedule_of(c->schedule)->splits_backward)
        return ppl_error_set(err, PPL_EUSAGE, "", "pools",
                             "a pipeline across pools is costed with vp 1, cp 1, ep 1, ZeRO 0-2, "
                             "1F1B or GPipe, for dense models only");
    if (c->tp < 1 || c->dp < 1 || c->mbs < 1 || c->microbatches < 1 ||
        (unsigned)c->precision >= PPL_PRECISION_COUNT)
        return ppl_error_set(err, PPL_EUSAGE, "", "pools",
                             "tp, dp, mbs and microbatches must be at least 1, the "
                             "precision one of the training precisions");
    if (plan->npools < 1 || plan->npools > pools->n)
        return ppl_error_set(err, PPL_EUSAGE, "", "pools", "%d pools, the cluster has %d",
                             plan->npools, pools->n);
    int64_t p = 0;
    for (int i = 0; i < plan->npools; i++) {
        if (plan->order[i] < 0 || plan->order[i] >= pools->n)
            return ppl_error_set(err, PPL_EUSAGE, "", "pools", "pool %d of %d", plan->order[i],
                                 pools->n);
        for (int j = 0; j < i; j++)
            if (plan->order[j] == plan->order[i])
                return ppl_error_set(err, PPL_EUSAGE, "", "pools", "pool %d twice", plan->order[i]);
        const ppl_topology *t = &pools->pool[plan->order[i]];
        if (t->gpu.flops[c->precision] <= 0.0) /* the precision check of ppl_config_check */
            return ppl_error_set(err, PPL_EUSAGE, "", "precision", "pool %s's %s has no %s peak",
                                 t->name, t->gpu.name, ppl_precision_name(c->precision));
        plan->gpus[i] = c->tp * c->dp * plan->stages[i];
        if (plan->stages[i] < 1 || plan->gpus[i] > t->servers * t->gpus_per_server)
            return ppl_error_set(err, PPL_EUSAGE, "", "pools",
                                 "%lld stages of %lld GPUs do not fit in pool %s",
                                 (long long)plan->stages[i], (long long)(c->tp * c->dp), t->name);
        p += plan->stages[i];
    }
    if (p > m->layers || p > PPL_MIXED_MAX_STAGES)
        return ppl_error_set(err, PPL_EUSAGE, "", "pools", "%lld stages for %lld layers",
                             (long long)p, (long long)m->layers);
    *stages = p;
    return PPL_OK;
}

/* Stage k (the s-th of pool i) as a class of its own, under its pool. */
static ppl_stage_class stage_class(const ppl_mixed_plan *plan, const pool_part *q, int i, int64_t s,
                                   int64_t k, int64_t layers)
{
    const ppl_config *c = &plan->config;
    ppl_stage_class cl;
    memset(&cl, 0, sizeof cl);
    cl.first_stage = k;
    cl.count = 1;
    cl.layers = layers;
    cl.bf16_layers = ppl_stage_bf16_layers(c, k, layers);
    cl.is_first = k == 0;
    cl.is_last = k == c->pp - 1;
    cl.env = &q->env;
    /* the send toward a neighbour in another pool crosses the link instead */
    cl.cross_sends = (s == 0 && i > 0) + (s == plan->stages[i] - 1 && i < plan->npools - 1);
    cl.cross_send_s = plan->cross_send_s;
    return cl;
}

/* A stage's times with one and with two layers read its pool, its layers in bf16,
 * whether it ends the pipeline and its sends across pools (ppl_stage_eval, the
 * class fresh: no ZeRO-3 times, no MoE layers): a pool's middle stages are alike,
 * and costed once. */
typedef struct stage_times {
    int pool, cross;
    int64_t bf16_1, bf16_2;
    bool first, last;
    double t1_s, t2_s;
} stage_times;

/* The search's pools' parts by (position, stage count): for one configuration and
 * order (its generation) a part depends on its pool and its stage count alone,
 * and so do its stages' time lines. */
#define PART_CHOICES 8
typedef struct part_entry {
    unsigned generation;
    int pool;
    int64_t stages;
    pool_part part;
    stage_times seen[4]; /* its first, middle and last stages' lines */
    int nseen;
} part_entry;
typedef struct part_cache {
    unsigned generation;
    part_entry at[PPL_MAX_POOLS][PART_CHOICES];
} part_cache;

/* Each pool's context, layout and pieces (part[i] for the i-th pool in pipeline
 * order); the cross-pool send of one microbatch's activations. */
static void pool_parts(const ppl_eval_ctx *ctx, const ppl_pools *pools, ppl_mixed_plan *plan,
                       pool_part *part, part_cache *cache, part_entry *entry_of[PPL_MAX_POOLS])
{
    const ppl_config *c = &plan->config;
    const ppl_model *m = ctx[0].model;
    const double act = (double)c->mbs * (double)m->seq_len * (double)m->hidden * 2.0;
    /* each of the tp ranks of the boundary stage sends its 1/tp of the activations
     * over its own share of the cross-pool link (Megatron's scatter-gather pipeline
     * send, or sequence parallelism's shards); without sequence parallelism the
     * receiving pool rebuilds the whole over NVLink, which pp_one already holds */
    const double per_rank = c->tp > 1 ? act / (double)c->tp : act;
    plan->cross_send_s = ppl_mixed_send_s(per_rank, pools->cross_bps, pools->cross_latency_s);
    for (int i = 0; i < plan->npools; i++) {
        pool_part *q = &part[i];
        const ppl_eval_ctx *pc = &ctx[plan->order[i]];
        int free_at = -1, hit = -1;
        entry_of[i] = NULL;
        for (int j = 0; cache && j < PART_CHOICES && hit < 0; j++) {
            if (cache->at[i][j].generation != cache->generation) {
                if (free_at < 0)
                    free_at = j;
            } else if (cache->at[i][j].pool == plan->order[i] &&
                       cache->at[i][j].stages == plan->stages[i]) {
                hit = j;
            }
        }
        if (hit >= 0) {
            *q = cache->at[i][hit].part;
            entry_of[i] = &cache->at[i][hit];
        } else {
            q->local = *c;
            q->local.pp = plan->stages[i];
            q->local.gpus = plan->gpus[i];
            ppl_layout_init(pc, &q->local, &q->layout);
            ppl_micro_comm_init(pc, c, &q->layout, &q->micro);
            ppl_micro_compute_init(pc, c, &q->micro);
            q->send_in_s =
                ppl_collective_count(&pc->net, PPL_OP_SENDRECV, &q->layout.g_pp, per_rank, 1, NULL);
            if (free_at >= 0) {
                cache->at[i][free_at].generation = cache->generation;
                cache->at[i][free_at].pool = plan->order[i];
                cache->at[i][free_at].stages = plan->stages[i];
                cache->at[i][free_at].part = *q;
                cache->at[i][free_at].nseen = 0;
                entry_of[i] = &cache->at[i][free_at];
            }
        }
        q->env = (ppl_stage_env){pc, &q->layout, &q->micro};
    }
}

static void times_of(const ppl_config *c, const pool_part *q, int pool, const ppl_stage_class *one,
                     const ppl_stage_class *two, stage_times *seen, int *nseen, int most,
                     double *t1, double *t2)
{
    const stage_times key = {pool,
                             one->cross_sends,
                             one->bf16_layers,
                             two->bf16_layers,
                             one->is_first,
                             one->is_last,
                             0.0,
                             0.0};
    for (int j = 0; j < *nseen; j++) {
        const stage_times *e = &seen[j];
        if (e->pool == key.pool && e->cross == key.cross && e->bf16_1 == key.bf16_1 &&
            e->bf16_2 == key.bf16_2 && e->first == key.first && e->last == key.last) {
            *t1 = e->t1_s;
            *t2 = e->t2_s;
            return;
        }
    }
    ppl_stage_time a, b;
    ppl_stage_eval(q->env.ctx, c, &q->micro, one, &a);
    ppl_stage_eval(q->env.ctx, c, &q->micro, two, &b);
    *t1 = a.total;
    *t2 = b.total;
    if (*nseen < most) {
        seen[*nseen] = key;
        seen[*nseen].t1_s = a.total;
        seen[(*nseen)++].t2_s = b.total;
    }
}

/* The least slowest stage over every split of L layers (at least one a stage)
 * on the stages' time lines tau n + c (nl distinct lines, count[j] stages on
 * line j).  Every stage holds a layer, so the slowest is at least the largest
 * tau + c; above that each line is in its linear part, and the stages all at T
 * hold sum count (T - c) / tau layers: T = (L + sum count c / tau) / sum count /
 * tau, or that largest one-layer time if it is more (the split's stages all
 * below T would hold fewer than L layers).  A stage's time is convex in its
 * layers (linear, but for maxima: the host's launches, the hidden all-to-all), so
 * above its line through 1 and 2 layers.  Shaved by 1e-12: a bound, never above. */
static double least_slowest_s(int nl, int64_t L, const double *tau, const double *c,
                              const double *count)
{
    double one = 0.0, rate = 0.0, offset = 0.0;
    for (int j = 0; j < nl; j++) {
        if (!(tau[j] > 0.0) || !isfinite(c[j]))
            return 0.0; /* no line to bound with */
        one = ppl_max(one, tau[j] + c[j]);
        rate += count[j] / tau[j];
        offset += count[j] * c[j] / tau[j];
    }
    double t = ((double)L + offset) / rate;
    return ppl_max(0.0, ppl_max(one, t)) * (1.0 - 1e-12);
}

/* ppl_mixed_cost, or PPL_INFEASIBLE with *pruned set when the plan's step cannot
 * be below ceiling_s (the bound before the integer program, the pipeline's lower
 * bound before it is run). */
static ppl_status mixed_cost(const ppl_eval_ctx *ctx, const ppl_pools *pools, ppl_mixed_plan *plan,
                             double ceiling_s, part_cache *cache, bool *pruned, double *bound_s,
                             ppl_error *err)
{
    *pruned = false;
    *bound_s = 0.0;
    ppl_config *c = &plan->config;
    const int64_t L = ctx[0].model->layers;
    int64_t p = 0;
    ppl_status st = check_assignment(ctx, pools, plan, &p, err);
    if (st != PPL_OK)
        return st;
    c->pp = p;
    c->gpus = c->tp * c->dp * p;
    c->split = ppl_stage_split_default(L, p);
    pool_part part[PPL_MAX_POOLS];
    part_entry *entry_of[PPL_MAX_POOLS];
    pool_parts(ctx, pools, plan, part, cache, entry_of);

    /* every stage's time and memory lines (tau n + c, mu n + f for n layers), from
     * the stage costed with 1 and with 2 layers under its pool; the balancer's
     * integer program splits the layers on them */
    ppl_classes cl = {
        .items = malloc((size_t)p * sizeof(ppl_stage_class)), .n = (size_t)p, .cap = (size_t)p};
    double *coef = malloc((size_t)(7 * p) * sizeof *coef);
    int *pool_of = malloc((size_t)p * sizeof *pool_of);
    if (!cl.items || !coef || !pool_of) {
        free(cl.items);
        free(coef);
        free(pool_of);
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
    }
    double *tau = coef, *cst = coef + p, *mu = coef + 2 * p, *cap = coef + 3 * p;
    double *lt = coef + 4 * p, *lc = coef + 5 * p, *ln = coef + 6 * p;
    stage_times seen[MIXED_SEEN];
    int nseen = 0;
    /* the distinct lines with their stage counts: a pool's ends, and its middle
     * stages (neither its ends nor the pipeline's, no layer in bf16 here), which
     * share the second one's line */
    int nl = 0; /* at most one a stage */
    for (int i = 0, k = 0; i < plan->npools; i++) {
        const pool_part *q = &part[i];
        const int64_t n = plan->stages[i];
        for (int64_t s = 0; s < n; s++, k++) {
            pool_of[k] = i;
            if (s >= 2 && s < n - 1 && c->bf16_layers == 0) {
                tau[k] = tau[k - 1];
                cst[k] = cst[k - 1];
                continue;
            }
            ppl_stage_class one = stage_class(plan, q, i, s, k, 1), two = one;
            double t1, t2;
            two.layers = 2;
            two.bf16_layers = ppl_stage_bf16_layers(c, k, 2);
            if (entry_of[i]) /* lines of the pool's stages at this count, kept */
                times_of(c, q, i, &one, &two, entry_of[i]->seen, &entry_of[i]->nseen, 4, &t1, &t2);
            else
                times_of(c, q, i, &one, &two, seen, &nseen, MIXED_SEEN, &t1, &t2);
            tau[k] = t2 - t1;
            cst[k] = t1 - tau[k];
            const bool run = s == 1 && s < n - 1 && c->bf16_layers == 0;
            lt[nl] = tau[k], lc[nl] = cst[k], ln[nl++] = run ? (double)(n - 2) : 1.0;
        }
    }
    /* every rank works its stage's time for each microbatch (pipeline.h) */
    *bound_s =
        (double)c->microbatches * least_slowest_s(nl, L, lt, lc, ln) + ctx[0].stack.step_overhead_s;
    /* beyond the ceiling by more than rounding (a plan tying it ranks) */
    if (*bound_s > ceiling_s * (1.0 + 1e-12)) {
        free(coef);
        free(cl.items);
        free(pool_of);
        *pruned = true;
        return PPL_INFEASIBLE;
    }
    /* the memory lines only for what the bound leaves */
    for (int64_t k = 0; k < p; k++) {
        const pool_part *q = &part[pool_of[k]];
        ppl_memory m1, m2;
        ppl_memory_at(c, &q->env.ctx->memory, &q->micro.mem, q->env.ctx->topo->gpu.memory_bytes, k,
                      1, 0, &m1);
        ppl_memory_at(c, &q->env.ctx->memory, &q->micro.mem, q->env.ctx->topo->gpu.memory_bytes, k,
                      2, 0, &m2);
        mu[k] = m2.total - m1.total;
        cap[k] = m1.capacity - m1.headroom - (m1.total - mu[k]);
    }
    st = ppl_balance_solve(p, L, tau, cst, mu, cap, plan->layers, NULL);
    for (int i = 0, k = 0; st == PPL_OK && i < plan->npools; i++)
        for (int64_t s = 0; s < plan->stages[i]; s++, k++) {
            cl.items[k] = stage_class(plan, &part[i], i, s, k, plan->layers[k]);
            plan->stage_s[k] = tau[k] * (double)plan->layers[k] + cst[k];
        }
    free(coef);
    if (st != PPL_OK) {
        free(cl.items);
        free(pool_of);
        return st;
    }
    /* each pool's fullest GPU, for the assignment */
    for (int i = 0; i < plan->npools; i++)
        plan->memory[i] = plan->capacity[i] = 0.0;
    for (int64_t k = 0; k < p; k++) {
        const pool_part *q = &part[pool_of[k]];
        ppl_memory mem;
        ppl_memory_at(c, &q->env.ctx->memory, &q->micro.mem, q->env.ctx->topo->gpu.memory_bytes, k,
                      plan->layers[k], 0, &mem);
        if (mem.total > plan->memory[pool_of[k]])
            plan->memory[pool_of[k]] = mem.total;
        plan->capacity[pool_of[k]] = mem.capacity;
    }
    free(pool_of);
    /* the step, as every configuration's (estimate.c), each stage under its pool */
    memset(&plan->estimate, 0, sizeof plan->estimate);
    bool fits = true;
    if (isfinite(ceiling_s)) { /* the pipeline's bound first: the step is at least it */
        fits = ppl_estimate_cached(part[0].env.ctx, c, &part[0].layout, &part[0].micro, &cl, false,
                                   &plan->estimate);
        if (fits && plan->estimate.step_time_s > ceiling_s * (1.0 + 1e-12)) {
            free(cl.items);
            *pruned = true;
            return PPL_INFEASIBLE;
        }
    }
    if (fits)
        fits = ppl_estimate_cached(part[0].env.ctx, c, &part[0].layout, &part[0].micro, &cl, true,
                                   &plan->estimate);
    free(cl.items);
    if (!fits)
        return PPL_INFEASIBLE;
    return ppl_estimate_check(&plan->estimate, err);
}

ppl_status ppl_mixed_cost(const ppl_eval_ctx *ctx, const ppl_pools *pools, ppl_mixed_plan *plan,
                          ppl_error *err)
{
    bool pruned;
    double bound;
    return mixed_cost(ctx, pools, plan, INFINITY, NULL, &pruned, &bound, err);
}

/* Whether two plans place the same stages on the same pools with the same knobs
 * but recomputation (a pool's full search may differ in any of them). */
static bool same_assignment(const ppl_mixed_plan *a, const ppl_mixed_plan *b)
{
    const ppl_config *x = &a->config, *y = &b->config;
    if (a->npools != b->npools || x->tp != y->tp || x->dp != y->dp || x->mbs != y->mbs ||
        x->cp != y->cp || x->vp != y->vp || x->ep != y->ep || x->etp != y->etp ||
        x->zero != y->zero || x->shard_group != y->shard_group ||
        x->offload_optimizer != y->offload_optimizer || x->schedule != y->schedule ||
        x->cp_comm != y->cp_comm || x->sequence_parallel != y->sequence_parallel ||
        x->split.first != y->split.first || x->split.last != y->split.last)
        return false;
    for (int i = 0; i < a->npools; i++)
        if (a->order[i] != b->order[i] || a->stages[i] != b->stages[i])
            return false;
    return true;
}

/* Keeps the `top` fastest, best first (ties: fewer GPUs, then the order found);
 * a plan as fast as a kept one of the same assignment (recomputation that costs
 * nothing: selective under flash attention) is not kept twice. */
static void keep(ppl_mixed_plan *out, size_t top, size_t *count, const ppl_mixed_plan *p)
{
    for (size_t i = 0; i < *count; i++)
        if (same_assignment(&out[i], p) && out[i].estimate.step_time_s <= p->estimate.step_time_s)
            return;
    size_t at = *count;
    while (at > 0 && (p->estimate.step_time_s < out[at - 1].estimate.step_time_s ||
                      (p->estimate.step_time_s == out[at - 1].estimate.step_time_s &&
                       p->config.gpus < out[at - 1].config.gpus)))
        at--;
    if (at >= top)
        return;
    size_t n = *count < top ? *count : top - 1;
    memmove(&out[at + 1], &out[at], (n - at) * sizeof *out);
    out[at] = *p;
    if (*count < top)
        (*count)++;
}

/* The stage counts of one pool to try: the most its GPUs hold, and halves of it. */
static int stage_choices(int64_t most, int64_t *out)
{
    int n = 0;
    for (int64_t s = most; s >= 1 && n < 8; s /= 2)
        out[n++] = s;
    return n;
}

typedef struct mixed_search {
    const ppl_eval_ctx *ctx;
    const ppl_pools *pools;
    ppl_mixed_plan *out;
    size_t top, count;
    ppl_mixed_search_stats *stats;
    bool no_prune;
    double ceiling_s; /* the caller's: what a plan must beat to rank */
    part_cache cache; /* generation: one per configuration and order */
} mixed_search;

/* Every stage count of pools order[i..] for the plan so far. */
static void stages_from(mixed_search *s, ppl_mixed_plan *plan, int i, int64_t total)
{
    const int64_t L = s->ctx[0].model->layers;
    if (i == plan->npools) {
        ppl_error ignored;
        s->stats->evaluated++;
        ppl_mixed_plan p = *plan;
        double ceiling = s->no_prune ? INFINITY : s->ceiling_s;
        if (!s->no_prune && s->count == s->top)
            ceiling = ppl_min(ceiling, s->out[s->top - 1].estimate.step_time_s);
        bool pruned;
        double bound;
        if (mixed_cost(s->ctx, s->pools, &p, ceiling, &s->cache, &pruned, &bound, &ignored) ==
            PPL_OK) {
            s->stats->feasible++;
            s->stats->bounds_broken += bound > p.estimate.step_time_s * (1.0 + 1e-12);
            keep(s->out, s->top, &s->count, &p);
        }
        s->stats->pruned += pruned;
        return;
    }
    const ppl_topology *t = &s->pools->pool[plan->order[i]];
    int64_t choices[8],
        most = t->servers * t->gpus_per_server / (plan->config.tp * plan->config.dp);
    int n = stage_choices(most, choices);
    for (int k = 0; k < n; k++) {
        int64_t left = plan->npools - i - 1; /* at least one stage on each pool after */
        if (total + choices[k] + left > L || total + choices[k] + left > PPL_MIXED_MAX_STAGES)
            continue;
        plan->stages[i] = choices[k];
        stages_from(s, plan, i + 1, total + choices[k]);
    }
}

/* Each order of the pools (every permutation of n, by Heap's algorithm would do;
 * at most 4 pools: the orders are built by insertion). */
static int orders(int n, int out[][PPL_MAX_POOLS])
{
    int count = 1;
    out[0][0] = 0;
    for (int k = 1; k < n; k++) {
        int next = 0;
        int tmp[24][PPL_MAX_POOLS];
        for (int o = 0; o < count; o++)
            for (int at = 0; at <= k; at++) {
                for (int j = 0, src = 0; j <= k; j++)
                    tmp[next][j] = j == at ? k : out[o][src++];
                next++;
            }
        memcpy(out, tmp, (size_t)next * sizeof tmp[0]);
        count = next;
    }
    return count;
}

static bool pinned_ok(int64_t pin, int64_t v)
{
    return pin == PPL_UNSET || pin == v;
}

size_t ppl_mixed_search(const ppl_eval_ctx *ctx, const ppl_pools *pools, const ppl_pins *pins,
                        ppl_mixed_plan *out, size_t top, ppl_mixed_search_stats *stats)
{
    return ppl_mixed_search_within(ctx, pools, pins, false, INFINITY, out, top, stats);
}

size_t ppl_mixed_search_within(const ppl_eval_ctx *ctx, const ppl_pools *pools,
                               const ppl_pins *pins, bool no_prune, double ceiling_s,
                               ppl_mixed_plan *out, size_t top, ppl_mixed_search_stats *stats)
{
    ppl_mixed_search_stats local = {0, 0, 0, 0};
    const ppl_model *m = ctx[0].model;
    if (top == 0 || pools->n < 1 || m->has_moe)
        return 0;
    /* on the heap: the parts' cache is some 80 KB */
    mixed_search *s = calloc(1, sizeof *s);
    if (!s)
        return 0;
    *s = (mixed_search){.ctx = ctx,
                        .pools = pools,
                        .out = out,
                        .top = top,
                        .stats = stats ? stats : &local,
                        .no_prune = no_prune,
                        .ceiling_s = ceiling_s};
    const int64_t gb =
        pins->global_batch != PPL_UNSET ? pins->global_batch : ppl_default_global_batch(m);
    int64_t domain = INT64_MAX, fewest = INT64_MAX;
    for (int i = 0; i < pools->n; i++) {
        const ppl_topology *t = &pools->pool[i];
        int64_t d = ppl_topology_server_domain(t);
        if (d < domain)
            domain = d;
        if (t->servers * t->gpus_per_server < fewest)
            fewest = t->servers * t->gpus_per_server;
    }
    int all[24][PPL_MAX_POOLS];
    int norders = orders(pools->n, all);
    /* across all of the pools, in each order */
    {
        int nruns = pools->n > 1 ? norders : 0;
        for (int r = 0; r < nruns; r++) {
            ppl_mixed_plan plan;
            memset(&plan, 0, sizeof plan);
            plan.npools = pools->n;
            memcpy(plan.order, all[r], sizeof plan.order);
            const int64_t cap = fewest, tp_max = domain;
            for (int64_t tp = 1; tp <= tp_max; tp *= 2) {
                if (!pinned_ok(pins->tp, tp) || m->heads % tp != 0 ||
                    (m->kv_heads % tp != 0 && tp % m->kv_heads != 0))
                    continue;
                for (int64_t mbs = 1; mbs <= 2; mbs++) {
                    if (!pinned_ok(pins->mbs, mbs) || gb % mbs != 0)
                        continue;
                    for (int64_t dp = 1; dp * tp <= cap; dp++) {
                        if (!pinned_ok(pins->dp, dp) || (gb / mbs) % dp != 0)
                            continue;
                        for (int rc = 0; rc < 3; rc++) {
                            if (pins->recompute != PPL_UNSET && pins->recompute != rc)
                                continue;
                            ppl_config *c = &plan.config;
                            memset(c, 0, sizeof *c);
                            c->tp = tp;
                            c->dp = dp;
                            c->cp = c->ep = c->vp = 1;
                            c->mbs = mbs;
                            c->global_batch = gb;
                            c->microbatches = gb / (dp * mbs);
                            c->zero = pins->zero != PPL_UNSET ? pins->zero : 1;
                            c->recompute = (ppl_recompute)rc;
                            c->sequence_parallel = tp > 1;
                            c->flash_attention = true;
                            /* (no bf16 layers across pools: cli/common.c; no MoE) */
                            ppl_config_take_fixed(c, pins);
                            c->schedule = PPL_SCHEDULE_1F1B;
                            c->cp_a2a = 1;
                            s->cache.generation++;
                            stages_from(s, &plan, 0, 0);
                        }
                    }
                }
            }
        }
    }
    size_t count = s->count;
    free(s);
    return count;
}

/* A plan of the full search on pool i alone, as a plan on the mixed cluster. */
static void alone(const ppl_estimate *e, int i, ppl_mixed_plan *out)
{
    memset(out, 0, sizeof *out);
    out->config = e->config;
    out->npools = 1;
    out->order[0] = i;
    out->stages[0] = e->config.pp;
    out->gpus[0] = e->config.gpus;
    out->memory[0] = e->memory.total;
    out->capacity[0] = e->memory.capacity;
    for (int64_t k = 0; k < e->config.pp && k < PPL_MIXED_MAX_STAGES; k++)
        out->layers[k] = ppl_stage_layers(&e->config, k);
    out->estimate = *e;
}

size_t ppl_mixed_plan_all(const ppl_eval_ctx *ctx, const ppl_pools *pools,
                          const ppl_search_opts *opts, ppl_mixed_plan *out,
                          ppl_mixed_search_stats *stats, ppl_error *err)
{
    const size_t top = opts->top > 0 ? opts->top : 1;
    size_t n = 0;
    ppl_mixed_search_stats local = {0, 0, 0, 0};
    if (!stats)
        stats = &local;
    /* the whole job on each pool: the full search, as on any topology */
    for (int i = 0; i < pools->n; i++) {
        ppl_error skip;
        ppl_search_result r;
        if (ppl_precision_check(opts->pins->precision, &pools->pool[i], &skip) != PPL_OK)
            continue; /* this pool cannot run the precision: no plan on it */
        ppl_search_opts o = *opts;
        o.top = top;
        ppl_status st = ppl_search(&ctx[i], &o, &r, err);
        stats->evaluated += r.evaluated;
        stats->feasible += r.feasible;
        for (size_t k = 0; st == PPL_OK && k < r.count; k++) {
            ppl_mixed_plan p;
            alone(&r.results[k], i, &p);
            keep(out, top, &n, &p);
        }
        ppl_search_free(&r);
        if (st != PPL_OK && st != PPL_INFEASIBLE)
            return 0;
    }
    /* pipelines across the pools (dense models: the balancer splits dense layers) */
    ppl_mixed_plan *across = calloc(top, sizeof *across);
    if (!across) {
        ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
        return 0;
    }
    /* a plan across the pools ranks only below the top of those alone */
    double ceiling = n == top ? out[top - 1].estimate.step_time_s : INFINITY;
    size_t na = ppl_mixed_search_within(ctx, pools, opts->pins, opts->no_prune, ceiling, across,
                                        top, stats);
    for (size_t k = 0; k < na; k++)
        keep(out, top, &n, &across[k]);
    free(across);
    return n;
}
