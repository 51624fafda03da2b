/*
 * estimate.c - one configuration's step from its pieces (see cost/estimate.h).
 *
 * The step is assembled in turn: each class of stages (its memory, its time per
 * microbatch, its passes, the data-parallel reduction after its last backward and
 * its optimizer step), then the pipeline over the slowest stage, then, for a full
 * estimate, the slowest stage's traffic, the rates and the bottleneck.  A class
 * may run on a pool of a mixed cluster (ppl_stage_class env): it is then costed
 * under that pool's context, layout and pieces, and the rest is the same.
 */
#include "cost/estimate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/minmax.h"
#include "cost/executor.h"
#include "cost/offload.h"
#include "cost/shard.h"

static const char *level_name(const ppl_eval_ctx *ctx, const ppl_group *g)
{
    return g->tier < 0 ? "nvlink" : ctx->topo->tiers[g->tier].name;
}

/* What the classes add up to, and the slowest one. */
typedef struct walk {
    ppl_stage_time worst;
    const ppl_stage_env *worst_env;
    int64_t worst_k;
    double slack, dp_exposed, dp_total, opt_time;
    double worst_params, worst_expert, worst_layers, worst_moe, worst_low, worst_low_expert;
    ppl_passes sum_passes, worst_passes;
    ppl_pipe_span *span; /* each class's stages, passes and sends (cl->n entries) */
} walk;

/* The data-parallel reduction after class k's last backward: the class's first
 * stage has the least slack (the stages before it still draining the pipeline).
 * ZeRO-3: only the replicas' all-reduce (0 without them). */
static void class_reduction(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_stage_class *k,
                            const ppl_stage_time *st, walk *w)
{
    const ppl_stack_opts *so = &ctx->stack;
    int kind = ppl_dp_kind(ctx, c);
    double reduce = k->dp_reduce[kind], gather = k->dp_gather[kind];
    /* the reduction starts under this stage's last backward (stacks that overlap
     * it; interleaved, the last group's backward of its chunks: ppl_stack_dp_passes),
     * goes on while earlier stages drain the pipeline, and what is left shows; only
     * the part under its own compute slows it */
    const double passes = ppl_stack_dp_passes(c);
    const double hide = so->dp_overlap * passes * st->backward;
    double own = reduce < hide ? reduce : hide;
    double exposed = ppl_pos(reduce - own - w->slack);
    if (so->dp_overlap > 0.0 && exposed < k->dp_last[kind])
        exposed = k->dp_last[kind];
    double gather_exposed = ppl_pos(gather - so->dp_overlap * passes * st->forward);
    exposed += gather_exposed + so->overlap_cost * (own + gather - gather_exposed);
    if (exposed > w->dp_exposed)
        w->dp_exposed = exposed;
    if (reduce + gather > w->dp_total)
        w->dp_total = reduce + gather;
}

/* Class i's memory (its first stage, its heaviest), kept in *shown when it is the
 * first, the largest so far, or the first that does not fit. */
static void class_memory(const ppl_stage_env *e, const ppl_config *c, const ppl_stage_class *k,
                         size_t i, ppl_memory *mem, ppl_memory *shown)
{
    const ppl_eval_ctx *ctx = e->ctx;
    ppl_memory_at(c, &ctx->memory, &e->micro->mem, ctx->topo->gpu.memory_bytes, k->first_stage,
                  k->layers, k->moe_layers, mem);
    if (mem->host > 0.0 && mem->host > ppl_gpu_host_capacity_bytes(&ctx->topo->gpu))
        mem->fits = false; /* the offloaded state overflows the GPU's share of the host */
    if (i == 0 || mem->total > shown->total || (!mem->fits && shown->fits))
        *shown = *mem;
}

bool ppl_estimate_memory(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *l,
                         const ppl_micro *mi, const ppl_classes *cl, ppl_memory *shown)
{
    const ppl_stage_env own = {ctx, l, mi};
    ppl_memory mem;
    memset(shown, 0, sizeof *shown);
    for (size_t i = 0; i < cl->n; i++) {
        const ppl_stage_class *k = &cl->items[i];
        class_memory(k->env ? k->env : &own, c, k, i, &mem, shown);
    }
    return shown->fits;
}

