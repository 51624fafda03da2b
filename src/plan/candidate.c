/*
 * candidate.c - one candidate of the search costed (plan/candidate.h).
 */
#include "plan/candidate.h"

#include <math.h>
#include <string.h>

#include "base/minmax.h"
#include "cost/rules.h"

/* True when every figure of e is finite; the first that is not is kept, and the
 * search ends in that error instead of ranking it. */
static bool sound(ppl_search_state *s, const ppl_estimate *e)
{
    ppl_error err;
    if (ppl_estimate_check(e, &err) == PPL_OK)
        return true;
    if (s->lane >= 0)
        s->broken[s->lane] = true; /* a family's search ends alone */
    else if (!s->has_unsound) {
        s->unsound = err;
        s->has_unsound = true;
    }
    return false;
}

/* Whether the search prunes here and has something to prune against: a worst
 * result kept, or a ceiling (a family's #1 to beat). */
static bool prunes_now(const ppl_search_state *s)
{
    return !s->opts->no_prune && s->opts->objective == PPL_OBJECTIVE_TIME &&
           (ppl_ranking_worst(&s->best) || isfinite(s->ceiling_s));
}

/* Whether a plan whose step is at least b seconds cannot rank: above the worst
 * kept, or at the ceiling (a plan there is not kept: cost). */
static bool cannot_rank(const ppl_search_state *s, double b)
{
    const ppl_estimate *last = ppl_ranking_worst(&s->best);
    return (last && b > last->step_time_s) || b >= s->ceiling_s;
}

/* What a step must stay under to rank: the worst kept, or the ceiling (at which a
 * plan is not kept); cannot_rank(b) holds for every b above it */
static double rank_limit_s(const ppl_search_state *s)
{
    const ppl_estimate *last = ppl_ranking_worst(&s->best);
    return last ? ppl_min(last->step_time_s, s->ceiling_s) : s->ceiling_s;
}

/* Whether block recomputation's count `fewer` (the fewest recomputed layers that
 * fit) cannot rank: its bound (ppl_bound_step_recomputed_s) is above the worst. */
static bool recomputed_over(ppl_search_state *s, const ppl_config *fewer, const ppl_micro *mi)
{
    return prunes_now(s) &&
           cannot_rank(s, ppl_bound_step_recomputed_s(s->ctx, s->opts->pins, fewer, mi));
}

/* The memory of c's knobs when a CP algorithm before c's costed it (or NULL). */
static ppl_memory_seen *seen_find(ppl_search_state *s, const ppl_config *c)
{
    for (int i = 0; i < s->nseen; i++) {
        ppl_memory_seen *m = &s->seen[i];
        if (m->zero == c->zero && m->shard_group == c->shard_group &&
            m->recompute_layers == c->recompute_layers && m->offload == c->offload_optimizer &&
            ppl_stage_split_equal(&m->split, &c->split))
            return m;
    }
    return NULL;
}

/* The fewest recomputed layers c's memory allows (ppl_fewest_recomputed), or -1
 * where block recomputation is not searched or c does not fit even with every
 * layer recomputed. */
static int64_t fewest_of(const ppl_search_state *s, const ppl_config *c, const ppl_layout *l,
                         const ppl_micro *mi, ppl_classes *cl)
{
    if (!ppl_blocks_searched(s->opts->pins, c) || !ppl_estimate_fits(s->ctx, c, l, mi, cl))
        return -1;
    return ppl_fewest_recomputed(s->ctx, c, l, mi, cl);
}

/* A costed candidate's memory: kept with its knobs where they have none yet (for
 * the CP algorithms after this one), and in the smallest memory the search met
 * and the room an offload of its optimizer state would leave. */
static void memory_met(ppl_search_state *s, ppl_memory_seen *seen, double total, double optimizer,
                       bool fits)
{
    if (seen && !seen->costed) {
        seen->total = total;
        seen->optimizer = optimizer;
        seen->fits = fits;
        seen->costed = true;
    }
    if (total < s->r->smallest_memory)
        s->r->smallest_memory = total;
    s->offload_room = total - optimizer;
}

/* Costs one configuration at its stage split (block recomputation searched) and
 * keeps it when it fits and ranks; whether it fits. */
