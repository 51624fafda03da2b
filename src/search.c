/*
 * search.c - enumerate the configuration space, keep the best (parplan/search.h).
 */
#include "parplan/search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static void pinned_or(int64_t pin, choices *free_choices, choices *out)
{
    if (pin != PPL_UNSET) {
        out->n = 0;
        add(out, pin);
    } else {
        *out = *free_choices;
    }
}

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double objective_of(const ppl_search_opts *o, const ppl_estimate *e)
{
    switch (o->objective) {
    case PPL_OBJECTIVE_MEMORY: return e->memory.total;
    case PPL_OBJECTIVE_COST: /* GPU-hours per token; the price only scales it */
        return e->step_time_s * (double)e->config.gpus / 3600.0 /
               (e->tokens_per_s * e->step_time_s);
    default: return e->step_time_s;
    }
}

/* Strict order: objective, then a fixed order of the knobs. */
static int compare(const ppl_search_opts *o, const ppl_estimate *a, const ppl_estimate *b)
{
    double x = objective_of(o, a), y = objective_of(o, b);
    if (x < y)
        return -1;
    if (x > y)
        return 1;
    const ppl_config *p = &a->config, *q = &b->config;
    int64_t ka[] = {p->tp,
                    p->pp,
                    p->cp,
                    p->ep,
                    p->vp,
                    p->mbs,
                    p->zero,
                    p->recompute,
                    p->sequence_parallel,
                    p->flash_attention};
    int64_t kb[] = {q->tp,
                    q->pp,
                    q->cp,
                    q->ep,
                    q->vp,
                    q->mbs,
                    q->zero,
                    q->recompute,
                    q->sequence_parallel,
                    q->flash_attention};
    for (size_t i = 0; i < sizeof ka / sizeof ka[0]; i++)
        if (ka[i] != kb[i])
            return ka[i] < kb[i] ? -1 : 1;
    return 0;
}

static void keep(const ppl_search_opts *o, ppl_search_result *r, size_t cap, const ppl_estimate *e)
{
    size_t n = r->count;
    if (n == cap && compare(o, e, &r->results[n - 1]) >= 0)
        return;
    size_t i = n < cap ? n : cap - 1;
    while (i > 0 && compare(o, e, &r->results[i - 1]) < 0) {
        r->results[i] = r->results[i - 1];
        i--;
    }
    r->results[i] = *e;
    if (n < cap)
        r->count++;
}