bool ppl_estimate_fits(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *l,
                       const ppl_micro *mi, const ppl_classes *cl)
{
    /* ppl_estimate_memory's fits, which the first class over the memory decides */
    const ppl_stage_env own = {ctx, l, mi};
    ppl_memory mem, shown;
    for (size_t i = 0; i < cl->n; i++) {
        const ppl_stage_class *k = &cl->items[i];
        class_memory(k->env ? k->env : &own, c, k, i, &mem, &shown);
        if (!mem.fits)
            return false;
    }
    return cl->n > 0;
}

double ppl_estimate_dp_floor_s(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *l,
                               const ppl_micro *mi, ppl_classes *cl, double pipe_floor_s,
                               double decides_s)
{
    if (cl->n < 1 || (c->pp > 1 && !ppl_schedule_is_line(c->schedule)) || !(pipe_floor_s > 0.0) ||
        c->microbatches < 1)
        return pipe_floor_s;
    ppl_stage_class *k = &cl->items[0];
    const ppl_stage_env own = {ctx, l, mi}, *e = k->env ? k->env : &own;
    if (!ppl_class_dp_kept(e->ctx, c, k)) {
        ppl_memory mem;
        ppl_memory_at(c, &e->ctx->memory, &e->micro->mem, e->ctx->topo->gpu.memory_bytes,
                      k->first_stage, k->layers, k->moe_layers, &mem);
        /* what does not fit is not timed (walk_classes), nor its times worked out
         * here; where they are kept already (the search's ppl_stage_dp_cache),
         * the floor holds all the same: what does not fit cannot rank, nor can its
         * optimizer's offload, whose floor is this one */
        if (!mem.fits)
            return pipe_floor_s;
        ppl_class_dp(e->ctx, c, e->layout, k, &mem);
    }
    const int kind = ppl_dp_kind(e->ctx, c);
    const double reduce = k->dp_reduce[kind], gather = k->dp_gather[kind];
    const double oc = e->ctx->stack.overlap_cost;
    const double h =
        ppl_min(1.0, e->ctx->stack.dp_overlap * ppl_stack_dp_passes(c) / (double)c->microbatches);
    double with =
        ppl_max(pipe_floor_s + oc * reduce, pipe_floor_s * (1.0 - (1.0 - oc) * h) + reduce) +
        oc * gather;
    /* the class's own exposure, as the estimate's walk works it out for its first
     * class (no slack): its stage's backward, not pipe / m, bounds what hides.  It
     * is at most (1 + oc) reduce + gather (class_reduction: the last bucket, at
     * most the reduction, beside what hid), so it is worked out only where it can
     * take the floor past decides_s (NAN: always) */
    const bool decides =
        isnan(decides_s) ||
        (with <= decides_s && pipe_floor_s + (1.0 + oc) * reduce + gather > decides_s);
    if (reduce + gather > 0.0 && decides) {
        ppl_stage_time st;
        ppl_stage_eval(e->ctx, c, e->micro, k, &st);
        walk w;
        memset(&w, 0, sizeof w);
        class_reduction(e->ctx, c, k, &st, &w);
        with = ppl_max(with, pipe_floor_s + w.dp_exposed);
    }
    return with > pipe_floor_s ? with : pipe_floor_s;
}

int64_t ppl_fewest_recomputed(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *l,
                              const ppl_micro *mi, const ppl_classes *cl)
{
    int64_t most = 0;
    for (size_t i = 0; i < cl->n; i++)
        if (cl->items[i].layers > most)
            most = cl->items[i].layers;
    ppl_config fewer = *c;
    int64_t lo = 0, hi = most / c->vp; /* whole chunks: hi fits (all), lo = none */
    while (hi - lo > 1) {
        int64_t mid = (lo + hi) / 2;
        fewer.recompute_layers = mid * c->vp;
        if (ppl_estimate_fits(ctx, &fewer, l, mi, cl))
            hi = mid;
        else
            lo = mid;
    }
    return hi * c->vp >= most ? 0 : hi * c->vp;
}

/* Every class in turn; false when the caller only asks whether the configuration
 * fits and it does not. */
