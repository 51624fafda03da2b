/*
 * schedule.c - step time of one configuration (see parplan/schedule.h).
 *
 * Communication volumes per microbatch (Narayanan et al. SC'21 §3; Korthikanti et
 * al. 2022 §4.2.2):
 *   TP  per layer 2 all-reduces of b*s*h 16-bit elements forward and 2 backward
 *       (with sequence parallelism a reduce-scatter and an all-gather instead of
 *       each, the same bytes), 2 more with full recomputation;
 *   CP  per layer an all-gather of the sequence's K and V forward, all-gather and
 *       reduce-scatter of their gradients backward (ring attention), overlapped
 *       with the attention core;
 *   EP  per MoE layer an all-to-all to dispatch tokens and one to combine them,
 *       forward and backward;
 *   PP  per stage boundary b*s*h forward and the same backward; with tensor
 *       parallelism each rank sends 1/t of it on its own rail and the receiving
 *       stage all-gathers it over NVLink (scatter-gather, Narayanan §4.1), so the
 *       network carries t times less; interleaving sends v times as many;
 *   DP  per step the stage's gradients (all-reduce; reduce-scatter then a
 *       parameter all-gather with ZeRO-1/2), in buckets; ZeRO-3 gathers each
 *       layer's weights forward and backward and reduce-scatters its gradients
 *       every microbatch: 1.5x the volume of plain data parallelism.
 */
#include "parplan/schedule.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void ppl_stack_opts_init(ppl_stack_opts *o, ppl_stack stack)
{
    memset(o, 0, sizeof *o);
    o->stack = stack;
    /* fp32 main gradients are reduced for bf16 training (Megatron-LM arguments.py
     * forces accumulate_allreduce_grads_in_fp32 with --bf16); fp16 training reduces
     * 16-bit gradients: see grad_bytes() */
    o->grad_reduce_bytes = 4.0;
    /* Megatron-Core DDP buckets of 40M parameters */
    o->bucket_params = 40e6;
    /* fitted by parplan validate --fit on the calibration runs (see compute.c):
     * modern stacks hide TP communication under GEMMs (Transformer Engine's
     * userbuffers overlap) and pipeline sends under compute, and overlap the
     * gradient reduction with about half of the last microbatch's backward;
     * legacy stacks hide nothing of their own */
    o->step_overhead_s = 0.057;
    o->overlap_cost = 0.10;
    if (stack == PPL_STACK_MODERN) {
        o->tp_overlap = 1.0;
        o->dp_overlap = 0.56;
        o->pp_overlap = 1.0;
    }
}

const char *ppl_stack_name(ppl_stack stack)
{
    return stack == PPL_STACK_LEGACY ? "legacy" : "modern";
}

void ppl_eval_ctx_init(ppl_eval_ctx *ctx, const ppl_model *model, const ppl_topology *topo,
                       ppl_stack stack)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->model = model;
    ctx->topo = topo;
    ppl_model_derive(model, &ctx->figures);
    ppl_net_init(&ctx->net, topo);
    ppl_gpu_efficiency_for(topo, &ctx->eff);
    ppl_memory_opts_init(&ctx->memory);
    ppl_stack_opts_init(&ctx->stack, stack);
}

static double pos(double x)
{
    return x > 0.0 ? x : 0.0;
}

/* A collective with NCCL's automatic algorithm; adds its traffic when asked. */
static double coll(const ppl_eval_ctx *ctx, ppl_collective_op op, const ppl_group *g, double bytes,
                   double count, ppl_traffic *traffic)
{
    ppl_coll r;
    if (g->n <= 1 || bytes <= 0.0 || count <= 0.0)
        return 0.0;
    ppl_collective(&ctx->net, op, g, bytes, PPL_ALGO_AUTO, &r);
    if (traffic) {
        traffic->nvlink += count * r.nvlink_bytes;
        traffic->rail += count * r.rail_bytes;
        traffic->spine += count * r.spine_bytes;
    }
    return count * r.time_s;
}

/* Bytes per reduced gradient element: fp16 training reduces fp16 gradients. */
static double grad_bytes(const ppl_eval_ctx *ctx, const ppl_config *c)
{
    return c->precision == PPL_PRECISION_FP16 ? 2.0 : ctx->stack.grad_reduce_bytes;
}

/* Bucketed reduction of `params` gradients (and, with ZeRO-1/2, the parameter
 * all-gather that follows the optimizer step). */