static bool cost(ppl_search_state *s, const ppl_config *c, const ppl_layout *l, const ppl_micro *mi,
                 ppl_classes *cl)
{
    const ppl_eval_ctx *ctx = s->ctx;
    ppl_search_result *r = s->r;
    const ppl_config *asked = c; /* before block recomputation changes it */
    ppl_config fewer = *c;
    /* the busiest rank of c's own split, whatever it recomputes or holds; what
     * does not fit goes on, to report it (its offload, another split, may rank) */
    const double split_s = ppl_bound_split_s(ctx, c, mi, cl);
    ppl_memory_seen *seen = seen_find(s, c);
    if (!seen && s->nseen < PPL_MEMORY_SEEN) {
        seen = &s->seen[s->nseen++];
        *seen = (ppl_memory_seen){.zero = c->zero,
                                  .shard_group = c->shard_group,
                                  .recompute_layers = c->recompute_layers,
                                  .offload = c->offload_optimizer,
                                  .split = c->split,
                                  .asked_fits = -1};
    }
    /* and, where the recomputed layers are searched, the first stage's gradient
     * reduction beside the pipeline (below) before they are: it reads the stage's
     * parameters, not what it recomputes */
    const double over = ctx->stack.step_overhead_s;
    double early_s = split_s;
    if (prunes_now(s) && ppl_blocks_searched(s->opts->pins, c) && !cannot_rank(s, early_s))
        early_s = ppl_estimate_dp_floor_s(ctx, c, l, mi, cl, s->bound_s - over, -INFINITY) + over;
    if (prunes_now(s) && cannot_rank(s, early_s)) {
        int fits = seen ? seen->asked_fits : -1;
        if (fits < 0) {
            ppl_memory shown;
            fits = ppl_estimate_memory(ctx, c, l, mi, cl, &shown);
            if (seen) {
                seen->asked_total = shown.total;
                seen->asked_optimizer = shown.optimizer;
            }
        }
        if (seen)
            seen->asked_fits = fits;
        if (fits) {
            r->pruned++;
            return true;
        }
    }
    if (seen && !seen->fewest_known) {
        seen->fewest = fewest_of(s, c, l, mi, cl);
        seen->fewest_known = true;
    }
    /* what fits with every layer recomputed is costed at the fewest that fit,
     * found from the memory alone, and not at all when that cannot rank */
    const int64_t fewest = seen ? seen->fewest : fewest_of(s, c, l, mi, cl);
    if (fewest >= 0) {
        fewer.recompute_layers = fewest;
        if (recomputed_over(s, &fewer, mi)) {
            r->pruned++;
            return true;
        }
        c = &fewer;
    }
    if (seen && seen->costed && !seen->fits) { /* what a CP algorithm before found */
        r->evaluated++;
        memory_met(s, seen, seen->total, seen->optimizer, false);
        return false;
    }
    /* the first stage's gradient reduction beside the pipeline (estimate.h
     * ppl_estimate_dp_floor_s), which the stage bound leaves out */
    if (prunes_now(s) &&
        cannot_rank(s, ppl_estimate_dp_floor_s(ctx, c, l, mi, cl, s->bound_s - over,
                                               rank_limit_s(s) - over) +
                           over)) {
        r->pruned++;
        return true;
    }
    /* what does not fit as asked is costed as asked (fewest_of finds no count of
     * recomputed layers that fits), and the estimate would report the memory the
     * check above found, and no time: taken from it */
    if (seen && !seen->costed && seen->asked_fits == 0 && fewest < 0 &&
        isfinite(seen->asked_total)) {
        r->evaluated++;
        memory_met(s, seen, seen->asked_total, seen->asked_optimizer, false);
        return false;
    }
    ppl_estimate est;
    bool fits = ppl_estimate_cached(ctx, c, l, mi, cl, false, &est);
    r->evaluated++;
    /* the step time is costed only for what fits */
    if (!isfinite(est.memory.total) || (fits && !isfinite(est.step_time_s))) {
        /* a NaN neither fits nor ranks: report the figures this pass computed */
        ppl_estimate part;
        memset(&part, 0, sizeof part);
        part.config = est.config;
        part.memory.total = est.memory.total;
        part.step_time_s = fits ? est.step_time_s : 0.0;
        sound(s, &part);
        return true; /* nothing more to try */
    }
    memory_met(s, seen, est.memory.total, est.memory.optimizer, fits);
    if (fits) {
        r->feasible++;
        /* the bounds' own check: an unpruned search counts the plans below them */
        if (s->opts->no_prune &&
            (ppl_bounds_above(ctx, s->opts->pins, asked, c, l, mi, est.step_time_s,
                              est.memory.total) ||
             split_s > est.step_time_s * (1.0 + 1e-12) ||
             ppl_estimate_dp_floor_s(ctx, c, l, mi, cl,
                                     ppl_bound_step_s(ctx, s->opts->pins, asked, mi) - over, NAN) +
                     over >
                 est.step_time_s * (1.0 + 1e-12)))
            r->bounds_broken++;
        /* only what can enter the list is costed in full */
        const ppl_estimate *last = ppl_ranking_worst(&s->best);
        if ((last && ppl_ranking_compare(s->opts->objective, &est, last) >= 0) ||
            est.step_time_s >= s->ceiling_s)
            return true;
        ppl_estimate_cached(ctx, c, l, mi, cl, true, &est);
        /* a cost or memory objective keeps to the floor on time (opts within) */
        if (sound(s, &est) && !(r->step_ceiling_s > 0.0 && est.step_time_s > r->step_ceiling_s))
            ppl_ranking_keep(s->opts->objective, &s->best, &est);
    }
    return fits;
}