static bool walk_classes(const ppl_stage_env *own, const ppl_config *c, ppl_classes *cl, bool full,
                         ppl_estimate *out, walk *w)
{
    ppl_stage_time st;
    ppl_passes passes;
    for (size_t i = 0; i < cl->n; i++) {
        ppl_stage_class *k = &cl->items[i];
        const ppl_stage_env *e = k->env ? k->env : own;
        const ppl_eval_ctx *ctx = e->ctx;
        ppl_memory mem;
        class_memory(e, c, k, i, &mem, &out->memory);
        if (!full && !out->memory.fits)
            continue; /* the caller only asks whether it fits; the rest is wasted */
        ppl_class_dp(ctx, c, e->layout, k, &mem);
        ppl_stage_eval(ctx, c, e->micro, k, &st);
        ppl_stage_passes_of(ctx, c, e->micro, &st, &passes);

        /* the part of a send the stack overlaps still delays the stage that waits
         * for it: the passes hold the rest (stage.c) */
        ppl_pipe_span *sp = &w->span[i];
        sp->first_stage = k->first_stage;
        sp->count = k->count;
        sp->passes = passes;
        const double pp_overlap = ppl_stack_pp_overlap(&ctx->stack, c);
        sp->hop_s = pp_overlap * e->micro->pp_one;
        sp->last_hop_s = k->first_stage + k->count >= c->pp ? 0.0
                         : k->cross_sends > 0 && i + 1 < cl->n
                             ? pp_overlap * ppl_max(k->cross_send_s, e->micro->pp_one)
                             : sp->hop_s;
        if (full && i < PPL_PASS_CLASSES) {
            out->stage_passes[i] = *sp;
            out->n_stage_passes = (int)i + 1;
        }
        w->sum_passes.f_s += (double)k->count * passes.f_s;
        w->sum_passes.b_s += (double)k->count * passes.b_s;
        w->sum_passes.w_s += (double)k->count * passes.w_s;
        w->sum_passes.fb_s += (double)k->count * passes.fb_s;
        if (st.total > w->worst.total) {
            w->worst = st;
            w->worst_env = e;
            w->worst_passes = passes;
            w->worst_k = k->first_stage;
            w->worst_params = mem.params;
            w->worst_expert = mem.params_expert;
            w->worst_low = mem.params_low;
            w->worst_low_expert = mem.params_low_expert;
            w->worst_layers = (double)k->layers;
            w->worst_moe = (double)k->moe_layers;
        }
        class_reduction(ctx, c, k, &st, w);
        /* the schedules that split the backward end every stage with the deferred W
         * passes (Qi et al. ICLR 2024 §2.1: "the delayed W passes fill the bubbles"
         * of the tail; dualpipe.py step 8: nW): no stage drains while another
         * reduces */
        if (!ppl_schedule_of(c->schedule)->splits_backward)
            w->slack += (double)k->count * st.backward;
        double dense = mem.params - mem.params_expert;
        double opt = ppl_optimizer_step_time(
            ctx, c,
            dense / (c->zero >= 1 ? ppl_shard_dense_ways(c) : 1.0) +
                mem.params_expert / (c->zero >= 1 ? ppl_shard_expert_ways(c) : 1.0));
        if (opt > w->opt_time)
            w->opt_time = opt;
    }
    return out->memory.fits || full;
}