static void dp_times(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_group *g,
                     double params, double *reduce, double *gather, double *last_bucket,
                     ppl_traffic *traffic)
{
    *reduce = *gather = *last_bucket = 0.0;
    if (g->n <= 1 || params <= 0.0)
        return;
    double buckets = ctx->stack.bucket_params > 0 ? ceil(params / ctx->stack.bucket_params) : 1.0;
    double per = params / buckets;
    double gb = grad_bytes(ctx, c);
    if (c->zero == 0) {
        *reduce = coll(ctx, PPL_OP_ALLREDUCE, g, per * gb, buckets, traffic);
    } else if (c->zero <= 2) {
        *reduce = coll(ctx, PPL_OP_REDUCESCATTER, g, per * gb, buckets, traffic);
        *gather = coll(ctx, PPL_OP_ALLGATHER, g, per * ctx->memory.weight_bytes, buckets, traffic);
    }
    *last_bucket = *reduce / buckets;
}

typedef struct stage_time {
    double compute;               /* per microbatch */
    double forward;               /* compute, forward only */
    double backward;              /* compute, backward and recomputation */
    double tp, cp, ep, pp, zero3; /* communication per microbatch */
    double exposed;               /* communication per microbatch not hidden */
    double total;                 /* compute + exposed */
    double params, params_expert;
} stage_time;

typedef struct config_costs {
    ppl_layer_time dense, moe, head; /* per layer (and output layer), per microbatch */
    ppl_group g_tp, g_cp, g_dp, g_ep, g_edp, g_pp, g_tie;
    double act;        /* b*s*h bytes of one microbatch's activations */
    double tp_one;     /* one TP all-reduce (or reduce-scatter + all-gather) */
    double tp_count;   /* TP collectives per layer and microbatch */
    double cp_f, cp_b; /* CP exchange per layer, forward and backward */
    double ep_one;     /* one expert all-to-all */
    double pp_one;     /* one pipeline send of a microbatch */
} config_costs;

/* Everything per layer or per microbatch that is the same on every stage. */
static void config_costs_init(const ppl_eval_ctx *ctx, const ppl_config *c, config_costs *cc)
{
    const ppl_model *m = ctx->model;
    const ppl_topology *t = ctx->topo;
    ppl_layer_time_of(m, t, c, &ctx->eff, false, &cc->dense);
    memset(&cc->moe, 0, sizeof cc->moe);
    if (m->has_moe)
        ppl_layer_time_of(m, t, c, &ctx->eff, true, &cc->moe);
    ppl_output_time_of(m, t, c, &ctx->eff, &cc->head);

    /* groups in Megatron's rank order, TP innermost, then CP, DP (EP inside it), PP */
    const int64_t pp_stride = c->tp * c->cp * c->dp;
    ppl_group_place_worst(&ctx->net, c->tp, 1, 0, c->pp, pp_stride, &cc->g_tp);
    ppl_group_place_worst(&ctx->net, c->cp, c->tp, 0, c->pp, pp_stride, &cc->g_cp);
    ppl_group_place_worst(&ctx->net, c->dp * c->cp, c->tp, 0, c->pp, pp_stride, &cc->g_dp);
    ppl_group_place_worst(&ctx->net, c->ep, c->tp * c->cp, 0, c->pp, pp_stride, &cc->g_ep);
    ppl_group_place_worst(&ctx->net, c->dp * c->cp / c->ep, c->tp * c->ep, 0, c->pp, pp_stride,
                          &cc->g_edp);
    ppl_group_place_worst(&ctx->net, c->pp > 1 ? 2 : 1, pp_stride, 0, c->pp > 1 ? c->pp - 1 : 1,
                          pp_stride, &cc->g_pp);
    ppl_group_place(&ctx->net, c->pp > 1 ? 2 : 1, (c->pp - 1) * pp_stride, 0, &cc->g_tie);

    /* per-microbatch communication of one layer */
    const double tokens = (double)c->mbs * (double)m->seq_len / (double)c->cp;
    cc->act = tokens * (double)m->hidden * 2.0; /* b*s*h 16-bit */
    cc->tp_one = 0.0;
    if (c->tp > 1)
        cc->tp_one = c->sequence_parallel
                         ? coll(ctx, PPL_OP_REDUCESCATTER, &cc->g_tp, cc->act, 1, NULL) +
                               coll(ctx, PPL_OP_ALLGATHER, &cc->g_tp, cc->act, 1, NULL)
                         : coll(ctx, PPL_OP_ALLREDUCE, &cc->g_tp, cc->act, 1, NULL);
    cc->tp_count = c->recompute == PPL_RECOMPUTE_FULL ? 6.0 : 4.0;
    cc->cp_f = cc->cp_b = 0.0;
    if (c->cp > 1) {
        double d = (double)m->hidden / (double)m->heads;
        double kv = (double)m->kv_heads / (double)c->tp;
        double kv_bytes = 2.0 * (double)c->mbs * (double)m->seq_len * d * (kv < 1 ? 1 : kv) * 2.0;
        cc->cp_f = coll(ctx, PPL_OP_ALLGATHER, &cc->g_cp, kv_bytes, 1, NULL);
        cc->cp_b = cc->cp_f + coll(ctx, PPL_OP_REDUCESCATTER, &cc->g_cp, kv_bytes, 1, NULL);
    }
    cc->ep_one = 0.0;
    if (c->ep > 1 && m->has_moe) {
        double dispatched = tokens * (double)m->moe.top_k * (double)m->hidden * 2.0 /
                            (c->sequence_parallel ? (double)c->tp : 1.0);
        cc->ep_one = coll(ctx, PPL_OP_ALLTOALL, &cc->g_ep, dispatched, 1, NULL);
    }
    cc->pp_one = 0.0;
    if (c->pp > 1) {
        double per_rank = c->tp > 1 ? cc->act / (double)c->tp : cc->act;
        cc->pp_one = coll(ctx, PPL_OP_SENDRECV, &cc->g_pp, per_rank, 1, NULL);
        if (c->tp > 1 && !c->sequence_parallel) /* scatter-gather: rebuild over NVLink */
            cc->pp_one += coll(ctx, PPL_OP_ALLGATHER, &cc->g_tp, cc->act, 1, NULL);
    }
}

