/*
 * sizing.c - the fewest GPUs that train N tokens in D days (`parplan size`).
 *
 * Doubling, then bisection on whole servers (below a server: 1, 2, 4 GPUs for
 * fit-only).  Every count is planned by the same search as `plan`, on the first
 * GPUs of the topology.
 */
#include "studies/sizing.h"

#include <math.h>
#include <string.h>

#include "base/units.h"

/* Wall-clock seconds to train on plan e, failures counted (infinite when the job
 * never finishes); *g its goodput. */
static ppl_goodput_opts goodput_opts(const ppl_eval_ctx *ctx, const ppl_sizing_opts *o)
{
    ppl_goodput_opts go;
    if (o->goodput)
        go = *o->goodput;
    else
        ppl_goodput_opts_init(&go);
    go.gpus_per_server = (int)ctx->topo->gpus_per_server;
    return go;
}

static double wall_s(const ppl_eval_ctx *ctx, const ppl_sizing_opts *o, const ppl_estimate *e,
                     ppl_goodput *g)
{
    ppl_goodput_opts go = goodput_opts(ctx, o);
    ppl_goodput_of(&go, ctx->figures.params_total, &ctx->memory, &e->config, ctx->stack.stack, g);
    return ppl_time_with_failures_s(ppl_time_to_train_s(o->tokens, e->tokens_per_s), g->goodput);
}

/* The fastest of the counts planned, failures counted: with them, days need not
 * fall as GPUs are added, so the whole cluster is not always the fastest. */
typedef struct fastest {
    double s;     /* wall-clock seconds; infinite when none finishes */
    int64_t gpus; /* 0 when none finishes */
    double goodput;
} fastest;

/* The best plan on the first `gpus` GPUs; *meets when it trains in time,
 * failures counted (*f keeps the fastest seen).  Nothing fitting is not an error
 * here: *meets stays false. */
static ppl_status plan_at(const ppl_eval_ctx *ctx, const ppl_sizing_opts *o, int64_t gpus,
                          ppl_estimate *e, bool *meets, ppl_search_totals *acc, fastest *f,
                          ppl_error *err)
{
    ppl_pins pins = *o->pins;
    pins.gpus = gpus;
    if (pins.global_batch == PPL_UNSET)
        pins.global_batch = ppl_default_global_batch(ctx->model);
    ppl_status st = ppl_best_plan(ctx, &pins, &o->search, e, acc, err);
    ppl_goodput g;
    *meets = false;
    if (st == PPL_OK && !o->fit_only) {
        double w = wall_s(ctx, o, e, &g);
        *meets = w <= o->days * 86400.0;
        if (w < f->s) {
            f->s = w;
            f->gpus = e->config.gpus;
            f->goodput = g.goodput;
        }
    } else if (st == PPL_OK)
        *meets = true;
    return st == PPL_INFEASIBLE ? PPL_OK : st;
}

/* One replica (dp 1): the fewest GPUs (tp x pp x cp) any configuration fits on. */
static ppl_status fit_only(const ppl_eval_ctx *ctx, const ppl_sizing_opts *o, ppl_sizing *out,
                           bool *found, ppl_error *err)
{
    const int64_t per = ctx->topo->gpus_per_server, all = ctx->topo->servers * per;
    ppl_pins pins = *o->pins;
    pins.dp = 1;
    if (pins.global_batch == PPL_UNSET)
        pins.global_batch = ppl_default_global_batch(ctx->model);
    ppl_estimate e;
    for (int64_t g = 1; g <= all && !*found; g = g < per ? g * 2 : g + per) {
        pins.gpus = g;
        ppl_status st = ppl_best_plan(ctx, &pins, &o->search, &e, &out->search, err);
        if (st == PPL_OK) {
            *found = true;
            out->best = e;
            out->gpus = g;
        } else if (st != PPL_INFEASIBLE) {
            return st;
        }
    }
    return PPL_OK;
}

/* The most servers a job may take when its hot spares must fit beside it on
 * the topology. */
static int64_t job_servers_max(const ppl_eval_ctx *ctx, const ppl_sizing_opts *o)
{
    const int64_t per = ctx->topo->gpus_per_server;
    ppl_goodput_opts go = goodput_opts(ctx, o);
    const int64_t all = ctx->topo->servers * per;
    if (!(go.spare_fraction > 0))
        return (all - ppl_spare_gpus(&go, 0)) / per; /* a fixed count: may be <= 0 */
    int64_t s = ctx->topo->servers;
    while (s > 0 && s * per + ppl_spare_gpus(&go, s * per) > all)
        s--;
    return s;
}

/* Doubling whole servers until the plan trains in time, then bisection; *last
 * holds the last plan found. */