/* The traffic of the slowest stage's GPU over the step. */
static void slowest_traffic(const ppl_stage_env *e, const ppl_config *c, const walk *w,
                            ppl_traffic *tr)
{
    const ppl_eval_ctx *ctx = e->ctx;
    const ppl_layout *l = e->layout;
    const ppl_micro *mi = e->micro;
    const ppl_model *m = ctx->model;
    const double mb = (double)c->microbatches;
    memset(tr, 0, sizeof *tr);
    const double f = ppl_recomputed_share(c, (int64_t)w->worst_layers);
    const double per_layer =
        mi->tp_count - (c->recompute == PPL_RECOMPUTE_FULL ? 2.0 * (1.0 - f) : 0.0);
    if (c->tp > 1) {
        double n = mb * (w->worst_layers - 0.5 * w->worst_moe) * per_layer;
        if (c->sequence_parallel) {
            ppl_collective_count(&ctx->net, PPL_OP_REDUCESCATTER, &l->g_tp, mi->act, n, tr);
            ppl_collective_count(&ctx->net, PPL_OP_ALLGATHER, &l->g_tp, mi->tp_gather, n, tr);
        } else {
            ppl_collective_count(&ctx->net, PPL_OP_ALLREDUCE, &l->g_tp, mi->act, n, tr);
        }
    }
    if (mi->etp_one > 0.0) { /* the dispatcher's gathers over the etp group */
        double gathered =
            mi->act * (double)m->moe.top_k * (double)ppl_config_etp(c) / (double)c->tp;
        ppl_collective_count(&ctx->net, PPL_OP_ALLGATHER, &l->g_etp, gathered,
                             mb * w->worst_moe * 0.5 * per_layer, tr);
        ppl_collective_count(&ctx->net, PPL_OP_REDUCESCATTER, &l->g_etp, gathered,
                             mb * w->worst_moe * 0.5 * per_layer, tr);
    }
    if (c->pp > 1)
        ppl_collective_count(&ctx->net, PPL_OP_SENDRECV, &l->g_pp,
                             c->tp > 1 ? mi->act / (double)c->tp : mi->act,
                             mb * 2.0 * (double)c->vp, tr);
    if (c->cp > 1)
        ppl_cp_traffic(ctx, c, l, mb * w->worst_layers, tr);
    double r, g, lb; /* ZeRO-3: the replicas' all-reduce only */
    const double dense = w->worst_params - w->worst_expert;
    const double gb_dense = ppl_gather_bytes(ctx, c, dense, w->worst_low - w->worst_low_expert),
                 gb_expert = ppl_gather_bytes(ctx, c, w->worst_expert, w->worst_low_expert);
    ppl_dp_times(ctx, c, &l->g_shard, &l->g_replicas, dense, gb_dense, &r, &g, &lb, tr);
    ppl_dp_times(ctx, c, &l->g_eshard, &l->g_ereplicas, w->worst_expert, gb_expert, &r, &g, &lb,
                 tr);
    if (c->zero >= 3 && l->g_shard.n > 1 && w->worst_layers > 0) {
        double layer_params = dense / w->worst_layers;
        ppl_collective_count(&ctx->net, PPL_OP_ALLGATHER, &l->g_shard, layer_params * gb_dense,
                             2.0 * mb * w->worst_layers, tr);
        ppl_collective_count(&ctx->net, PPL_OP_REDUCESCATTER, &l->g_shard,
                             layer_params * ppl_dp_grad_bytes(ctx, c), mb * w->worst_layers, tr);
        if (w->worst_moe > 0 && l->g_eshard.n > 1) { /* a MoE layer's experts: over edp */
            double expert = w->worst_expert / w->worst_moe;
            ppl_collective_count(&ctx->net, PPL_OP_ALLGATHER, &l->g_eshard, expert * gb_expert,
                                 2.0 * mb * w->worst_moe, tr);
            ppl_collective_count(&ctx->net, PPL_OP_REDUCESCATTER, &l->g_eshard,
                                 expert * ppl_dp_grad_bytes(ctx, c), mb * w->worst_moe, tr);
        }
    }
}

/* Model and hardware FLOP rates and MFU: model FLOPs over the step times the dense
 * peak of the GPUs that run it (each pool's own on a mixed cluster) at the GEMMs'
 * precision, and at bf16 (PaLM, Chowdhery et al. 2022, App. B: MFU is model FLOPs
 * over the peak; the peak is the one the matrix units run at). */
static void rates(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_classes *cl,
                  ppl_estimate *out)
{
    const ppl_model *m = ctx->model;
    const double tokens_step = (double)c->global_batch * (double)m->seq_len;
    double model_flops = tokens_step * ctx->figures.flops_training_per_token;
    double extra = 0.0;
    if (c->recompute == PPL_RECOMPUTE_FULL)
        extra =
            (ctx->figures.flops_full_recompute_per_token - ctx->figures.flops_training_per_token) *
            ppl_recomputed_share(c, (m->layers + c->pp - 1) / c->pp);
    else if (c->recompute == PPL_RECOMPUTE_SELECTIVE)
        extra = 4.0 * (double)m->seq_len * (double)m->hidden * (double)m->layers;
    out->model_tflops_per_gpu = model_flops / out->step_time_s / (double)c->gpus / 1e12;
    out->hardware_tflops_per_gpu =
        (model_flops + tokens_step * extra) / out->step_time_s / (double)c->gpus / 1e12;
    const double per_stage = (double)(c->tp * c->cp * c->dp);
    double peak = 0.0, peak16 = 0.0;
    for (size_t i = 0; i < cl->n; i++) { /* each stage's GPUs at their own pool's peak */
        const ppl_gpu *g = &(cl->items[i].env ? cl->items[i].env->ctx : ctx)->topo->gpu;
        out->mfu_precision = ppl_gpu_gemm_precision(g, c->precision);
        peak += (double)cl->items[i].count * per_stage * g->flops[out->mfu_precision];
        peak16 += (double)cl->items[i].count * per_stage * g->flops[PPL_PRECISION_BF16];
    }
    out->mfu = model_flops / out->step_time_s / peak;
    out->mfu_bf16 = model_flops / out->step_time_s / peak16;
    /* no step beats the model's FLOPs at the GEMMs' peak */
    out->floor_s = ppl_max(out->pipeline_bound_s, model_flops / peak);
}

