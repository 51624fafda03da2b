/*
 * bounds.c - the lower bounds the search prunes with (see plan/bounds.h).
 */
#include "plan/bounds.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/minmax.h"
#include "cost/pipeline.h"

/* Lower bound on the step time, for every stage split, plus the per-step cost.  A
 * layer's passes are at least its compute (stage.c: F >= its forward, F + B >=
 * forward + backward - W, and the backward's recomputation may be none, block
 * recomputation recomputing as little as one layer a stage); a, d and w below are
 * a layer's forward, backward to its input (backward - W) and whole work per
 * microbatch, each the least over dense and MoE layers.  The step is at least:
 *  - the busiest rank's work, at least the microbatches times the stages' summed
 *    time over the ranks (stages_floor; no pipeline runs below a rank's
 *    work, pipeline.h ppl_pipe_bound_s);
 *  - a microbatch's chain, forward through every stage and backward to the input
 *    back, whatever the schedule: the stages' summed time less their W passes
 *    (stages_floor), and L (a + d);
 *  - on a line of ranks each holding one run of layers (vp 1; not a V nor
 *    DualPipe's two directions): rank k starts once the first microbatch's forward
 *    has crossed the N_k layers before it, works m microbatches of its n_k, and,
 *    where the backward is not split (its W deferred), the last microbatch's
 *    backward then crosses those N_k layers back: T >= e N_k + c n_k for every k,
 *    with c = m u and e = u, or a where the backward is split; u a layer's least
 *    time a microbatch with its exposed exchanges and its launches
 *    (layer_lines; a pass without split backward sends its input's gradient
 *    after the weights', executor.c BW, so the chain carries a stage's whole F +
 *    BW).  Over every split of the L layers the least such T is where all ranks
 *    are equal, N_{k+1} = N_k (1 - e/c) + T/c, so T = e L / (1 - (1 - e/c)^pp) (a
 *    split below it would hold fewer layers).  But the search's splits are
 *    f, then pp - 2 stages of mu, then l layers (config.h ppl_stage_split): with
 *    e = u, r = 1/m, the terms of rank 0, of the last middle rank and of the last
 *    are c f, u (f + (pp - 3) mu) + c mu and u (f + (pp - 2) mu) + c l, each
 *    growing with every count, so T holds a split iff the most layers the three
 *    allow reach L: f = T/c, mu = (T - u f)/(u (pp - 3) + c), l the rest, which
 *    hold (T/c) [(1 - r) (1 + (pp - 2)(1 - r)/(1 + (pp - 3) r)) + 1] layers; so
 *    T >= m u L / [(1 - r) (1 + (pp - 2)(1 - r)/(1 + (pp - 3) r)) + 1]
 *    (pp 2: no middle term; pp evenly split and m large: m u L / pp; m 1: u L).
 *    With layers of two kinds u is the cheaper kind's; the first form holds on
 *    the axis of time too, each layer its own kind's figure and any split of the
 *    layers' summed time Z: T >= Z / (1 - (1 - 1/m)^pp) (layer_lines);
 *  - on such a line (vp 1), m times the busiest stage of the search's own split,
 *    which is of that form: its least over f and mu, each layer at its own kind
 *    where it lies (ppl_bound_split_form_s).  Equal middle stages can force far
 *    more onto the ends than the even share: 56 layers on 16 stages are at best
 *    1 + 14 x 3 + 13 or 7 + 14 x 3 + 7, seven layers where 56/16 is 3.5. */
/* Lower bounds, seconds per microbatch, on sums over the pipeline's stages (all
 * pp x vp chunks), whatever the split: *out is the model costed as one stage,
 * first and last, with no sends, and with block recomputation (fewest_recomputed)
 * at the least share any split recomputes.  Its total is at most the sum of the
 * stages' totals (the busiest rank works at least that over pp per microbatch),
 * its total less its wgrad at most the sum of their totals less their
 * weight-gradient GEMMs (a microbatch's chain, forward and back to the input,
 * pipeline.h); with a layout (l not NULL, c->zero >= 3) its ZeRO-3 traffic is in
 * the total (the chain is not asked of it).
 * Why the one stage's figure is below the sum over any split (ppl_stage_eval's
 * terms, each linear in the layers unless said):
 *  - first and last at once: the head's passes, the embedding's and the output
 *    layer's parameters counted once, as the split counts them; no sends (>= 0);
 *  - ZeRO-3's gathers and reduce-scatters left out (every term of them >= 0;
 *    their class times are zero in a fresh class), or, given the layout, each
 *    layer's at the least any layer moves: the fewest dense parameters of a layer
 *    (no embedding, no experts) at the fewest bytes a gathered parameter takes.
 *    A stage's exposure of them, C + oc Z + (1 - oc) max(0, Z - zo C) with C its
 *    compute and Z what it moves (stage.c; oc the overlap's cost, zo <= 1 the
 *    share prefetched), is convex and of degree one in (C, Z), so the stages sum
 *    to at least the one stage's, and grows with C and Z, so less of either only
 *    lowers it;
 *  - block recomputation at one recomputed layer in the whole model, where every
 *    stage of a split recomputes at least one (ppl_recomputed_share: the share f
 *    enters each term as f x layers, and f x layers >= 1 in every stage); a
 *    pinned count at its own share of the whole, below every stage's;
 *  - the layers kept in bf16 costed at the configuration's precision (no faster
 *    than it: the fp8 recipes' GEMMs);
 *  - the expert all-to-all hidden under min(share x all-to-all, share x
 *    compute): a sum of minima is at most the minimum of the sums, so the split
 *    hides no more than the one stage;
 *  - the host's wait: a stage's total is max(launches, compute + exposed), and a
 *    sum of maxima is at least the maximum of the sums;
 *  - the weight-gradient GEMMs (wgrad) linear, the head's counted once: the sum
 *    over the split's stages exactly. */
