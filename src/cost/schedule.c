/*
 * schedule.c - step time of one configuration (see parplan/schedule.h).
 *
 * Communication volumes per microbatch (Narayanan et al. SC'21 §3; Korthikanti et
 * al. 2022 §4.2.2):
 *   TP  per layer 2 all-reduces of b*s*h 16-bit elements forward and 2 backward
 *       (with sequence parallelism a reduce-scatter and an all-gather instead of
 *       each, the same bytes), 2 more with full recomputation;
 *   CP  per layer the exchange of its --cp-comm-type (ring, all-to-all,
 *       all-gather or both), costed and overlapped in context.c;
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
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "parplan/offload.h"
#include "parplan/shard.h"

/* Parameter tensors of one transformer layer, each its own collective when a
 * stack gathers per tensor: QKV and output projection, the MLP's matrices (three
 * when gated), their biases, and the two norms' weights (and biases). */
static double tensors_per_layer(const ppl_model *m)
{
    double weights = 2.0 + (m->gated_mlp ? 3.0 : 2.0);
    double biases = m->bias ? weights : 0.0;
    double norms = m->norm == PPL_NORM_LAYERNORM ? 4.0 : 2.0;
    return weights + biases + norms;
}

void ppl_eval_ctx_init(ppl_eval_ctx *ctx, const ppl_model *model, const ppl_topology *topo,
                       ppl_stack stack)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->model = model;
    ctx->topo = topo;
    ppl_model_derive(model, &ctx->figures);
    ppl_net_init(&ctx->net, topo);
    ppl_memory_opts_init(&ctx->memory);
    ppl_eval_ctx_set_constants(ctx, ppl_constants_committed(), stack);
}

void ppl_eval_ctx_set_constants(ppl_eval_ctx *ctx, const ppl_constants *k, ppl_stack stack)
{
    ppl_gpu_efficiency_for(ctx->topo, k, &ctx->eff);
    /* fp8 GEMMs by kernel generation: 2025+ stacks run them closer to peak (the
     * NeMo 24.07 and Megatron-Bridge 25-26 runs of the same models disagree by
     * about a fifth otherwise) */
    if (stack == PPL_STACK_NEMO_2025 && ctx->eff.gemm_fp8 > 0)
        ctx->eff.gemm_fp8 = k->h100_gemm_fp8_2025;
    ctx->memory.half_grads = ppl_stack_half_grads(stack);
    ppl_stack_opts_init(&ctx->stack, stack, k);
}

static double pos(double x)
{
    return x > 0.0 ? x : 0.0;
}

double ppl_eval_coll(const ppl_eval_ctx *ctx, ppl_collective_op op, const ppl_group *g,
                     double bytes, double count, ppl_traffic *traffic)
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

/* Bytes per reduced gradient element: those the memory model keeps (fp32 main
 * gradients for bf16 and fp8, fp16 ones for fp16 training). */
static double grad_bytes(const ppl_eval_ctx *ctx, const ppl_config *c)
{
    return ppl_grad_bytes(&ctx->memory, c->precision);
}

/* Bucketed reduction of `params` gradients over the sharding group g (and, with
 * ZeRO-1/2, the parameter all-gather that follows the optimizer step); with
 * replicas of the shards (rep, shard.h), each shard's all-reduce across them; with
 * ZeRO-3 only that (its gathers and reductions are per layer, class_dp). */
static void dp_times(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_group *g,
                     const ppl_group *rep, double params, double *reduce, double *gather,
                     double *last_bucket, ppl_traffic *traffic)
{
    *reduce = *gather = *last_bucket = 0.0;
    if ((g->n <= 1 && rep->n <= 1) || params <= 0.0)
        return;
    double buckets = ctx->stack.bucket_params > 0 ? ceil(params / ctx->stack.bucket_params) : 1.0;
    double per = params / buckets;
    double gb = grad_bytes(ctx, c);
    if (c->zero == 0) {
        *reduce = ppl_eval_coll(ctx, PPL_OP_ALLREDUCE, g, per * gb, buckets, traffic);
    } else {
        if (c->zero <= 2)
            *reduce = ppl_eval_coll(ctx, PPL_OP_REDUCESCATTER, g, per * gb, buckets, traffic);
        /* param_and_grad_buffer.py:734-760: each bucket's shard all-reduced across
         * the distributed-optimizer instances after the reduce-scatter */
        *reduce +=
            ppl_eval_coll(ctx, PPL_OP_ALLREDUCE, rep, per * gb / (double)g->n, buckets, traffic);
        if (c->zero <= 2)
            *gather = ppl_eval_coll(ctx, PPL_OP_ALLGATHER, g, per * ctx->memory.weight_bytes,
                                    buckets, traffic);
    }
    *last_bucket = *reduce / buckets;
}

