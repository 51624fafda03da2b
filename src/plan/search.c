/*
 * search.c - enumerate the configuration space, keep the best (plan/search.h).
 *
 * Pruning never changes the answer: a configuration is costed only if it passes
 * the divisibility rules, fits in memory, and its step-time lower bound (the
 * microbatches times the summed time of the stages over the ranks, plus the
 * per-step cost: plan/bounds.h; every estimate is at least that, and
 * test_search holds it below every plan of its spaces) does not exceed the worst
 * result kept.  The families the default search leaves out are walked in the
 * same pass when asked (opts left_out), each ranked apart and bounded also by the
 * #1 it must beat.  Every configuration with a pipeline is costed with the default
 * split and with the split of ppl_balance_ends (first and last stage free, the
 * middle ones equal: what Megatron-LM's flags build), and enters the list with the
 * faster of the two that fits; the bound holds for any split, so the answer does
 * not depend on how many results are kept.  Without a GPU ceiling the replica
 * shapes (tp, cp, pp, dp) are walked least compute floor first (queue, below),
 * which changes the counts, never the answer.
 */
#include "plan/search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/minmax.h"
#include "base/units.h"
#include "plan/balance.h"
#include "plan/candidate.h"
#include "plan/bounds.h"
#include "plan/floors.h"
#include "plan/ranking.h"
#include "cost/offload.h"
#include "cost/rules.h"
#include "cost/shard.h"

#define MAX_CHOICES 64
#define MAX_MBS 16

typedef struct choices {
    int64_t v[MAX_CHOICES];
    int n;
} choices;

static void add(choices *c, int64_t v)
{
    if (c->n < MAX_CHOICES)
        c->v[c->n++] = v;
}

/* Divisors of n no larger than limit, ascending. */
static void divisors(int64_t n, int64_t limit, choices *out)
{
    out->n = 0;
    for (int64_t d = 1; d <= n && d <= limit; d++)
        if (n % d == 0)
            add(out, d);
}

/* All divisors of n, largest first: n/d for d = 1, 2, ... up to sqrt(n), then the
 * small ones d back down to 1. */
typedef struct divisor_list {
    int64_t *v;
    size_t n;
} divisor_list;

static ppl_status divisors_descending(int64_t n, divisor_list *out)
{
    int64_t small[1 << 14]; /* n <= 2^40 has fewer than 2^14 divisors below sqrt(n) */
    size_t ns = 0;
    for (int64_t d = 1; d <= n / d && ns < sizeof small / sizeof *small; d++)
        if (n % d == 0)
            small[ns++] = d;
    out->n = 0;
    out->v = malloc(2 * (ns ? ns : 1) * sizeof *out->v);
    if (!out->v)
        return PPL_EINTERNAL;
    for (size_t i = 0; i < ns; i++)
        if (n / small[i] != small[i])
            out->v[out->n++] = n / small[i];
    for (size_t i = ns; i-- > 0;)
        out->v[out->n++] = small[i];
    return PPL_OK;
}

static void pinned_or(int64_t pin, const choices *free_choices, choices *out)
{
    if (pin != PPL_UNSET) {
        out->n = 0;
        add(out, pin);
    } else {
        *out = *free_choices;
    }
}

static void flags(int pin, bool allow_on, choices *out)
{
    out->n = 0;
    if (pin != PPL_UNSET) {
        add(out, pin);
        return;
    }
    add(out, 0);
    if (allow_on)
        add(out, 1);
}

/* Seconds: the step a candidate of c's replica shape must stay under to be kept
 * (INFINITY while nothing bounds it).  The list's worst; where the shape's
 * tensor parallelism crosses servers and the search only looks at that family
 * (every candidate of the shape is then in its lane: candidate.c lane_of), what
 * the family's candidates must beat, the smaller of its best and the list's #1,
 * both at most the list's worst. */
static double shape_limit_s(const ppl_search_state *s, const ppl_config *c)
{
    const ppl_estimate *last = ppl_ranking_worst(&s->best);
    const double worst = last ? last->step_time_s : INFINITY;
    const int f = PPL_FAMILY_TP_ACROSS_SERVERS;
    if (s->allows[f] || !s->looks[f] || !ppl_search_in_family(s->ctx, f, c))
        return worst;
    const ppl_estimate *first = ppl_ranking_best(&s->best), *own = ppl_ranking_best(&s->family[f]);
    return ppl_min(first ? first->step_time_s : INFINITY, own ? own->step_time_s : INFINITY);
}

/* Whether no configuration of c's fold and microbatch size (any vp, sp,
 * recomputation, flash attention) can rank: its bound on compute alone exceeds
 * what the shape's candidates must beat (shape_limit_s; ppl_floor_over).
 * Layouts and communication are then not costed. */