static void stages_floor(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *l,
                         const ppl_micro *mi, bool fewest_recomputed, ppl_stage_time *out)
{
    ppl_config one = *c;
    if (fewest_recomputed && c->recompute_layers == 0)
        one.recompute_layers = 1;
    one.bf16_layers = 0;
    ppl_stage_class k;
    memset(&k, 0, sizeof k);
    const ppl_model *m = ctx->model;
    k.count = 1;
    k.layers = m->layers;
    k.moe_layers = ppl_moe_layers_in(m, 0, m->layers);
    k.is_first = true;
    k.is_last = true;
    double layer = k.moe_layers < m->layers ? mi->mem.layer_dense : INFINITY;
    if (k.moe_layers > 0)
        layer = ppl_min(layer, mi->mem.layer_moe_shared);
    if (l && c->zero >= 3 && l->g_shard.n > 1 && isfinite(layer) && layer > 0.0) {
        /* as ppl_class_dp: per tensor where the stack gathers so, at its bus share,
         * at the index ppl_stage_eval reads them */
        const bool low = ppl_low_params(&ctx->memory, c);
        const int g = (ppl_config_shard_replicas(c) > 1) + 2 * low;
        double n = 1.0, nr = 1.0;
        if (ctx->stack.zero3_per_tensor)
            ppl_zero3_per_tensor(m, c->tp, &n, &nr);
        const double bus = ctx->stack.zero3_bus, w = ctx->memory.weight_bytes;
        const double gb = low ? ppl_min(w, ppl_config_gemm_bytes(c)) : w;
        if (n > 0.0)
            k.z3_ag[g] = ppl_collective_count(&ctx->net, PPL_OP_ALLGATHER, &l->g_shard,
                                              layer * gb / n / bus, n, NULL);
        k.z3_rs[g] = ppl_collective_count(&ctx->net, PPL_OP_REDUCESCATTER, &l->g_shard,
                                          layer * ppl_dp_grad_bytes(ctx, c) / nr / bus, nr, NULL);
    }
    ppl_stage_eval(ctx, &one, mi, &k, out);
}

bool ppl_blocks_searched(const ppl_pins *pins, const ppl_config *c)
{
    return c->recompute == PPL_RECOMPUTE_FULL && pins->recompute == PPL_UNSET &&
           pins->recompute_layers == PPL_UNSET;
}

/* A layer's (or the output layer's) work a microbatch, nothing recomputed */
static inline double work_s(const ppl_layer_time *k)
{
    return k->forward_s + k->backward_s - k->recompute_s;
}

/* A layer's least forward (a), backward to its input (d), the two (ad) and whole
 * work (w) a microbatch, over its kinds */
static void layer_least(const ppl_eval_ctx *ctx, const ppl_micro *mi, double *a, double *d,
                        double *ad, double *w)
{
    const ppl_layer_time *kinds[2] = {&mi->dense, &mi->moe};
    *a = *d = *ad = *w = INFINITY;
    for (int i = 0; i < (ctx->model->has_moe ? 2 : 1); i++) {
        const ppl_layer_time *k = kinds[i];
        double back = k->backward_s - k->recompute_s - k->wgrad_s;
        *a = ppl_min(*a, k->forward_s);
        *d = ppl_min(*d, back);
        *ad = ppl_min(*ad, k->forward_s + back);
        *w = ppl_min(*w, work_s(k));
    }
}

/* A layer's least share of its stage's total a microbatch, dense (*dense) and MoE
 * (*moe): its work (w of layer_least, nothing recomputed) and, for a MoE layer,
 * the expert exchanges its stage leaves exposed, at least (1 - share) of them
 * (stage.c ppl_stage_eval: ep_hidden <= ep_hidden_share x ep; tp_count falls by
 * 2 at most where full recomputation recomputes fewer layers); every other term
 * of a stage's total is >= 0, and linear in neither. */