void ppl_layout_init(const ppl_eval_ctx *ctx, const ppl_config *c, ppl_layout *l)
{
    /* groups in Megatron's rank order, TP innermost, then CP, DP, PP; the worst
     * copy over the pipeline stages.  MoE layers fold the same ranks of a stage
     * as etp, ep, edp, PP (megatron/core/parallel_state.py:886-895: the expert
     * RankGenerator over tp=etp, ep, dp=edp with the order tp-cp-ep-dp-pp, cp=1):
     * expert TP innermost, EP strided by etp, expert DP by etp*ep */
    const int64_t pp_stride = c->tp * c->cp * c->dp;
    const int64_t etp = ppl_config_etp(c);
    const ppl_net *net = &ctx->net;
    ppl_group_place_worst(net, c->tp, 1, 0, c->pp, pp_stride, &l->g_tp);
    ppl_group_place_worst(net, c->cp, c->tp, 0, c->pp, pp_stride, &l->g_cp);
    ppl_group_place_worst(net, c->dp * c->cp, c->tp, 0, c->pp, pp_stride, &l->g_dp);
    ppl_group_place_worst(net, etp, 1, 0, c->pp, pp_stride, &l->g_etp);
    ppl_group_place_worst(net, c->ep, etp, 0, c->pp, pp_stride, &l->g_ep);
    ppl_group_place_worst(net, ppl_config_edp(c), etp * c->ep, 0, c->pp, pp_stride, &l->g_edp);
    ppl_group_place_worst(net, c->pp > 1 ? 2 : 1, pp_stride, 0, c->pp > 1 ? c->pp - 1 : 1,
                          pp_stride, &l->g_pp);
    ppl_group_place(net, c->pp > 1 ? 2 : 1, (c->pp - 1) * pp_stride, 0, &l->g_tie);
    /* hierarchical CP: cp_a2a adjacent CP ranks, and the ring of one of each
     * (Megatron-Core parallel_state.py, hierarchical context-parallel groups) */
    int64_t a2a = c->cp_a2a >= 1 && c->cp % c->cp_a2a == 0 ? c->cp_a2a : 1;
    ppl_group_place_worst(net, a2a, c->tp, 0, c->pp, pp_stride, &l->g_cp_a2a);
    ppl_group_place_worst(net, c->cp / a2a, c->tp * a2a, 0, c->pp, pp_stride, &l->g_cp_ring);
    ppl_shard_layout(net, c, l, ppl_config_shard_group(c), l);
}

/*
 * Bytes of one sequence-parallel all-gather of b*s*h activations: under fp8,
 * mxfp8 and nvfp4 Transformer Engine quantizes before it gathers, the norm's
 * output ahead of QKV and fc1 and the output gradient ahead of the projection's
 * and fc2's backward (TransformerEngine layernorm_linear.py forward,
 * "gemm_input_cast_comm": gather_along_first_dim(ln_out, quantizer=...);
 * distributed.py gather_along_first_dim: fp8, blockwise, MXFP8 and NVFP4
 * all-gathers), at the format's bytes with its scales; the reduce-scatters stay
 * 16-bit.  Without sequence parallelism the all-reduces are 16-bit.
 */
double ppl_tp_gather_bytes(const ppl_config *c, double act_bytes)
{
    if (!c->sequence_parallel || !ppl_precision_low(c->precision))
        return act_bytes;
    return act_bytes * ppl_config_gemm_bytes(c) / 2.0;
}