static bool compute_alone_over(ppl_search_state *s, ppl_config c, const choices *sps,
                               const choices *recomputes, const choices *flashes)
{
    const double limit = shape_limit_s(s, &c);
    if (s->opts->no_prune || s->opts->objective != PPL_OBJECTIVE_TIME || !isfinite(limit))
        return false;
    const ppl_floor_choices k = {sps->v,        sps->n,     recomputes->v,
                                 recomputes->n, flashes->v, flashes->n};
    return ppl_floor_over(s->floors, s->computed, s->ctx, s->opts->pins, &c, &k, limit);
}

static void progress(ppl_search_state *s, double fraction)
{
    if (s->opts->progress && fraction - s->last_progress >= 0.01) {
        s->last_progress = fraction;
        s->opts->progress(s->opts->progress_ctx, fraction);
    }
}

/* The knobs that search_replica enumerates for every (tp, cp, pp, dp). */
typedef struct inner_choices {
    choices sps, recomputes, flashes, zeros;
    unsigned cp_tried; /* the CP algorithms to try (ppl_cp_comms_tried) */
} inner_choices;

/* A replica shape (tp, cp, pp, dp) waiting its turn.  Without a GPU ceiling the
 * shapes are walked by their compute-alone floor at one microbatch size
 * (bounds.h), least first: the list fills early with plans that rank, and the
 * bounds prune the rest harder.  The order changes what is counted, never the
 * answer: every prune is a bound against the list's worst, and the ranking is a
 * total order (ranking.h). */
typedef struct queued {
    int64_t tp, cp, cp_a2a, pp, dp; /* what the shapes differ in (ppl_search's loop) */
    double key;                     /* seconds */
    size_t order;                   /* the enumeration's, for ties */
} queued;

typedef struct queue {
    queued *v;
    size_t n, cap;
} queue;

static int by_key(const void *a, const void *b)
{
    const queued *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* The knobs of search_replica that read the shape (tp, cp and cp_a2a set in c):
 * sequence parallelism where tp > 1, and the CP algorithms to try.  A MoE model
 * at tp > 1 runs only with sequence parallelism (rules.c, moe_layer.py:636-640):
 * without it every candidate would be refused after its bounds were worked out,
 * so it is not tried unless pinned. */
static void shape_choices(const ppl_search_state *s, const ppl_config *c, inner_choices *k)
{
    const ppl_pins *pin = s->opts->pins;
    const bool can_sp = c->tp > 1 && ppl_stack_supports(s->ctx->stack.stack)->sequence_parallel;
    flags(pin->sequence_parallel, can_sp, &k->sps);
    if (can_sp && s->ctx->model->has_moe && pin->sequence_parallel == PPL_UNSET)
        k->sps.v[0] = 1, k->sps.n = 1;
    k->cp_tried = ppl_cp_comms_tried(s->ctx, pin->cp_comm, c);
}

/* The floor of c's shape at its first microbatch size, flash attention and
 * sequence parallelism on where searched, nothing recomputed, experts folded at
 * etp = tp and ep 1 unless pinned: a guess at how well the shape ranks, not a
 * bound (an infinite key where no microbatch size divides the batch).  A shape
 * whose model states do not fit at the most sharding the default search runs
 * there (experts over the most ranks) ranks, if at all, through the optimizer's
 * offload or a family left out: it comes after every shape that may fit, so that
 * the list fills first with plans that fit as they are (GPT-3 on dgx-a100-
 * superpod: 99 plans entered the list of ten before, 87 with this order). */
#define LATER_S 1e9 /* seconds: a key past every shape that may fit */
static double shape_key(ppl_search_state *s, ppl_config c, const inner_choices *k)
{
    const ppl_pins *pin = s->opts->pins;
    const ppl_model *m = s->ctx->model;
    const int64_t batch = pin->global_batch;
    ppl_error e;
    if (batch % c.dp != 0 || ppl_stage_split_pinned(m->layers, c.pp, pin->first_stage_layers,
                                                    pin->last_stage_layers, &c.split, &e) != PPL_OK)
        return INFINITY;
    c.etp = pin->etp != PPL_UNSET ? pin->etp : c.tp;
    c.ep = pin->ep != PPL_UNSET ? pin->ep : 1;
    c.mbs = pin->mbs != PPL_UNSET ? pin->mbs : 1;
    if (c.mbs < 1 || batch % (c.dp * c.mbs) != 0)
        return INFINITY;
    c.microbatches = batch / (c.dp * c.mbs);
    c.vp = 1;
    c.sequence_parallel = (int)k->sps.v[k->sps.n - 1];
    c.recompute = PPL_RECOMPUTE_NONE;
    c.flash_attention = (int)k->flashes.v[k->flashes.n - 1];
    const ppl_compute_floor *f = ppl_floor_cached(s->floors, s->computed, s->ctx, pin, &c);
    const double key = ppl_bound_step_compute_from(s->ctx, &c, f);
    if (m->has_moe && pin->ep == PPL_UNSET)
        for (int64_t d = 1; d <= m->moe.experts; d++)
            if (m->moe.experts % d == 0 && (c.cp * c.dp) % d == 0)
                c.ep = d;
    c.zero = (int)k->zeros.v[k->zeros.n - 1];
    if (ppl_sharded_with_pp(&c) && !s->allows[PPL_FAMILY_SHARDED_WITH_PP])
        c.zero = 1;
    c.shard_group = 0;
    c.offload_optimizer = pin->offload_optimizer < 0 ? 0.0 : pin->offload_optimizer;
    double no_optimizer;
    return ppl_bound_states_bytes(s->ctx, &c, &no_optimizer) > s->room_bytes ? LATER_S + key : key;
}

static bool enqueue(queue *q, ppl_search_state *s, const ppl_config *c, const inner_choices *k)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 64;
        queued *v = realloc(q->v, cap * sizeof *v);
        if (!v)
            return false;
        q->v = v;
        q->cap = cap;
    }
    q->v[q->n] = (queued){c->tp, c->cp, c->cp_a2a, c->pp, c->dp, shape_key(s, *c, k), q->n};
    q->n++;
    return true;
}