static void layer_totals(const ppl_config *c, const ppl_micro *mi, double *dense, double *moe)
{
    /* the context-parallel exchange a layer leaves exposed under its own attention
     * core (stage.c: ppl_cp_exposed, at least its forward once) */
    const bool cp = c->cp > 1;
    *dense = work_s(&mi->dense) + (cp ? ppl_cp_exposed(&mi->cp, mi->dense.attention_s,
                                                       mi->dense.attention_backward_s, 1.0)
                                      : 0.0);
    const double tpc = mi->tp_count - (c->recompute == PPL_RECOMPUTE_FULL ? 2.0 : 0.0);
    const double share = mi->ep_hidden_share < 1.0 ? mi->ep_hidden_share : 1.0;
    const double ep = tpc > 0.0 ? (1.0 - share) * tpc * (mi->ep_one + 0.5 * mi->etp_one) : 0.0;
    *moe = work_s(&mi->moe) + (ep > 0.0 ? ep : 0.0) +
           (cp ? ppl_cp_exposed(&mi->cp, mi->moe.attention_s, mi->moe.attention_backward_s, 1.0)
               : 0.0);
}

/* Of nd dense and nm MoE layers, a dense figure and a MoE one: the least over the
 * kinds present, and the sum over the layers */
static double kinds_least(double nd, double nm, double dense, double moe)
{
    return nm <= 0.0 ? dense : nd <= 0.0 ? moe : ppl_min(dense, moe);
}

static double kinds_sum(double nd, double nm, double dense, double moe)
{
    return (nd > 0.0 ? nd * dense : 0.0) + (nm > 0.0 ? nm * moe : 0.0);
}

/* The least of layer_totals over the kinds the model has */
static double layer_total_least(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_micro *mi)
{
    const ppl_model *m = ctx->model;
    const double nm = (double)ppl_moe_layers_in(m, 0, m->layers), nd = (double)m->layers - nm;
    double dense_s, moe_s;
    layer_totals(c, mi, &dense_s, &moe_s);
    return kinds_least(nd, nm, dense_s, moe_s);
}

/* A layer's least time a microbatch on the chain and on its rank, beside any head
 * (*least), and, with layers of both kinds, the same summed over the model's
 * layers, each at its kind's figure (*sum; 0 with one kind, where it is L x
 * *least, which the split's form bounds better): its total (layer_totals) or,
 * where the host launches slower than the GPU runs, its launches.  A stage's
 * total is at least its layers' launches and at least their work and exposed
 * exchanges (stage.c), each a sum over its layers: at least n times the larger
 * of the two least figures, and at least each sum. */
static void layer_lines(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_micro *mi,
                        double *least, double *sum)
{
    const ppl_model *m = ctx->model;
    const double nm = (double)ppl_moe_layers_in(m, 0, m->layers), nd = (double)m->layers - nm;
    double dense_s, moe_s;
    layer_totals(c, mi, &dense_s, &moe_s);
    const double h = ctx->stack.host_op_s, hd = h * mi->dense.host_ops, hm = h * mi->moe.host_ops;
    const double u = kinds_least(nd, nm, dense_s, moe_s), host = kinds_least(nd, nm, hd, hm);
    *least = host > u ? host : u;
    if (sum) {
        const double work = kinds_sum(nd, nm, dense_s, moe_s), hosts = kinds_sum(nd, nm, hd, hm);
        *sum = nd > 0.0 && nm > 0.0 ? (hosts > work ? hosts : work) : 0.0;
    }
}

/* The terms that do not meet the pipeline: c's model as one stage (stages_floor)
 * and a microbatch's chain L (a + d); and a layer's least a, d, a + d and w (above) */
static inline void floor_terms(const ppl_eval_ctx *ctx, const ppl_pins *pin, const ppl_config *c,
                               const ppl_micro *mi, ppl_compute_floor *out, double *a, double *d,
                               double *ad, double *w)
{
    ppl_stage_time all;
    stages_floor(ctx, c, NULL, mi, ppl_blocks_searched(pin, c), &all);
    out->total_s = all.total;
    out->wgrad_s = all.wgrad;
    layer_least(ctx, mi, a, d, ad, w);
    out->chain_s = *ad > 0.0 ? (double)ctx->model->layers * *ad : -INFINITY;
    out->layer_s = layer_total_least(ctx, c, mi);
    out->head_s = work_s(&mi->head);
}

/* Layers of at least w seconds each that p - 1 ranks, and a rank that also runs
 * h seconds, hold within X seconds each (the floors' slack counts a layer that a
 * rounding error would leave out: more layers, a lower X below) */
static double layers_within(double X, double p, double w, double h)
{
    if (X < h)
        return -INFINITY;
    return (p - 1.0) * floor(X / w + 1e-9) + floor((X - h) / w + 1e-9);
}