void ppl_micro_comm_init(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *l,
                         ppl_micro *mi)
{
    const ppl_model *m = ctx->model;
    const double tokens = (double)c->mbs * (double)m->seq_len / (double)c->cp;
    mi->act = tokens * (double)m->hidden * 2.0; /* b*s*h 16-bit */
    mi->tp_one = 0.0;
    mi->tp_gather = ppl_tp_gather_bytes(c, mi->act);
    if (c->tp > 1)
        mi->tp_one =
            c->sequence_parallel
                ? ppl_eval_coll(ctx, PPL_OP_REDUCESCATTER, &l->g_tp, mi->act, 1, NULL) +
                      ppl_eval_coll(ctx, PPL_OP_ALLGATHER, &l->g_tp, mi->tp_gather, 1, NULL)
                : ppl_eval_coll(ctx, PPL_OP_ALLREDUCE, &l->g_tp, mi->act, 1, NULL);
    ppl_cp_cost_of(ctx, c, l, &mi->cp);
    mi->ep_one = mi->ep_hidden_share = 0.0;
    if (c->ep > 1 && m->has_moe) {
        /* each token's hidden state, 16-bit, to each of its top_k experts */
        double copy =
            tokens * (double)m->hidden * 2.0 / (c->sequence_parallel ? (double)c->tp : 1.0);
        ppl_ep_mode mode = ppl_ep_mode_of(m, c, ctx->stack.stack);
        ppl_dispatch d = {(double)m->moe.top_k, m->moe.router_node_limit, mode.dedup,
                          ppl_moe_load_factor(m)};
        ppl_coll r;
        ppl_ep_dispatch(&ctx->net, &l->g_ep, copy, &d, &r);
        mi->ep_one = r.time_s;
        /* the 1F1B all-to-all overlap pairs one microbatch's forward with another's
         * backward and runs each one's dispatch and combine under the other's
         * compute: every chunk but the warm-up ones (Megatron's interleaved warm-up,
         * 2 (p - 1) + (v - 1) p chunks of the first stage; one without a pipeline) */
        if (ppl_schedule_overlaps_fb(c->schedule)) {
            /* DualPipe's F&B: every steady-state chunk runs a forward and a backward
             * of two microbatches together, each one's all-to-all under the other's
             * compute (DeepSeek-V3 report §3.2.1); the chunks run alone are the
             * bubble's (pipeline.c) */
            mi->ep_hidden_share = 1.0;
        } else if (mode.overlap) {
            double chunks = (double)c->microbatches * (double)c->vp;
            double warm =
                c->pp == 1 ? 1.0 : 2.0 * (double)(c->pp - 1) + (double)((c->vp - 1) * c->pp);
            mi->ep_hidden_share = chunks > warm ? (chunks - warm) / chunks : 0.0;
        }
    }
    /* around the experts, the dispatcher all-gathers the tokens it received over
     * the expert tensor-parallel group and reduce-scatters their outputs
     * (moe/token_dispatcher.py, MoEAlltoAllTokenDispatcher steps 4 and 5): the
     * gathered buffer holds etp ranks' T/tp tokens x top_k, b*s*h x k etp/tp */
    mi->etp_one = 0.0;
    const int64_t etp = ppl_config_etp(c);
    if (etp > 1 && m->has_moe) {
        double gathered = mi->act * (double)m->moe.top_k * (double)etp / (double)c->tp *
                          ppl_moe_load_factor(m); /* the busiest rank's share */
        mi->etp_one = ppl_eval_coll(ctx, PPL_OP_ALLGATHER, &l->g_etp, gathered, 1, NULL) +
                      ppl_eval_coll(ctx, PPL_OP_REDUCESCATTER, &l->g_etp, gathered, 1, NULL);
    }
    mi->pp_one = 0.0;
    if (c->pp > 1) {
        double per_rank = c->tp > 1 ? mi->act / (double)c->tp : mi->act;
        mi->pp_one = ppl_eval_coll(ctx, PPL_OP_SENDRECV, &l->g_pp, per_rank, 1, NULL);
        if (c->tp > 1 && !c->sequence_parallel) /* scatter-gather: rebuild over NVLink */
            mi->pp_one += ppl_eval_coll(ctx, PPL_OP_ALLGATHER, &l->g_tp, mi->act, 1, NULL);
    }
}

void ppl_micro_compute_init(const ppl_eval_ctx *ctx, const ppl_config *c, ppl_micro *mi)
{
    const ppl_model *m = ctx->model;
    ppl_layer_time_of(m, ctx->topo, c, &ctx->eff, false, &mi->dense);
    memset(&mi->moe, 0, sizeof mi->moe);
    if (m->has_moe)
        ppl_layer_time_of(m, ctx->topo, c, &ctx->eff, true, &mi->moe);
    ppl_output_time_of(m, ctx->topo, c, &ctx->eff, &mi->head);
    mi->dense16 = mi->dense;
    mi->moe16 = mi->moe;
    if (c->bf16_layers > 0) {
        ppl_config c16 = *c;
        c16.precision = PPL_PRECISION_BF16;
        ppl_layer_time_of(m, ctx->topo, &c16, &ctx->eff, false, &mi->dense16);
        if (m->has_moe)
            ppl_layer_time_of(m, ctx->topo, &c16, &ctx->eff, true, &mi->moe16);
    }
    mi->tp_count = c->recompute == PPL_RECOMPUTE_FULL ? 6.0 : 4.0;
    ppl_memory_parts_init(m, c, &ctx->memory, &mi->mem);
}