/* The algorithms of a mask (bit k: algorithm k), in order. */
static void cp_list(unsigned mask, choices *out)
{
    out->n = 0;
    for (int k = 0; k < PPL_CP_COMM_COUNT; k++)
        if (mask & (1u << k))
            add(out, k);
}

/* Every configuration of one replica shape c (tp, cp, pp, dp and gpus set): etp, ep,
 * microbatch size, interleaving, sequence parallelism, recomputation, flash
 * attention and ZeRO stage. */
static void search_replica(ppl_search_state *s, ppl_config c, const inner_choices *k)
{
    const ppl_eval_ctx *ctx = s->ctx;
    const ppl_model *m = ctx->model;
    const ppl_pins *pin = s->opts->pins;
    const int64_t batch = pin->global_batch;
    const choices *sps = &k->sps, *recomputes = &k->recomputes, *flashes = &k->flashes,
                  *zeros = &k->zeros;
    choices eps, ep_all, vps, mbss, mbs_all;
    ppl_error split_err;
    if (ppl_stage_split_pinned(m->layers, c.pp, pin->first_stage_layers, pin->last_stage_layers,
                               &c.split, &split_err) != PPL_OK)
        return; /* the pinned ends leave this pp no split */
    mbs_all.n = 0;
    if (batch % c.dp == 0)
        divisors(batch / c.dp, MAX_MBS, &mbs_all);
    pinned_or(pin->mbs, &mbs_all, &mbss);
    /* MoE layers fold the stage's tp*cp*dp ranks into etp x ep x edp: etp the
     * powers of two below tp, where the software has expert tensor parallelism,
     * and tp (Megatron's default); ep every divisor of the experts that divides
     * the ranks etp leaves (Megatron-Core's rule, config.c) */
    const int64_t stage = c.tp * c.cp * c.dp;
    choices etp_all, etps;
    etp_all.n = 0;
    if (m->has_moe && ppl_stack_supports(ctx->stack.stack)->expert_tp)
        for (int64_t t = 1; t < c.tp; t *= 2)
            add(&etp_all, t);
    add(&etp_all, c.tp);
    pinned_or(pin->etp, &etp_all, &etps);
    struct {
        int64_t etp, ep;
    } folds[MAX_CHOICES * 4];
    int nfolds = 0;
    for (int x = 0; x < etps.n; x++) {
        ep_all.n = 0;
        for (int64_t d = 1; m->has_moe && d <= m->moe.experts; d++)
            if (m->moe.experts % d == 0 && (stage / etps.v[x]) % d == 0)
                add(&ep_all, d);
        if (!m->has_moe)
            add(&ep_all, 1);
        pinned_or(pin->ep, &ep_all, &eps);
        for (int e = 0; e < eps.n; e++)
            if (stage % (etps.v[x] * eps.v[e]) == 0 && nfolds < MAX_CHOICES * 4) {
                folds[nfolds].etp = etps.v[x];
                folds[nfolds++].ep = eps.v[e];
            }
    }
    /* the sharding groups and the offload to try (shard.c) */
    int64_t shards[PPL_SHARD_CHOICES];
    int nshards = ppl_shard_searched(ctx->topo, ctx->stack.stack, pin->shard_group, &c, shards);
    const double offload_pin = pin->offload_optimizer < 0 ? 0.0 : pin->offload_optimizer;
    const bool prunes = !s->opts->no_prune && s->opts->objective == PPL_OBJECTIVE_TIME;
    ppl_search_result *r = s->r;
    const bool can_offload = pin->offload_optimizer < 0 &&
                             ppl_stack_supports(ctx->stack.stack)->offload &&
                             c.optimizer == PPL_OPTIMIZER_ADAM;
    ppl_layout dense; /* the groups no fold changes, laid once one may rank */
    bool dense_laid = false;
    for (int e = 0; e < nfolds; e++) {
        c.etp = folds[e].etp;
        c.ep = folds[e].ep;
        /* the ZeRO stages whose model states alone are over the memory, whatever
         * the knobs inside (ppl_bound_states_bytes), found at a stage's first
         * candidate once something fits: each of its candidates would be over by
         * evaluate_in's memory bound, and is taken as over without it (its
         * offload still tried where that may fit) */
        bool states_over[MAX_CHOICES] = {false}, states_known[MAX_CHOICES] = {false};
        double states_room[MAX_CHOICES]; /* bytes without the optimizer state */
        ppl_layout layout, layouts[PPL_SHARD_CHOICES];
        bool laid = false; /* the layouts, once a microbatch size may rank */
        /* the stage classes' data-parallel times, for every microbatch size, and
         * the balanced lines' ZeRO-3 classes (stage.h) */
        ppl_stage_dp_cache line_dp;
        line_dp.n = 0;
        for (int f = 0; f < mbss.n; f++) {
            c.mbs = mbss.v[f];
            if (batch % (c.dp * c.mbs) != 0)
                continue;
            c.microbatches = batch / (c.dp * c.mbs);
            if (compute_alone_over(s, c, sps, recomputes, flashes)) {
                r->pruned++;
                continue;
            }
            if (!laid) {
                if (!dense_laid)
                    ppl_layout_init_dense(ctx, &c, &dense);
                dense_laid = true;
                ppl_layout_init_experts(ctx, &c, &dense, &layout);
                for (int y = 0; y < nshards; y++)
                    ppl_layout_shard(&ctx->net, &c, &layout, shards[y], &layouts[y]);
                laid = true;
            }
            vps.n = 0;
            add(&vps, 1);
            int64_t widest = c.split.first > c.split.middle ? c.split.first : c.split.middle;
            const ppl_stack_support *can = ppl_stack_supports(ctx->stack.stack);
            /* microbatches not a multiple of pp: Megatron-Core 0.10+ (ppl_vp_group) */
            if (c.pp > 1 && can->interleaving && ppl_vp_group(&c) > 0 &&
                (c.microbatches % c.pp == 0 || can->uneven_interleaving))
                for (int64_t v = 2; v <= widest + 1; v++)
                    if (ppl_split_flags_allow_vp(&c, v)) /* pinned vp: any layout */
                        add(&vps, v);
            if (pin->vp != PPL_UNSET || ppl_schedule_of(c.schedule)->splits_backward) {
                vps.n = 0; /* pipeline.h: the schedule's chunks a rank */
                add(&vps, pin->vp != PPL_UNSET ? pin->vp : ppl_schedule_of(c.schedule)->chunks);
            }
            /* the CP exchanges by sp, and the step-time bounds by (vp 1 or more,
             * sp, recomputation, flash attention, CP algorithm), once for every
             * interleaving: they read it only as vp > 1 (bounds.h) */
            ppl_cp_cost cp_table[2][PPL_CP_COMM_COUNT];
            choices cp_choice[2];
            double bound_table[2][2][3][2][PPL_CP_COMM_COUNT];
            bool bound_known[2][2][3][2], bound_exact[2][2][3][2][PPL_CP_COMM_COUNT];
            memset(bound_known, 0, sizeof bound_known);
            /* a microbatch's exchanges by sp, for every vp (only the all-to-all's hidden
             * share reads it), copied to `micro`, whose compute parts fill before a read */
            ppl_micro comm_by_sp[2], micro;
            bool comm_known[2] = {false, false};
            for (int g = 0; g < vps.n; g++) {
                c.vp = vps.v[g];
                ppl_classes classes; /* the stages' classes, once a candidate is costed */
                bool classed = false;
                for (int i = 0; i < sps->n; i++) {
                    c.sequence_parallel = sps->v[i];
                    const int sp = c.sequence_parallel != 0;
                    /* the exchange of each CP algorithm, tried innermost (it
                     * changes neither compute nor memory), then the others, with
                     * the algorithm c was left at */
                    if (!comm_known[sp]) {
                        cp_list(ppl_micro_cache_cp(s->computed, ctx, &c, &layout, k->cp_tried,
                                                   s->opts->objective != PPL_OBJECTIVE_MEMORY,
                                                   cp_table[sp]),
                                &cp_choice[sp]);
                        ppl_micro_comm_init_with(
                            ctx, &c, &layout,
                            k->cp_tried >> c.cp_comm & 1u ? &cp_table[sp][c.cp_comm] : NULL,
                            &comm_by_sp[sp]);
                        comm_known[sp] = true;
                    }
                    ppl_micro_comm_copy(&micro, &comm_by_sp[sp]);
                    ppl_micro_comm_interleave(ctx, &c, &micro);
                    const ppl_cp_cost *cp_costs = cp_table[sp];
                    const choices *cps_here = &cp_choice[sp];
                    for (int h = 0; h < recomputes->n; h++) {
                        c.recompute = (ppl_recompute)recomputes->v[h];
                        for (int j = 0; j < flashes->n; j++) {
                            c.flash_attention = flashes->v[j];
                            /* with flash attention, selective recomputation saves
                             * and costs nothing more: one of the two */
                            if (c.flash_attention && c.recompute == PPL_RECOMPUTE_SELECTIVE &&
                                pin->recompute == PPL_UNSET)
                                continue;
                            c.zero = (int)zeros->v[0];
                            const int fa = c.flash_attention != 0;
                            double *bounds = bound_table[c.vp > 1][sp][c.recompute][fa],
                                   least = INFINITY;
                            bool *bounded = &bound_known[c.vp > 1][sp][c.recompute][fa],
                                 *exact = bound_exact[c.vp > 1][sp][c.recompute][fa];
                            /* the microbatch's compute parts, once the bound reads them
                             * or a candidate may rank: a bound already known is
                             * checked first */
                            const bool filled = !*bounded;
                            if (filled)
                                ppl_micro_cache_fill(s->computed, ctx, &c, &micro);
                            /* vp 1's bound gives vp > 1's where vp is not read */
                            double *pair =
                                c.vp == 1 && !*bounded && !ppl_micro_reads_vp(ctx, &c, &micro)
                                    ? bound_table[1][sp][c.recompute][fa]
                                    : NULL;
                            bool *pair_exact = bound_exact[1][sp][c.recompute][fa];
                            /* quick bounds first where they have pruned one set in
                             * eight (tried again every 64th set), worked out in
                             * full below where they do not prune: the same prunes */
                            const bool quick = prunes && !*bounded &&
                                               (8 * s->quick_pruned >= s->quick_tried ||
                                                s->quick_sets++ % 64 == 0);
                            s->quick_tried += quick;
                            if (!*bounded)
                                memset(exact, 0, PPL_CP_COMM_COUNT * sizeof *exact);
                            least = ppl_bound_algorithms_s(ctx, pin, &c, &micro, cps_here->v,
                                                           cps_here->n, cp_costs, !*bounded, quick,
                                                           bounds, exact, pair, pair_exact);
                            if (pair)
                                bound_known[1][sp][c.recompute][fa] = true;
                            *bounded = true;
                            /* what a family ranks must beat the main list's #1 */
                            const double limit = shape_limit_s(s, &c);
                            if (prunes && least > limit) {
                                s->quick_pruned += quick;
                                r->pruned++;
                                continue;
                            }
                            if (!filled)
                                ppl_micro_cache_fill(s->computed, ctx, &c, &micro);
                            /* the table holds every term but those that read vp
                             * and the split's form: added here (bounds.h), each
                             * bound worked out in full where it was quick */
                            ppl_bound_algorithms_s(ctx, pin, &c, &micro, cps_here->v, cps_here->n,
                                                   cp_costs, true, false, bounds, exact, pair,
                                                   pair_exact);
                            double here[PPL_CP_COMM_COUNT];
                            least = INFINITY;
                            for (int x = 0; x < cps_here->n; x++) {
                                micro.cp = cp_costs[cps_here->v[x]];
                                const double known = bounds[x] > limit ? INFINITY : bounds[x];
                                here[x] = ppl_max(bounds[x],
                                                  ppl_bound_split_form_s(ctx, &c, &micro, known));
                                least = ppl_min(least, here[x]);
                            }
                            if (prunes && least > limit) {
                                r->pruned++;
                                continue;
                            }
                            if (!classed) { /* they read the split and vp alone */
                                ppl_classes_init(ctx, &c, &classes);
                                ppl_classes_dp_take(&classes, &line_dp);
                            }
                            classed = true;
                            ppl_balance_memo memos[PPL_CP_COMM_COUNT] = {0}; /* by CP algorithm */
                            for (int x = 0; x < PPL_CP_COMM_COUNT; x++)
                                memos[x].dp = &line_dp;
                            s->nseen = 0;
                            for (int z = 0; z < zeros->n; z++) {
                                c.zero = (int)zeros->v[z];
                                if (ppl_sharded_with_pp(&c) &&
                                    !s->allows[PPL_FAMILY_SHARDED_WITH_PP] &&
                                    !s->looks[PPL_FAMILY_SHARDED_WITH_PP])
                                    continue;
                                for (int x = 0; x < cps_here->n; x++) {
                                    c.cp_comm = (ppl_cp_comm)cps_here->v[x];
                                    micro.cp = cp_costs[cps_here->v[x]];
                                    s->bound_s = here[x];
                                    s->memo = &memos[x];
                                    /* smaller sharding groups only where every
                                     * rank's fits (they hold more), the offload
                                     * only where it does not (shard.c) */
                                    c.shard_group = shards[0] == c.dp ? 0 : shards[0];
                                    c.offload_optimizer = offload_pin;
                                    if (!states_known[z] && !s->opts->no_prune && r->feasible > 0) {
                                        states_known[z] = true;
                                        states_over[z] = ppl_bound_states_bytes(
                                                             ctx, &c, &states_room[z]) > s->room_bytes;
                                    }
                                    int e0 = PPL_EVAL_OVER;
                                    if (states_over[z])
                                        s->offload_room = states_room[z];
                                    else
                                        e0 = ppl_candidate_evaluate(s, &c, &layouts[0], &micro,
                                                                    &classes);
                                    for (int y = 1; e0 == PPL_EVAL_FITS && c.zero && y < nshards;
                                         y++) {
                                        c.shard_group = shards[y];
                                        ppl_candidate_evaluate(s, &c, &layouts[y], &micro,
                                                               &classes);
                                    }
                                    if (e0 == PPL_EVAL_OVER && can_offload && c.zero &&
                                        s->offload_room <= ctx->topo->gpu.memory_bytes) {
                                        c.shard_group = shards[0] == c.dp ? 0 : shards[0];
                                        c.offload_optimizer = 1.0;
                                        ppl_candidate_evaluate(s, &c, &layouts[0], &micro,
                                                               &classes);
                                    }
                                }
                            }
                        }
                    }
                }
                if (classed) {
                    ppl_classes_dp_keep(&classes, &line_dp);
                    ppl_classes_free(&classes);
                }
            }
        }
    }
}