/* The busiest rank's least work, seconds a microbatch, over every split of the
 * model's L layers among p ranks: each layer at least w (layer_total_least: its
 * least share of its stage's total), and one rank also running the output
 * layer's h (the last stage of a line, rank 0 of a V: every microbatch's).  A
 * rank's load is n w, one's n w + h; the least largest load X is the least
 * X >= h where the ranks hold all L layers, layers_within(X) >= L.  It is at
 * least lo = max(h, (L w + h) / p) (the loads sum to L w + h), and layers_within
 * grows by p from X to X + w, from at least L - p at lo: the least X is lo, or a
 * point j w or h + j w of (lo, lo + w].  Beside m x the stages' mean
 * (work_or_chain) it counts what the mean spreads: the head on one rank, and
 * layers that do not divide evenly (94 over 70 ranks: some rank holds 2).  0
 * where lo + w is at most `known` (a bound already had: nothing to add), and
 * under DualPipe, whose ranks each run half the microbatches of two stages
 * (pipeline.h). */
static double busiest_rank_s(const ppl_config *c, double L, const ppl_compute_floor *f,
                             double known)
{
    const double p = (double)c->pp, w = f->layer_s, h = f->head_s > 0.0 ? f->head_s : 0.0;
    if (c->pp < 2 || ppl_schedule_of(c->schedule)->param_copies > 1.0 || !(w > 0.0) ||
        !isfinite(w) || !isfinite(h))
        return 0.0;
    const double lo = ppl_max(h, (L * w + h) / p);
    double best = lo + w;
    if (best <= known)
        return 0.0; /* the least X is at most lo + w: below what is known */
    const double a = ceil(lo / w), b = ceil((lo - h) / w);
    const double points[4] = {a * w, (a + 1.0) * w, h + b * w, h + (b + 1.0) * w};
    for (int i = 0; i < 4; i++)
        if (points[i] >= lo && points[i] < best && layers_within(points[i], p, w, h) >= L)
            best = points[i];
    return best * (1.0 - 1e-12); /* a bound: never above */
}

/* The busiest rank's work and the chain, over m microbatches on p ranks */
static double work_or_chain(const ppl_eval_ctx *ctx, const ppl_config *c,
                            const ppl_compute_floor *f)
{
    const double m = (double)c->microbatches, p = (double)c->pp;
    const double t = ppl_max(ppl_max(m * f->total_s / p, f->total_s - f->wgrad_s), f->chain_s);
    return ppl_max(t, m * busiest_rank_s(c, (double)ctx->model->layers, f, t / m));
}

/* Interleaved 1F1B (vp > 1 chunks a rank, the backward whole): rank k's chunks
 * hold n_k / vp layers each, its chunk 0 after N_k = (n_0 + ... + n_{k-1}) / vp
 * layers.  Its first pass is a forward, which waits for the first microbatch to
 * cross those N_k layers; its last is a backward, and of its chunk 0 (the
 * backward of any other chunk k holds is followed by that of the chunks before
 * it on k itself), which the backward of those N_k layers follows.  In between
 * it works m microbatches of its n_k layers:
 *   T >= (a + d) N_k + m w n_k   for every k,
 * a layer's least forward a, backward to its input d and work w (layer_least;
 * no send, head or embedding counted, each >= 0).  The split's ends are the
 * first and last stages', the middle ones equal (config.h): the largest term is
 * rank 0's, the last middle rank's or the last rank's.  At n_k = L / p for all k
 * it is the interleaved schedule's fill and drain, (p - 1) / vp chunks'
 * forward and backward (Narayanan et al. SC'21, section 2.2.1), beside m w L / p. */
static double interleaved_line_s(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_micro *mi)
{
    const ppl_schedule_row *row = ppl_schedule_of(c->schedule);
    if (c->pp < 2 || c->vp < 2 || row->splits_backward || !ppl_schedule_is_line(c->schedule))
        return 0.0;
    double a, d, ad, w;
    layer_least(ctx, mi, &a, &d, &ad, &w);
    /* as the line of ppl_bound_step_pair_s: each layer its exposed exchanges too,
     * the backward whole on the chain */
    double u;
    layer_lines(ctx, c, mi, &u, NULL);
    if (u > w)
        w = u;
    const double e = w, m = (double)c->microbatches, v = (double)c->vp;
    const double p = (double)c->pp, first = (double)c->split.first,
                 middle = (double)c->split.middle, last = (double)c->split.last;
    if (!(w >= 0.0)) /* e too */
        return 0.0;
    const double rank0 = m * w * first,
                 last_rank = e * (first + (p - 2.0) * middle) / v + m * w * last;
    double t = rank0 > last_rank ? rank0 : last_rank;
    if (c->pp > 2) { /* rank p - 2, the last of the middle ones */
        const double before = e * (first + (p - 3.0) * middle) / v + m * w * middle;
        t = before > t ? before : t;
    }
    return t;
}

/* What a stage puts on its rank a microbatch, by its layers' kinds (below) */
typedef struct stage_loads {
    double dense_s, moe_s;           /* a layer's layer_totals */
    double head_s;                   /* the output layer's work, on the last stage */
    double dense_host_s, moe_host_s; /* a layer's launches at the host's time each */
} stage_loads;