/* Time of stage k per microbatch: compute and the communication not hidden. */
static void stage_eval(const ppl_eval_ctx *ctx, const ppl_config *c, const config_costs *cc,
                       int64_t k, stage_time *s)
{
    const ppl_model *m = ctx->model;
    const ppl_topology *t = ctx->topo;
    const ppl_stack_opts *so = &ctx->stack;
    int64_t layers, moe_layers;
    ppl_stage_layer_counts(m, c, k, &layers, &moe_layers);
    double nd = (double)(layers - moe_layers), nm = (double)moe_layers;
    bool last = k == c->pp - 1;
    memset(s, 0, sizeof *s);
    s->forward =
        nd * cc->dense.forward_s + nm * cc->moe.forward_s + (last ? cc->head.forward_s : 0.0);
    s->backward =
        nd * cc->dense.backward_s + nm * cc->moe.backward_s + (last ? cc->head.backward_s : 0.0);
    s->compute = s->forward + s->backward;
    s->tp = (double)layers * cc->tp_count * cc->tp_one;
    double attn_f = nd * cc->dense.attention_s + nm * cc->moe.attention_s;
    double attn_b = (c->flash_attention ? 2.5 : 2.0) * attn_f;
    s->cp = (double)layers * (cc->cp_f + cc->cp_b);
    double cp_exposed =
        pos((double)layers * cc->cp_f - attn_f) + pos((double)layers * cc->cp_b - attn_b);
    s->ep = nm * cc->tp_count * cc->ep_one;
    double sends = (double)((k < c->pp - 1) + (k > 0)) * (double)c->vp;
    s->pp = sends * cc->pp_one;

    ppl_memory mem;
    ppl_memory_stage(m, &ctx->figures, t, c, &ctx->memory, k, &mem);
    s->params = mem.params;
    s->params_expert = mem.params_expert;
    /* ZeRO-3: each layer's weights gathered forward and backward, gradients
     * reduce-scattered, every microbatch; prefetching hides what the layer's
     * compute covers */
    if (c->zero >= 3 && cc->g_dp.n > 1 && layers > 0) {
        double layer_params = (s->params - s->params_expert) / (double)layers;
        double ag = coll(ctx, PPL_OP_ALLGATHER, &cc->g_dp, layer_params * ctx->memory.weight_bytes,
                         1, NULL);
        double rs =
            coll(ctx, PPL_OP_REDUCESCATTER, &cc->g_dp, layer_params * grad_bytes(ctx, c), 1, NULL);
        double per_layer_f = s->forward / (double)layers,
               per_layer_b = s->backward / (double)layers;
        s->zero3 = (double)layers * (2.0 * ag + rs);
        double z3_exposed = (double)layers * (pos(ag - per_layer_f) + pos(ag + rs - per_layer_b));
        s->exposed += z3_exposed + so->overlap_cost * (s->zero3 - z3_exposed);
    }
    double hidden = so->tp_overlap * s->tp + so->pp_overlap * s->pp + (s->cp - cp_exposed);
    s->exposed += (1.0 - so->tp_overlap) * s->tp + cp_exposed + s->ep +
                  (1.0 - so->pp_overlap) * s->pp + so->overlap_cost * hidden;
    s->total = s->compute + s->exposed;
}