/* Runs of consecutive stages that hold the same layers and play the same part. */
void ppl_classes_init(const ppl_eval_ctx *ctx, const ppl_config *c, ppl_classes *cl)
{
    cl->n = 0;
    cl->items = cl->inline_items;
    cl->cap = PPL_INLINE_CLASSES;
    for (int64_t k = 0; k < c->pp; k++) {
        int64_t layers, moe;
        ppl_stage_layer_counts(ctx->model, c, k, &layers, &moe);
        bool first = k == 0, last = k == c->pp - 1;
        ppl_stage_class *prev = cl->n ? &cl->items[cl->n - 1] : NULL;
        if (prev && prev->layers == layers && prev->moe_layers == moe && !prev->is_first &&
            !first && !last && !prev->is_last) {
            prev->count++;
            continue;
        }
        if (cl->n == cl->cap) {
            size_t cap = cl->cap * 4;
            ppl_stage_class *grown = malloc(cap * sizeof *grown);
            if (!grown) { /* keep going with what fits: the run merges into the last class */
                prev->count++;
                continue;
            }
            memcpy(grown, cl->items, cl->n * sizeof *grown);
            if (cl->items != cl->inline_items)
                free(cl->items);
            cl->items = grown;
            cl->cap = cap;
        }
        ppl_stage_class *nc = &cl->items[cl->n++];
        memset(nc, 0, sizeof *nc);
        nc->first_stage = k;
        nc->count = 1;
        nc->layers = layers;
        nc->moe_layers = moe;
        nc->bf16_layers = ppl_stage_bf16_layers(c, k, layers);
        nc->is_first = first;
        nc->is_last = last;
    }
}

void ppl_classes_free(ppl_classes *cl)
{
    if (cl->items != cl->inline_items)
        free(cl->items);
    cl->items = cl->inline_items;
    cl->n = 0;
}

/* The data-parallel times' slot in a class's cache: the ZeRO kind (0 none, 1 ZeRO-1/2,
 * 2 ZeRO-3), plus 3 when sharded in groups. */
static int dp_kind(const ppl_config *c)
{
    return (c->zero == 0 ? 0 : c->zero <= 2 ? 1 : 2) + (ppl_config_shard_replicas(c) > 1 ? 3 : 0);
}

/* Data-parallel times of one class under the configuration's ZeRO stage, cached
 * in the class (they depend on its parameters and the ZeRO stage only). */
static void class_dp(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *l,
                     ppl_stage_class *k, const ppl_memory *mem)
{
    /* kinds 0-2 shard over every rank, 3-5 in the groups of k->dp_group */
    const bool grouped = ppl_config_shard_replicas(c) > 1;
    const int kind = dp_kind(c), z = kind % 3;
    if (grouped && k->dp_group != ppl_config_shard_group(c)) { /* another group's */
        k->dp_ready &= 7;
        k->dp_group = ppl_config_shard_group(c);
    }
    if (k->dp_ready & (1 << kind))
        return;
    double dense = mem->params - mem->params_expert;
    {
        double reduce, gather, last, r2, g2, l2;
        dp_times(ctx, c, &l->g_shard, &l->g_replicas, dense, &reduce, &gather, &last, NULL);
        dp_times(ctx, c, &l->g_eshard, &l->g_ereplicas, mem->params_expert, &r2, &g2, &l2, NULL);
        reduce += r2;
        gather += g2;
        if (l2 > last)
            last = l2;
        if (z < 2 && c->pp > 1 && ctx->model->tied_embeddings && (k->is_first || k->is_last)) {
            double tied = (double)ctx->model->vocab * (double)ctx->model->hidden / (double)c->tp;
            reduce +=
                ppl_eval_coll(ctx, PPL_OP_ALLREDUCE, &l->g_tie, tied * grad_bytes(ctx, c), 1, NULL);
        }
        k->dp_reduce[kind] = reduce;
        k->dp_gather[kind] = gather;
        k->dp_last[kind] = last;
    }
    if (z == 2)
        k->z3_ag[grouped] = k->z3_rs[grouped] = 0.0;
    if (z == 2 && l->g_shard.n > 1 && k->layers > 0) { /* the expert group is a part of it */
        double layer_params = dense / (double)k->layers;
        /* per tensor: as many collectives, each a share of the layer (each pays
         * the collective's latency; the bytes are the layer's either way) */
        double n = ctx->stack.zero3_per_tensor ? tensors_per_layer(ctx->model) : 1.0;
        double bus = ctx->stack.zero3_bus;
        k->z3_ag[grouped] =
            ppl_eval_coll(ctx, PPL_OP_ALLGATHER, &l->g_shard,
                          layer_params * ctx->memory.weight_bytes / n / bus, n, NULL);
        k->z3_rs[grouped] = ppl_eval_coll(ctx, PPL_OP_REDUCESCATTER, &l->g_shard,
                                          layer_params * grad_bytes(ctx, c) / n / bus, n, NULL);
        /* a MoE layer's local experts are sharded over the expert-data-parallel
         * group (edp = tp*cp*dp/(etp*ep) ranks) and gathered and reduce-scattered over it as the
         * dense weights are over theirs; averaged over the class's layers */
        if (k->moe_layers > 0 && mem->params_expert > 0) {
            double expert = mem->params_expert / (double)k->moe_layers;
            double share = (double)k->moe_layers / (double)k->layers;
            k->z3_ag[grouped] +=
                share * ppl_eval_coll(ctx, PPL_OP_ALLGATHER, &l->g_eshard,
                                      expert * ctx->memory.weight_bytes / n / bus, n, NULL);
            k->z3_rs[grouped] +=
                share * ppl_eval_coll(ctx, PPL_OP_REDUCESCATTER, &l->g_eshard,
                                      expert * grad_bytes(ctx, c) / n / bus, n, NULL);
        }
    }
    k->dp_ready |= 1 << kind;
}