static void loads_init(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_micro *mi,
                       stage_loads *q)
{
    layer_totals(c, mi, &q->dense_s, &q->moe_s);
    q->head_s = work_s(&mi->head);
    const double h = ctx->stack.host_op_s;
    q->dense_host_s = h * mi->dense.host_ops;
    q->moe_host_s = h * mi->moe.host_ops;
}

/* A stage of n layers, nm of them MoE: its layers' layer_totals and, on the last,
 * the output layer's work, or its layers' launches where the host is the slower
 * (layer_lines) */
static double stage_load(const stage_loads *q, int64_t n, int64_t nm, bool last)
{
    const double m = (double)nm, d = (double)n - m;
    double t = kinds_sum(d, m, q->dense_s, q->moe_s);
    if (last && q->head_s > 0.0)
        t += q->head_s;
    return ppl_max(t, kinds_sum(d, m, q->dense_host_s, q->moe_host_s));
}

/* A rank runs its stage's passes, forward and backward, for each of the m
 * microbatches, one after another (pipeline.h; a rank's vp chunks are its class's
 * layers): the step is at least m x its stage's total, the largest over the
 * ranks, and a stage's total at least its layers' layer_totals and, on the last,
 * the output layer's work, or its layers' launches at the host's time each where
 * that is more (stage.c: the total is the larger of the compute with its exposed
 * exchanges and the host's launches, the recomputation's among them).  Whatever
 * c recomputes (nothing counted), its ZeRO stage (the gathers >= 0) and its
 * memory.  DualPipe's ranks each run half the microbatches through two stages: no
 * bound here. */
double ppl_bound_split_s(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_micro *mi,
                         const ppl_classes *cl)
{
    if (ppl_schedule_of(c->schedule)->param_copies > 1.0)
        return 0.0;
    stage_loads q;
    loads_init(ctx, c, mi, &q);
    double busiest = 0.0;
    for (size_t i = 0; i < cl->n; i++) {
        const ppl_stage_class *k = &cl->items[i];
        if (k->env)
            return 0.0; /* another pool's stages: their own figures */
        busiest = ppl_max(busiest, stage_load(&q, k->layers, k->moe_layers, k->is_last));
    }
    return (double)c->microbatches * busiest * (1.0 - 1e-12) + ctx->stack.step_overhead_s;
}

/* The search's splits (config.h, and what balance.h ppl_balance_ends returns): a
 * first stage of f layers, pp - 2 middle ones of `middle` each and a last of the
 * rest, one at least each, and their stages' loads (stage_load). */
typedef struct split_form {
    const ppl_model *model;
    stage_loads q;
    int64_t p, L, mtp, mtp_moe; /* the MTP modules the last stage adds (memory.h) */
    double last_kind_s;         /* a layer's load at the last layer's kind */
} split_form;

/* The load of the stage holding layers [first, first + n), the last one with its
 * MTP modules */
static double form_load(const split_form *F, int64_t first, int64_t n, bool last)
{
    int64_t nm = ppl_moe_layers_in(F->model, first, n);
    if (last) {
        n += F->mtp;
        nm += F->mtp_moe;
    }
    return stage_load(&F->q, n, nm, last);
}

/* Two loads at x: one that does not fall as x grows (*up), one that does not rise
 * (*down); arg: the caller's figures */
typedef void form_pair(const split_form *F, const int64_t *arg, int64_t x, double *up,
                       double *down);

/* The least over x in [lo, hi] of the larger of the pair: where they cross (the
 * first x where up >= down) or just before, walked to from x = from */
static double least_larger(const split_form *F, const int64_t *arg, form_pair *pair, int64_t lo,
                           int64_t hi, int64_t from)
{
    int64_t x = from < lo ? lo : from > hi ? hi : from;
    double up, down, up2, down2;
    pair(F, arg, x, &up, &down);
    if (up >= down) { /* they cross at x or before */
        for (; x > lo; x--, up = up2, down = down2) {
            pair(F, arg, x - 1, &up2, &down2);
            if (up2 < down2)
                return ppl_min(ppl_max(up, down), ppl_max(up2, down2));
        }
        return ppl_max(up, down);
    }
    for (; x < hi; x++, up = up2, down = down2) { /* after x, or never: down falls to hi */
        pair(F, arg, x + 1, &up2, &down2);
        if (up2 >= down2)
            return ppl_min(ppl_max(up, down), ppl_max(up2, down2));
    }
    return ppl_max(up, down);
}

/* The first stage's load with x layers (it does not fall as x grows) and the
 * last's with the rest of R (it does not rise), past arg[1] middle layers: every
 * figure >= 0 */
static void ends_pair(const split_form *F, const int64_t *arg, int64_t x, double *up,
                      double *down)
{
    *up = form_load(F, 0, x, false);
    *down = form_load(F, x + arg[1], arg[0] - x, true);
}

/* The ends' least slower load when they hold R layers and each middle stage
 * `middle`, walked to from where the two would cross were every layer as heavy
 * as the last stage's kind.  It does not rise as R falls. */
