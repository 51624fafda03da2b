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

#include "base/jsonread.h"
#include "plan/balance.h"

double ppl_mixed_send_s(double bytes, double bps, double latency_s)
{
    return latency_s + bytes / bps;
}

double ppl_mixed_pipeline_s(const double *stage_s, int64_t p, int64_t m, int64_t *slowest)
{
    double worst = 0.0, sum = 0.0;
    int64_t at = 0;
    for (int64_t k = 0; k < p; k++) {
        sum += stage_s[k];
        if (stage_s[k] > worst) {
            worst = stage_s[k];
            at = k;
        }
    }
    if (slowest)
        *slowest = at;
    return (double)(m - 1) * worst + sum;
}

/* One pool's share of the pipeline: its context, the layout of its stages (placed
 * on its own servers: the configuration with its stages alone) and the parts of a
 * microbatch under it. */
typedef struct pool_part {
    const ppl_eval_ctx *ctx;
    ppl_config local; /* the configuration with this pool's stages alone */
    ppl_layout layout;
    ppl_micro micro;
    double send_in_s; /* one pipeline send inside the pool (0 with one stage) */
} pool_part;

ppl_status ppl_mixed_cost(const ppl_eval_ctx *ctx, const ppl_pools *pools, ppl_mixed_plan *plan,
                          ppl_error *err)
{
    ppl_config *c = &plan->config;
    const ppl_model *m = ctx[0].model;
    const int64_t L = m->layers;
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
    if (p > L || p > PPL_MIXED_MAX_STAGES)
        return ppl_error_set(err, PPL_EUSAGE, "", "pools", "%lld stages for %lld layers",
                             (long long)p, (long long)L);
    c->pp = p;
    c->gpus = c->tp * c->dp * p;
    c->split = ppl_stage_split_default(L, p);
    pool_part part[PPL_MAX_POOLS];
    const double act = (double)c->mbs * (double)m->seq_len * (double)m->hidden * 2.0;
    /* each of the tp ranks of the boundary stage sends its 1/tp of the activations
     * over its own share of the cross-pool link (Megatron's scatter-gather pipeline
     * send, or sequence parallelism's shards); without sequence parallelism the
     * receiving pool rebuilds the whole over NVLink, which pp_one already holds */
    const double per_rank = c->tp > 1 ? act / (double)c->tp : act;
    plan->cross_send_s = ppl_mixed_send_s(per_rank, pools->cross_bps, pools->cross_latency_s);
    for (int i = 0; i < plan->npools; i++) {
        pool_part *q = &part[i];
        q->ctx = &ctx[plan->order[i]];
        q->local = *c;
        q->local.pp = plan->stages[i];
        q->local.gpus = plan->gpus[i];
        ppl_layout_init(q->ctx, &q->local, &q->layout);
        ppl_micro_comm_init(q->ctx, c, &q->layout, &q->micro);
        ppl_micro_compute_init(q->ctx, c, &q->micro);
        q->send_in_s = ppl_eval_coll(q->ctx, PPL_OP_SENDRECV, &q->layout.g_pp, per_rank, 1, NULL);
    }
    double *coef = malloc((size_t)(4 * p) * sizeof *coef);
    int *pool_of = malloc((size_t)p * sizeof *pool_of);
    if (!coef || !pool_of) {
        free(coef);
        free(pool_of);
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
    }
    double *tau = coef, *cst = coef + p, *mu = coef + 2 * p, *cap = coef + 3 * p;
    /* a send's exposed share, as stage_eval (schedule.c) charges a pipeline send:
     * (1 - pp_overlap) of it in the open, the overlapped rest slowing compute by
     * overlap_cost */
    const double so_pp = ctx[0].stack.pp_overlap, so_cost = ctx[0].stack.overlap_cost;
    const double exposed_share = (1.0 - so_pp) + so_cost * so_pp;
    for (int i = 0, k = 0; i < plan->npools; i++) {
        const pool_part *q = &part[i];
        for (int64_t s = 0; s < plan->stages[i]; s++, k++) {
            ppl_memory m1, m2;
            pool_of[k] = i;
            double t1 = ppl_stage_time_cached(q->ctx, c, &q->layout, &q->micro, k, 1, 0, &m1);
            double t2 = ppl_stage_time_cached(q->ctx, c, &q->layout, &q->micro, k, 2, 0, &m2);
            tau[k] = t2 - t1;
            cst[k] = t1 - tau[k];
            /* the send toward a neighbour in another pool crosses the link instead */
            int crossings = (s == 0 && i > 0) + (s == plan->stages[i] - 1 && i < plan->npools - 1);
            cst[k] += (double)crossings * (plan->cross_send_s - q->send_in_s) * exposed_share;
            mu[k] = m2.total - m1.total;
            cap[k] = m1.capacity - m1.headroom - (m1.total - mu[k]);
        }
    }
    ppl_status st = ppl_balance_solve(p, L, tau, cst, mu, cap, plan->layers, NULL);
    if (st != PPL_OK) {
        free(coef);
        free(pool_of);
        return st;
    }
    /* the step: stage times at the split, each pool's fullest GPU, each stage's
     * gradient reduction on its pool's network */
    for (int i = 0; i < plan->npools; i++)
        plan->memory[i] = plan->capacity[i] = 0.0;
    double reduce[PPL_MIXED_MAX_STAGES];
    const double gb = ppl_grad_bytes(&ctx[0].memory, c->precision);
    bool fits = true;
    for (int64_t k = 0; k < p; k++) {
        const pool_part *q = &part[pool_of[k]];
        ppl_memory mem;
        ppl_stage_time_cached(q->ctx, c, &q->layout, &q->micro, k, plan->layers[k], 0, &mem);
        plan->stage_s[k] = tau[k] * (double)plan->layers[k] + cst[k];
        fits = fits && mem.fits;
        if (mem.total > plan->memory[pool_of[k]])
            plan->memory[pool_of[k]] = mem.total;
        plan->capacity[pool_of[k]] = mem.capacity;
        /* ZeRO 0: an all-reduce of the gradients; ZeRO 1-2: a reduce-scatter and,
         * after the optimizer step, an all-gather of the weights (schedule.c
         * dp_times, one bucket: the bucket count changes only the latency term) */
        const ppl_group *g = &q->layout.g_dp;
        reduce[k] = c->zero == 0
                        ? ppl_eval_coll(q->ctx, PPL_OP_ALLREDUCE, g, mem.params * gb, 1, NULL)
                        : ppl_eval_coll(q->ctx, PPL_OP_REDUCESCATTER, g, mem.params * gb, 1, NULL) +
                              ppl_eval_coll(q->ctx, PPL_OP_ALLGATHER, g,
                                            mem.params * q->ctx->memory.weight_bytes, 1, NULL);
    }
    free(coef);
    free(pool_of);
    if (!fits)
        return PPL_INFEASIBLE;
    plan->pipeline_s =
        ppl_mixed_pipeline_s(plan->stage_s, p, c->microbatches, &plan->slowest_stage);
    /* Assumption: stage k's reduction starts after its last backward, which in
     * 1F1B comes one backward of each earlier stage before stage 0's (the
     * drain runs from the last stage to the first); a backward is taken as 2/3
     * of a stage's time (twice the forward, Narayanan et al. SC'21 §3.1), and
     * the stack's dp_overlap share of the stage's own last backward hides it too.
     * The step waits for the last reduction to end. */
    double later = 0.0, dp = 0.0;
    for (int64_t k = 0; k < p; k++) {
        double backward = 2.0 / 3.0 * plan->stage_s[k];
        double shown = reduce[k] - later - ctx[0].stack.dp_overlap * backward;
        if (shown > dp)
            dp = shown;
        later += backward;
    }
    plan->dp_exposed_s = dp;
    /* the per-step cost outside the model (data, logging, launch); the optimizer
     * step itself is not costed here (a memory-bound pass over each GPU's shard,
     * small beside the pipeline at these scales): an omission, not a zero */
    plan->overhead_s = ctx[0].stack.step_overhead_s;
    plan->step_time_s = plan->pipeline_s + plan->dp_exposed_s + plan->overhead_s;
    const double tokens = (double)c->global_batch * (double)m->seq_len;
    plan->tokens_per_s = tokens / plan->step_time_s;
    double peak = 0.0;
    for (int i = 0; i < plan->npools; i++)
        peak += (double)plan->gpus[i] * pools->pool[plan->order[i]].gpu.flops[PPL_PRECISION_BF16];
    double model_flops = tokens * ctx[0].figures.flops_training_per_token;
    plan->model_tflops_per_gpu = model_flops / plan->step_time_s / (double)c->gpus / 1e12;
    plan->mfu = model_flops / plan->step_time_s / peak;
    return PPL_OK;
}