static const char *level_name(const ppl_eval_ctx *ctx, const ppl_group *g)
{
    return g->tier < 0 ? "nvlink" : ctx->topo->tiers[g->tier].name;
}

typedef struct stage_time {
    double compute, forward, backward; /* per microbatch */
    double wgrad;                      /* of backward, the weight-gradient GEMMs (W) */
    double ep_hidden;                  /* expert all-to-all hidden under another microbatch */
    double tp, cp, ep, pp, zero3;      /* communication per microbatch */
    double exposed;                    /* communication per microbatch not hidden */
    double total;                      /* compute + exposed */
} stage_time;

/* One stage of a class, per microbatch. */
static void stage_eval(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_micro *mi,
                       const ppl_stage_class *k, stage_time *s)
{
    const ppl_stack_opts *so = &ctx->stack;
    const double nd = (double)(k->layers - k->moe_layers), nm = (double)k->moe_layers;
    const double layers = (double)k->layers;
    memset(s, 0, sizeof *s);
    /* with block recomputation only a share f of the layers is recomputed */
    const double f = ppl_recomputed_share(c, k->layers);
    const double tp_count =
        mi->tp_count - (c->recompute == PPL_RECOMPUTE_FULL ? 2.0 * (1.0 - f) : 0.0);
    s->forward =
        nd * mi->dense.forward_s + nm * mi->moe.forward_s + (k->is_last ? mi->head.forward_s : 0.0);
    s->backward = nd * (mi->dense.backward_s - (1.0 - f) * mi->dense.recompute_s) +
                  nm * (mi->moe.backward_s - (1.0 - f) * mi->moe.recompute_s) +
                  (k->is_last ? mi->head.backward_s : 0.0);
    s->wgrad =
        nd * mi->dense.wgrad_s + nm * mi->moe.wgrad_s + (k->is_last ? mi->head.wgrad_s : 0.0);
    if (k->bf16_layers > 0) { /* those layers at their bf16 times, dense ones first */
        const double bd = (double)(k->bf16_layers < k->layers - k->moe_layers
                                       ? k->bf16_layers
                                       : k->layers - k->moe_layers),
                     bm = (double)k->bf16_layers - bd;
        const ppl_layer_time *lo[2] = {&mi->dense, &mi->moe}, *hi[2] = {&mi->dense16, &mi->moe16};
        const double n[2] = {bd, bm};
        for (int i = 0; i < 2; i++) {
            if (n[i] <= 0.0)
                continue;
            s->forward += n[i] * (hi[i]->forward_s - lo[i]->forward_s);
            s->backward += n[i] * (hi[i]->backward_s - (1.0 - f) * hi[i]->recompute_s -
                                   lo[i]->backward_s + (1.0 - f) * lo[i]->recompute_s);
            s->wgrad += n[i] * (hi[i]->wgrad_s - lo[i]->wgrad_s);
        }
    }
    s->compute = s->forward + s->backward;
    /* a MoE layer's tensor-parallel collectives are its attention's (half of a
     * dense layer's); its experts' are the dispatcher's, over the etp group */
    s->tp = (nd + 0.5 * nm) * tp_count * mi->tp_one;
    /* CP: each layer's exchange under its own attention core (its backward 2.5x the
     * forward with flash attention, 2x without: compute.c); full recomputation
     * repeats the forward's */
    const double attn_bwd = c->flash_attention ? 2.5 : 2.0;
    const double forwards = 1.0 + (c->recompute == PPL_RECOMPUTE_FULL ? f : 0.0);
    s->cp = layers * (forwards * mi->cp.fwd_s + mi->cp.bwd_s);
    double cp_exposed =
        nd * ppl_cp_exposed(&mi->cp, mi->dense.attention_s, attn_bwd * mi->dense.attention_s,
                            forwards) +
        nm * ppl_cp_exposed(&mi->cp, mi->moe.attention_s, attn_bwd * mi->moe.attention_s, forwards);
    s->ep = nm * tp_count * mi->ep_one + nm * 0.5 * tp_count * mi->etp_one;
    /* the overlapped share hides under the paired microbatch's compute */
    double ep_hidden = mi->ep_hidden_share * s->ep;
    if (ep_hidden > mi->ep_hidden_share * s->compute)
        ep_hidden = mi->ep_hidden_share * s->compute;
    s->ep_hidden = ep_hidden;
    double sends = (double)(!k->is_last + !k->is_first) * (double)c->vp;
    s->pp = c->pp > 1 ? sends * mi->pp_one : 0.0;
    /* ZeRO-3: each layer's weights gathered forward and backward, gradients
     * reduce-scattered, every microbatch; prefetching hides what the layer's
     * compute covers */
    if (c->zero >= 3 && k->layers > 0) {
        double per_f = so->zero3_overlap * s->forward / layers,
               per_b = so->zero3_overlap * s->backward / layers;
        const int g = ppl_config_shard_replicas(c) > 1;
        const double ag = k->z3_ag[g], rs = k->z3_rs[g];
        s->zero3 = layers * (2.0 * ag + rs);
        double z3_exposed = layers * (pos(ag - per_f) + pos(ag + rs - per_b));
        s->exposed += z3_exposed + so->overlap_cost * (s->zero3 - z3_exposed);
    }
    double hidden =
        so->tp_overlap * s->tp + so->pp_overlap * s->pp + (s->cp - cp_exposed) + ep_hidden;
    s->exposed += (1.0 - so->tp_overlap) * s->tp + cp_exposed + (s->ep - ep_hidden) +
                  (1.0 - so->pp_overlap) * s->pp + so->overlap_cost * hidden;
    s->total = s->compute + s->exposed;
}