static double form_ends(const split_form *F, int64_t R, int64_t middle)
{
    const int64_t arg[2] = {R, (F->p - 2) * middle};
    const double w = F->last_kind_s;
    const double x =
        w > 0.0 ? 0.5 * ((double)(R + F->mtp) + ppl_max(F->q.head_s, 0.0) / w) : 0.5 * (double)R;
    const int64_t from = x < (double)R ? (int64_t)llround(x) : R; /* clamped below */
    return least_larger(F, arg, ends_pair, 1, R - 1, from);
}

/* At most the busiest middle stage's load: the last middle one's (pp - 2) least
 * over its places, from f + (pp - 3) middle, f in [1, R - 1].  Past the model's
 * leading dense layers a stage's kinds repeat every `every` layers (model.h
 * ppl_moe_layers_in), so its places there are met within `every` of the first.
 * It does not fall as `middle` grows: a stage of middle + 1 layers at any of its
 * places holds one of `middle` at one of theirs. */
static double form_middle(const split_form *F, int64_t R, int64_t middle)
{
    const ppl_model *m = F->model;
    const int64_t from = 1 + (F->p - 3) * middle, to = R - 1 + (F->p - 3) * middle;
    const int64_t every = m->moe.every > 0 ? m->moe.every : 1,
                  dense = m->moe.first_dense_layers > 0 ? m->moe.first_dense_layers : 0;
    const int64_t past = (from > dense ? from : dense) + every - 1;
    const int64_t last = !m->has_moe ? from : past < to ? past : to;
    double least = INFINITY;
    for (int64_t at = from; at <= last; at++)
        least = ppl_min(least, form_load(F, at, middle, false));
    return least;
}

/* The middle stages' least load with x layers each (it does not fall as x grows)
 * and the ends' with the rest (it does not rise) */
static void middle_pair(const split_form *F, const int64_t *arg, int64_t x, double *up,
                        double *down)
{
    (void)arg;
    const int64_t R = F->L - (F->p - 2) * x;
    *up = form_middle(F, R, x);
    *down = form_ends(F, R, x);
}

/* The busiest rank's least load a microbatch over every split of the search's
 * form (config.h: a first stage, pp - 2 equal middle ones and a last, one layer
 * at least each; vp 1), each layer at its own kind where it lies and the last
 * stage with the output layer and the MTP modules: at most ppl_bound_split_s's
 * busiest stage at each of them.  0 where it has none, or where the microbatches
 * at c's own split step within known_s, each middle stage at its layers' heavier
 * kind (a stage's load is the larger of two sums linear in its layers' kinds: at
 * most its layers all of the heavier): it cannot add to that. */
static double form_least(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_micro *mi,
                         double known_s)
{
    const ppl_model *model = ctx->model;
    const int64_t p = c->pp, L = model->layers;
    if (p < 2 || c->vp > 1 || L < p || ppl_schedule_of(c->schedule)->param_copies > 1.0)
        return 0.0;
    split_form F = {.model = model, .p = p, .L = L};
    loads_init(ctx, c, mi, &F.q);
    const double per[4] = {F.q.dense_s, F.q.moe_s, F.q.dense_host_s, F.q.moe_host_s};
    for (int i = 0; i < 4; i++)
        if (!(per[i] >= 0.0) || !isfinite(per[i]))
            return 0.0; /* the loads would not grow with the layers */
    if (!isfinite(F.q.head_s))
        return 0.0;
    int64_t n0, m0, n, nm; /* c's first and last stages, the MTP modules on the last */
    ppl_stage_layer_counts(model, c, 0, &n0, &m0);
    ppl_stage_layer_counts(model, c, p - 1, &n, &nm);
    double above = ppl_max(stage_load(&F.q, n0, m0, false), stage_load(&F.q, n, nm, true));
    if (p > 2) {
        const int64_t mid = c->split.middle;
        above = ppl_max(above, stage_load(&F.q, mid, 0, false));
        if (model->has_moe)
            above = ppl_max(above, stage_load(&F.q, mid, mid, false));
    }
    if ((double)c->microbatches * above * (1.0 - 1e-12) + ctx->stack.step_overhead_s <= known_s)
        return 0.0;
    F.mtp = n - c->split.last;
    F.mtp_moe = nm - ppl_moe_layers_in(model, L - c->split.last, c->split.last);
    F.last_kind_s = ppl_moe_layers_in(model, L - 1, 1) > 0 ? ppl_max(F.q.moe_s, F.q.moe_host_s)
                                                           : ppl_max(F.q.dense_s, F.q.dense_host_s);
    /* the middle stages' least does not fall as they hold more, the ends' does
     * not rise: walked to from the even split */
    const double least = p == 2 ? form_ends(&F, L, 0)
                                : least_larger(&F, NULL, middle_pair, 1, (L - 2) / (p - 2),
                                               (int64_t)llround((double)L / (double)p));
    return isfinite(least) ? least : 0.0;
}