/* PPL_EVAL_FITS, PPL_EVAL_OVER (valid, over the memory) or PPL_EVAL_OUT (invalid, or pruned). */
static int evaluate_in(ppl_search_state *s, const ppl_config *c, const ppl_layout *l,
                       const ppl_micro *mi, ppl_classes *cl)
{
    const ppl_eval_ctx *ctx = s->ctx;
    ppl_search_result *r = s->r;
    r->candidates++;
    /* the bound holds for every stage split */
    const ppl_estimate *last = ppl_ranking_worst(&s->best);
    double above = last ? ppl_min(last->step_time_s, s->ceiling_s) : s->ceiling_s;
    const bool prunes = !s->opts->no_prune && s->opts->objective == PPL_OBJECTIVE_TIME;
    if (prunes && s->bound_s > above) {
        r->pruned++;
        return PPL_EVAL_OUT;
    }
    if (ppl_config_check(c, ctx->model, ctx->topo, NULL) != PPL_OK)
        return PPL_EVAL_OUT;
    /* no split fits (once something has: the smallest memory needed is what the
     * search reports when nothing does) */
    double no_optimizer;
    if (!s->opts->no_prune && r->feasible > 0 &&
        ppl_bound_memory_bytes(s->ctx, c, mi, &no_optimizer) > s->room_bytes) {
        s->offload_room = no_optimizer; /* below the total less its optimizer state */
        return PPL_EVAL_OVER;
    }
    /* ZeRO-3's bound falls with the sharding group: what it prunes passes as fitting,
     * so the smaller groups are tried on their own (the offload only adds time) */
    if (prunes && ppl_bound_step_zero3_s(ctx, s->opts->pins, c, l, mi) > above) {
        r->pruned++;
        return PPL_EVAL_FITS;
    }
    int room = cost(s, c, l, mi, cl) ? PPL_EVAL_FITS : PPL_EVAL_OVER;
    /* the balanced split, unless the user pinned the ends */
    const ppl_pins *pin = s->opts->pins;
    if (s->opts->no_balance || c->pp < 2 || c->vp > 1 || pin->first_stage_layers != PPL_UNSET ||
        pin->last_stage_layers != PPL_UNSET)
        return room;
    /* no balanced split can rank: its slowest stage by the lines already met
     * (ppl_balance_least_s; the balance builds each line's memory too) */
    if (prunes && (double)c->microbatches * ppl_balance_least_s(ctx, c, mi, s->memo,
                                                                !ppl_blocks_searched(pin, c)) +
                          ctx->stack.step_overhead_s >
                      above) {
        r->pruned++;
        return room;
    }
    ppl_config b = *c;
    if (ppl_balance_ends(ctx, c, l, mi, s->memo, &b.split) != PPL_OK ||
        ppl_stage_split_equal(&b.split, &c->split) ||
        ppl_config_check(&b, ctx->model, ctx->topo, NULL) != PPL_OK)
        return room;
    ppl_classes classes;
    ppl_classes_init(ctx, &b, &classes);
    ppl_stage_dp_cache *dp = s->memo ? s->memo->dp : NULL;
    ppl_classes_dp_take(&classes, dp);
    r->candidates++;
    if (cost(s, &b, l, mi, &classes))
        room = PPL_EVAL_FITS;
    ppl_classes_dp_keep(&classes, dp);
    ppl_classes_free(&classes);
    return room;
}

static int lane_of(const ppl_search_state *s, const ppl_config *c)
{
    int lane = PPL_LANE_MAIN;
    for (int f = 0; f < PPL_FAMILY_COUNT; f++) {
        if (s->allows[f] || !ppl_search_in_family(s->ctx, (ppl_family_id)f, c))
            continue;
        if (!s->looks[f] || lane != PPL_LANE_MAIN)
            return PPL_LANE_NONE; /* left out, or in two families left out */
        lane = f;
    }
    return lane;
}

/* evaluate_in on c's lane: a family's candidates are ranked in that family's
 * list of one, counted apart, and pruned by the #1 they must beat as well (a
 * plan the family's best does not beat is not reported). */
int ppl_candidate_evaluate(ppl_search_state *s, const ppl_config *c, const ppl_layout *l,
                           const ppl_micro *mi, ppl_classes *cl)
{
    int f = lane_of(s, c);
    if (f == PPL_LANE_MAIN)
        return evaluate_in(s, c, l, mi, cl);
    if (f == PPL_LANE_NONE || s->broken[f])
        return PPL_EVAL_OUT;
    ppl_search_result *r = s->r;
    ppl_ranking best = s->best;
    s->r = &s->family_counts;
    s->best = s->family[f];
    const ppl_estimate *first = ppl_ranking_best(&best);
    s->ceiling_s = first ? first->step_time_s : INFINITY;
    s->lane = f;
    int e = evaluate_in(s, c, l, mi, cl);
    s->family[f] = s->best;
    s->r = r;
    s->best = best;
    s->ceiling_s = INFINITY;
    s->lane = PPL_LANE_MAIN;
    return e;
}