/* A stage's passes (pipeline.h): W its weight-gradient GEMMs; the communication
 * left exposed shared between F and B as a layer's collectives are, 2 of tp_count
 * in the forward (the header: 2 of 4 TP collectives and half the EP and PP
 * transfers; 2 of 6 with full recomputation, whose forward runs again in B).  FB is
 * the stage's time per microbatch; under DualPipe's F&B it hides the all-to-all,
 * which the passes run alone show again (what it hid, less the slowdown of hiding). */
static void stage_passes(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_micro *mi,
                         const stage_time *s, ppl_passes *out)
{
    double alone = s->total;
    if (ppl_schedule_overlaps_fb(c->schedule))
        alone += (1.0 - ctx->stack.overlap_cost) * s->ep_hidden;
    out->w_s = s->wgrad;
    out->f_s = s->forward + 2.0 / mi->tp_count * (alone - s->compute);
    out->b_s = alone - out->f_s - out->w_s;
    out->fb_s = s->total;
}

bool ppl_estimate_cached(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *l,
                         const ppl_micro *mi, ppl_classes *cl, bool full, ppl_estimate *out)
{
    const ppl_model *m = ctx->model;
    const ppl_stack_opts *so = &ctx->stack;
    const double capacity = ctx->topo->gpu.memory_bytes;
    out->config = *c;
    out->stack = so->stack;
    out->ep_servers = l->g_ep.nodes > 1 ? l->g_ep.nodes : 1;
    out->n_stage_passes = 0;

    /* memory: the first stage of each class is its heaviest */
    stage_time worst = {0}, st;
    int64_t worst_k = 0;
    double sum_total = 0.0, slack = 0.0, dp_exposed = 0.0, dp_total = 0.0, opt_time = 0.0;
    double worst_params = 0.0, worst_expert = 0.0, worst_layers = 0.0, worst_moe = 0.0;
    ppl_passes passes, sum_passes = {0}, worst_passes = {0};
    for (size_t i = 0; i < cl->n; i++) {
        ppl_stage_class *k = &cl->items[i];
        ppl_memory mem;
        ppl_memory_at(c, &ctx->memory, &mi->mem, capacity, k->first_stage, k->layers, k->moe_layers,
                      &mem);
        if (mem.host > 0.0 && mem.host > ppl_gpu_host_capacity_bytes(&ctx->topo->gpu))
            mem.fits = false; /* the offloaded state overflows the GPU's share of the host */
        if (i == 0 || mem.total > out->memory.total || (!mem.fits && out->memory.fits))
            out->memory = mem;
        if (!full && !out->memory.fits)
            continue; /* the caller only asks whether it fits; the rest is wasted */
        class_dp(ctx, c, l, k, &mem);
        stage_eval(ctx, c, mi, k, &st);
        sum_total += (double)k->count * st.total;
        stage_passes(ctx, c, mi, &st, &passes);
        if (full && i < PPL_PASS_CLASSES) {
            out->stage_passes[i].first_stage = k->first_stage;
            out->stage_passes[i].count = k->count;
            out->stage_passes[i].passes = passes;
            out->n_stage_passes = (int)i + 1;
        }
        sum_passes.f_s += (double)k->count * passes.f_s;
        sum_passes.b_s += (double)k->count * passes.b_s;
        sum_passes.w_s += (double)k->count * passes.w_s;
        sum_passes.fb_s += (double)k->count * passes.fb_s;
        if (st.total > worst.total) {
            worst = st;
            worst_passes = passes;
            worst_k = k->first_stage;
            worst_params = mem.params;
            worst_expert = mem.params_expert;
            worst_layers = (double)k->layers;
            worst_moe = (double)k->moe_layers;
        }
        /* data parallelism after the class's last backward: the class's first stage
         * has the least slack (the stages before it still draining the pipeline) */
        { /* ZeRO-3: only the replicas' all-reduce (0 without them) */
            int kind = dp_kind(c);
            double reduce = k->dp_reduce[kind], gather = k->dp_gather[kind];
            /* the reduction starts under this stage's last backward (stacks that
             * overlap it), goes on while earlier stages drain the pipeline, and
             * what is left shows; only the part under its own compute slows it */
            double own =
                reduce < so->dp_overlap * st.backward ? reduce : so->dp_overlap * st.backward;
            double exposed = pos(reduce - own - slack);
            if (so->dp_overlap > 0.0 && exposed < k->dp_last[kind])
                exposed = k->dp_last[kind];
            double gather_exposed = pos(gather - so->dp_overlap * st.forward);
            exposed += gather_exposed + so->overlap_cost * (own + gather - gather_exposed);
            if (exposed > dp_exposed)
                dp_exposed = exposed;
            if (reduce + gather > dp_total)
                dp_total = reduce + gather;
        }
        /* the schedules of pipeline.h end every stage with the deferred W passes
         * (Qi et al. ICLR 2024 §2.1: "the delayed W passes fill the bubbles" of the
         * tail; dualpipe.py step 8: nW): no stage drains while another reduces */
        if (!ppl_schedule_splits_backward(c->schedule))
            slack += (double)k->count * st.backward;
        double dense = mem.params - mem.params_expert;
        double opt = ppl_optimizer_step_time(
            ctx, c,
            dense / (c->zero >= 1 ? ppl_shard_dense_ways(c) : 1.0) +
                mem.params_expert / (c->zero >= 1 ? ppl_shard_expert_ways(c) : 1.0));
        if (opt > opt_time)
            opt_time = opt;
    }
    if (!out->memory.fits && !full)
        return false;

    /* pipeline: (m-1) x slowest + one pass (1F1B, GPipe); interleaved: 1/v of a pass */
    const double mb = (double)c->microbatches;
    double pass = sum_total - worst.total;
    double pipe = mb * worst.total + (c->vp > 1 ? pass / (double)c->vp : pass);
    if (ppl_schedule_splits_backward(c->schedule)) { /* ZB-H1 ... DualPipeV: pipeline.c */
        ppl_passes others = {sum_passes.f_s - worst_passes.f_s, sum_passes.b_s - worst_passes.b_s,
                             sum_passes.w_s - worst_passes.w_s,
                             sum_passes.fb_s - worst_passes.fb_s};
        pipe = mb * worst.total + ppl_pipeline_bubble_s(c->schedule, c->pp, c->vp, &others);
    }
    out->slowest_stage = worst_k;
    out->passes = worst_passes;
    out->time.compute = mb * worst.compute;
    out->time.bubble = pipe - mb * worst.total;
    out->time.tp_comm = mb * worst.tp;
    out->time.cp_comm = mb * worst.cp;
    out->time.ep_comm = mb * worst.ep;
    out->time.pp_comm = mb * worst.pp;
    out->time.dp_comm = (c->zero >= 3 ? mb * worst.zero3 : 0.0) + dp_total;
    out->time.optimizer = opt_time;
    out->time.overhead = so->step_overhead_s;
    out->time.exposed_comm = mb * worst.exposed + dp_exposed;
    out->step_time_s = pipe + dp_exposed + opt_time + so->step_overhead_s;
    const double tokens_step = (double)c->global_batch * (double)m->seq_len;
    out->tokens_per_s = tokens_step / out->step_time_s;
    if (!full)
        return out->memory.fits;

    /* traffic of the slowest stage's GPU over the step */
    ppl_traffic *tr = &out->traffic;
    memset(tr, 0, sizeof *tr);
    const double f = ppl_recomputed_share(c, (int64_t)worst_layers);
    const double per_layer =
        mi->tp_count - (c->recompute == PPL_RECOMPUTE_FULL ? 2.0 * (1.0 - f) : 0.0);
    if (c->tp > 1) {
        double n = mb * (worst_layers - 0.5 * worst_moe) * per_layer;
        if (c->sequence_parallel) {
            ppl_eval_coll(ctx, PPL_OP_REDUCESCATTER, &l->g_tp, mi->act, n, tr);
            ppl_eval_coll(ctx, PPL_OP_ALLGATHER, &l->g_tp, mi->tp_gather, n, tr);
        } else {
            ppl_eval_coll(ctx, PPL_OP_ALLREDUCE, &l->g_tp, mi->act, n, tr);
        }
    }
    if (mi->etp_one > 0.0) { /* the dispatcher's gathers over the etp group */
        double gathered =
            mi->act * (double)m->moe.top_k * (double)ppl_config_etp(c) / (double)c->tp;
        ppl_eval_coll(ctx, PPL_OP_ALLGATHER, &l->g_etp, gathered, mb * worst_moe * 0.5 * per_layer,
                      tr);
        ppl_eval_coll(ctx, PPL_OP_REDUCESCATTER, &l->g_etp, gathered,
                      mb * worst_moe * 0.5 * per_layer, tr);
    }
    if (c->pp > 1)
        ppl_eval_coll(ctx, PPL_OP_SENDRECV, &l->g_pp, c->tp > 1 ? mi->act / (double)c->tp : mi->act,
                      mb * 2.0 * (double)c->vp, tr);
    if (c->cp > 1)
        ppl_cp_traffic(ctx, c, l, mb * worst_layers, tr);
    double r, g, lb; /* ZeRO-3: the replicas' all-reduce only */
    dp_times(ctx, c, &l->g_shard, &l->g_replicas, worst_params - worst_expert, &r, &g, &lb, tr);
    dp_times(ctx, c, &l->g_eshard, &l->g_ereplicas, worst_expert, &r, &g, &lb, tr); /* experts */
    if (c->zero >= 3 && l->g_shard.n > 1 && worst_layers > 0) {
        double layer_params = (worst_params - worst_expert) / worst_layers;
        ppl_eval_coll(ctx, PPL_OP_ALLGATHER, &l->g_shard, layer_params * ctx->memory.weight_bytes,
                      2.0 * mb * worst_layers, tr);
        ppl_eval_coll(ctx, PPL_OP_REDUCESCATTER, &l->g_shard, layer_params * grad_bytes(ctx, c),
                      mb * worst_layers, tr);
        if (worst_moe > 0 && l->g_eshard.n > 1) { /* a MoE layer's experts: over edp */
            double expert = worst_expert / worst_moe;
            ppl_eval_coll(ctx, PPL_OP_ALLGATHER, &l->g_eshard, expert * ctx->memory.weight_bytes,
                          2.0 * mb * worst_moe, tr);
            ppl_eval_coll(ctx, PPL_OP_REDUCESCATTER, &l->g_eshard, expert * grad_bytes(ctx, c),
                          mb * worst_moe, tr);
        }
    }

    /* rates */
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
    out->mfu = out->model_tflops_per_gpu * 1e12 / ctx->topo->gpu.flops[PPL_PRECISION_BF16];

    /* the largest share of the step names the bottleneck */
    struct {
        const char *name;
        double value;
        const ppl_group *g;
    } parts[] = {
        {"compute", out->time.compute, NULL},
        {"bubble", out->time.bubble, NULL},
        {"tp_comm", mb * (1.0 - so->tp_overlap) * worst.tp, &l->g_tp},
        {"cp_comm", mb * worst.cp, &l->g_cp},
        {"ep_comm", mb * worst.ep, &l->g_ep},
        {"pp_comm", mb * (1.0 - so->pp_overlap) * worst.pp, &l->g_pp},
        {"dp_comm", dp_exposed + (c->zero >= 3 ? mb * worst.zero3 : 0.0),
         l->g_replicas.n > 1 ? &l->g_replicas : &l->g_dp},
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
    return out->memory.fits;
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
        {"time.compute", e->time.compute},
        {"time.bubble", e->time.bubble},
        {"time.tp_comm", e->time.tp_comm},
        {"time.cp_comm", e->time.cp_comm},
        {"time.pp_comm", e->time.pp_comm},
        {"time.dp_comm", e->time.dp_comm},
        {"time.ep_comm", e->time.ep_comm},
        {"time.optimizer", e->time.optimizer},
        {"time.exposed_comm", e->time.exposed_comm},
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
    return PPL_OK;
}

double ppl_stage_time_cached(const ppl_eval_ctx *ctx, const ppl_config *c, const ppl_layout *l,
                             const ppl_micro *mi, int64_t stage, int64_t layers, int64_t moe_layers,
                             ppl_memory *memory)
{
    ppl_stage_class k;
    stage_time s;
    memset(&k, 0, sizeof k);
    k.first_stage = stage;
    k.count = 1;
    k.layers = layers;
    k.moe_layers = moe_layers;
    k.bf16_layers = ppl_stage_bf16_layers(c, stage, layers);
    k.is_first = stage == 0;
    k.is_last = stage == c->pp - 1;
    ppl_memory mem;
    ppl_memory_at(c, &ctx->memory, &mi->mem, ctx->topo->gpu.memory_bytes, stage, layers, moe_layers,
                  &mem);
    if (c->zero >= 3)
        class_dp(ctx, c, l, &k, &mem);
    stage_eval(ctx, c, mi, &k, &s);
    if (memory)
        *memory = mem;
    return s.total;
}