double ppl_bound_split_form_s(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_micro *mi,
                              double known_s)
{
    const double t = c->vp > 1 ? interleaved_line_s(ctx, c, mi)
                     : ppl_schedule_is_line(c->schedule) && known_s < INFINITY
                         ? (double)c->microbatches * form_least(ctx, c, mi, known_s) * (1.0 - 1e-12)
                         : 0.0;
    return t + ctx->stack.step_overhead_s;
}

double ppl_bound_step_s(const ppl_eval_ctx *ctx, const ppl_pins *pin, const ppl_config *c,
                        const ppl_micro *mi)
{
    const double t = ppl_bound_step_pair_s(ctx, pin, c, mi, NULL);
    return c->vp > 1 ? t : ppl_max(t, ppl_bound_split_form_s(ctx, c, mi, t));
}

double ppl_bound_step_pair_s(const ppl_eval_ctx *ctx, const ppl_pins *pin, const ppl_config *c,
                             const ppl_micro *mi, double *interleaved)
{
    ppl_compute_floor f;
    double a, d, ad, w;
    floor_terms(ctx, pin, c, mi, &f, &a, &d, &ad, &w);
    double t = work_or_chain(ctx, c, &f);
    if (interleaved) /* no line term: the floor's terms read vp nowhere */
        *interleaved = t + ctx->stack.step_overhead_s;
    t = ppl_max(t, interleaved_line_s(ctx, c, mi));
    const ppl_schedule_row *row = ppl_schedule_of(c->schedule);
    if (c->pp > 1 && c->vp == 1 && ppl_schedule_is_line(c->schedule)) {
        const double m = (double)c->microbatches, p = (double)c->pp;
        const double L = (double)ctx->model->layers;
        /* a layer's least time on the chain and on its rank (above) */
        double line_s, sum_s;
        layer_lines(ctx, c, mi, &line_s, &sum_s);
        const double u = line_s > w ? line_s : w;
        if (!row->splits_backward && u > 0.0 && m >= 1.0) { /* the search's splits */
            const double r = 1.0 / m;
            const double middle = c->pp > 2 ? (p - 2.0) * (1.0 - r) / (1.0 + (p - 3.0) * r) : 0.0;
            t = ppl_max(t, m * u * L / ((1.0 - r) * (1.0 + middle) + 1.0) * (1.0 - 1e-12));
            /* any split, each layer at its own kind's figure: the line's least with
             * the layers' summed time Z for e L, on the axis of time */
            if (sum_s > 0.0)
                t = ppl_max(t, sum_s / -expm1(p * log1p(-r)) * (1.0 - 1e-12));
        } else {
            const double x = a / (m * u);
            if (a > 0.0 && x < 1.0) /* 1 - (1 - x)^p, without the cancellation */
                t = ppl_max(t, a * L / -expm1(p * log1p(-x)));
        }
    }
    return t + ctx->stack.step_overhead_s;
}

double ppl_bound_step_pair_quick_s(const ppl_eval_ctx *ctx, const ppl_pins *pin,
                                   const ppl_config *c, const ppl_micro *mi, double *interleaved)
{
    (void)pin;
    /* the busiest rank's work, m x the stages' summed totals over pp (work_or_chain),
     * each stage's total at least its layers' least shares and the output layer's
     * work (layer_totals); the factor keeps a rounding of the other sum's order
     * below the bound it stands for */
    const ppl_model *m = ctx->model;
    const double nm = (double)ppl_moe_layers_in(m, 0, m->layers), nd = (double)m->layers - nm;
    double dense_s, moe_s;
    layer_totals(c, mi, &dense_s, &moe_s);
    const double head = work_s(&mi->head);
    const double total = kinds_sum(nd, nm, dense_s, moe_s) + (head > 0.0 ? head : 0.0);
    const double t = (double)c->microbatches * total / (double)c->pp * (1.0 - 1e-12) +
                     ctx->stack.step_overhead_s;
    if (interleaved)
        *interleaved = t;
    return t;
}

double ppl_bound_algorithms_s(const ppl_eval_ctx *ctx, const ppl_pins *pins, ppl_config *c,
                              ppl_micro *mi, const int64_t *algos, int n,
                              const ppl_cp_cost *cp_costs, bool fill, bool quick, double *out,
                              bool *exact, double *pair, bool *pair_exact)
{
    double least = INFINITY;
    for (int x = 0; x < n; x++) {
        c->cp_comm = (ppl_cp_comm)algos[x];
        mi->cp = cp_costs[algos[x]];
        if (fill && !exact[x]) {
            double any_vp, *to = pair ? pair + x : &any_vp;
            const double b = quick ? ppl_bound_step_pair_quick_s(ctx, pins, c, mi, to)
                                   : ppl_bound_step_pair_s(ctx, pins, c, mi, to);
            out[x] = c->vp > 1 ? any_vp : b;
            exact[x] = !quick;
            if (pair)
                pair_exact[x] = !quick;
        }
        least = ppl_min(least, out[x]);
    }
    return least;
}