/* The largest share of the step names the bottleneck, and the largest exposed
 * communication the level it runs at. */
static void bottleneck(const ppl_stage_env *e, const ppl_config *c, const walk *w,
                       ppl_estimate *out)
{
    const ppl_stack_opts *so = &e->ctx->stack;
    const ppl_layout *l = e->layout;
    const double mb = (double)c->microbatches;
    struct {
        const char *name;
        double value;
        const ppl_group *g;
    } parts[] = {
        {"compute", out->time.compute, NULL},
        {"bubble", out->time.bubble, NULL},
        {"tp_comm", mb * w->worst.tp_exposed, &l->g_tp},
        {"cp_comm", mb * w->worst.cp, &l->g_cp},
        {"ep_comm", mb * w->worst.ep, &l->g_ep},
        {"pp_comm", mb * (1.0 - ppl_stack_pp_overlap(so, c)) * w->worst.pp, &l->g_pp},
        {"dp_comm", w->dp_exposed + (c->zero >= 3 ? mb * w->worst.zero3 : 0.0),
         l->g_replicas.n > 1 ? &l->g_replicas : &l->g_dp},
        {"optimizer", w->opt_time, NULL},
    };
    out->bottleneck = "compute";
    out->bottleneck_level[0] = '\0';
    double best = -1.0, best_comm = -1.0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        if (parts[i].value > best) {
            best = parts[i].value;
            out->bottleneck = parts[i].name;
        }
        if (parts[i].g && parts[i].value > best_comm && parts[i].value > 0.0) {
            best_comm = parts[i].value;
            snprintf(out->bottleneck_level, sizeof out->bottleneck_level, "%s",
                     level_name(e->ctx, parts[i].g));
        }
    }
}