ppl_status ppl_search(const ppl_eval_ctx *ctx, const ppl_search_opts *o, ppl_search_result *r,
                      ppl_error *err)
{
    const ppl_args *pin = o->pins;
    const ppl_model *m = ctx->model;
    const ppl_topology *t = ctx->topo;
    double start = wall_seconds();
    memset(r, 0, sizeof *r);
    size_t cap = o->top > 0 ? o->top : 1;
    r->results = calloc(cap, sizeof *r->results);
    if (!r->results)
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
    r->smallest_memory = INFINITY;
    r->capacity = t->gpu.memory_bytes;

    const int64_t gpus = pin->gpus != PPL_UNSET ? pin->gpus : t->servers * t->gpus_per_server;
    if (gpus > t->servers * t->gpus_per_server) {
        free(r->results);
        r->results = NULL;
        return ppl_error_set(err, PPL_EUSAGE, "", "--gpus", "%lld exceeds the topology's %lld GPUs",
                             (long long)gpus, (long long)(t->servers * t->gpus_per_server));
    }
    const int64_t batch = pin->global_batch;
    int64_t node = ctx->net.node_gpus;
    choices tp_all, tps, cps, cp_all, pps, pp_all, eps, ep_all, vps, mbss, mbs_all;
    divisors(gpus, pin->allow_tp_across_servers ? gpus : node, &tp_all);
    pinned_or(pin->tp, &tp_all, &tps);
    cp_all.n = 0;
    for (int64_t cp = 1; cp <= 32; cp *= 2)
        if (cp == 1 || (m->seq_len >= 8192 && m->seq_len % (2 * cp) == 0))
            add(&cp_all, cp);
    pinned_or(pin->cp, &cp_all, &cps);

    int zeros[4], nzero = 0, recomputes[3], nrec = 0, sps[2], nsp, flashes[2], nfl = 0;
    if (pin->zero != PPL_UNSET)
        zeros[nzero++] = pin->zero;
    else
        for (int z = 0; z <= 3; z++)
            zeros[nzero++] = z;
    if (pin->recompute != PPL_UNSET)
        recomputes[nrec++] = pin->recompute;
    else
        for (int rc = 0; rc < 3; rc++)
            recomputes[nrec++] = rc;
    if (pin->flash_attention != PPL_UNSET)
        flashes[nfl++] = pin->flash_attention;
    else {
        flashes[nfl++] = 0;
        flashes[nfl++] = 1;
    }

    ppl_config c;
    memset(&c, 0, sizeof c);
    c.gpus = gpus;
    c.global_batch = batch;
    c.precision = (ppl_precision)pin->precision;
    c.optimizer = (ppl_optimizer)pin->optimizer;
    c.schedule = (ppl_schedule)pin->schedule;
    ppl_error scratch;
    for (int a = 0; a < tps.n; a++) {
        c.tp = tps.v[a];
        if (m->heads % c.tp != 0 || (m->kv_heads % c.tp != 0 && c.tp % m->kv_heads != 0))
            continue;
        nsp = 0;
        if (pin->sequence_parallel != PPL_UNSET)
            sps[nsp++] = pin->sequence_parallel;
        else {
            sps[nsp++] = 0;
            if (c.tp > 1)
                sps[nsp++] = 1;
        }
        for (int b = 0; b < cps.n; b++) {
            c.cp = cps.v[b];
            if (gpus % (c.tp * c.cp) != 0)
                continue;
            divisors(gpus / (c.tp * c.cp), m->layers, &pp_all);
            pinned_or(pin->pp, &pp_all, &pps);
            for (int d = 0; d < pps.n; d++) {
                c.pp = pps.v[d];
                if (gpus % (c.tp * c.cp * c.pp) != 0)
                    continue;
                c.dp = gpus / (c.tp * c.cp * c.pp);
                if (pin->dp != PPL_UNSET && pin->dp != c.dp)
                    continue;
                c.split = ppl_stage_split_default(m->layers, c.pp);
                if (m->has_moe)
                    divisors(c.dp, m->moe.experts, &ep_all);
                else {
                    ep_all.n = 0;
                    add(&ep_all, 1);
                }
                pinned_or(pin->ep, &ep_all, &eps);
                mbs_all.n = 0;
                if (batch % c.dp == 0)
                    divisors(batch / c.dp, MAX_MBS, &mbs_all);
                pinned_or(pin->mbs, &mbs_all, &mbss);
                for (int e = 0; e < eps.n; e++) {
                    c.ep = eps.v[e];
                    for (int f = 0; f < mbss.n; f++) {
                        c.mbs = mbss.v[f];
                        if (batch % (c.dp * c.mbs) != 0)
                            continue;
                        c.microbatches = batch / (c.dp * c.mbs);
                        vps.n = 0;
                        if (pin->vp != PPL_UNSET)
                            add(&vps, pin->vp);
                        else {
                            add(&vps, 1);
                            int64_t chunked = ppl_interleaved_stage_layers(&c);
                            if (c.pp > 1 && c.microbatches % c.pp == 0)
                                for (int64_t v = 2; v <= chunked; v++)
                                    if (chunked % v == 0)
                                        add(&vps, v);
                        }
                        for (int g = 0; g < vps.n; g++) {
                            c.vp = vps.v[g];
                            for (int z = 0; z < nzero; z++) {
                                c.zero = zeros[z];
                                if (c.zero >= 2 && c.pp > 1 && pin->zero == PPL_UNSET)
                                    continue;
                                for (int h = 0; h < nrec; h++) {
                                    c.recompute = (ppl_recompute)recomputes[h];
                                    for (int i = 0; i < nsp; i++) {
                                        c.sequence_parallel = sps[i];
                                        for (int j = 0; j < nfl; j++) {
                                            c.flash_attention = flashes[j];
                                            r->candidates++;
                                            if (ppl_config_check(&c, m, t, &scratch) != PPL_OK)
                                                continue;
                                            ppl_memory mem;
                                            ppl_memory_worst(m, &ctx->figures, t, &c, &ctx->memory,
                                                             &mem);
                                            if (mem.total < r->smallest_memory)
                                                r->smallest_memory = mem.total;
                                            r->evaluated++;
                                            if (!mem.fits)
                                                continue;
                                            r->feasible++;
                                            ppl_estimate est;
                                            ppl_estimate_config(ctx, &c, &est);
                                            keep(o, r, cap, &est);
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    r->seconds = wall_seconds() - start;
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
    r->results = NULL;
    r->count = 0;
}