double ppl_bound_step_zero3_s(const ppl_eval_ctx *ctx, const ppl_pins *pin, const ppl_config *c,
                              const ppl_layout *l, const ppl_micro *mi)
{
    if (c->zero < 3)
        return 0.0;
    ppl_stage_time all;
    stages_floor(ctx, c, l, mi, ppl_blocks_searched(pin, c), &all);
    return (double)c->microbatches * all.total / (double)c->pp + ctx->stack.step_overhead_s;
}

double ppl_bound_step_recomputed_s(const ppl_eval_ctx *ctx, const ppl_pins *pins,
                                   const ppl_config *c, const ppl_micro *mi)
{
    ppl_pins pinned = *pins;
    pinned.recompute = PPL_RECOMPUTE_FULL;
    /* the model as one stage recomputes what the stages do, min(r, n_k) layers of
     * stage k, where every layer is of one kind (dense, or MoE): else a stage's
     * count may fall on its cheaper layers, and the one-stage figure is taken at r */
    const ppl_model *m = ctx->model;
    const int64_t r = c->recompute_layers, L = m->layers;
    ppl_config all = *c;
    if (r > 0 && (!m->has_moe || ppl_moe_layers_in(m, 0, L) == L)) {
        int64_t total = 0;
        for (int64_t k = 0; k < c->pp; k++) {
            const int64_t n = ppl_stage_layers(c, k);
            total += n < r ? n : r;
        }
        all.recompute_layers = total >= L ? 0 : total;
    }
    return ppl_bound_step_pair_s(ctx, &pinned, &all, mi, NULL);
}

/* ppl_bound_step_s's terms with every exchange free and vp above 1 (the line term
 * is vp 1's alone), taken apart where they meet the pipeline */
void ppl_bound_compute_floor(const ppl_eval_ctx *ctx, const ppl_pins *pins, const ppl_config *c,
                             const ppl_micro *compute, ppl_compute_floor *out)
{
    ppl_micro free_comm; /* nothing to send: every exchange zero */
    memset(&free_comm, 0, sizeof free_comm);
    ppl_micro_compute_copy(&free_comm, compute);
    ppl_config any = *c;
    any.vp = 2; /* as ppl_bound_step_s would be asked it */
    double a, d, ad, w;
    floor_terms(ctx, pins, &any, &free_comm, out, &a, &d, &ad, &w);
}

double ppl_bound_step_compute_from(const ppl_eval_ctx *ctx, const ppl_config *c,
                                   const ppl_compute_floor *f)
{
    return work_or_chain(ctx, c, f) + ctx->stack.step_overhead_s;
}

double ppl_bound_step_compute_s(const ppl_eval_ctx *ctx, const ppl_pins *pins, const ppl_config *c,
                                const ppl_micro *compute)
{
    ppl_compute_floor f;
    ppl_bound_compute_floor(ctx, pins, c, compute, &f);
    return ppl_bound_step_compute_from(ctx, c, &f);
}

double ppl_bound_states_bytes(const ppl_eval_ctx *ctx, const ppl_config *c, double *no_optimizer)
{
    const ppl_model *m = ctx->model;
    ppl_memory_parts parts; /* the activation terms left at zero */
    memset(&parts, 0, sizeof parts);
    ppl_memory_parts_layers(m, c, &parts);
    ppl_memory_parts_fixed(m, c, &ctx->memory, &parts);
    return ppl_memory_floor_bytes(c, &ctx->memory, &parts, m->layers,
                                  ppl_moe_layers_in(m, 0, m->layers), no_optimizer);
}

double ppl_bound_memory_bytes(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_micro *mi,
                              double *no_optimizer)
{
    const ppl_model *m = ctx->model;
    return ppl_memory_floor_bytes(c, &ctx->memory, &mi->mem, m->layers,
                                  ppl_moe_layers_in(m, 0, m->layers), no_optimizer);
}

bool ppl_bounds_above(const ppl_eval_ctx *ctx, const ppl_pins *pins, const ppl_config *asked,
                      const ppl_config *c, const ppl_layout *l, const ppl_micro *mi, double step_s,
                      double memory_bytes)
{
    const double t = step_s * (1.0 + 1e-12);
    double no_optimizer;
    return ppl_bound_step_s(ctx, pins, asked, mi) > t ||
           ppl_bound_step_pair_quick_s(ctx, pins, asked, mi, NULL) > t ||
           ppl_bound_step_compute_s(ctx, pins, asked, mi) > t ||
           ppl_bound_step_zero3_s(ctx, pins, asked, l, mi) > t ||
           ppl_bound_memory_bytes(ctx, asked, mi, &no_optimizer) > memory_bytes * (1.0 + 1e-12) ||
           ppl_bound_states_bytes(ctx, asked, &no_optimizer) > memory_bytes * (1.0 + 1e-12) ||
           (ppl_blocks_searched(pins, asked) && ppl_bound_step_recomputed_s(ctx, pins, c, mi) > t);
}