/* The step from the classes, the pipeline run over their stages. */
static bool assemble(const ppl_eval_ctx *ctx, const ppl_stage_env *own, const ppl_config *c,
                     ppl_classes *cl, bool full, ppl_estimate *out, walk *wp)
{
    walk w = *wp;
    const ppl_model *m = ctx->model;
    const ppl_stack_opts *so = &ctx->stack;
    if (!walk_classes(own, c, cl, full, out, &w))
        return false;

    /* the pipeline: run op by op when the estimate is shown (executor.h); the
     * search's first look takes the lower bound, so that only what may rank is run */
    const double mb = (double)c->microbatches;
    double pipe = ppl_pipe_bound_spans_s(c->schedule, c->pp, c->vp, c->microbatches, w.span,
                                         cl->n);
    out->pipeline_bound_s = pipe;
    out->pipeline_peak_in_flight = 0.0;
    /* the stages one by one, for the run (and DualPipe's rank pairs) */
    ppl_passes stage_buf[64];
    double hop_buf[64];
    ppl_passes *stage = NULL;
    double *hop = NULL;
    if (full && c->pp > 1) {
        const bool small = c->pp <= 64;
        stage = small ? stage_buf : malloc((size_t)c->pp * sizeof *stage);
        hop = small ? hop_buf : malloc((size_t)c->pp * sizeof *hop);
        if (!stage || !hop) {
            if (!small)
                free(stage), free(hop);
            stage = NULL, hop = NULL;
            pipe = NAN; /* ppl_estimate_check refuses it: never a figure */
        } else {
            ppl_pipe_spans_expand(w.span, cl->n, c->pp, stage, hop);
        }
    }
    ppl_pipe_in pin = {c->schedule, c->pp, c->vp, c->microbatches, ppl_vp_group(c), stage, hop};
    if (c->pp == 1) { /* one stage: its passes back to back, nothing to run */
        pipe = mb * w.worst.total;
        out->pipeline_peak_in_flight = 1.0;
    } else if (full && stage) {
        ppl_pipe_out po;
        ppl_error err;
        ppl_status rc = ppl_pipe_run(&pin, false, &po, &err);
        if (rc == PPL_OK) {
            pipe = po.time_s;
            out->pipeline_peak_in_flight = po.peak_in_flight;
        } else if (rc == PPL_EUSAGE) {
            /* too long to run op by op (ppl_pipe_run's limit): the closed form
             * (pipeline.h), never below the bound */
            ppl_passes others = {
                w.sum_passes.f_s - w.worst_passes.f_s, w.sum_passes.b_s - w.worst_passes.b_s,
                w.sum_passes.w_s - w.worst_passes.w_s, w.sum_passes.fb_s - w.worst_passes.fb_s};
            pipe = ppl_max(pipe, mb * w.worst.total +
                                     ppl_pipeline_bubble_s(c->schedule, c->pp, c->vp, &others));
        } else {
            pipe = NAN; /* ppl_estimate_check refuses it: never a figure */
        }
        ppl_pipe_out_free(&po);
    }
    /* the critical path's share of the slowest stage: all of it, but under
     * DualPipe, whose rank k runs stage k for half the microbatches and stage
     * p-1-k for the other half, the busiest such pair's mean (DeepSeek-V3 report
     * §3.2.1), so that compute + bubble + exposed communication is the pipeline */
    double share = 1.0;
    if (c->schedule == PPL_SCHEDULE_DUALPIPE && stage && w.worst.total > 0.0) {
        double pair = 0.0;
        for (int64_t k = 0; k < c->pp; k++)
            pair = ppl_max(pair, 0.5 * (stage[k].fb_s + stage[c->pp - 1 - k].fb_s));
        share = ppl_min(1.0, pair / w.worst.total);
    }
    if (stage && stage != stage_buf)
        free(stage), free(hop);
    const double mbs = mb * share;
    if (w.worst.ep_hidden > 0.0)
        out->overlap_assumed =
            "the expert all-to-all hidden under another microbatch's compute (DualPipe's F&B, "
            "--ep-overlap): no calibration run measures it; --conservative costs it exposed";
    else if (ppl_stack_tp_assumed(&ctx->stack, c) && !ctx->stack.conservative)
        out->overlap_assumed =
            "tensor-parallel communication hidden beside Megatron-FSDP before Blackwell, which "
            "Megatron-LM warns runs poorly (it wants CUDA_DEVICE_MAX_CONNECTIONS=1, which FSDP "
            "refuses: arguments.py:1451-1464); --conservative costs it exposed";
    out->slowest_stage = w.worst_k;
    out->passes = w.worst_passes;
    out->time.compute = mbs * w.worst.compute;
    out->time.bubble = ppl_pos(pipe - mbs * w.worst.total);
    out->time.tp_comm = mbs * w.worst.tp;
    out->time.cp_comm = mbs * w.worst.cp;
    out->time.ep_comm = mbs * w.worst.ep;
    out->time.pp_comm = mbs * w.worst.pp;
    out->time.dp_comm = (c->zero >= 3 ? mbs * w.worst.zero3 : 0.0) + w.dp_total;
    out->time.optimizer = w.opt_time;
    out->time.overhead = so->step_overhead_s;
    out->time.exposed_comm = mbs * w.worst.exposed + w.dp_exposed;
    out->time.host = mbs * w.worst.host_wait;
    out->step_time_s = pipe + w.dp_exposed + w.opt_time + so->step_overhead_s;
    const double tokens_step = (double)c->global_batch * (double)m->seq_len;
    out->tokens_per_s = tokens_step / out->step_time_s;
    if (!full)
        return out->memory.fits;

    slowest_traffic(w.worst_env, c, &w, &out->traffic);
    rates(ctx, c, cl, out);
    bottleneck(w.worst_env, c, &w, out);
    return out->memory.fits;
}

bool ppl_estimate_cached(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *l,
                         const ppl_micro *mi, ppl_classes *cl, bool full, ppl_estimate *out)
{
    const ppl_stack_opts *so = &ctx->stack;
    const ppl_stage_env own = {ctx, l, mi};
    out->config = *c;
    out->stack = so->stack;
    out->ep_servers = l->g_ep.nodes > 1 ? l->g_ep.nodes : 1;
    out->n_stage_passes = 0;
    out->floor_s = 0.0;
    out->overlap_assumed = NULL;

    walk w;
    memset(&w, 0, sizeof w);
    w.worst_env = &own;
    ppl_pipe_span span_buf[16];
    const bool small = cl->n <= 16;
    w.span = small ? span_buf : malloc(cl->n * sizeof *w.span);
    if (!w.span) {
        out->step_time_s = NAN;
        return false;
    }
    bool fits = assemble(ctx, &own, c, cl, full, out, &w);
    if (!small)
        free(w.span);
    return fits;
}

