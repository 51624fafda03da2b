/*
 * rl.c - an RL post-training step planned on one cluster (studies/rl.h).
 */
#include "studies/rl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hardware/gpu.h"

/* The largest batch an engine decodes: vLLM's max_num_seqs is 256 by default,
 * SGLang's max_running_requests up to thousands (as cmd_serve tries). */
#define RL_MAX_BATCH 4096
/* The multiple a trainer's packed sequence is padded to: 2 x cp x tp up to cp 8
 * and tp 8 (NeMo RL pads to make_sequence_length_divisible_by, tp x cp x 2 for
 * Megatron-Core). */
#define RL_PAD_TOKENS 128
/* Disaggregated splits tried: k/16 of the servers, k = 1..15. */
#define RL_SPLITS 16

const char *const ppl_rl_placement_names[] = {"colocated", "disaggregated", NULL};

const char *ppl_rl_placement_name(ppl_rl_placement p)
{
    return ppl_rl_placement_names[p]; /* indexed by the enum (rl.h) */
}

const char *ppl_rl_pipeline_name(ppl_rl_pipeline p)
{
    return p == PPL_RL_SYNC ? "sync" : "one-step-async";
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

bool ppl_rl_rollout_of(const ppl_eval_ctx *ctx, const ppl_rl_workload *w, int64_t gpus,
                       const ppl_serve_layout *engine, ppl_rl_rollout *out)
{
    memset(out, 0, sizeof *out);
    const int64_t sequences = w->prompts * w->samples;
    out->engine = *engine;
    out->replicas = gpus / ppl_serve_replica_gpus(engine);
    /* a replica's share of the sequences, and an attention group's of that */
    const int64_t share =
        ceil_div(ceil_div(sequences, out->replicas), ppl_serve_attention_groups(engine));
    out->batch = engine->batch < share ? engine->batch : share;
    ppl_serve_layout at = *engine;
    at.batch = out->batch;
    const ppl_serve_workload mean = {w->input_tokens, w->output_tokens};
    ppl_serve_cost(ctx, &at, &mean, &out->cost);
    if (!out->cost.fits)
        return false;
    const int64_t prompts = ceil_div(share, w->samples);
    const double steps = ceil((double)share * (double)w->output_tokens / (double)out->batch);
    /* the prompts prefilled in chunks, as serve's engine takes queued prompts
     * (serve.h prefill_share_s) */
    out->work_s = (double)prompts * out->cost.prefill_share_s + steps * out->cost.decode_step_s;
    ppl_serve_layout one = *engine;
    one.batch = 1;
    const ppl_serve_workload longest = {w->input_tokens, w->output_max};
    ppl_serve_estimate tail;
    ppl_serve_cost(ctx, &one, &longest, &tail);
    out->tail_s = tail.prefill_s + (double)w->output_max * tail.decode_step_s;
    out->time_s = fmax(out->work_s, out->tail_s);
    return true;
}

bool ppl_rl_rollout_best(const ppl_eval_ctx *ctx, const ppl_rl_workload *w, int64_t gpus,
                         int64_t tp_pin, double reserved_bytes, ppl_rl_rollout *out)
{
    const int64_t domain = ppl_topology_server_domain(ctx->topo);
    bool found = false;
    /* the powers of two within one server, each alone or with a MoE's experts
     * spread (serve's shapes, no stages), or the size pinned alone (whole servers
     * for one beyond) */
    const int64_t first = tp_pin > 0 ? tp_pin : 1, last = tp_pin > 0 ? tp_pin : domain;
    ppl_serve_shape shapes[PPL_SERVE_SHAPES];
    for (int64_t tp = first; tp <= last && tp <= gpus; tp *= 2) {
        const size_t n = tp_pin > 0
                             ? (ctx->model->heads % tp == 0)
                             : ppl_serve_shapes(ctx->model, ctx->topo, tp, gpus, false, shapes);
        if (tp_pin > 0)
            shapes[0] = (ppl_serve_shape){.pp = 1, .ep = 0};
        for (size_t i = 0; i < n; i++) {
            const ppl_serve_layout shape = {.tp = tp, .ep = shapes[i].ep};
            if (gpus % ppl_serve_replica_gpus(&shape) != 0)
                continue;
            for (int64_t batch = 1; batch <= RL_MAX_BATCH; batch *= 2) {
                ppl_serve_layout e = {.tp = tp,
                                      .ep = shapes[i].ep,
                                      .batch = batch,
                                      .precision = w->precision,
                                      .reserved_bytes = reserved_bytes};
                ppl_rl_rollout r;
                if (!ppl_rl_rollout_of(ctx, w, gpus, &e, &r))
                    break; /* a larger batch holds more cache */
                if (!found || r.time_s < out->time_s)
                    *out = r, found = true;
                if (r.batch < batch)
                    break; /* every group's share decoded at once already */
            }
        }
    }
    return found;
}

/* An all-gather of `bytes` (the whole gathered buffer) over n ranks spaced
 * `stride` GPUs apart from GPU `base`. */
static double all_gather_s(const ppl_eval_ctx *ctx, int64_t n, int64_t stride, int64_t base,
                           double bytes)
{
    ppl_group g;
    ppl_group_place(&ctx->net, n, stride, base, &g);
    return ppl_collective_count(&ctx->net, PPL_OP_ALLGATHER, &g, bytes, 1.0, NULL);
}

void ppl_rl_sync(const ppl_eval_ctx *ctx, const ppl_rl_plan *p, double *bytes, double *seconds)
{
    /* the weights as the trainer holds them and sends them: 16-bit (an fp8
     * engine casts what it receives) */
    const double weights = ctx->figures.params_total * 2.0;
    const ppl_config *c = &p->train.config;
    /* every engine GPU then writes its shard (16-bit) into the engine's buffers
     * (read and written once at the streaming share of HBM) */
    const double held =
        p->rollout.cost.weight_bytes * 2.0 / ppl_serve_value_bytes(p->rollout.engine.precision);
    const double load_s = 2.0 * held / (ctx->topo->gpu.hbm_bandwidth_bps * ctx->eff.hbm);
    if (p->placement == PPL_RL_DISAGGREGATED) {
        /* the sender (the trainer's last GPU) and the rollout GPUs after it */
        *bytes = (double)p->rollout_gpus * weights;
        *seconds = all_gather_s(ctx, p->rollout_gpus + 1, 1, p->train_gpus - 1, weights) + load_s;
        return;
    }
    /* colocated: a GPU holds 1/(tp pp) of the weights (and 1/shard of that under
     * ZeRO-3): gathered over the sharding group (data-parallel ranks, tp x cp
     * apart), then over the stages (gpus / pp apart), then over tp (adjacent) */
    const int64_t shard = c->zero >= 3 ? (c->shard_group > 0 ? c->shard_group : c->dp) : 1;
    const int64_t holders = c->tp * c->pp * shard;
    *bytes = (double)p->rollout_gpus * weights * (1.0 - 1.0 / (double)holders);
    *seconds = all_gather_s(ctx, shard, c->tp * c->cp, 0, weights / (double)(c->tp * c->pp)) +
               all_gather_s(ctx, c->pp, c->gpus / c->pp, 0, weights / (double)c->tp) +
               all_gather_s(ctx, c->tp, 1, 0, weights) + load_s;
}

/* The trainer's model states on its worst stage, per GPU: what a colocated
 * engine shares the GPU with unless they go to the host. */
static double train_states_bytes(const ppl_estimate *e)
{
    return e->memory.weights + e->memory.gradients + e->memory.optimizer;
}

/* The update's forward-only passes: each over every microbatch of one update
 * through the pipeline (m microbatches and the fill of pp - 1 stages, vp chunks
 * each), at the slowest stage's forward. */
static double forward_only_s(const ppl_estimate *e)
{
    const ppl_config *c = &e->config;
    return ((double)c->microbatches + (double)(c->pp - 1) / (double)c->vp) * e->passes.f_s;
}

static void finish(const ppl_eval_ctx *ctx, const ppl_rl_workload *w, ppl_rl_plan *p)
{
    const double updates = (double)w->updates;
    p->forward_s = (double)w->forward_passes * updates * forward_only_s(&p->train);
    p->train_s = updates * p->train.step_time_s + p->forward_s;
    p->reward_s = w->reward_s;
    ppl_rl_sync(ctx, p, &p->sync_bytes, &p->sync_s);
    const double rollout = p->rollout.time_s + p->reward_s;
    p->step_s = p->pipeline == PPL_RL_ASYNC ? fmax(rollout, p->train_s) + p->sync_s
                                            : rollout + p->train_s + p->sync_s + p->offload_s;
    /* the GPUs the step holds: colocated, the same ones roll out and train */
    const double all = (double)(p->placement == PPL_RL_COLOCATED ? p->rollout_gpus
                                                                 : p->rollout_gpus + p->train_gpus);
    const double busy =
        (double)p->rollout_gpus * p->rollout.work_s + (double)p->train_gpus * p->train_s;
    p->idle_share = 1.0 - busy / (all * p->step_s);
    if (p->idle_share < 0.0)
        p->idle_share = 0.0;
}

static int by_step(const void *a, const void *b)
{
    const ppl_rl_plan *x = a, *y = b;
    if (x->step_s != y->step_s)
        return x->step_s < y->step_s ? -1 : 1;
    if (x->placement != y->placement)
        return x->placement < y->placement ? -1 : 1;
    if (x->pipeline != y->pipeline)
        return x->pipeline < y->pipeline ? -1 : 1;
    return x->rollout_gpus < y->rollout_gpus ? -1 : x->rollout_gpus > y->rollout_gpus;
}

/* The best training plan of one update on `gpus` GPUs (tctx: the model at the
 * packed sequence length). */
static ppl_status train_best(const ppl_eval_ctx *tctx, const ppl_rl_opts *o, int64_t gpus,
                             ppl_estimate *best, ppl_search_totals *acc, ppl_error *err)
{
    ppl_pins pins;
    if (o->search.pins)
        pins = *o->search.pins;
    else
        ppl_pins_init(&pins);
    pins.gpus = gpus;
    pins.global_batch = o->workload.prompts * o->workload.samples / o->workload.updates;
    return ppl_best_plan(tctx, &pins, &o->search, best, acc, err);
}

/* The engine's GPU counts of the splits weighed, into counts (at most
 * RL_SPLITS - 1 of them): opts->rollout_gpus alone when pinned, else k/16 of the
 * servers for k = 1..15, at least one each side, each count once. */
static int split_counts(const ppl_rl_opts *o, const ppl_topology *t, int64_t *counts)
{
    if (o->rollout_gpus > 0) {
        counts[0] = o->rollout_gpus;
        return 1;
    }
    const int64_t servers = o->gpus / t->gpus_per_server;
    int n = 0;
    for (int k = 1; k < RL_SPLITS && servers >= 2; k++) {
        int64_t r = (int64_t)llround((double)servers * k / RL_SPLITS);
        r = r < 1 ? 1 : r >= servers ? servers - 1 : r;
        if (n == 0 || counts[n - 1] != r * t->gpus_per_server)
            counts[n++] = r * t->gpus_per_server;
    }
    return n;
}

ppl_status ppl_rl_search(const ppl_eval_ctx *ctx, const ppl_rl_opts *o, ppl_rl_result *out,
                         ppl_error *err)
{
    memset(out, 0, sizeof *out);
    const ppl_rl_workload *w = &o->workload;
    const ppl_topology *t = ctx->topo;
    /* the trainer's sequences: prompt and mean response, packed, and padded to a
     * multiple of RL_PAD_TOKENS, as trainers pad a packed sequence so that context
     * parallelism's 2 x cp chunks and sequence parallelism's tp shards divide it */
    ppl_model tm = *ctx->model;
    tm.seq_len =
        (w->input_tokens + w->output_tokens + RL_PAD_TOKENS - 1) / RL_PAD_TOKENS * RL_PAD_TOKENS;
    ppl_eval_ctx tctx = *ctx;
    tctx.model = &tm;
    ppl_model_derive(&tm, &tctx.figures);

    out->plans = calloc(1 + 2 * RL_SPLITS, sizeof *out->plans);
    if (!out->plans)
        return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
    ppl_status st;
    bool trained = false, rolled = false, tried = false; /* tried: a rollout costed */

    /* colocated: every GPU both; the trainer's states kept beside the engine,
     * or moved to the host and back, whichever is faster */
    ppl_rl_plan p = {.placement = PPL_RL_COLOCATED,
                     .pipeline = PPL_RL_SYNC,
                     .rollout_gpus = o->gpus,
                     .train_gpus = o->gpus};
    st = !o->one_placement || o->placement == PPL_RL_COLOCATED
             ? train_best(&tctx, o, o->gpus, &p.train, &out->search, err)
             : PPL_INFEASIBLE;
    if (st != PPL_OK && st != PPL_INFEASIBLE)
        return ppl_rl_result_free(out), st;
    if (st == PPL_OK) {
        trained = true;
        ppl_host_figures host;
        ppl_gpu_host(&t->gpu, &host);
        const double states = train_states_bytes(&p.train);
        ppl_rl_plan kept = p, moved = p;
        tried = true;
        bool k = ppl_rl_rollout_best(ctx, w, o->gpus, o->engine_tp, states, &kept.rollout);
        bool m = ppl_rl_rollout_best(ctx, w, o->gpus, o->engine_tp, 0.0, &moved.rollout);
        if (k)
            finish(ctx, w, &kept);
        if (m) {
            moved.offload_s = 2.0 * states / host.link_bps;
            finish(ctx, w, &moved);
        }
        if (k || m) {
            rolled = true;
            out->plans[out->count++] = k && (!m || kept.step_s <= moved.step_s) ? kept : moved;
        }
    }

    /* disaggregated: whole servers each side, k/16 of them to the engine, or
     * the split pinned */
    int64_t counts[RL_SPLITS];
    const int nsplits =
        o->one_placement && o->placement == PPL_RL_COLOCATED ? 0 : split_counts(o, t, counts);
    for (int k = 0; k < nsplits; k++) {
        out->splits++;
        ppl_rl_plan d = {.placement = PPL_RL_DISAGGREGATED,
                         .pipeline = PPL_RL_SYNC,
                         .rollout_gpus = counts[k],
                         .train_gpus = o->gpus - counts[k]};
        tried = true;
        if (!ppl_rl_rollout_best(ctx, w, d.rollout_gpus, o->engine_tp, 0.0, &d.rollout))
            continue;
        rolled = true;
        st = train_best(&tctx, o, d.train_gpus, &d.train, &out->search, err);
        if (st == PPL_INFEASIBLE)
            continue;
        if (st != PPL_OK)
            return ppl_rl_result_free(out), st;
        trained = true;
        finish(ctx, w, &d);
        out->plans[out->count++] = d;
        if (o->off_policy) {
            d.pipeline = PPL_RL_ASYNC;
            finish(ctx, w, &d);
            out->plans[out->count++] = d;
        }
    }
    if (out->count == 0) {
        ppl_rl_result_free(out);
        if (tried && !rolled) {
            const int64_t domain = ppl_topology_server_domain(t);
            char why[512];
            ppl_serve_unfit(ctx, w->precision, domain < o->gpus ? domain : o->gpus, false, why,
                            sizeof why);
            return ppl_error_set(err, PPL_INFEASIBLE, "", "", "%s%s", why,
                                 o->engine_tp > 0 ? ""
                                                  : "; --engine-tp 16 or more (whole servers) "
                                                    "runs the engine's tensor parallelism "
                                                    "across servers");
        }
        return ppl_error_set(err, PPL_INFEASIBLE, "", "",
                             trained ? "no placement runs both the rollout and the update"
                                     : "no training configuration of %lld sequences of %lld "
                                       "tokens fits on these GPUs",
                             (long long)(w->prompts * w->samples / w->updates),
                             (long long)tm.seq_len);
    }
    qsort(out->plans, out->count, sizeof *out->plans, by_step);
    return PPL_OK;
}

void ppl_rl_result_free(ppl_rl_result *r)
{
    free(r->plans);
    r->plans = NULL;
    r->count = 0;
}