static ppl_status in_time(const ppl_eval_ctx *ctx, const ppl_sizing_opts *o, ppl_sizing *out,
                          ppl_estimate *last, bool *found, fastest *f, ppl_error *err)
{
    const int64_t per = ctx->topo->gpus_per_server, servers = job_servers_max(ctx, o);
    ppl_estimate *e = last;
    bool meets = false;
    ppl_status st;
    int64_t lo = 0, hi = 0;
    for (int64_t s = 1; s <= servers; s = s * 2 > servers && s < servers ? servers : s * 2) {
        if ((st = plan_at(ctx, o, s * per, e, &meets, &out->search, f, err)) != PPL_OK)
            return st;
        if (meets) {
            hi = s;
            out->best = *e;
            *found = true;
            break;
        }
        lo = s;
        if (s == servers)
            break;
    }
    if (!*found)
        return PPL_OK;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if ((st = plan_at(ctx, o, mid * per, e, &meets, &out->search, f, err)) != PPL_OK)
            return st;
        if (meets) {
            hi = mid;
            out->best = *e;
        } else {
            lo = mid;
        }
    }
    out->gpus = hi * per;
    return PPL_OK;
}

/* Why no count will do: what the whole cluster achieves at best (e: the last
 * plan found, zero when none was: then nothing fits). */
static ppl_status not_found(const ppl_eval_ctx *ctx, const ppl_sizing_opts *o, ppl_sizing *out,
                            ppl_estimate *e, fastest *f, ppl_error *err)
{
    const ppl_topology *t = ctx->topo;
    const int64_t all = job_servers_max(ctx, o) * t->gpus_per_server;
    if (all <= 0)
        return ppl_error_set(err, PPL_INFEASIBLE, "", "--spares",
                             "the hot spares take all %lld GPUs of %s: none are left for the job",
                             (long long)(t->servers * t->gpus_per_server), t->name);
    if (o->fit_only)
        return ppl_error_set(err, PPL_INFEASIBLE, "", "",
                             "one replica of %s does not fit on all %lld GPUs of %s",
                             ctx->model->name, (long long)all, t->name);
    bool meets;
    ppl_status st = plan_at(ctx, o, all, e, &meets, &out->search, f, err);
    if (st != PPL_OK)
        return st;
    if (e->tokens_per_s > 0 && f->gpus == 0)
        return ppl_error_set(err, PPL_INFEASIBLE, "", "",
                             "not within %.4g days: on every count of %s's GPUs tried, failures "
                             "come faster than checkpoints and restarts let training advance "
                             "(goodput 0)",
                             o->days, t->name);
    if (e->tokens_per_s > 0) {
        char when[32];
        ppl_format_time(f->s, when, sizeof when);
        if (f->gpus == e->config.gpus)
            return ppl_error_set(err, PPL_INFEASIBLE, "", "",
                                 "not within %.4g days: all %lld GPUs of %s train %.4g tokens "
                                 "in %s at best, failures counted (goodput %.3f)",
                                 o->days, (long long)all, t->name, o->tokens, when, f->goodput);
        return ppl_error_set(err, PPL_INFEASIBLE, "", "",
                             "not within %.4g days: %lld of the %lld GPUs of %s train %.4g tokens "
                             "in %s at best, failures counted (goodput %.3f); more lose to "
                             "failures what they add",
                             o->days, (long long)f->gpus, (long long)all, t->name, o->tokens, when,
                             f->goodput);
    }
    return ppl_error_set(err, PPL_INFEASIBLE, "", "", "not within %.4g days: nothing fits on %s",
                         o->days, t->name);
}

ppl_status ppl_size(const ppl_eval_ctx *ctx, const ppl_sizing_opts *opts, ppl_sizing *out,
                    ppl_error *err)
{
    ppl_sizing_opts o = *opts;
    o.search.pins = NULL;
    o.search.top = 1;
    o.search.gpus_at_most = false;
    memset(out, 0, sizeof *out);
    out->global_batch_assumed = o.pins->global_batch == PPL_UNSET;
    bool found = false;
    ppl_estimate last;
    memset(&last, 0, sizeof last);
    fastest f = {.s = INFINITY, .gpus = 0, .goodput = 0};
    ppl_status st = o.fit_only ? fit_only(ctx, &o, out, &found, err)
                               : in_time(ctx, &o, out, &last, &found, &f, err);
    if (st != PPL_OK)
        return st;
    if (!found)
        return not_found(ctx, &o, out, &last, &f, err);
    if (!o.fit_only) {
        out->failure_free_s = ppl_time_to_train_s(o.tokens, out->best.tokens_per_s);
        out->seconds = wall_s(ctx, &o, &out->best, &out->goodput);
        out->days = out->seconds / 86400.0;
        /* the spares are bought and held for the whole run */
        out->gpu_hours = ppl_gpu_hours(out->gpus + out->goodput.spare_gpus, out->seconds);
        if (out->goodput.spare_gpus > 0) {
            ppl_goodput_opts none = goodput_opts(ctx, &o);
            none.spare_gpus = 0;
            none.spare_fraction = 0;
            ppl_sizing_opts without = o;
            without.goodput = &none;
            ppl_goodput g;
            out->seconds_without_spares = wall_s(ctx, &without, &out->best, &g);
        } else {
            out->seconds_without_spares = out->seconds;
        }
        if (o.gpu_hour_price > 0)
            out->cost = out->gpu_hours * o.gpu_hour_price;
    }
    return PPL_OK;
}