void ppl_estimate_config(const ppl_eval_ctx *ctx, const ppl_config *c, ppl_estimate *out)
{
    ppl_layout l;
    ppl_micro mi;
    ppl_classes cl;
    memset(out, 0, sizeof *out);
    ppl_layout_init(ctx, c, &l);
    ppl_micro_comm_init(ctx, c, &l, &mi);
    ppl_micro_compute_init(ctx, c, &mi);
    ppl_classes_init(ctx, c, &cl);
    ppl_estimate_cached(ctx, c, &l, &mi, &cl, true, out);
    ppl_classes_free(&cl);
}

ppl_status ppl_estimate_check(const ppl_estimate *e, ppl_error *err)
{
    const struct {
        const char *name;
        double value;
    } figures[] = {
        {"step_time_s", e->step_time_s},
        {"tokens_per_s", e->tokens_per_s},
        {"model_tflops_per_gpu", e->model_tflops_per_gpu},
        {"hardware_tflops_per_gpu", e->hardware_tflops_per_gpu},
        {"mfu", e->mfu},
        {"mfu_bf16", e->mfu_bf16},
        {"time.compute", e->time.compute},
        {"time.bubble", e->time.bubble},
        {"time.tp_comm", e->time.tp_comm},
        {"time.cp_comm", e->time.cp_comm},
        {"time.pp_comm", e->time.pp_comm},
        {"time.dp_comm", e->time.dp_comm},
        {"time.ep_comm", e->time.ep_comm},
        {"time.optimizer", e->time.optimizer},
        {"time.exposed_comm", e->time.exposed_comm},
        {"time.host", e->time.host},
        {"time.overhead", e->time.overhead},
        {"memory.weights", e->memory.weights},
        {"memory.gradients", e->memory.gradients},
        {"memory.optimizer", e->memory.optimizer},
        {"memory.activations", e->memory.activations},
        {"memory.other", e->memory.other},
        {"memory.total", e->memory.total},
        {"traffic.nvlink", e->traffic.nvlink},
        {"traffic.rail", e->traffic.rail},
        {"traffic.spine", e->traffic.spine},
        {"pipeline.forward_s", e->passes.f_s},
        {"pipeline.backward_input_s", e->passes.b_s},
        {"pipeline.backward_weight_s", e->passes.w_s},
        {"pipeline.overlapped_forward_backward_s", e->passes.fb_s},
    };
    for (size_t i = 0; i < sizeof figures / sizeof *figures; i++)
        if (!isfinite(figures[i].value) || figures[i].value < 0.0)
            return ppl_error_set(err, PPL_EINTERNAL, "", "",
                                 "the cost model gave %s = %g for tp %lld, pp %lld, dp %lld: "
                                 "not shown (a bug: please report it with the inputs)",
                                 figures[i].name, figures[i].value, (long long)e->config.tp,
                                 (long long)e->config.pp, (long long)e->config.dp);
    /* the bounds every step respects (estimate.h floor_s): below one, the model
     * has a bug; a relative slack of 1e-9 for rounding */
    if (e->step_time_s < e->floor_s * (1.0 - 1e-9) || e->mfu > 1.0 + 1e-9)
        return ppl_error_set(err, PPL_EINTERNAL, "", "",
                             "the cost model gave a %.6g s step for tp %lld, pp %lld, dp %lld, "
                             "below its own floor of %.6g s (MFU %.1f%%): not shown (a bug: "
                             "please report it with the inputs)",
                             e->step_time_s, (long long)e->config.tp, (long long)e->config.pp,
                             (long long)e->config.dp, e->floor_s, 100.0 * e->mfu);
    if (e->memory.total < e->memory.weights + e->memory.gradients + e->memory.optimizer -
                              1e-9 * e->memory.total)
        return ppl_error_set(err, PPL_EINTERNAL, "", "",
                             "the cost model gave %.6g bytes a GPU, below its model states: not "
                             "shown (a bug: please report it with the inputs)",
                             e->memory.total);
    return PPL_OK;
}