double ppl_stage_time(const ppl_eval_ctx *ctx, const ppl_config *c, int64_t stage)
{
    config_costs cc;
    stage_time s;
    config_costs_init(ctx, c, &cc);
    stage_eval(ctx, c, &cc, stage, &s);
    return s.total;
}

static const char *level_name(const ppl_eval_ctx *ctx, const ppl_group *g)
{
    return g->tier < 0 ? "nvlink" : ctx->topo->tiers[g->tier].name;
}

void ppl_estimate_config(const ppl_eval_ctx *ctx, const ppl_config *c, ppl_estimate *out)
{
    const ppl_model *m = ctx->model;
    const ppl_topology *t = ctx->topo;
    const ppl_stack_opts *so = &ctx->stack;
    memset(out, 0, sizeof *out);
    out->config = *c;
    ppl_memory_worst(m, &ctx->figures, t, c, &ctx->memory, &out->memory);
    config_costs cc;
    config_costs_init(ctx, c, &cc);

    /* per stage, per microbatch */
    stage_time worst = {0};
    int64_t worst_k = 0;
    double sum_total = 0.0;
    double slack_backward = 0.0; /* backward of the stages before k, last microbatch */
    double dp_exposed = 0.0, dp_total = 0.0, opt_time = 0.0;
    for (int64_t k = 0; k < c->pp; k++) {
        stage_time s;
        stage_eval(ctx, c, &cc, k, &s);
        bool last = k == c->pp - 1;
        sum_total += s.total;
        if (s.total > worst.total) {
            worst = s;
            worst_k = k;
        }

        /* data parallelism after this stage's last backward */
        if (c->zero < 3) {
            double reduce, gather, last_bucket, r2, g2, lb2;
            dp_times(ctx, c, &cc.g_dp, s.params - s.params_expert, &reduce, &gather, &last_bucket,
                     NULL);
            dp_times(ctx, c, &cc.g_edp, s.params_expert, &r2, &g2, &lb2, NULL);
            reduce += r2;
            gather += g2;
            last_bucket = last_bucket > lb2 ? last_bucket : lb2;
            if (c->pp > 1 && m->tied_embeddings && (k == 0 || last)) {
                double tied = (double)m->vocab * (double)m->hidden / (double)c->tp;
                reduce +=
                    coll(ctx, PPL_OP_ALLREDUCE, &cc.g_tie, tied * grad_bytes(ctx, c), 1, NULL);
            }
            /* the reduction starts under this stage's last backward (stacks that
             * overlap it), goes on while earlier stages drain the pipeline, and
             * what is left shows; only the part under its own compute slows it */
            double own =
                reduce < so->dp_overlap * s.backward ? reduce : so->dp_overlap * s.backward;
            double exposed = pos(reduce - own - slack_backward);
            if (so->dp_overlap > 0.0 && exposed < last_bucket)
                exposed = last_bucket;
            double gather_exposed = pos(gather - so->dp_overlap * s.forward);
            exposed += gather_exposed + so->overlap_cost * (own + gather - gather_exposed);
            if (exposed > dp_exposed)
                dp_exposed = exposed;
            if (reduce + gather > dp_total)
                dp_total = reduce + gather;
        }
        slack_backward += s.backward;
        double shard = c->zero >= 1 ? (double)(c->dp * c->cp) : 1.0;
        double opt =
            ppl_optimizer_time((s.params - s.params_expert) / shard +
                                   s.params_expert / (c->zero >= 1 ? shard / (double)c->ep : 1.0),
                               t, &ctx->eff, c->optimizer);
        if (opt > opt_time)
            opt_time = opt;
    }

    /* pipeline: (m-1) x slowest + one pass (1F1B, GPipe); interleaved: 1/v of a pass */
    const double mb = (double)c->microbatches;
    double pass = sum_total - worst.total;
    double pipe = mb * worst.total + (c->vp > 1 ? pass / (double)c->vp : pass);
    out->slowest_stage = worst_k;
    out->time.compute = mb * worst.compute;
    out->time.bubble = pipe - mb * worst.total;
    out->time.tp_comm = mb * worst.tp;
    out->time.cp_comm = mb * worst.cp;
    out->time.ep_comm = mb * worst.ep;
    out->time.pp_comm = mb * worst.pp;
    out->time.dp_comm = c->zero >= 3 ? mb * worst.zero3 : dp_total;
    out->time.optimizer = opt_time;
    out->time.overhead = so->step_overhead_s;
    out->time.exposed_comm = mb * worst.exposed + dp_exposed;
    out->step_time_s = pipe + dp_exposed + opt_time + so->step_overhead_s;

    /* traffic of the slowest stage's GPU over the step */
    ppl_traffic *tr = &out->traffic;
    const double layers_w = (double)ppl_stage_layers(c, worst_k);
    if (c->tp > 1) {
        double n = mb * layers_w * cc.tp_count;
        if (c->sequence_parallel) {
            coll(ctx, PPL_OP_REDUCESCATTER, &cc.g_tp, cc.act, n, tr);
            coll(ctx, PPL_OP_ALLGATHER, &cc.g_tp, cc.act, n, tr);
        } else {
            coll(ctx, PPL_OP_ALLREDUCE, &cc.g_tp, cc.act, n, tr);
        }
    }
    if (c->pp > 1)
        coll(ctx, PPL_OP_SENDRECV, &cc.g_pp, c->tp > 1 ? cc.act / (double)c->tp : cc.act,
             mb * 2.0 * (double)c->vp, tr);
    if (c->zero < 3) {
        double r, g, lb;
        dp_times(ctx, c, &cc.g_dp, worst.params - worst.params_expert, &r, &g, &lb, tr);
    } else if (cc.g_dp.n > 1 && layers_w > 0) {
        double layer_params = (worst.params - worst.params_expert) / layers_w;
        coll(ctx, PPL_OP_ALLGATHER, &cc.g_dp, layer_params * ctx->memory.weight_bytes,
             2.0 * mb * layers_w, tr);
        coll(ctx, PPL_OP_REDUCESCATTER, &cc.g_dp, layer_params * grad_bytes(ctx, c), mb * layers_w,
             tr);
    }

    /* rates */
    const double tokens_step = (double)c->global_batch * (double)m->seq_len;
    double model_flops = tokens_step * ctx->figures.flops_training_per_token;
    double extra = 0.0;
    if (c->recompute == PPL_RECOMPUTE_FULL)
        extra = ctx->figures.flops_full_recompute_per_token - ctx->figures.flops_training_per_token;
    else if (c->recompute == PPL_RECOMPUTE_SELECTIVE)
        extra = 4.0 * (double)m->seq_len * (double)m->hidden * (double)m->layers;
    out->tokens_per_s = tokens_step / out->step_time_s;
    out->model_tflops_per_gpu = model_flops / out->step_time_s / (double)c->gpus / 1e12;
    out->hardware_tflops_per_gpu =
        (model_flops + tokens_step * extra) / out->step_time_s / (double)c->gpus / 1e12;
    out->mfu = out->model_tflops_per_gpu * 1e12 / t->gpu.flops[PPL_PRECISION_BF16];

    /* the largest share of the step names the bottleneck */
    struct {
        const char *name;
        double value;
        const ppl_group *g;
    } parts[] = {
        {"compute", out->time.compute, NULL},
        {"bubble", out->time.bubble, NULL},
        {"tp_comm", mb * (1.0 - so->tp_overlap) * worst.tp, &cc.g_tp},
        {"cp_comm", mb * worst.cp, &cc.g_cp},
        {"ep_comm", mb * worst.ep, &cc.g_ep},
        {"pp_comm", mb * (1.0 - so->pp_overlap) * worst.pp, &cc.g_pp},
        {"dp_comm", dp_exposed + (c->zero >= 3 ? mb * worst.zero3 : 0.0), &cc.g_dp},
        {"optimizer", opt_time, NULL},
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
                     level_name(ctx, parts[i].g));
        }
    }
}