ppl_status ppl_search(const ppl_eval_ctx *ctx, const ppl_search_opts *o, ppl_search_result *r,
                      ppl_error *err)
{
    const ppl_pins *pin = o->pins;
    const ppl_model *m = ctx->model;
    const ppl_topology *t = ctx->topo;
    double start = ppl_clock_s();
    memset(r, 0, sizeof *r);
    r->smallest_memory = INFINITY;
    r->capacity = t->gpu.memory_bytes;
    const int64_t all = t->servers * t->gpus_per_server;
    const int64_t gpus = pin->gpus != PPL_UNSET ? pin->gpus : all;
    if (gpus > all)
        return ppl_error_set(err, PPL_EUSAGE, "", "gpus", "%lld exceeds the topology's %lld GPUs",
                             (long long)gpus, (long long)all);
    if (ppl_pins_check_fp8(pin, err) != PPL_OK || ppl_pins_check_graphs(pin, m, err) != PPL_OK)
        return err->status;
    if (o->objective != PPL_OBJECTIVE_TIME && o->within > 0.0) {
        /* the fastest plan first: the others may take at most (1 + within) x its step */
        ppl_search_opts fastest = *o;
        fastest.objective = PPL_OBJECTIVE_TIME;
        fastest.top = 1;
        fastest.progress = NULL;
        fastest.left_out = false;
        ppl_search_result quick;
        ppl_status st = ppl_search(ctx, &fastest, &quick, err);
        if (st != PPL_OK)
            return st;
        double ceiling = quick.count > 0 ? quick.results[0].step_time_s * (1.0 + o->within) : 0.0;
        ppl_search_free(&quick);
        r->step_ceiling_s = ceiling;
    }
    ppl_search_state s = {
        .ctx = ctx, .opts = o, .r = r, .ceiling_s = INFINITY, .lane = PPL_LANE_MAIN};
    ppl_status ist = ppl_ranking_init(&s.best, o->top > 0 ? o->top : 1, err);
    if (ist != PPL_OK)
        return ist;
    s.computed = ppl_micro_cache_new();
    s.floors = ppl_floor_cache_new();
    if (!s.computed || !s.floors) {
        ppl_ranking_free(&s.best);
        ppl_floor_cache_free(s.floors);
        ppl_micro_cache_free(s.computed);
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
    }
    /* a pinned tp or zero is searched whatever the family rules say */
    s.room_bytes = t->gpu.memory_bytes - ppl_memory_headroom(&ctx->memory, t->gpu.memory_bytes);
    s.allows[PPL_FAMILY_TP_ACROSS_SERVERS] = o->allow_tp_across_servers || pin->tp != PPL_UNSET;
    s.allows[PPL_FAMILY_SHARDED_WITH_PP] = o->allow_sharded_with_pp || pin->zero != PPL_UNSET;
    for (int f = 0; f < PPL_FAMILY_COUNT; f++) {
        s.looks[f] = o->left_out && o->objective == PPL_OBJECTIVE_TIME && !s.allows[f];
        s.family[f] = (ppl_ranking){.items = &s.family_best[f], .cap = 1};
    }

    const int64_t batch = pin->global_batch;
    /* with gpus a ceiling (whatif's gpus=N), every GPU count up to it is a candidate */
    const bool up_to = o->gpus_at_most;
    /* under a ceiling, the plans on all N GPUs first (a search of their own): the
     * list starts full of them, so that the bounds prune the smaller counts at
     * once, and the N-GPU configurations are not walked again */
    bool seeded = false;
    if (up_to && !o->no_prune && o->objective == PPL_OBJECTIVE_TIME) {
        ppl_search_opts at = *o;
        at.gpus_at_most = false;
        at.progress = NULL;
        ppl_search_result first;
        ppl_status st = ppl_search(ctx, &at, &first, err);
        if (st != PPL_OK && st != PPL_INFEASIBLE) {
            ppl_ranking_free(&s.best);
            ppl_floor_cache_free(s.floors);
            ppl_micro_cache_free(s.computed);
            return st;
        }
        for (size_t i = 0; i < first.count; i++)
            ppl_ranking_keep(o->objective, &s.best, &first.results[i]);
        r->candidates += first.candidates;
        r->evaluated += first.evaluated;
        r->feasible += first.feasible;
        r->pruned += first.pruned;
        if (first.smallest_memory < r->smallest_memory)
            r->smallest_memory = first.smallest_memory;
        seeded = true;
        ppl_search_free(&first);
    }
    const int64_t searched = up_to && o->objective == PPL_OBJECTIVE_TIME ? o->gpus_searched : 0;
    if (searched > 0)
        for (size_t i = 0; i < o->nseed; i++)
            ppl_ranking_keep(o->objective, &s.best, &o->seed[i]);
    choices tp_all, tps, cps, cp_all, pps, pp_all;
    inner_choices inner;
    divisor_list batch_divisors = {NULL, 0};
    if (up_to && divisors_descending(batch, &batch_divisors) != PPL_OK) {
        ppl_ranking_free(&s.best);
        ppl_floor_cache_free(s.floors);
        ppl_micro_cache_free(s.computed);
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
    }
    /* TP groups stay whole inside NVLink nodes: tp divides the node size (or, when
     * allowed across, is a multiple of it) */
    tp_all.n = 0;
    /* tp divides the attention heads, so it never exceeds them */
    for (int64_t tp = 1; tp <= gpus && tp <= m->heads; tp++) {
        int64_t node = ctx->net.node_gpus;
        bool inside = !ppl_tp_across_servers(ctx, tp) && node % tp == 0;
        bool across = (o->allow_tp_across_servers || s.looks[PPL_FAMILY_TP_ACROSS_SERVERS]) &&
                      ppl_tp_across_servers(ctx, tp) && tp % node == 0;
        if ((up_to || gpus % tp == 0) && (inside || across))
            add(&tp_all, tp);
    }
    pinned_or(pin->tp, &tp_all, &tps);
    /* only what the stack can run, unless a flag pins it */
    const ppl_stack_support *can = ppl_stack_supports(ctx->stack.stack);
    /* context parallelism in powers of two, as far as the GPUs and the sequence's
     * 2*cp chunks allow: no length below which it is not tried */
    cp_all.n = 0;
    add(&cp_all, 1);
    for (int64_t cp = 2; can->context_parallel && cp <= gpus && 2 * cp <= m->seq_len; cp *= 2)
        if (m->seq_len % (2 * cp) == 0)
            add(&cp_all, cp);
    pinned_or(pin->cp, &cp_all, &cps);
    choices all_zeros = {{0, 1, 2, 3}, 1 + can->max_zero}, all_recomputes = {{0, 2, 1}, 3};
    all_recomputes.n = can->selective_recompute ? 3 : 2;
    pinned_or(pin->zero, &all_zeros, &inner.zeros);
    pinned_or(pin->recompute, &all_recomputes, &inner.recomputes);
    flags(pin->flash_attention, can->flash_attention, &inner.flashes);

    /* the step's model FLOPs over one GPU's dense peak at the GEMMs' precision */
    const double flops_s = (double)batch * (double)m->seq_len *
                           ctx->figures.flops_training_per_token /
                           t->gpu.flops[ppl_gpu_gemm_precision(&t->gpu, pin->precision)];
    ppl_config c;
    memset(&c, 0, sizeof c);
    c.gpus = gpus;
    c.global_batch = batch;
    ppl_config_take_fixed(&c, pin);
    c.schedule = (ppl_schedule)pin->schedule;
    c.recompute_layers = pin->recompute_layers == PPL_UNSET ? 0 : pin->recompute_layers;
    queue shapes = {NULL, 0, 0};
    bool out_of_memory = false;
    for (int a = 0; a < tps.n; a++) {
        c.tp = tps.v[a];
        if (m->heads % c.tp != 0 || (m->kv_heads % c.tp != 0 && c.tp % m->kv_heads != 0))
            continue;
        for (int b = 0; b < cps.n; b++) {
            c.cp = cps.v[b];
            if (c.tp * c.cp > gpus || (!up_to && gpus % (c.tp * c.cp) != 0))
                continue;
            c.cp_a2a = ppl_cp_a2a_size(m, t, c.tp, c.cp);
            shape_choices(&s, &c, &inner);
            /* pp divides gpus / (tp cp); under a ceiling any pp up to it will do */
            int64_t pp_room = gpus / (c.tp * c.cp);
            pp_all.n = 0;
            if (!up_to)
                divisors(pp_room, m->layers, &pp_all);
            pinned_or(pin->pp, &pp_all, &pps);
            int64_t npp = pin->pp != PPL_UNSET || !up_to ? pps.n
                          : pp_room < m->layers          ? pp_room
                                                         : m->layers;
            for (int64_t d = 0; d < npp; d++) {
                if (up_to)
                    progress(&s,
                             ((double)a + ((double)b + (double)d / (double)npp) / cps.n) / tps.n);
                c.pp = up_to && pin->pp == PPL_UNSET ? d + 1 : pps.v[d];
                if (c.tp * c.cp * c.pp > gpus || (!up_to && gpus % (c.tp * c.cp * c.pp) != 0))
                    continue;
                /* dp = gpus / (tp cp pp); under a ceiling, every dp that divides the
                 * batch and fits under it, most GPUs first (they prune the rest) */
                int64_t room = gpus / (c.tp * c.cp * c.pp);
                const int64_t *dps = &room;
                size_t ndps = 1;
                if (up_to) {
                    dps = batch_divisors.v; /* descending: skip those above room */
                    ndps = batch_divisors.n;
                    while (ndps > 0 && *dps > room) {
                        dps++;
                        ndps--;
                    }
                }
                for (size_t e = 0; e < ndps; e++) {
                    c.dp = dps[e];
                    c.gpus = c.tp * c.cp * c.pp * c.dp;
                    if (c.gpus <= searched)
                        break; /* these counts and the smaller dp's were searched */
                    /* no plan beats its FLOPs at the GEMMs' peak (estimate.h
                     * floor_s): under a ceiling, fewer GPUs than the list's worst
                     * needs cannot rank, and the dp left are fewer still */
                    const ppl_estimate *last = ppl_ranking_worst(&s.best);
                    if (up_to && !o->no_prune && o->objective == PPL_OBJECTIVE_TIME && last &&
                        flops_s / (double)c.gpus > last->step_time_s) {
                        r->pruned++;
                        break;
                    }
                    if ((pin->dp == PPL_UNSET || pin->dp == c.dp) && !(seeded && c.gpus == gpus)) {
                        if (up_to)
                            search_replica(&s, c, &inner);
                        else if (!enqueue(&shapes, &s, &c, &inner))
                            out_of_memory = true;
                    }
                }
            }
        }
    }
    /* the shapes most likely to rank first (queue) */
    if (shapes.n > 1)
        qsort(shapes.v, shapes.n, sizeof *shapes.v, by_key);
    for (size_t i = 0; i < shapes.n && !out_of_memory; i++) {
        progress(&s, (double)i / (double)shapes.n);
        const queued *q = &shapes.v[i]; /* the rest of c as every shape has it */
        c.tp = q->tp, c.cp = q->cp, c.cp_a2a = q->cp_a2a, c.pp = q->pp, c.dp = q->dp;
        c.gpus = c.tp * c.cp * c.pp * c.dp;
        shape_choices(&s, &c, &inner);
        search_replica(&s, c, &inner);
    }
    free(shapes.v);
    free(batch_divisors.v);
    if (out_of_memory) {
        ppl_ranking_free(&s.best);
        ppl_floor_cache_free(s.floors);
        ppl_micro_cache_free(s.computed);
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
    }
    ppl_floor_cache_free(s.floors);
    ppl_micro_cache_free(s.computed);
    ppl_ranking_sort(o->objective, &s.best);
    r->results = s.best.items;
    r->count = s.best.count;
    r->balanced = 0;
    for (size_t i = 0; i < r->count; i++) {
        const ppl_config *c = &r->results[i].config;
        ppl_stage_split d = ppl_stage_split_default(m->layers, c->pp);
        r->balanced += !ppl_stage_split_equal(&d, &c->split);
    }
    r->n_left_out = 0;
    for (int f = 0; f < PPL_FAMILY_COUNT; f++) {
        const ppl_estimate *b = &s.family_best[f];
        if (s.family[f].count == 0 || s.broken[f] || r->count == 0 ||
            !(b->step_time_s < r->results[0].step_time_s))
            continue;
        ppl_left_out *lo = &r->left_out[r->n_left_out++];
        lo->family = ppl_search_family((ppl_family_id)f);
        lo->best = *b;
        lo->speedup = r->results[0].step_time_s / b->step_time_s;
    }
    r->seconds = ppl_clock_s() - start;
    if (s.has_unsound) {
        *err = s.unsound;
        return PPL_EINTERNAL;
    }
    if (r->count == 0) {
        r->empty_reason = r->evaluated == 0 ? "no configuration satisfies the divisibility rules"
                                            : "no configuration fits in GPU memory";
        return PPL_INFEASIBLE;
    }
    return PPL_OK;
}

void ppl_search_free(ppl_search_result *r)
{
    free(r->results);
    memset(r, 0, sizeof *r);
}