/* Whether two plans place the same stages on the same pools with the same tp, dp
 * and microbatch size (they may differ in recomputation only). */
static bool same_assignment(const ppl_mixed_plan *a, const ppl_mixed_plan *b)
{
    if (a->npools != b->npools || a->config.tp != b->config.tp || a->config.dp != b->config.dp ||
        a->config.mbs != b->config.mbs)
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
        if (same_assignment(&out[i], p) && out[i].step_time_s <= p->step_time_s)
            return;
    size_t at = *count;
    while (at > 0 && (p->step_time_s < out[at - 1].step_time_s ||
                      (p->step_time_s == out[at - 1].step_time_s &&
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
} mixed_search;

/* Every stage count of pools order[i..] for the plan so far. */
static void stages_from(mixed_search *s, ppl_mixed_plan *plan, int i, int64_t total)
{
    const int64_t L = s->ctx[0].model->layers;
    if (i == plan->npools) {
        ppl_error ignored;
        s->stats->evaluated++;
        ppl_mixed_plan p = *plan;
        if (ppl_mixed_cost(s->ctx, s->pools, &p, &ignored) == PPL_OK) {
            s->stats->feasible++;
            keep(s->out, s->top, &s->count, &p);
        }
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
                        bool across, ppl_mixed_plan *out, size_t top, ppl_mixed_search_stats *stats)
{
    ppl_mixed_search_stats local = {0, 0};
    mixed_search s = {ctx, pools, out, top, 0, stats ? stats : &local};
    const ppl_model *m = ctx[0].model;
    if (top == 0 || pools->n < 1 || m->has_moe)
        return 0;
    const int64_t gb =
        pins->global_batch != PPL_UNSET ? pins->global_batch : ppl_default_global_batch(m);
    int64_t domain = INT64_MAX, fewest = INT64_MAX;
    for (int i = 0; i < pools->n; i++) {
        const ppl_topology *t = &pools->pool[i];
        int64_t d =
            t->nvlink.domain_gpus < t->gpus_per_server ? t->nvlink.domain_gpus : t->gpus_per_server;
        if (d < domain)
            domain = d;
        if (t->servers * t->gpus_per_server < fewest)
            fewest = t->servers * t->gpus_per_server;
    }
    int all[24][PPL_MAX_POOLS];
    int norders = orders(pools->n, all);
    /* the job on each pool alone (n = 1), or across all of them (each order) */
    {
        const int mode = across ? 1 : 0;
        int nruns = mode == 0 ? pools->n : (pools->n > 1 ? norders : 0);
        size_t done = 0; /* alone: each pool's best `top` in turn, pool by pool */
        for (int r = 0; r < nruns; r++) {
            if (mode == 0) {
                done += s.count;
                s.out = out + done;
                s.count = 0;
            }
            ppl_mixed_plan plan;
            memset(&plan, 0, sizeof plan);
            plan.npools = mode == 0 ? 1 : pools->n;
            if (mode == 0)
                plan.order[0] = r;
            else
                memcpy(plan.order, all[r], sizeof plan.order);
            const ppl_topology *t0 = &pools->pool[plan.order[0]];
            int64_t cap = mode == 0 ? t0->servers * t0->gpus_per_server : fewest;
            int64_t tp_max =
                mode == 0 ? (t0->nvlink.domain_gpus < t0->gpus_per_server ? t0->nvlink.domain_gpus
                                                                          : t0->gpus_per_server)
                          : domain;
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
                            c->precision = (ppl_precision)pins->precision;
                            c->fp8_recipe = (ppl_fp8_recipe)pins->fp8_recipe;
                            c->optimizer = (ppl_optimizer)pins->optimizer;
                            c->schedule = PPL_SCHEDULE_1F1B;
                            c->cp_a2a = 1;
                            stages_from(&s, &plan, 0, 0);
                        }
                    }
                }
            }
        }
    }
    return (s.out - out) + s.count;
}
